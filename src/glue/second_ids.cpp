// The generators of the one-second kinds: rsxid() (rs/xid's 12 bytes) and ksuid() (Segment's
// KSUID, 20 bytes), each a stream per shard of core/second_stream.hpp run by the one issue
// loop. The types (I/O, comparison, casts) are the types' own files; a value here is the raw
// bytes, as those types hold them (fixed length, no header).
#include "core/second_stream.hpp"

#include "glue/lease_wait.hpp"
#include "glue/random.hpp"
#include "glue/streams.hpp"

extern "C" {
#include "miscadmin.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

[[noreturn]] pg_noinline void raise_before_ksuid_epoch(uint64_t unix_ms) {
  ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                  errmsg("the clock is before the start of KSUID time"),
                  errdetail("The clock reads %llu ms since 1970; KSUID time begins at "
                            "2014-05-13 16:53:20 UTC.",
                            static_cast<unsigned long long>(unix_ms))));
  pg_unreachable();
}

// A one-second kind as the issue loop's kind (core/issue_loop.hpp). The shard is the
// session's: snowflake.shard_id (with a range of shards, its first), or in lease mode the first
// shard of the range leased, read from the lease word the loop checks.
struct SecondKind {
  seconds::StreamsT<PgSpinLock> &streams;
  const seconds::Format &format;
  const char *name;
  uint32_t shard;

  uint64_t origin_unix_ms() const { return format.origin_unix_ms(); }
  // An xid's time begins at Unix 0: only a KSUID's origin can be ahead of the clock.
  [[noreturn]] void raise_before_origin(uint64_t unix_ms) { raise_before_ksuid_epoch(unix_ms); }
  [[noreturn]] void raise_exhausted(const IssueStep &) { glue::raise_exhausted(name); }

  IssueStep step(const IssueInput &in) {
    if (in.lease_word != 0) shard = lease_word_first(in.lease_word);
    // The shard's own stream (core/stream_shard.hpp).
    const NextResult r = issue_for_shard(streams.shards, shard, [&](std::atomic<uint64_t> &last) {
      return seconds::next(last, streams.floor_unix_ms, in.now_unix_ms,
                           static_cast<uint64_t>(max_lead_ms), in.limit_unix_ms, format);
    });
    return IssueStep{r.step, r.value,
                     r.step == Step::kIssued
                         ? seconds::issued_high_unix_ms(r.value, in.now_unix_ms, format)
                         : 0};
  }
};

// The word and shard of the next value of a stream of the shared state.
IssueStep issue(SecondKind &kind, SharedState &state) {
  if (!lease_mode) check_snowflake_settings();
  IssueEnv env = IssueEnv::of(state);
  return issue_loop(env, kind);
}

}  // namespace

SNOWFLAKE_FUNCTION(rsxid_generate) {
  SharedState &state = generating_state();
  SecondKind kind{state.streams.rsxid, seconds::kXid, "rsxid", static_cast<uint32_t>(shard_id)};
  const IssueStep r = issue(kind, state);
  // The type's value is the bytes themselves (fixed length, no header): composed in place.
  uint8_t *out = static_cast<uint8_t *>(palloc(seconds::kXidBytes));
  seconds::compose_xid(r.value, kind.shard, static_cast<uint32_t>(PostmasterPid), out);
  return PointerGetDatum(out);
}

SNOWFLAKE_FUNCTION(ksuid_generate) {
  SharedState &state = generating_state();
  SecondKind kind{state.streams.ksuid, seconds::kKsuid, "ksuid", static_cast<uint32_t>(shard_id)};
  const IssueStep r = issue(kind, state);
  uint8_t *out = static_cast<uint8_t *>(palloc(seconds::kKsuidBytes));
  seconds::compose_ksuid(r.value, kind.shard, out);
  random_bytes<seconds::kKsuidRandomBytes>(out + seconds::kKsuidRandomOffset);
  return PointerGetDatum(out);
}
