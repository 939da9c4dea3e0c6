// Loading snowflake.mask_key_file. The setting's check hook reads and parses the file (in the
// postmaster at start and on reload, in each backend on reload) and hands the result to the
// assign hook as the setting's "extra", which installs it; a missing, unreadable or malformed
// file leaves no key and a problem that the mask functions' ERROR and snowflake_status() show.
// No message carries any part of a key.
#include "core/mask.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "glue/mask_keys.hpp"

extern "C" {
#include "miscadmin.h"
}

namespace snowflake::glue {

namespace {

struct KeyFileExtra {
  bool set;  // the setting names a file
  bool loaded;
  char problem[256];
  MaskKeySet keys;
};

MaskKeyring keyring;
bool keys_loaded = false;
char problem[256] = "snowflake.mask_key_file is not set";

constexpr size_t kMaxFileBytes = 64 * 1024;

// The file's text into buf (at most kMaxFileBytes), or false with the problem written.
bool read_key_file(const char *path, char *buf, size_t *len, KeyFileExtra *x) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(x->problem, sizeof x->problem, "could not open \"%s\": %s", path, strerror(errno));
    return false;
  }
  struct stat st;
  bool ok = fstat(fd, &st) == 0;
  if (!ok) {
    snprintf(x->problem, sizeof x->problem, "could not stat \"%s\": %s", path, strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    snprintf(x->problem, sizeof x->problem, "\"%s\" is not a regular file", path);
    ok = false;
  } else if (st.st_uid != geteuid() && st.st_uid != 0) {
    // As PostgreSQL requires of ssl_key_file.
    snprintf(x->problem, sizeof x->problem, "\"%s\" must be owned by the database user or root",
             path);
    ok = false;
  } else if ((st.st_uid == geteuid() && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) ||
             (st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IXGRP | S_IRWXO)) != 0)) {
    snprintf(x->problem, sizeof x->problem,
             "\"%s\" may be read by others: it must be mode 0600 (or 0640 when owned by root)",
             path);
    ok = false;
  } else if (static_cast<size_t>(st.st_size) > kMaxFileBytes) {
    snprintf(x->problem, sizeof x->problem, "\"%s\" is larger than 64 kB", path);
    ok = false;
  }
  *len = 0;
  while (ok) {
    const ssize_t n = read(fd, buf + *len, kMaxFileBytes - *len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      snprintf(x->problem, sizeof x->problem, "could not read \"%s\": %s", path, strerror(errno));
      ok = false;
    }
    if (n <= 0) break;
    *len += static_cast<size_t>(n);
    if (*len == kMaxFileBytes) break;
  }
  close(fd);
  return ok;
}

}  // namespace

bool check_mask_key_file(char **newval, void **extra, GucSource) {
  auto *x = static_cast<KeyFileExtra *>(SNOWFLAKE_GUC_MALLOC(sizeof(KeyFileExtra)));
  if (x == nullptr) return false;
  x->loaded = false;
  x->set = false;
  x->keys.count = 0;
  x->keys.active = -1;
  *extra = x;
  const char *path = *newval != nullptr ? *newval : "";
  if (path[0] == '\0') {
    snprintf(x->problem, sizeof x->problem, "snowflake.mask_key_file is not set");
    return true;
  }
  x->set = true;
  char *buf = static_cast<char *>(malloc(kMaxFileBytes));
  if (buf == nullptr) {
    snprintf(x->problem, sizeof x->problem, "out of memory reading \"%s\"", path);
    return true;
  }
  size_t len = 0;
  if (read_key_file(path, buf, &len, x)) {
    char why[200];
    if (parse_mask_keys(buf, len, &x->keys, why, sizeof why)) {
      x->loaded = true;
      x->problem[0] = '\0';
    } else {
      snprintf(x->problem, sizeof x->problem, "\"%s\", %s", path, why);
    }
  }
  OPENSSL_cleanse(buf, kMaxFileBytes);
  free(buf);
  // Never a reason to refuse the setting: the server keeps running, and the mask functions
  // say what is wrong.
  return true;
}

void assign_mask_key_file(const char *, void *extra) {
  const auto *x = static_cast<const KeyFileExtra *>(extra);
  if (x == nullptr) return;
  char was[sizeof problem];
  snprintf(was, sizeof was, "%s", problem);
  if (x->loaded) {
    keyring.reset(x->keys);
    keys_loaded = !keyring.failed();
    snprintf(problem, sizeof problem, "%s", keys_loaded ? "" : "out of memory loading the keys");
  } else if (x->set && keys_loaded) {
    // A reload that cannot read the file keeps the keys in use, as PostgreSQL keeps its SSL
    // files: tokens keep working while the file is fixed.
    snprintf(problem, sizeof problem, "%s; the keys loaded before stay in use", x->problem);
  } else {
    keyring.clear();
    keys_loaded = false;
    snprintf(problem, sizeof problem, "%s", x->problem);
  }
  // Said once, by the postmaster, when what is wrong changes.
  if (!IsUnderPostmaster && x->set && problem[0] != '\0' && std::strcmp(was, problem) != 0)
    ereport(WARNING, (errmsg("snowflake.mask_key_file: %s", problem)));
}

MaskKeyring &mask_keyring() {
  if (unlikely(!keys_loaded || keyring.failed())) {
    const bool unset = std::strcmp(problem, "snowflake.mask_key_file is not set") == 0;
    ereport(
        ERROR,
        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("no mask key is loaded"),
         errdetail("%s", keyring.failed() ? "The cipher library could not set up a key." : problem),
         unset ? errhint("Set snowflake.mask_key_file to a key file (a line \"0 <64 hex "
                         "digits> active\"; openssl rand -hex 32 makes a key) and reload "
                         "the configuration.")
               : errhint("Fix the file that snowflake.mask_key_file names and reload the "
                         "configuration (SELECT pg_reload_conf()).")));
  }
  return keyring;
}

int mask_active_key_id() { return keys_loaded ? keyring.active_id() : -1; }
int mask_key_count() { return keys_loaded ? keyring.count() : 0; }
const char *mask_key_problem() { return problem; }

}  // namespace snowflake::glue
