// Shared by the glue files: the PostgreSQL headers (after every C++ header), the settings,
// the shared state and the wrapper that keeps C++ exceptions out of the server.
#pragma once

#include "../core/chacha.hpp"
#include "../core/generator.hpp"
#include "../core/shared_state.hpp"
#include "../core/tsc_clock.hpp"

#include <cstdint>
#include <cstring>
#include <ctime>
#include <exception>

// The module is built with hidden visibility: only what the server looks up by name (the
// SQL-callable functions, their info records, the magic block, _PG_init) is exported, as
// PostgreSQL 16's build does for modules; the rest is reached without the GOT.
#ifndef PGDLLEXPORT
#define PGDLLEXPORT __attribute__((visibility("default")))
#endif

extern "C" {
#include "postgres.h"

#include "pg_compat.hpp"

#include "fmgr.h"
#include "miscadmin.h"
#include "access/xlog.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/timestamp.h"
}

namespace snowflake::glue {

// The ULID stream's lock: PostgreSQL's spinlock, which detects a lock stuck for minutes
// (a bug) with a PANIC instead of spinning for ever. Held only inside ulid_next, for a few
// instructions that cannot fail.
struct PgSpinLock {
  slock_t lock;
  void init() noexcept { SpinLockInit(&lock); }
  void acquire() noexcept { SpinLockAcquire(&lock); }
  void release() noexcept { SpinLockRelease(&lock); }
};
using SharedState = SharedStateT<PgSpinLock>;
using Streams128 = Streams128T<PgSpinLock>;

// Settings (module.cpp).
extern int shard_id;       // snowflake.shard_id
extern int shard_count;    // snowflake.shard_count: snowflake() issues on shard_id ... + count - 1
extern int on_shard_collision;  // snowflake.on_shard_collision: WARNING or ERROR
extern int shard_id_source;     // the GucSource snowflake.shard_id was last set from
// A snowflake.shard_id or snowflake.epoch in the configuration file that is not valid: the
// server would otherwise run on the default (shard 0, epoch 2020) with a WARNING in its log,
// so snowflake() refuses instead (check_snowflake_settings).
extern const char *bad_setting_name;
extern char bad_setting_value[64];
[[noreturn]] void raise_bad_setting();
void report_default_shard();
// Before issuing a snowflake ID: refused for a bad setting; said once per server when the
// shard is the default, set nowhere. One test of a flag on the hot path.
extern bool snowflake_settings_checked;
inline void check_snowflake_settings() {
  if (unlikely(!snowflake_settings_checked)) {
    if (bad_setting_name != nullptr) raise_bad_setting();
    report_default_shard();
    snowflake_settings_checked = true;
  }
}
extern int max_lead_ms;    // snowflake.max_lead
extern int max_clock_offset_ms;  // snowflake.max_clock_offset
extern int64_t epoch_ms;   // snowflake.epoch, parsed
// Epochs (the setting's and the epoch arguments') from 1970 to 2100: wide enough for every
// real scheme (Instagram's is 2011), narrow enough that no conversion to timestamptz can
// overflow.
constexpr int64_t kMaxEpochMs = 4102444800000;
extern int reservation_window_ms;  // snowflake.reservation_window
extern int reservation_timeout_ms; // snowflake.reservation_timeout

// The shared state, or nullptr when the library was not preloaded.
extern SharedState *shared;

[[noreturn]] void raise_not_preloaded();
[[noreturn]] void raise_exhausted(const char *kind);

// The durable reservation (reservation.cpp).
// In _PG_init: the background worker that writes the reservation, and the custom WAL
// resource manager that carries it to standbys and backups.
void register_reservation_writer();
void register_reservation_wal();
// At server start (shmem_startup_hook): read the reservation, make it the floor of the IDs'
// time, and lower it at the postmaster's exit.
void load_reservation(SharedState &state);
// Where generators sleep while they wait for the writer (in shared memory, next to the state).
extern ConditionVariable *reservation_cv;
// Waits (interruptibly, for at most snowflake.reservation_timeout) until the reservation
// covers needed_unix_ms, or raises an ERROR: also when the server refuses to generate.
void await_reservation(uint64_t needed_unix_ms);
// Why this server refuses to generate (its reservation file is missing, its epoch changed),
// or nullptr.
const char *generation_refused();
// snowflake_reservation_create(): a server whose reservation file is missing may generate
// again, from the clock; without one yet (not preloaded), the file is made.
void create_reservation();
// Asks the writer to extend the reservation past unix_ms, without waiting.
void request_reservation(Reservation &r, uint64_t unix_ms);

[[noreturn]] void raise_in_recovery();

// Refuses to generate while the server is in recovery. Once a backend has seen recovery
// over, it stays over for that backend (as RecoveryInProgress() itself assumes), so the hot
// path pays one test of a local flag.
extern bool recovery_seen_over;
inline void check_not_in_recovery() {
  if (unlikely(!recovery_seen_over)) {
    if (RecoveryInProgress()) raise_in_recovery();
    // A bad epoch reaches every kind: the reservation records the epoch.
    if (bad_setting_name != nullptr && std::strcmp(bad_setting_name, "snowflake.epoch") == 0)
      raise_bad_setting();
    recovery_seen_over = true;
  }
}

// The shared state; raises the "not preloaded" ERROR when it does not exist.
inline SharedState &require_shared() {
  if (unlikely(shared == nullptr)) raise_not_preloaded();
  return *shared;
}

// The same, for generating: refused on a server in recovery (a standby has its primary's
// shard and no reservation of its own).
inline SharedState &generating_state() {
  check_not_in_recovery();
  return require_shared();
}

// The clock, inline because it is on every ID's path (clock_glue.cpp has the slow paths).
extern LocalClock local_clock;
void report_clock_event(const ClockTick &tick);
[[noreturn]] void raise_before_epoch(int64_t unix_ms);

inline int64_t read_clock(clockid_t id) noexcept {
  struct timespec ts;
  clock_gettime(id, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// The monotonic clock through the time-stamp counter (TscMono), where the kernel keeps time
// by it (use_tsc, set in _PG_init); else the real clock.
extern TscMono tsc_mono;
extern bool use_tsc;
void detect_tsc();
inline int64_t read_mono_fast() {
#if defined(__x86_64__)
  if (likely(use_tsc))
    return tsc_mono.now([] { return __builtin_ia32_rdtsc(); },
                        [] { return read_clock(CLOCK_MONOTONIC); });
#endif
  return read_clock(CLOCK_MONOTONIC);
}

// The never-backwards clock in Unix milliseconds; reports clock steps as WARNINGs.
inline uint64_t clock_now_unix_ms(ClockState &clock) {
  const ClockTick tick = clock_now(
      clock, local_clock, [] { return read_mono_fast(); },
      [] { return read_clock(CLOCK_MONOTONIC); }, [] { return read_clock(CLOCK_REALTIME); });
  if (unlikely(tick.event != ClockEvent::kNone)) report_clock_event(tick);
  return static_cast<uint64_t>(tick.unix_ns / 1000000);
}

// The same in milliseconds since snowflake.epoch; an ERROR when the clock is before it.
inline uint64_t clock_now_ms(ClockState &clock) {
  const int64_t unix_ms = static_cast<int64_t>(clock_now_unix_ms(clock));
  if (unlikely(unix_ms < epoch_ms)) raise_before_epoch(unix_ms);
  return static_cast<uint64_t>(unix_ms - epoch_ms);
}

// Where the 128-bit kinds generate from: the shared state when preloaded, else state of
// this backend alone (monotonic per backend).
struct Sources128 {
  ClockState &clock;
  Streams128 &streams;
  Reservation *reservation;  // nullptr without preloading: nothing durable
};
Sources128 backend_sources128();
inline Sources128 sources128() {
  check_not_in_recovery();
  if (likely(shared != nullptr))
    return Sources128{shared->clock, shared->streams, &shared->reservation};
  return backend_sources128();
}

// After a value at unix_ms is issued, with the clock at now_unix_ms: close to the
// reservation, ask the writer for more now, so that no generator has to wait for it.
inline void after_issue(Reservation *r, uint64_t unix_ms, uint64_t now_unix_ms) {
  if (r != nullptr &&
      unlikely(reservation_due(unix_ms, r->reserved_unix_ms.load(std::memory_order_relaxed),
                               static_cast<uint64_t>(reservation_window_ms),
                               unix_ms > now_unix_ms ? unix_ms - now_unix_ms : 0)))
    request_reservation(*r, unix_ms);
}

// The limits of a stream whose milliseconds count from origin_unix_ms.
inline Limits stream_limits(const Reservation *r, uint64_t max_ms, uint64_t origin_unix_ms) {
  uint64_t reserved = UINT64_MAX;
  if (r != nullptr) {
    const uint64_t unix_ms = r->reserved_unix_ms.load(std::memory_order_acquire);
    reserved = unix_ms > origin_unix_ms ? unix_ms - origin_unix_ms : 0;
  }
  return Limits{static_cast<uint64_t>(max_lead_ms), max_ms, reserved};
}

// The wait event that pg_stat_activity shows for a wait of the extension's: on 17 and later a
// name of its own (registered by the first backend that waits, then kept in *cache); before,
// the generic "Extension".
uint32 named_wait_event(const char *name, uint32 *cache);

// Sleeps about ms milliseconds, or less; a cancel, statement_timeout or postmaster death ends
// the wait.
void wait_for_clock(uint64_t ms);

// What a generator does when its step issued nothing, before it tries again: extend the
// reservation to cover value (kReserve, in Unix ms), wait value ms for the clock at
// snowflake.max_lead (kWait, counted for snowflake_status()), or raise the ERROR that the
// kind's range is used up (kExhausted).
inline void settle(Step step, uint64_t value, Reservation *r, const char *kind) {
  if (step == Step::kReserve) {
    await_reservation(value);
  } else if (step == Step::kWait) {
    if (r != nullptr) r->lead_waits.fetch_add(1, std::memory_order_relaxed);
    wait_for_clock(value);
  } else {
    raise_exhausted(kind);
  }
}

// Random bits from this backend's ChaCha20 stream, seeded from pg_strong_random in this
// process on first use (so never shared with a parent or sibling process).
extern RandomStream random_stream;
extern int random_stream_pid;
void seed_random_stream();
inline uint64_t random_u64() {
  if (unlikely(random_stream_pid != MyProcPid)) seed_random_stream();
  return random_stream.next_u64();
}

// A 64-bit ID argument, refused when negative (IDs of every 64-bit layout are positive
// bigints); kind names the layout in the message ("snowflake", "twitter", ...).
[[noreturn]] void raise_negative_id(int64 id, const char *kind);
inline uint64_t checked_id(int64 id, const char *kind = "snowflake") {
  if (unlikely(id < 0)) raise_negative_id(id, kind);
  return static_cast<uint64_t>(id);
}

// The (ts, shard, seq) record that every decode function returns.
Datum decoded_record(FunctionCallInfo fcinfo, TimestampTz ts, uint32_t shard, uint32_t seq);

// Timestamps: milliseconds since the Unix epoch <-> timestamptz.
constexpr int64_t kUnixToPgEpochMs =
    int64_t{POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE} * SECS_PER_DAY * 1000;

inline TimestampTz unix_ms_to_timestamptz(int64_t unix_ms) {
  return (unix_ms - kUnixToPgEpochMs) * 1000;
}

// Floor of a finite timestamptz in Unix milliseconds; ERROR for infinity.
int64_t timestamptz_to_unix_ms(TimestampTz ts);

// The same, checked to fit 48 bits (UUIDv7 and ULID): 1970 to the year 10889.
uint64_t timestamptz_to_unix_ms48(TimestampTz ts);

// The message of the C++ exception being turned into an ERROR, kept outside the function's
// frame, so that no call reserves a buffer for it on its stack.
void keep_exception_message(const char *what) noexcept;
[[noreturn]] void raise_cxx_exception(const char *function);

}  // namespace snowflake::glue

// Defines an SQL-callable function whose body is C++: every exception is caught, the catch
// block is left, and only then is the PostgreSQL ERROR raised, so that the error's longjmp
// never crosses a C++ frame that still owns an object.
#define SNOWFLAKE_FUNCTION(name)                                                     \
  static Datum name##_impl([[maybe_unused]] FunctionCallInfo fcinfo);                \
  extern "C" {                                                                       \
  PG_FUNCTION_INFO_V1(name);                                                         \
  PGDLLEXPORT Datum name(PG_FUNCTION_ARGS) {                                         \
    try {                                                                            \
      return name##_impl(fcinfo);                                                    \
    } catch (const std::exception &e) {                                              \
      snowflake::glue::keep_exception_message(e.what());                             \
    } catch (...) {                                                                  \
      snowflake::glue::keep_exception_message("unknown C++ exception");              \
    }                                                                                \
    snowflake::glue::raise_cxx_exception(#name);                                     \
  }                                                                                  \
  }                                                                                  \
  static Datum name##_impl([[maybe_unused]] FunctionCallInfo fcinfo)
