// PostgreSQL's own errors a user of the extension meets, with a hint that names the fix: an
// expression index, partition key or generated column on snowflake_timestamp(id) (STABLE: it
// reads snowflake.epoch) is refused by the server before any of our code runs, so the hint is
// added where the error is reported (emit_log_hook), from the statement's text; and a call of
// a function PUBLIC may not call (snowflake(shard), the observers, the status functions) gets
// who grants it.
#include <cstring>
#include <ctime>

#include "glue/pg.hpp"
#include "glue/settings.hpp"

extern "C" {
#include "tcop/tcopprot.h"
#include "utils/elog.h"
#include "utils/memutils.h"
}

namespace snowflake::glue {

namespace {

emit_log_hook_type prev_emit_log_hook = nullptr;

// The server's messages (untranslated, as edata->message_id holds them) that refuse a
// non-IMMUTABLE function where our decoders are often put.
bool is_immutable_refusal(const char *message_id) {
  static const char *const kRefusals[] = {
      "functions in index expression must be marked IMMUTABLE",
      "functions in partition key expression must be marked IMMUTABLE",
      "generation expression is not immutable",
  };
  if (message_id == nullptr) return false;
  for (const char *refusal : kRefusals)
    if (std::strcmp(message_id, refusal) == 0) return true;
  return false;
}

// The extension's functions that PUBLIC may not call, by name as "permission denied for
// function NAME" gives it, and who grants them.
const char *grant_hint(const char *message) {
  static const struct {
    const char *name, *hint;
  } kGrants[] = {
      {"snowflake",
       "snowflake(shard) issues on a shard the caller chooses: the extension's owner (see "
       "\\dx snowflake) grants it: GRANT EXECUTE ON FUNCTION snowflake(integer) TO role."},
      {"snowflake_observe",
       "snowflake_observe() moves the IDs' clock of every role: the extension's owner (see "
       "\\dx snowflake) grants it: GRANT EXECUTE ON FUNCTION snowflake_observe(bigint) TO role."},
      {"snowflake_observe_trigger",
       "The extension's owner (see \\dx snowflake) grants it: GRANT EXECUTE ON FUNCTION "
       "snowflake_observe_trigger() TO role."},
      {"snowflake_replica_guard",
       "The extension's owner (see \\dx snowflake) grants it: GRANT EXECUTE ON FUNCTION "
       "snowflake_replica_guard() TO role."},
      {"snowflake_status", "It is pg_monitor's: GRANT pg_monitor TO role."},
      {"snowflake_streams", "It is pg_monitor's: GRANT pg_monitor TO role."},
      {"snowflake_reservation_create", "Only a superuser may call it."},
  };
  const char *space = message != nullptr ? std::strrchr(message, ' ') : nullptr;
  if (space == nullptr) return nullptr;
  for (const auto &g : kGrants)
    if (std::strcmp(space + 1, g.name) == 0) return g.hint;
  return nullptr;
}

// Never raises: it runs while an error is being reported.
void add_hint(ErrorData *edata) {
  if (edata->elevel == ERROR && edata->hint == nullptr &&
      edata->sqlerrcode == ERRCODE_INSUFFICIENT_PRIVILEGE && edata->message_id != nullptr &&
      std::strcmp(edata->message_id, "permission denied for function %s") == 0) {
    const char *hint = grant_hint(edata->message);
    if (hint != nullptr) edata->hint = MemoryContextStrdup(ErrorContext, hint);
  }
  if (edata->elevel == ERROR && edata->hint == nullptr && debug_query_string != nullptr &&
      is_immutable_refusal(edata->message_id)) {
    const char *call = nullptr;
    if (std::strstr(debug_query_string, "snowflake_timestamp(") != nullptr ||
        std::strstr(debug_query_string, "snowflake_decode(") != nullptr)
      call = "snowflake_timestamp(id";
    else if (std::strstr(debug_query_string, "snowflake_at(") != nullptr)
      call = "snowflake_at(ts";
    if (call != nullptr) {
      // The epoch as a timestamptz literal in UTC, to the millisecond where it has one.
      const long long ms = static_cast<long long>(epoch_ms);
      const time_t secs = static_cast<time_t>(ms / 1000 - (ms % 1000 < 0 ? 1 : 0));
      const int frac = static_cast<int>(ms - static_cast<long long>(secs) * 1000);
      struct tm tm {};
      char when[48] = "";
      if (gmtime_r(&secs, &tm) != nullptr) {
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        if (frac != 0)
          snprintf(when + std::strlen(when), sizeof when - std::strlen(when), ".%03d", frac);
      }
      char hint[320];
      snprintf(hint, sizeof hint,
               "The forms of the snowflake decoders without an epoch read snowflake.epoch and "
               "are STABLE; the form that names the epoch is IMMUTABLE: %s, epoch => "
               "timestamptz '%s+00').",
               call, when);
      edata->hint = MemoryContextStrdup(ErrorContext, hint);
    }
  }
  if (prev_emit_log_hook != nullptr) prev_emit_log_hook(edata);
}

}  // namespace

void install_hints() {
  prev_emit_log_hook = emit_log_hook;
  emit_log_hook = add_hint;
}

}  // namespace snowflake::glue
