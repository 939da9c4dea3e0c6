// The shared state (module.cpp creates it at server start): every generator's streams, the
// IDs' clock and the reservation, in shared memory when the library is preloaded.
#pragma once

#include "glue/pg.hpp"
#include "glue/settings.hpp"

extern "C" {
#include "access/xlog.h"
#include "storage/spin.h"
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

// The shared state, or nullptr when the library was not preloaded.
extern SharedState *shared;

[[noreturn]] void raise_not_preloaded();
// Without the preload the 128-bit kinds run from this backend's own state: a WARNING that
// says so, at CREATE EXTENSION (creating) and at a backend's first use of their state.
void warn_not_preloaded(bool creating);
[[noreturn]] void raise_in_recovery();

// Refuses to generate while the server is in recovery. Once a backend has seen recovery
// over, it stays over for that backend (as RecoveryInProgress() itself assumes), so the hot
// path pays one test of a local flag.
extern bool recovery_seen_over;
inline void check_not_in_recovery() {
  if (unlikely(!recovery_seen_over)) {
    if (RecoveryInProgress()) raise_in_recovery();
    // A bad epoch reaches every kind: the reservation records the epoch.
    if (bad_epoch_setting()) raise_bad_setting();
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

}  // namespace snowflake::glue
