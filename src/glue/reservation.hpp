// The durable reservation (reservation.cpp; where it is kept: reservation_storage.cpp).
#pragma once

#include "glue/pg.hpp"
#include "glue/shmem.hpp"

extern "C" {
#include "storage/condition_variable.h"
}

namespace snowflake::glue {

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

}  // namespace snowflake::glue
