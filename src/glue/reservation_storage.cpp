// Where the reservation is kept: a file in the data directory, and a record in WAL from the
// extension's custom resource manager, which a standby, a point-in-time recovery and a base
// backup replay. reservation.cpp says how the writer uses both.
#include <cerrno>
#include <cinttypes>
#include <cstdlib>

#include "glue/system_clock.hpp"
#include "glue/reservation.hpp"
#include "glue/reservation_storage.hpp"
#include "glue/settings.hpp"
#include "glue/shmem.hpp"

extern "C" {
#include <fcntl.h>
#include <unistd.h>

#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "storage/fd.h"
}

namespace snowflake::glue {

namespace {

// The file's format: this header, the time in Unix milliseconds, and snowflake.epoch. (It is
// 2 because the format gained the epoch before the first release; no release wrote a 1.)
constexpr char kHeader[] = "snowflake reservation 2\n";
constexpr char kEpochField[] = "epoch ";
// The clock counts nanoseconds in an int64: a reservation past 2262-04-11 cannot be a time.
constexpr uint64_t kMaxReservationMs = static_cast<uint64_t>(INT64_MAX / 1000000);

// ---- The reservation in WAL: one record per extension, from the custom resource manager
// SNOWFLAKE_RMGR_ID (pg_compat.hpp says why that ID).

constexpr uint8 kXlogReserve = 0x00;

struct XlReserve {
  uint64_t reserved_unix_ms;
  int64_t epoch_ms;
};

// The record's contents; false for a record of another length (another module's, with this
// ID), which redo refuses and describing only reports.
bool read_record(XLogReaderState *record, XlReserve *rec) {
  if (XLogRecGetDataLen(record) != sizeof *rec) return false;
  std::memcpy(rec, XLogRecGetData(record), sizeof *rec);
  return true;
}

// Redo: the reservation, and the IDs' time, rise to the record's (never lower), so replaying
// a record twice changes nothing, and nothing but shared memory is needed (no SQL object).
// A reservation far ahead of this server's clock (its clock is behind the primary's) makes
// the clock run from it, so that a promoted standby generates at its usual pace at once.
void snowflake_redo(XLogReaderState *record) {
  const uint8 info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
  XlReserve rec;
  if (info != kXlogReserve || !read_record(record, &rec))
    ereport(PANIC, (errmsg("snowflake_redo: invalid record (op code %u, %u bytes)", info,
                           static_cast<unsigned>(XLogRecGetDataLen(record)))));
  if (shared == nullptr) return;  // the resource manager exists only when preloaded
  Reservation &r = shared->reservation;
  if (rec.epoch_ms != epoch_ms) {
    if (r.refusal.load() != kEpochChanged) refuse_changed_epoch(r, rec.epoch_ms);
    return;
  }
  // The primary's values are below it: once promoted, the one-second streams start past it.
  shared->streams.raise_floors(rec.reserved_unix_ms);
  const int64_t mono = read_clock(CLOCK_MONOTONIC);
  const int64_t wall = read_clock(CLOCK_REALTIME);
  const int64_t reserved_ns = static_cast<int64_t>(rec.reserved_unix_ms) * 1000000;
  if (clock_carry(shared->clock, reserved_ns, mono, wall, hold_ns()) == Carried::kRunFrom)
    ereport(WARNING,
            (errmsg("system clock is %.3f s behind the replayed snowflake reservation",
                    static_cast<double>(reserved_ns - wall) / 1e9),
             errdetail("IDs run from the reservation at real-time rate, ahead of the system "
                       "clock by that much, until the clock catches up or is corrected.")));
  // Kept on disk as well: a standby restarts from its last restartpoint, and a backup taken
  // from it holds its file, so neither may depend on records older than that.
  if (r.raise_from_replay(rec.reserved_unix_ms))
    (void)write_reservation_file(rec.reserved_unix_ms, FATAL);
}

// Describing a record (pg_waldump, pg_walinspect) never raises: a record of another length
// is another module's with the same ID, and is only reported.
void snowflake_desc(StringInfo buf, XLogReaderState *record) {
  XlReserve rec;
  if (read_record(record, &rec))
    appendStringInfo(buf, "reserved until %llu ms, epoch %lld",
                     static_cast<unsigned long long>(rec.reserved_unix_ms),
                     static_cast<long long>(rec.epoch_ms));
  else
    appendStringInfo(buf, "not a snowflake reservation (%u bytes)",
                     static_cast<unsigned>(XLogRecGetDataLen(record)));
}

const char *snowflake_identify(uint8 info) {
  return (info & ~XLR_INFO_MASK) == kXlogReserve ? "RESERVE" : nullptr;
}

RmgrData snowflake_rmgr;

bool parse_u64(const char *&p, uint64_t *out) {
  if (*p < '0' || *p > '9') return false;
  errno = 0;
  char *end = nullptr;
  *out = strtoull(p, &end, 10);
  if (errno != 0) return false;
  p = end;
  return true;
}

}  // namespace

// Logs a new reservation and flushes it: on return it is in WAL before any row that holds
// an ID it covers, since no such ID exists before the reservation is published. With
// synchronous standbys it also waits for them, as a commit does, so that a standby promoted
// after a failover holds every reservation whose IDs a client may have seen. Returns false
// if that wait was cut short (the writer is being stopped): then nothing is published.
bool log_reservation(uint64_t unix_ms) {
  XlReserve rec{unix_ms, epoch_ms};
  XLogBeginInsert();
  XLogRegisterData(reinterpret_cast<char *>(&rec), sizeof rec);
  const XLogRecPtr lsn = XLogInsert(SNOWFLAKE_RMGR_ID, kXlogReserve);
  XLogFlush(lsn);
  SyncRepWaitForLSN(lsn, false);
  return !ProcDiePending;
}

// Writes the reservation file: a temporary file, written and fsynced, renamed into place
// (durable_rename fsyncs the file and the directory). On failure, reports at elevel; with
// ERROR that does not return, with LOG it returns false and keeps errno.
bool write_reservation_file(uint64_t unix_ms, int elevel) {
  char text[128];
  const int len = snprintf(text, sizeof text, "%s%" PRIu64 "\n%s%lld\n", kHeader, unix_ms,
                           kEpochField, static_cast<long long>(epoch_ms));
  const int fd = OpenTransientFile(kReservationTempFile, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
  if (fd < 0) {
    const int e = errno;
    ereport(elevel, (errcode_for_file_access(),
                     errmsg("could not write the snowflake reservation file \"%s\": %m",
                            kReservationTempFile)));
    errno = e;
    return false;
  }
  errno = 0;
  if (write(fd, text, static_cast<size_t>(len)) != len) {
    const int e = errno == 0 ? ENOSPC : errno;
    CloseTransientFile(fd);
    errno = e;
    ereport(elevel, (errcode_for_file_access(),
                     errmsg("could not write the snowflake reservation file \"%s\": %m",
                            kReservationTempFile)));
    errno = e;
    return false;
  }
  if (CloseTransientFile(fd) != 0) {
    const int e = errno;
    ereport(elevel, (errcode_for_file_access(),
                     errmsg("could not close the snowflake reservation file \"%s\": %m",
                            kReservationTempFile)));
    errno = e;
    return false;
  }
  if (durable_rename(kReservationTempFile, kReservationFile, elevel) != 0) return false;
  // The file exists again: a server that refused for its loss may generate.
  if (shared != nullptr) {
    int missing = kFileMissing;
    shared->reservation.refusal.compare_exchange_strong(missing, kNotRefused);
  }
  return true;
}

// The reservation on disk. A corrupt file stops the server: it is never guessed at.
FileContents read_reservation_file() {
  FileContents f{false, 0, 0};
  const int fd = OpenTransientFile(kReservationFile, O_RDONLY | PG_BINARY);
  if (fd < 0) {
    f.missing = errno == ENOENT;
    if (f.missing) return f;
    ereport(FATAL,
            (errcode_for_file_access(),
             errmsg("could not open the snowflake reservation file \"%s\": %m", kReservationFile)));
  }
  char text[256];
  const ssize_t len = read(fd, text, sizeof text - 1);
  if (len < 0)
    ereport(FATAL,
            (errcode_for_file_access(),
             errmsg("could not read the snowflake reservation file \"%s\": %m", kReservationFile)));
  CloseTransientFile(fd);
  text[len > 0 ? len : 0] = '\0';
  const char *p = text;
  bool ok = false;
  if (strncmp(p, kHeader, sizeof kHeader - 1) == 0) {
    p += sizeof kHeader - 1;
    ok = parse_u64(p, &f.unix_ms) && *p++ == '\n' && f.unix_ms <= kMaxReservationMs;
    ok = ok && strncmp(p, kEpochField, sizeof kEpochField - 1) == 0;
    if (ok) p += sizeof kEpochField - 1;
    ok = ok && parse_u64(p, &f.epoch_ms) && *p++ == '\n';
    ok = ok && *p == '\0' && static_cast<size_t>(p - text) == static_cast<size_t>(len);
  }
  if (!ok)
    ereport(FATAL,
            (errcode(ERRCODE_DATA_CORRUPTED),
             errmsg("the snowflake reservation file \"%s\" is corrupt", kReservationFile),
             errhint("Restore it from a backup. Otherwise remove it, start the server, and call "
                     "snowflake_reservation_create() once the system clock is past the time of "
                     "every ID already issued.")));
  return f;
}

void register_reservation_wal() {
  snowflake_rmgr.rm_name = "snowflake";
  snowflake_rmgr.rm_redo = snowflake_redo;
  snowflake_rmgr.rm_desc = snowflake_desc;
  snowflake_rmgr.rm_identify = snowflake_identify;
  RegisterCustomRmgr(SNOWFLAKE_RMGR_ID, &snowflake_rmgr);
}

}  // namespace snowflake::glue
