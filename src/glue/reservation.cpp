// The durable reservation: a file in the data directory, written and fsynced before any ID
// reaches the time it holds, and read at server start so that every generator continues
// above it.
#include "glue.hpp"

#include <cerrno>
#include <cinttypes>
#include <cstdlib>

extern "C" {
#include <fcntl.h>
#include <unistd.h>

#include "storage/fd.h"
#include "storage/lwlock.h"
}

namespace snowflake::glue {

int reservation_window_ms = 1000;
LWLock *reservation_lock = nullptr;

namespace {

constexpr char kFile[] = "snowflake.reservation";
constexpr char kTempFile[] = "snowflake.reservation.tmp";
constexpr char kHeader[] = "snowflake reservation 1\n";

void write_reservation_file(uint64_t unix_ms) {
  char text[64];
  const int len = snprintf(text, sizeof text, "%s%" PRIu64 "\n", kHeader, unix_ms);
  const int fd = OpenTransientFile(kTempFile, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
  if (fd < 0)
    ereport(ERROR, (errcode_for_file_access(),
                    errmsg("could not write the snowflake reservation file \"%s\": %m",
                           kTempFile),
                    errdetail("No ID is issued until the reservation is on disk.")));
  errno = 0;
  if (write(fd, text, static_cast<size_t>(len)) != len) {
    if (errno == 0) errno = ENOSPC;
    ereport(ERROR, (errcode_for_file_access(),
                    errmsg("could not write the snowflake reservation file \"%s\": %m",
                           kTempFile),
                    errdetail("No ID is issued until the reservation is on disk.")));
  }
  if (pg_fsync(fd) != 0)
    ereport(ERROR, (errcode_for_file_access(),
                    errmsg("could not fsync the snowflake reservation file \"%s\": %m",
                           kTempFile)));
  if (CloseTransientFile(fd) != 0)
    ereport(ERROR, (errcode_for_file_access(),
                    errmsg("could not close the snowflake reservation file \"%s\": %m",
                           kTempFile)));
  (void)durable_rename(kTempFile, kFile, ERROR);
}

// The reservation on disk, 0 when there is none yet.
uint64_t read_reservation_file() {
  const int fd = OpenTransientFile(kFile, O_RDONLY | PG_BINARY);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    ereport(FATAL, (errcode_for_file_access(),
                    errmsg("could not open the snowflake reservation file \"%s\": %m", kFile)));
  }
  char text[128];
  const ssize_t len = read(fd, text, sizeof text - 1);
  if (len < 0)
    ereport(FATAL, (errcode_for_file_access(),
                    errmsg("could not read the snowflake reservation file \"%s\": %m", kFile)));
  CloseTransientFile(fd);
  bool ok = len > 0;
  uint64_t value = 0;
  if (ok) {
    text[len] = '\0';
    const size_t header = sizeof kHeader - 1;
    char *end = nullptr;
    ok = static_cast<size_t>(len) > header && strncmp(text, kHeader, header) == 0;
    if (ok) {
      const char *digits = text + header;
      errno = 0;
      value = strtoull(digits, &end, 10);
      ok = *digits >= '0' && *digits <= '9' && errno == 0 && *end == '\n' && end[1] == '\0' &&
           value <= kMaxUnixMs48;
    }
  }
  if (!ok)
    ereport(FATAL,
            (errcode(ERRCODE_DATA_CORRUPTED),
             errmsg("the snowflake reservation file \"%s\" is corrupt", kFile),
             errhint("Restore it from a backup. Otherwise remove it, and start the server only "
                     "once the system clock is past the time of every ID already issued.")));
  return value;
}

}  // namespace

void load_reservation(SharedState &state) {
  const uint64_t reserved = read_reservation_file();
  state.reservation.reserved_unix_ms.store(reserved);
  const int64_t ahead = clock_start_at(state.clock, read_clock(CLOCK_MONOTONIC),
                                       read_clock(CLOCK_REALTIME),
                                       static_cast<int64_t>(reserved) * 1000000);
  if (ahead > 0)
    ereport(WARNING,
            (errmsg("system clock is %.3f s behind the snowflake reservation",
                    static_cast<double>(ahead) / 1e9),
             errdetail("IDs continue from the reservation, above every ID issued before the "
                       "restart, and advance at real-time rate.")));
}

void extend_reservation(uint64_t needed_unix_ms) {
  SharedState &state = require_shared();
  Reservation &r = state.reservation;
  LWLockAcquire(reservation_lock, LW_EXCLUSIVE);
  if (r.reserved_unix_ms.load(std::memory_order_relaxed) <= needed_unix_ms) {
    const uint64_t now = clock_now_unix_ms(state.clock);
    // Reach past the window, and past twice the last write's time: on storage slower than
    // the window, a reservation must not be overtaken by the clock while it is written.
    uint64_t ahead = static_cast<uint64_t>(reservation_window_ms);
    const uint64_t slow = 2 * r.last_write_ms.load(std::memory_order_relaxed);
    if (slow > ahead) ahead = slow;
    const uint64_t target = needed_unix_ms + 1 > now + ahead ? needed_unix_ms + 1 : now + ahead;
    write_reservation_file(target);  // an ERROR here releases the lock and issues nothing
    r.reserved_unix_ms.store(target, std::memory_order_release);
    r.writes.fetch_add(1, std::memory_order_relaxed);
    const uint64_t after = clock_now_unix_ms(state.clock);
    // (One backend's readings may step back by microseconds: see tsc_clock.hpp.)
    r.last_write_ms.store(after > now ? after - now : 0, std::memory_order_relaxed);
  }
  LWLockRelease(reservation_lock);
}

}  // namespace snowflake::glue
