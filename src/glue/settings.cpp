// The snowflake.* settings: their values, the checks of the values in the configuration file,
// and the refusal to generate on a bad one.
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/etcd_store.hpp"
#include "core/lease.hpp"
#include "core/mask.hpp"

#include "glue/mask_keys.hpp"
#include "glue/settings.hpp"
#include "glue/shmem.hpp"

extern "C" {
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"
}

namespace snowflake::glue {

int shard_id = 0;
int shard_count = 1;
int on_shard_collision = WARNING;
const char *bad_setting_name = nullptr;
char bad_setting_value[64];
bool snowflake_settings_checked = false;
int max_lead_ms = 1024;
int block_max_lead_ms = 100;
int max_clock_offset_ms = 5000;
int64_t epoch_ms = kDefaultEpochMs;
int reservation_window_ms = 1000;
int reservation_timeout_ms = 10000;
bool lease_mode = false;
char *etcd_endpoints = nullptr;
char *etcd_prefix = nullptr;
uint32_t shard_pool_low = 0;
uint32_t shard_pool_high = kMaxShard;
int lease_ttl_s = 30;
int lease_renew_ms = 10000;
int lease_fail_after_ms = 15000;
int lease_restore_margin_ms = 0;
char *etcd_cafile = nullptr;
char *etcd_certfile = nullptr;
char *etcd_keyfile = nullptr;
char *etcd_user = nullptr;
char *etcd_password_file = nullptr;
bool etcd_allow_plaintext_password = false;
char *mask_key_file = nullptr;
char lease_setting_problem[320] = "";

namespace {

char *epoch_setting = nullptr;
bool shard_id_in_file = false;  // lease mode, with snowflake.shard_id in the configuration

bool parse_epoch(const char *text, int64_t *out) {
  if (text == nullptr || *text == '\0') return false;
  for (const char *p = text; *p; ++p)
    if (*p < '0' || *p > '9') return false;
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0 || v > kMaxEpochMs) return false;
  *out = v;
  return true;
}

bool check_epoch(char **newval, void **, GucSource source) noexcept {
  int64_t v;
  if (parse_epoch(*newval, &v)) {
    if (source == PGC_S_FILE && bad_setting_name != nullptr &&
        std::strcmp(bad_setting_name, "snowflake.epoch") == 0)
      bad_setting_name = nullptr;
    return true;
  }
  GUC_check_errdetail(
      "snowflake.epoch must be a whole number of milliseconds since "
      "1970-01-01 00:00:00 UTC, from 0 to %lld.",
      static_cast<long long>(kMaxEpochMs));
  return false;
}

void assign_epoch(const char *newval, void *) {
  int64_t v;
  if (parse_epoch(newval, &v)) epoch_ms = v;
}

// snowflake.shard_id's own record (found once it is defined): the source of the value in
// force. The hooks cannot follow it: RESET, the end of a SET LOCAL and of a function's SET
// restore a value through the assign hook alone, and ALTER ROLE checks one it never assigns.
struct config_generic *shard_id_record = nullptr;

void find_shard_id_record() {
  int count = 0;
  struct config_generic **vars = SNOWFLAKE_GUC_VARIABLES(&count);
  for (int i = 0; i < count && shard_id_record == nullptr; ++i)
    if (pg_strcasecmp(vars[i]->name, "snowflake.shard_id") == 0) shard_id_record = vars[i];
}

// A value from the configuration file that passes the check mends a bad one found at start.
bool check_shard_id(int *, void **, GucSource source) noexcept {
  // In lease mode the shard is the lease's: a shard set anywhere would issue outside it.
  if (lease_mode && source > PGC_S_DEFAULT) {
    GUC_check_errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM);
    GUC_check_errmsg("snowflake.shard_id cannot be set while snowflake.shard_source is etcd");
    GUC_check_errdetail("The server's shards are the ones it leases from etcd.");
    GUC_check_errhint("Remove the setting; snowflake_status() shows the leased shards.");
    return false;
  }
  if (source == PGC_S_FILE && bad_setting_name != nullptr &&
      std::strcmp(bad_setting_name, "snowflake.shard_id") == 0)
    bad_setting_name = nullptr;
  return true;
}

