// libFuzzer target over the ULID text parser and every decoder of the core: no input may
// crash, read out of bounds or hit undefined behaviour (built with ASan and UBSan), and
// every value that parses or decodes must round-trip exactly.
#include "id128.hpp"
#include "layout.hpp"
#include "ulid_codec.hpp"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace snowflake;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // ULID text: parse; what parses prints back as the same text in upper case.
  uint8_t bytes[16];
  if (ulid_decode(reinterpret_cast<const char *>(data), size, bytes) == UlidParse::kOk) {
    char text[kUlidTextLen];
    ulid_encode(bytes, text);
    for (size_t i = 0; i < kUlidTextLen; ++i)
      if (text[i] != std::toupper(data[i])) std::abort();
  }
  // Any 16 bytes: encode, decode, same bytes; the UUID decoders read within them.
  if (size >= 16) {
    char text[kUlidTextLen];
    ulid_encode(data, text);
    uint8_t back[16];
    if (ulid_decode(text, kUlidTextLen, back) != UlidParse::kOk) std::abort();
    if (std::memcmp(back, data, 16) != 0) std::abort();
    const int version = uuid_version(data);
    if (version < -1 || version > 15) std::abort();
    if (uuid_unix_ms(data) > kMaxUnixMs48) std::abort();
    if (load_be128(data) >> 80 != uuid_unix_ms(data)) std::abort();
  }
  // Any 8 bytes as a snowflake ID: unpack and pack give it back.
  if (size >= 8) {
    uint64_t id;
    std::memcpy(&id, data, sizeof id);
    const Decoded d = unpack(id);
    if (d.shard > kMaxShard || d.seq > kMaxSeq) std::abort();
    if (pack(d.ms, d.shard, d.seq) != id) std::abort();
  }
  return 0;
}
