// What every generator shares (streams.cpp): where the 128-bit kinds generate from, the
// limits of a stream, and what a generator does when its step issued nothing.
#pragma once

#include "glue/pg.hpp"
#include "glue/system_clock.hpp"
#include "glue/reservation.hpp"
#include "glue/settings.hpp"
#include "glue/shmem.hpp"

namespace snowflake::glue {

[[noreturn]] void raise_exhausted(const char *kind);

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

}  // namespace snowflake::glue