// A session whose shard changes (to the default again, say: RESET, a reload that removes the
// setting) checks the configuration again before its next ID (check_snowflake_settings).
void assign_shard_id(int, void *) { snowflake_settings_checked = false; }

// A setting's value in the configuration file, read before the setting is defined (while
// PostgreSQL still holds it as a placeholder's text): if PostgreSQL is about to reject it
// and run on the default, snowflake() refuses instead, naming the value.
void check_file_value(const char *name, bool (*valid)(const char *)) {
  const char *raw = GetConfigOption(name, true, false);
  if (raw == nullptr || valid(raw)) return;
  bad_setting_name = name;
  snprintf(bad_setting_value, sizeof bad_setting_value, "%s", raw);
}

bool valid_shard_text(const char *text) {
  int v;
  return parse_int(text, &v, 0, nullptr) && v >= 0 && v <= static_cast<int>(kMaxShard);
}

bool valid_epoch_text(const char *text) {
  int64_t v;
  return parse_epoch(text, &v);
}

const struct config_enum_entry collision_levels[] = {
    {"warning", WARNING, false}, {"error", ERROR, false}, {nullptr, 0, false}};

int shard_source = 0;
const struct config_enum_entry shard_sources[] = {
    {"config", 0, false}, {"etcd", 1, false}, {nullptr, 0, false}};

char *shard_pool_setting = nullptr;

bool check_shard_pool(char **newval, void **, GucSource) noexcept {
  uint32_t low, high;
  if (parse_shard_pool(*newval, kMaxShard, &low, &high)) return true;
  GUC_check_errdetail("snowflake.shard_pool is a range of shards \"low-high\" within 0-%u.",
                      kMaxShard);
  return false;
}

void assign_shard_pool(const char *newval, void *) {
  (void)parse_shard_pool(newval, kMaxShard, &shard_pool_low, &shard_pool_high);
}

// Nothing thrown may leave a check hook: the message is kept in a buffer of fixed size.
char endpoints_error[256];

bool endpoints_valid(const char *text) noexcept {
  try {
    std::vector<std::string> urls;
    std::string error;
    if (parse_endpoints(text, &urls, &error)) return true;
    snprintf(endpoints_error, sizeof endpoints_error, "%s", error.c_str());
  } catch (...) {
    snprintf(endpoints_error, sizeof endpoints_error, "out of memory");
  }
  return false;
}

bool check_etcd_endpoints(char **newval, void **, GucSource) noexcept {
  if (endpoints_valid(*newval)) return true;
  GUC_check_errdetail("%s.", endpoints_error);
  return false;
}

bool check_etcd_prefix(char **newval, void **, GucSource) noexcept {
  const char *p = *newval;
  if (p[0] == '/' && p[std::strlen(p) - 1] != '/') return true;
  GUC_check_errdetail("The prefix starts with \"/\" and does not end with one.");
  return false;
}

// Lease mode's settings that do not fit together, as found at start.
void find_lease_setting_problem() {
  std::string problem = snowflake::lease_settings_problem(configured_lease());
  if (problem.empty() && shard_id_in_file)
    problem =
        "snowflake.shard_id is set in the configuration file, but snowflake.shard_source "
        "is etcd: the shards come from the lease";
  snprintf(lease_setting_problem, sizeof lease_setting_problem, "%s", problem.c_str());
}

void check_lease_settings() noexcept {
  if (!lease_mode) return;
  try {
    find_lease_setting_problem();
  } catch (...) {
    snprintf(lease_setting_problem, sizeof lease_setting_problem, "out of memory at start");
  }
}

}  // namespace

