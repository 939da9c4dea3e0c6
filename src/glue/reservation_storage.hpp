// Where the reservation is kept (reservation_storage.cpp), for the writer and the start-up
// in reservation.cpp: the file in the data directory and the WAL record.
#pragma once

#include "glue/pg.hpp"
#include "glue/shmem.hpp"

namespace snowflake::glue {

// In the data directory; written as the temporary file, then renamed into place.
inline constexpr char kReservationFile[] = "snowflake.reservation";
inline constexpr char kReservationTempFile[] = "snowflake.reservation.tmp";

// Logs a new reservation and flushes it (and waits for synchronous standbys). Returns false
// if that wait was cut short (the writer is being stopped): then nothing may be published.
bool log_reservation(uint64_t unix_ms);

// Writes the reservation file. On failure, reports at elevel; with ERROR that does not return,
// with LOG it returns false and keeps errno.
bool write_reservation_file(uint64_t unix_ms, int elevel);

struct FileContents {
  bool missing;
  uint64_t unix_ms;   // 0 when there is no file
  uint64_t epoch_ms;  // snowflake.epoch of the IDs the file covers; 0 when there is no file
};

// The reservation on disk. A corrupt file stops the server (FATAL): it is never guessed at.
FileContents read_reservation_file();

// reservation.cpp's, which the redo of a record applies as the start-up does to the file:
// how far ahead of the clock a reservation is still held as a floor, and the refusal to
// generate with a snowflake.epoch other than the stored IDs'.
int64_t hold_ns();
void refuse_changed_epoch(Reservation &r, int64_t stored_epoch_ms);

}  // namespace snowflake::glue
