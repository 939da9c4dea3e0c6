// What every generator shares (streams.cpp): where the 128-bit kinds generate from, the
// reservation's request after a value, and the server's side of the one issue loop (IssueEnv).
#pragma once

#include "core/issue_loop.hpp"

#include "glue/lease_wait.hpp"
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

// The server's side of the one issue loop (core/issue_loop.hpp): the IDs' clock, the
// reservation (nullptr: a backend without the shared state, nothing durable) and, in lease
// mode, the lease of state.
class IssueEnv {
 public:
  IssueEnv(ClockState &clock, Reservation *reservation, SharedState *leased)
      : clock_(clock),
        reservation_(reservation),
        state_(leased),
        lease_(leased != nullptr ? &leased->lease : nullptr) {}
  // The shared state's streams: leased in lease mode.
  static IssueEnv of(SharedState &state) {
    return IssueEnv(state.clock, &state.reservation, lease_mode ? &state : nullptr);
  }

  LeaseSlot *lease() const { return lease_; }
  // A clock step is reported before a new reading is taken, never between the reading and the
  // check after the swap: a client that does not read its socket would hold the backend
  // there, past the deadline the reading is checked against.
  bool read_clock(ClockReading *out) {
    const ClockTick tick = clock_now(
        clock_, local_clock, [] { return read_mono_fast(); },
        [] { return read_clock_ns(CLOCK_MONOTONIC); },
        [] { return read_clock_ns(CLOCK_REALTIME); });
    if (unlikely(tick.event != ClockEvent::kNone)) {
      report_clock_event(tick);
      return false;
    }
    out->unix_ms = static_cast<uint64_t>(tick.unix_ns / 1000000);
    out->mono_ns = tick.mono_ns;
    return true;
  }
  uint64_t reserved_unix_ms() const {
    return reservation_ != nullptr ? reservation_->reserved_unix_ms.load(std::memory_order_acquire)
                                   : UINT64_MAX;
  }
  void await_lease() { glue::await_lease(*lease_); }
  void await_cover(uint64_t unix_ms) { await_lease_cover(*state_, unix_ms); }
  void await_reservation(uint64_t unix_ms) { glue::await_reservation(unix_ms); }
  // At a lead bound: counted for snowflake_status(), then the clock moves.
  void wait_for_clock(uint64_t ms) {
    if (reservation_ != nullptr) reservation_->lead_waits.fetch_add(1, std::memory_order_relaxed);
    glue::wait_for_clock(ms);
  }
  // Behind a block in line (or a block's pause of single IDs): counted as a lead wait, under a
  // wait event of its own.
  void wait_in_line(uint64_t ms) {
    if (reservation_ != nullptr) reservation_->lead_waits.fetch_add(1, std::memory_order_relaxed);
    glue::wait_in_line(ms);
  }
  void after_issue(uint64_t high_unix_ms, uint64_t now_unix_ms) {
    glue::after_issue(reservation_, high_unix_ms, now_unix_ms);
  }

 private:
  static int64_t read_clock_ns(clockid_t id) { return glue::read_clock(id); }
  ClockState &clock_;
  Reservation *reservation_;
  SharedState *state_;
  LeaseSlot *lease_;
};

// A step's result in a stream's own milliseconds (counted from origin_unix_ms, the clock's
// stream_ms in the same count) as the loop's, in Unix milliseconds: kReserve's millisecond
// is one the reservation must exceed.
inline IssueStep unix_step(Step step, uint64_t value, uint64_t high_ms, uint64_t origin_unix_ms) {
  switch (step) {
    case Step::kIssued:
      return IssueStep{step, value, high_ms + origin_unix_ms};
    case Step::kReserve:
      return IssueStep{step, value + origin_unix_ms, 0};
    default:
      return IssueStep{step, value, 0};
  }
}

}  // namespace snowflake::glue