void define_settings() {
  // Before snowflake.shard_id is defined: its check refuses any value in lease mode.
  DefineCustomEnumVariable(
      "snowflake.shard_source", "Where this server's shards come from: config or etcd.",
      "config: snowflake.shard_id and snowflake.shard_count. etcd: a lease of "
      "snowflake.shard_count shards from snowflake.shard_pool, held in etcd.",
      &shard_source, 0, shard_sources,
      process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0, nullptr,
      nullptr, nullptr);
  lease_mode = shard_source == 1 && process_shared_preload_libraries_in_progress;
  shard_id_in_file = lease_mode && GetConfigOption("snowflake.shard_id", true, false) != nullptr;
  if (!lease_mode) check_file_value("snowflake.shard_id", valid_shard_text);
  check_file_value("snowflake.epoch", valid_epoch_text);
  DefineCustomIntVariable(
      "snowflake.shard_id", "Shard written into IDs made by snowflake().",
      "Give every server (or database, or role) that writes into the same tables its own "
      "shard; two writers with one shard can make the same ID.",
      &shard_id, 0, 0, static_cast<int>(kMaxShard), PGC_SUSET, 0, check_shard_id, assign_shard_id,
      nullptr);
  find_shard_id_record();
  DefineCustomEnumVariable(
      "snowflake.on_shard_collision",
      "What snowflake_replica_guard() does with a replicated row whose ID has this server's "
      "own shard.",
      "warning (the default) reports it in the log and in snowflake_status(); error stops "
      "the row, and with it the subscription, as a key conflict would.",
      &on_shard_collision, WARNING, collision_levels, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "snowflake.shard_count",
      "How many shards, from snowflake.shard_id on, snowflake() issues on.",
      "A shard holds 1,024 IDs per millisecond; a range of them raises the server's rate that "
      "many times. Give every server a range of its own.",
      &shard_count, 1, 1, static_cast<int>(kShardCount),
      // Fixed at start when preloaded, like the shared state it sizes the use of.
      process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0, nullptr,
      nullptr, nullptr);
  DefineCustomIntVariable(
      "snowflake.max_lead",
      "How far ahead of the clock IDs may run when a shard's 1,024 "
      "IDs of a millisecond are used up.",
      "Past this lead, snowflake() waits for the clock. The lead is shared by every session, "
      "so the bound is the server's, set in its configuration.",
      &max_lead_ms, 1024, 0, 3600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "snowflake.block_max_lead",
      "How far ahead of the clock a block (snowflake_block) may move its shard's IDs.",
      "A block of n IDs reaches about n / 1,024 ms ahead; a larger one is refused, and one that "
      "does not fit yet waits in line. Bounded by snowflake.max_lead too. Only a superuser, or a "
      "role granted SET on it, changes it: ALTER ROLE ... SET gives a trusted loader more.",
      &block_max_lead_ms, 100, 0, 3600000, PGC_SUSET, GUC_UNIT_MS, nullptr, nullptr, nullptr);
  DefineCustomStringVariable(
      "snowflake.epoch", "Epoch of snowflake IDs, in milliseconds since 1970-01-01 UTC.",
      "The default is 2020-01-01 00:00:00 UTC. Changing it changes the meaning of every "
      "stored ID.",
      &epoch_setting, "1577836800000",
      // PostgreSQL allows server-start-only settings only to preloaded libraries; loaded
      // later, the library can only decode, and reads the epoch at load and reload.
      process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0, check_epoch,
      assign_epoch, nullptr);
  DefineCustomIntVariable(
      "snowflake.reservation_window", "How far ahead each durable reservation of ID time reaches.",
      "IDs of every kind stay below a time recorded in the data directory, written and "
      "fsynced before any ID reaches it; one write per window.",
      &reservation_window_ms, 1000, 10, 3600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr,
      nullptr);
  DefineCustomIntVariable(
      "snowflake.max_clock_offset",
      "How far ahead of this server's clock an ID given to snowflake_observe() may be.",
      "An observed ID further ahead is refused with an ERROR: one bad ID must not move every "
      "ID of the server far into the future. Set it above the clock offset between the "
      "servers whose IDs are observed.",
      // The server's, like max_lead: the clock it bounds is shared by every role.
      &max_clock_offset_ms, 5000, 0, 3600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "snowflake.reservation_timeout",
      "How long a generator waits for the reservation writer before an ERROR.",
      "A generator waits only when a value would reach the durable reservation; if the writer "
      "has not extended it by then (a hung disk, WAL flush or synchronous standby), the "
      "generator raises an ERROR that names the writer.",
      &reservation_timeout_ms, 10000, 100, 3600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr,
      nullptr);
  DefineCustomStringVariable(
      "snowflake.mask_key_file", "The file of keys that mask IDs shown outside the database.",
      "In the data directory or an absolute path, mode 0600: one key a line, \"ID HEX "
      "[active]\" (ID 0 to 255, HEX 64 hex digits). Read at start and on reload; no SQL shows "
      "a key.",
      &mask_key_file, "", PGC_SIGHUP, 0, check_mask_key_file, assign_mask_key_file, nullptr);
  DefineCustomStringVariable(
      "snowflake.etcd_endpoints",
      "Client URLs of the etcd cluster that leases shards (snowflake.shard_source = etcd).",
      "Comma-separated http:// or https:// URLs of one etcd cluster's members.", &etcd_endpoints,
      "", PGC_SIGHUP, 0, check_etcd_endpoints, nullptr, nullptr);
  DefineCustomStringVariable(
      "snowflake.etcd_prefix", "The fleet's key prefix in etcd.",
      "Servers with the same prefix share one pool of shards.", &etcd_prefix, "/snowflake",
      process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0,
      check_etcd_prefix, nullptr, nullptr);
  DefineCustomStringVariable(
      "snowflake.shard_pool", "The shards a fleet leases from, as low-high.",
      "Each server leases snowflake.shard_count contiguous shards of it.", &shard_pool_setting,
      "0-8191", process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0,
      check_shard_pool, assign_shard_pool, nullptr);
  DefineCustomIntVariable(
      "snowflake.lease_ttl", "The shard lease's time to live in etcd.",
      "etcd frees the shards this long after the last renewal it received.", &lease_ttl_s, 30, 2,
      3600, process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, GUC_UNIT_S,
      nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "snowflake.lease_renew", "How often the shard lease is renewed.", nullptr, &lease_renew_ms,
      10000, 100, 3600000,
      process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, GUC_UNIT_MS,
      nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "snowflake.lease_fail_after",
      "With no renewal of the shard lease for this long, snowflake() refuses.",
      "Below snowflake.lease_ttl, so that the server stops issuing before etcd can give its "
      "shards to another server.",
      &lease_fail_after_ms, 15000, 200, 3600000,
      process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, GUC_UNIT_MS,
      nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "snowflake.lease_restore_margin",
      "After etcd was restored from a snapshot: how far above its mark and the server's clock "
      "the IDs of a range taken start.",
      "A restored etcd holds marks older than the IDs issued since the snapshot.",
      &lease_restore_margin_ms, 0, 0, 7 * 86400000,
      process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, GUC_UNIT_MS,
      nullptr, nullptr, nullptr);
  DefineCustomStringVariable("snowflake.etcd_cafile",
                             "The CA certificate that etcd's server certificates are checked "
                             "against (https:// endpoints).",
                             nullptr, &etcd_cafile, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY, nullptr,
                             nullptr, nullptr);
  DefineCustomStringVariable(
      "snowflake.etcd_certfile", "The client certificate shown to etcd (https:// endpoints).",
      nullptr, &etcd_certfile, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY, nullptr, nullptr, nullptr);
  DefineCustomStringVariable("snowflake.etcd_keyfile", "The client certificate's private key.",
                             nullptr, &etcd_keyfile, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY, nullptr,
                             nullptr, nullptr);
  DefineCustomStringVariable("snowflake.etcd_user", "The etcd user to authenticate as.", nullptr,
                             &etcd_user, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY, nullptr, nullptr,
                             nullptr);
  DefineCustomStringVariable(
      "snowflake.etcd_password_file",
      "A file that holds the etcd user's password (mode 0600, like ssl_key_file).",
      "The password itself is never a setting's value.", &etcd_password_file, "", PGC_SIGHUP,
      GUC_SUPERUSER_ONLY, nullptr, nullptr, nullptr);
  DefineCustomBoolVariable(
      "snowflake.etcd_allow_plaintext_password",
      "Allows sending the etcd user's password to http:// endpoints, in clear.",
      "Off by default: with snowflake.etcd_user set and an http:// endpoint, the lease worker "
      "refuses to authenticate. Turn on only where the network to etcd is trusted.",
      &etcd_allow_plaintext_password, false, PGC_SIGHUP, GUC_SUPERUSER_ONLY, nullptr, nullptr,
      nullptr);
  check_lease_settings();
  MarkGUCPrefixReserved("snowflake");
}

