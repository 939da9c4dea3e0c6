// The snowflake.* settings: their values, the checks of the values in the configuration file,
// and the refusal to generate on a bad one.
#include <cerrno>
#include <cstdlib>

#include "settings.hpp"
#include "state.hpp"

extern "C" {
#include "miscadmin.h"
#include "utils/guc.h"
}

namespace snowflake::glue {

int shard_id = 0;
int shard_count = 1;
int on_shard_collision = WARNING;
int shard_id_source = PGC_S_DEFAULT;
const char *bad_setting_name = nullptr;
char bad_setting_value[64];
bool snowflake_settings_checked = false;
int max_lead_ms = 1000;
int max_clock_offset_ms = 5000;
int64_t epoch_ms = kDefaultEpochMs;
int reservation_window_ms = 1000;
int reservation_timeout_ms = 10000;

namespace {

char *epoch_setting = nullptr;

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

bool check_epoch(char **newval, void **, GucSource source) {
  int64_t v;
  if (parse_epoch(*newval, &v)) {
    if (source == PGC_S_FILE && bad_setting_name != nullptr &&
        std::strcmp(bad_setting_name, "snowflake.epoch") == 0)
      bad_setting_name = nullptr;
    return true;
  }
  GUC_check_errdetail("snowflake.epoch must be a whole number of milliseconds since "
                      "1970-01-01 00:00:00 UTC, from 0 to %lld.",
                      static_cast<long long>(kMaxEpochMs));
  return false;
}

void assign_epoch(const char *newval, void *) {
  int64_t v;
  if (parse_epoch(newval, &v)) epoch_ms = v;
}

// The source of snowflake.shard_id's value, kept from the check hook (which is told it) to the
// assign hook (which is called only for the value that is set). A value from the
// configuration file that passed the check also mends a bad one found at start.
int pending_shard_source = PGC_S_DEFAULT;

bool check_shard_id(int *, void **, GucSource source) {
  pending_shard_source = source;
  if (source == PGC_S_FILE && bad_setting_name != nullptr &&
      std::strcmp(bad_setting_name, "snowflake.shard_id") == 0)
    bad_setting_name = nullptr;
  return true;
}

void assign_shard_id(int, void *) { shard_id_source = pending_shard_source; }

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

}  // namespace

void define_settings() {
  check_file_value("snowflake.shard_id", valid_shard_text);
  check_file_value("snowflake.epoch", valid_epoch_text);
  DefineCustomIntVariable(
      "snowflake.shard_id", "Shard written into IDs made by snowflake().",
      "Give every server (or database, or role) that writes into the same tables its own "
      "shard; two writers with one shard can make the same ID.",
      &shard_id, 0, 0, static_cast<int>(kMaxShard), PGC_SUSET, 0, check_shard_id,
      assign_shard_id, nullptr);
  DefineCustomEnumVariable(
      "snowflake.on_shard_collision",
      "What snowflake_replica_guard() does with a replicated row whose ID has this server's "
      "own shard.",
      "warning (the default) reports it in the log and in snowflake_status(); error stops "
      "the row, and with it the subscription, as a key conflict would.",
      &on_shard_collision, WARNING, collision_levels, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "snowflake.shard_count", "How many shards, from snowflake.shard_id on, snowflake() issues on.",
      "A shard holds 1,024 IDs per millisecond; a range of them raises the server's rate that "
      "many times. Give every server a range of its own.",
      &shard_count, 1, 1, static_cast<int>(kShardCount),
      // Fixed at start when preloaded, like the shared state it sizes the use of.
      process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0, nullptr,
      nullptr, nullptr);
  DefineCustomIntVariable(
      "snowflake.max_lead", "How far ahead of the clock IDs may run when a shard's 1,024 "
      "IDs of a millisecond are used up.",
      "Past this lead, snowflake() waits for the clock. The lead is shared by every session, so "
      "the bound is the server's, set in its configuration.",
      &max_lead_ms, 1000, 0, 3600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
  DefineCustomStringVariable(
      "snowflake.epoch", "Epoch of snowflake IDs, in milliseconds since 1970-01-01 UTC.",
      "The default is 2020-01-01 00:00:00 UTC. Changing it changes the meaning of every "
      "stored ID.",
      &epoch_setting, "1577836800000",
      // PostgreSQL allows server-start-only settings only to preloaded libraries; loaded
      // later, the library can only decode, and reads the epoch at load and reload.
      process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0,
      check_epoch, assign_epoch, nullptr);
  DefineCustomIntVariable(
      "snowflake.reservation_window",
      "How far ahead each durable reservation of ID time reaches.",
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
      &max_clock_offset_ms, 5000, 0, 3600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr,
      nullptr);
  DefineCustomIntVariable(
      "snowflake.reservation_timeout",
      "How long a generator waits for the reservation writer before an ERROR.",
      "A generator waits only when a value would reach the durable reservation; if the writer "
      "has not extended it by then (a hung disk, WAL flush or synchronous standby), the "
      "generator raises an ERROR that names the writer.",
      &reservation_timeout_ms, 10000, 100, 3600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr,
      nullptr);
  MarkGUCPrefixReserved("snowflake");
}

void raise_bad_setting() {
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("%s is \"%s\" in the configuration, which is not a valid value",
                  bad_setting_name, bad_setting_value),
           errdetail("PostgreSQL runs with the setting's default instead; snowflake() issues "
                     "no ID with it, since another server may hold the default."),
           errhint("Correct %s in the configuration file and reload the server (restart it, "
                   "for snowflake.epoch).",
                   bad_setting_name)));
  pg_unreachable();
}

void report_default_shard() {
  if (shard_id_source != PGC_S_DEFAULT || shared == nullptr) return;
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
