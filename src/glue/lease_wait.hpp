// Lease mode in the server (snowflake.shard_source = etcd): the lease worker that holds the
// shards (lease_worker.cpp) and what generators do when they have no open lease (lease_wait.cpp).
#pragma once

#include "glue/pg.hpp"
#include "glue/shmem.hpp"

extern "C" {
#include "storage/spin.h"
}

namespace snowflake::glue {

// Its own SQLSTATE, so that applications can tell "no shard lease, try later" apart.
#define ERRCODE_SNOWFLAKE_NO_LEASE MAKE_SQLSTATE('S', 'F', '0', '0', '1')

// What the worker says of etcd, for the status and the ERRORs (shared memory, under a
// spinlock held only to copy the strings).
struct LeaseText {
  slock_t lock;
  char endpoint[256];  // the endpoint that last answered
  char error[512];     // the last error, "" when the last request succeeded
};
extern LeaseText *lease_text;
Size lease_text_size();
void init_lease_text(LeaseText *t);
void read_lease_text(char *endpoint, size_t endpoint_size, char *error, size_t error_size);

// In _PG_init, in lease mode: the worker.
void register_lease_worker();

// Waits (interruptibly, for at most snowflake.reservation_timeout) until the server holds an
// open lease, or raises the ERROR that says why it has none: at once when a lease was held
// since start and lapsed or fails (only a first lease, or a renewal in flight, is waited for).
void await_lease(LeaseSlot &lease);
// For the forms that never wait: true when no lease is open now but one is on its way (a first
// lease, one taken back), so there is nothing to give yet; false when a lease is open; raises
// what await_lease raises when none is worth waiting for or the settings do not fit.
bool lease_pending(LeaseSlot &lease);
// Waits until both the reservation and the lease's mark cover needed_unix_ms (asking the
// writer and the lease worker for them), or raises an ERROR.
void await_lease_cover(SharedState &state, uint64_t needed_unix_ms);
// snowflake(shard) for a shard outside the lease.
[[noreturn]] void raise_shard_not_leased(int32 shard, uint64_t word);
// The text of generation_refused in lease mode, or nullptr while a lease is open (palloc'd).
const char *lease_refusal();

}  // namespace snowflake::glue
