// snowflake_mask_key_check FILE: reads a mask key file with the server's own parser
// (core/mask.cpp's parse_mask_keys, as the server reads snowflake.mask_key_file), so that
// snowflake_mask_key (scripts/mask_key.sh) accepts exactly what the server accepts and writes
// only what it loads. On success prints "ids ID... active ID" and exits 0; otherwise prints
// what is wrong (never any part of a key) to standard error and exits 1; 2 on a usage error.
// The file's owner and mode are the tool's to set, and the server's to check when it reads it.
#include "core/mask.hpp"

#include <cstdio>
#include <cstring>

#include <openssl/crypto.h>

int main(int argc, char **argv) {
  using namespace snowflake;
  if (argc != 2) {
    std::fprintf(stderr, "usage: snowflake_mask_key_check FILE\n");
    return 2;
  }
  static char text[kMaskKeyFileMax + 1];
  FILE *f = std::fopen(argv[1], "rb");
  if (f == nullptr) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  const size_t len = std::fread(text, 1, sizeof text, f);
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  static MaskKeySet keys;
  char problem[200] = "";
  int status = 0;
  if (read_error) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    status = 1;
  } else if (len > kMaskKeyFileMax) {
    std::fprintf(stderr, "%s is larger than %zu bytes\n", argv[1], kMaskKeyFileMax);
    status = 1;
  } else if (!parse_mask_keys(text, len, &keys, problem, sizeof problem)) {
    std::fprintf(stderr, "%s: %s\n", argv[1], problem);
    status = 1;
  } else {
    if (keys.warning[0] != '\0') std::fprintf(stderr, "warning: %s\n", keys.warning);
    std::printf("ids");
    for (int i = 0; i < keys.count; ++i) std::printf(" %d", keys.entries[i].id);
    std::printf(" active %d\n", keys.active);
  }
  OPENSSL_cleanse(text, sizeof text);
  OPENSSL_cleanse(&keys, sizeof keys);
  return status;
}
