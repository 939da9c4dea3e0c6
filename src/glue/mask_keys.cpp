// Loading snowflake.mask_key_file. The setting's check hook reads and parses the file (in the
// postmaster at start and on reload, in each backend on reload) into secret memory, and the
// assign hook installs those keys (the setting's "extra" holds none); a missing, unreadable or
// malformed file leaves no key and a problem that the mask functions' ERROR and snowflake_status()
// show. No message carries any part of a key.
#include "core/mask.hpp"

#include <cstdio>
#include <cstring>

#include <openssl/crypto.h>

#include "glue/mask_keys.hpp"

extern "C" {
#include "access/parallel.h"
#include "miscadmin.h"
}

namespace snowflake::glue {

namespace {

struct KeyFileExtra {
  bool set;  // the setting names a file
  bool loaded;
  uint64_t serial;  // which staged keys this check read (when loaded)
  char problem[256];
  char warning[sizeof MaskKeySet::warning];
};

constexpr size_t kMaxFileBytes = kMaskKeyFileMax;

// What the check hook read, until the assign hook installs it: in secret memory (not in the
// setting's extra, which guc.c frees without wiping), wiped as soon as it is installed or
// replaced.
struct Staging {
  uint64_t serial;
  char text[kMaxFileBytes];
  MaskKeySet keys;
};

MaskKeyring keyring;
bool keys_loaded = false;
char problem[256] = "snowflake.mask_key_file is not set";
Staging *staging = nullptr;
uint64_t last_serial = 0;
uint64_t installed_serial = 0;

}  // namespace

bool check_mask_key_file(char **newval, void **extra, GucSource) {
  auto *x = static_cast<KeyFileExtra *>(SNOWFLAKE_GUC_MALLOC(sizeof(KeyFileExtra)));
  if (x == nullptr) return false;
  x->loaded = false;
  x->set = false;
  x->serial = 0;
  x->warning[0] = '\0';
  *extra = x;
  const char *path = *newval != nullptr ? *newval : "";
  if (path[0] == '\0') {
    snprintf(x->problem, sizeof x->problem, "snowflake.mask_key_file is not set");
    return true;
  }
  x->set = true;
  if (InitializingParallelWorker || IsParallelWorker()) {
    // The mask functions are PARALLEL RESTRICTED: they run in the leader, with its keys. A
    // worker that read the file would read it as it is now, perhaps half edited.
    snprintf(x->problem, sizeof x->problem, "a parallel worker holds no mask key");
    return true;
  }
  if (staging == nullptr) staging = static_cast<Staging *>(secret_alloc(sizeof(Staging)));
  if (staging == nullptr) {
    snprintf(x->problem, sizeof x->problem, "out of memory reading \"%s\"", path);
    return true;
  }
  OPENSSL_cleanse(staging, sizeof *staging);  // what a check that was not assigned left
  size_t len = 0;
  if (read_mask_key_file(path, staging->text, kMaxFileBytes, &len, x->problem, sizeof x->problem)) {
    char why[200];
    if (parse_mask_keys(staging->text, len, &staging->keys, why, sizeof why)) {
      x->loaded = true;
      x->problem[0] = '\0';
      x->serial = staging->serial = ++last_serial;
      snprintf(x->warning, sizeof x->warning, "%s", staging->keys.warning);
    } else {
      snprintf(x->problem, sizeof x->problem, "\"%s\", %s", path, why);
    }
  }
  OPENSSL_cleanse(staging->text, sizeof staging->text);
  // Never a reason to refuse the setting: the server keeps running, and the mask functions
  // say what is wrong.
  return true;
}

void assign_mask_key_file(const char *, void *extra) {
  const auto *x = static_cast<const KeyFileExtra *>(extra);
  if (x == nullptr) return;
  char was[sizeof problem];
  snprintf(was, sizeof was, "%s", problem);
  if (x->loaded && staging != nullptr && staging->serial == x->serial) {
    keyring.reset(staging->keys);
    OPENSSL_cleanse(staging, sizeof *staging);
    installed_serial = x->serial;
    keys_loaded = !keyring.failed();
    snprintf(problem, sizeof problem, "%s", keys_loaded ? "" : "out of memory loading the keys");
  } else if (x->loaded && keys_loaded && installed_serial == x->serial) {
    // The keys this check read, installed already.
  } else if (x->loaded) {
    // Another check's keys were staged since: they cannot be installed. guc.c assigns what it
    // checked at once, so this would take a change in PostgreSQL; say what to do.
    keyring.clear();
    keys_loaded = false;
    snprintf(problem, sizeof problem,
             "the keys read were replaced before use: reload the "
             "configuration");
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
  if (!IsUnderPostmaster && x->loaded && x->warning[0] != '\0')
    ereport(WARNING, (errmsg("snowflake.mask_key_file: %s", x->warning),
                      errhint("Give each key id a key of its own (snowflake_mask_key new ID FILE "
                              "adds one).")));
}

MaskKeyring &mask_keyring() {
  if (unlikely(!keys_loaded || keyring.failed())) {
    const bool unset = std::strcmp(problem, "snowflake.mask_key_file is not set") == 0;
    ereport(
        ERROR,
        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("no mask key is loaded"),
         errdetail("%s", keyring.failed() ? "The cipher library could not set up a key." : problem),
         IsParallelWorker()
             ? errhint("The mask functions are PARALLEL RESTRICTED: a function that calls them "
                       "must be too.")
         : unset ? errhint("Make the key file with snowflake_mask_key new 0 FILE (installed "
                           "beside pg_config: it writes the file mode 0600, owned by the "
                           "server's user), set snowflake.mask_key_file to it and reload the "
                           "configuration.")
                 : errhint("Fix the file that snowflake.mask_key_file names and reload the "
                           "configuration (SELECT pg_reload_conf()).")));
  }
  return keyring;
}

int mask_active_key_id() { return keys_loaded ? keyring.active_id() : -1; }
int mask_key_count() { return keys_loaded ? keyring.count() : 0; }
const char *mask_key_problem() { return problem; }
bool mask_keys_fingerprint(char out[17]) {
  out[0] = '\0';
  return keys_loaded && keyring.fingerprint(out);
}

}  // namespace snowflake::glue