LeaseSettings configured_lease() {
  LeaseSettings s;
  s.pool_low = shard_pool_low;
  s.pool_high = shard_pool_high;
  s.count = static_cast<uint32_t>(shard_count);
  s.ttl_ms = int64_t{lease_ttl_s} * 1000;
  s.renew_ms = lease_renew_ms;
  s.fail_after_ms = lease_fail_after_ms;
  s.restore_margin_ms = lease_restore_margin_ms;
  return s;
}

void raise_bad_setting() {
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("%s is \"%s\" in the configuration, which is not a valid value", bad_setting_name,
                  bad_setting_value),
           errdetail("PostgreSQL runs with the setting's default instead; snowflake() issues "
                     "no ID with it, since another server may hold the default."),
           errhint("Correct %s in the configuration file and reload the server (restart it, "
                   "for snowflake.epoch).",
                   bad_setting_name)));
  pg_unreachable();
}

namespace {

constexpr char kPrefix[] = "snowflake.";
constexpr size_t kPrefixLen = sizeof kPrefix - 1;

// The name of the extension's settings nearest to name (PostgreSQL's Levenshtein distance,
// as its "Perhaps you meant" hints use).
const char *nearest_setting(const char *name) {
  int count = 0;
  struct config_generic **vars = SNOWFLAKE_GUC_VARIABLES(&count);
  const char *best = nullptr;
  int best_distance = 0;
  for (int i = 0; i < count; ++i) {
    const char *known = vars[i]->name;
    if (std::strncmp(known, kPrefix, kPrefixLen) != 0 ||
        (vars[i]->flags & GUC_CUSTOM_PLACEHOLDER) != 0)
      continue;
    const int d = varstr_levenshtein(name, static_cast<int>(std::strlen(name)), known,
                                     static_cast<int>(std::strlen(known)), 1, 1, 1, true);
    if (best == nullptr || d < best_distance) {
      best = known;
      best_distance = d;
    }
  }
  return best;
}

// Reads the configuration files as PostgreSQL does at a reload: the file with what it
// includes, then ALTER SYSTEM's (relative to the data directory). A file or line that cannot
// be read adds an entry with no name, which is passed over, as PostgreSQL does.
UnknownSettings read_unknown_settings() {
  ConfigVariable *head = nullptr, *tail = nullptr;
  (void)ParseConfigFile(ConfigFileName, false, nullptr, 0, 0, DEBUG1, &head, &tail);
  (void)ParseConfigFile(PG_AUTOCONF_FILENAME, false, nullptr, 0, 0, DEBUG1, &head, &tail);
  StringInfoData names, places;
  initStringInfo(&names);
  initStringInfo(&places);
  for (const ConfigVariable *v = head; v != nullptr; v = v->next) {
    if (v->ignore || v->name == nullptr || pg_strncasecmp(v->name, kPrefix, kPrefixLen) != 0 ||
        GetConfigOption(v->name, true, false) != nullptr)
      continue;
    const char *nearest = nearest_setting(v->name);
    char hint[128] = "";
    if (nearest != nullptr) snprintf(hint, sizeof hint, "; did you mean %s?", nearest);
    appendStringInfo(&places, "%s%s (%s line %d%s)", places.len > 0 ? "; " : "", v->name,
                     v->filename != nullptr ? v->filename : "?", v->sourceline, hint);
    // Each name once in the short form, whatever files name it.
    bool seen = false;
    for (const ConfigVariable *w = head; w != v && !seen; w = w->next)
      seen = !w->ignore && w->name != nullptr && pg_strcasecmp(w->name, v->name) == 0;
    if (!seen)
      appendStringInfo(&names, "%s%s%s%s%s", names.len > 0 ? "; " : "", v->name,
                       nearest != nullptr ? " (" : "", nearest != nullptr ? hint + 2 : "",
                       nearest != nullptr ? ")" : "");
  }
  FreeConfigVariables(head);
  return UnknownSettings{names.len > 0 ? names.data : nullptr,
                         places.len > 0 ? places.data : nullptr};
}

}  // namespace

UnknownSettings unknown_settings() {
  // Read once per load of the configuration in this process (PgReloadTime): the files as the
  // server last loaded them, and a monitoring query that repeats reads nothing again.
  static TimestampTz read_for = 0;
  static UnknownSettings cached{nullptr, nullptr};
  if (read_for != 0 && read_for == PgReloadTime) return cached;
  MemoryContext scratch =
      AllocSetContextCreate(CurrentMemoryContext, "snowflake settings", ALLOCSET_SMALL_SIZES);
  MemoryContext was = MemoryContextSwitchTo(scratch);
  const UnknownSettings found = read_unknown_settings();
  MemoryContextSwitchTo(was);
  if (cached.names != nullptr) pfree(const_cast<char *>(cached.names));
  if (cached.places != nullptr) pfree(const_cast<char *>(cached.places));
  cached.names =
      found.names != nullptr ? MemoryContextStrdup(TopMemoryContext, found.names) : nullptr;
  cached.places =
      found.places != nullptr ? MemoryContextStrdup(TopMemoryContext, found.places) : nullptr;
  MemoryContextDelete(scratch);
  read_for = PgReloadTime;
  return cached;
}

int shard_id_source() {
  return shard_id_record != nullptr ? static_cast<int>(shard_id_record->source) : PGC_S_DEFAULT;
}

void refuse_unknown_on_default_shard() {
  if (shard_id_source() != PGC_S_DEFAULT) return;
  const UnknownSettings unknown = unknown_settings();
  if (unknown.names == nullptr) return;
  // Where in the files, in the server's log alone: the configuration files' paths are for
  // roles that may read the server's settings.
  ereport(ERROR,
          (errcode(ERRCODE_UNDEFINED_OBJECT),
           errmsg("unrecognized configuration parameter in the configuration: %s", unknown.names),
           errdetail("PostgreSQL ignores a name it does not know, so this server would issue "
                     "IDs on shard 0, every server's default; two servers with the same "
                     "misspelling would issue the same IDs."),
           errdetail_log("Found at: %s.", unknown.places),
           errhint("Correct the name in the configuration file and reload the server (restart "
                   "it, for snowflake.shard_source), or set snowflake.shard_id. "
                   "snowflake_status().unknown_settings shows where it is.")));
  pg_unreachable();
}

void report_default_shard() {
  if (lease_mode || shard_id_source() != PGC_S_DEFAULT || shared == nullptr) return;
  int expected = 0;
  if (!shared->reservation.default_shard_reported.compare_exchange_strong(expected, 1)) return;
  ereport(WARNING,
          (errmsg("snowflake.shard_id is not set: snowflake() issues IDs on shard 0"),
           errdetail("Two servers on one shard can issue the same ID, and shard 0 is every "
                     "server's default."),
           errhint("Set snowflake.shard_id in the configuration of every server that writes "
                   "the same tables, each to its own shard.")));
}

}  // namespace snowflake::glue
