// The durable reservation: a time that every ID of every kind stays below, kept in a file in
// the data directory and in WAL. One background worker, the reservation writer, logs it to
// WAL (flushed), writes and fsyncs the file, and only then publishes it, ahead of need;
// generators never write it, and wait for it (interruptibly) only when a value would reach
// it. So the record that covers an ID is in WAL before any row that holds the ID, and a
// standby, a point-in-time recovery or a base backup started as a server replays the
// reservation of every row it has. At server start the reservation is a floor for the IDs'
// time; at server exit it is lowered to just above the last ID issued, so that a restart
// leaves no lead.
#include "glue.hpp"

#include <cerrno>
#include <cinttypes>
#include <cstdlib>

extern "C" {
#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/wait_event.h"
}

namespace snowflake::glue {

int reservation_window_ms = 1000;

namespace {

constexpr char kFile[] = "snowflake.reservation";
constexpr char kTempFile[] = "snowflake.reservation.tmp";
// Version 2 records snowflake.epoch too; version 1 (0.1.0) is read, and rewritten as 2.
constexpr char kHeader1[] = "snowflake reservation 1\n";
constexpr char kHeader2[] = "snowflake reservation 2\n";
constexpr char kEpochField[] = "epoch ";
// The clock counts nanoseconds in an int64: a reservation past 2262-04-11 cannot be a time.
constexpr uint64_t kMaxReservationMs = static_cast<uint64_t>(INT64_MAX / 1000000);

bool write_reservation_file(uint64_t unix_ms, int elevel);

// ---- The reservation in WAL: one record per extension, from the custom resource manager
// SNOWFLAKE_RMGR_ID (pg_compat.hpp says why that ID).

constexpr uint8 kXlogReserve = 0x00;

struct XlReserve {
  uint64_t reserved_unix_ms;
  int64_t epoch_ms;
};

// Logs a new reservation and flushes it: on return it is in WAL before any row that holds
// an ID it covers, since no such ID exists before the reservation is published.
void log_reservation(uint64_t unix_ms) {
  XlReserve rec{unix_ms, epoch_ms};
  XLogBeginInsert();
  XLogRegisterData(reinterpret_cast<char *>(&rec), sizeof rec);
  const XLogRecPtr lsn = XLogInsert(SNOWFLAKE_RMGR_ID, kXlogReserve);
  XLogFlush(lsn);
}

XlReserve read_record(XLogReaderState *record) {
  XlReserve rec{0, 0};
  if (XLogRecGetDataLen(record) == sizeof rec)
    std::memcpy(&rec, XLogRecGetData(record), sizeof rec);
  else
    ereport(PANIC, (errmsg("snowflake WAL record of %u bytes, not %zu",
                           static_cast<unsigned>(XLogRecGetDataLen(record)), sizeof rec)));
  return rec;
}

// Redo: the reservation, and the floor of the IDs' time, rise to the record's (never
// lower), so replaying a record twice changes nothing, and nothing but shared memory is
// needed (no SQL object). A server whose epoch is not the one the IDs were issued with
// stops here rather than issue IDs that sort below them after a promotion.
void snowflake_redo(XLogReaderState *record) {
  const uint8 info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
  if (info != kXlogReserve) ereport(PANIC, (errmsg("snowflake_redo: unknown op code %u", info)));
  const XlReserve rec = read_record(record);
  if (rec.epoch_ms != epoch_ms)
    ereport(FATAL,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("snowflake.epoch is %lld, but the primary issued IDs with %lld",
                    static_cast<long long>(epoch_ms), static_cast<long long>(rec.epoch_ms)),
             errhint("Set snowflake.epoch to %lld, as on the primary.",
                     static_cast<long long>(rec.epoch_ms))));
  if (shared == nullptr) return;  // the resource manager exists only when preloaded
  clock_raise_floor(shared->clock, static_cast<int64_t>(rec.reserved_unix_ms) * 1000000);
  // Kept on disk as well: a standby restarts from its last restartpoint, and a backup taken
  // from it holds its file, so neither may depend on records older than that.
  if (shared->reservation.raise_from_replay(rec.reserved_unix_ms))
    (void)write_reservation_file(rec.reserved_unix_ms, FATAL);
}

void snowflake_desc(StringInfo buf, XLogReaderState *record) {
  const XlReserve rec = read_record(record);
  appendStringInfo(buf, "reserved until %llu ms, epoch %lld",
                   static_cast<unsigned long long>(rec.reserved_unix_ms),
                   static_cast<long long>(rec.epoch_ms));
}

const char *snowflake_identify(uint8 info) {
  return (info & ~XLR_INFO_MASK) == kXlogReserve ? "RESERVE" : nullptr;
}

RmgrData snowflake_rmgr;

// Writes the reservation file: a temporary file, written and fsynced, renamed into place
// (durable_rename fsyncs the file and the directory). On failure, reports at elevel; with
// ERROR that does not return, with LOG it returns false and keeps errno.
bool write_reservation_file(uint64_t unix_ms, int elevel) {
  char text[128];
  const int len = snprintf(text, sizeof text, "%s%" PRIu64 "\n%s%lld\n", kHeader2, unix_ms,
                           kEpochField, static_cast<long long>(epoch_ms));
  const int fd = OpenTransientFile(kTempFile, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
  if (fd < 0) {
    const int e = errno;
    ereport(elevel, (errcode_for_file_access(),
                     errmsg("could not write the snowflake reservation file \"%s\": %m",
                            kTempFile)));
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
                            kTempFile)));
    errno = e;
    return false;
  }
  if (CloseTransientFile(fd) != 0) {
    const int e = errno;
    ereport(elevel, (errcode_for_file_access(),
                     errmsg("could not close the snowflake reservation file \"%s\": %m",
                            kTempFile)));
    errno = e;
    return false;
  }
  return durable_rename(kTempFile, kFile, elevel) == 0;
}

bool parse_u64(const char *&p, uint64_t *out) {
  if (*p < '0' || *p > '9') return false;
  errno = 0;
  char *end = nullptr;
  *out = strtoull(p, &end, 10);
  if (errno != 0) return false;
  p = end;
  return true;
}

struct FileContents {
  uint64_t unix_ms;  // 0 when there is no file yet
  bool has_epoch;
  uint64_t epoch_ms;
};

// The reservation on disk. A corrupt file stops the server: it is never guessed at.
FileContents read_reservation_file() {
  FileContents f{0, false, 0};
  const int fd = OpenTransientFile(kFile, O_RDONLY | PG_BINARY);
  if (fd < 0) {
    if (errno == ENOENT) return f;
    ereport(FATAL, (errcode_for_file_access(),
                    errmsg("could not open the snowflake reservation file \"%s\": %m", kFile)));
  }
  char text[256];
  const ssize_t len = read(fd, text, sizeof text - 1);
  if (len < 0)
    ereport(FATAL, (errcode_for_file_access(),
                    errmsg("could not read the snowflake reservation file \"%s\": %m", kFile)));
  CloseTransientFile(fd);
  text[len > 0 ? len : 0] = '\0';
  const char *p = text;
  bool ok = false;
  const bool v1 = strncmp(p, kHeader1, sizeof kHeader1 - 1) == 0;
  const bool v2 = strncmp(p, kHeader2, sizeof kHeader2 - 1) == 0;
  if (v1 || v2) {
    p += sizeof kHeader1 - 1;
    ok = parse_u64(p, &f.unix_ms) && *p++ == '\n' && f.unix_ms <= kMaxReservationMs;
    if (ok && v2) {
      ok = strncmp(p, kEpochField, sizeof kEpochField - 1) == 0;
      if (ok) p += sizeof kEpochField - 1;
      ok = ok && parse_u64(p, &f.epoch_ms) && *p++ == '\n';
      f.has_epoch = ok;
    }
    ok = ok && *p == '\0' && static_cast<size_t>(p - text) == static_cast<size_t>(len);
  }
  if (!ok)
    ereport(FATAL,
            (errcode(ERRCODE_DATA_CORRUPTED),
             errmsg("the snowflake reservation file \"%s\" is corrupt", kFile),
             errhint("Restore it from a backup. Otherwise remove it, and start the server only "
                     "once the system clock is past the time of every ID already issued.")));
  return f;
}

// At the postmaster's exit (a shutdown, or the reset after a crash), once no process can
// issue an ID any more: the reservation comes down to just above the last ID issued, so
// that the next start has no lead to carry. It never goes below any ID issued.
void lower_reservation_at_exit(int, Datum) {
  if (shared == nullptr) return;
  Reservation &r = shared->reservation;
  const uint64_t high = high_water_unix_ms(*shared, static_cast<uint64_t>(epoch_ms));
  const uint64_t reserved = r.reserved_unix_ms.load();
  if (high == 0 || high + 1 >= reserved) return;
  if (write_reservation_file(high + 1, LOG)) r.reserved_unix_ms.store(high + 1);
}

// A generator's wait for the reservation writer.
uint32 reservation_wait_event() {
  static uint32 event = 0;
  return named_wait_event("SnowflakeReservation", &event);
}

pg_noinline void raise_write_failed(int saved_errno) {
  errno = saved_errno;
  ereport(ERROR, (errcode_for_file_access(),
                  errmsg("could not write the snowflake reservation file \"%s\": %m", kTempFile),
                  errdetail("No ID is issued until the reservation is on disk.")));
}

pg_noinline void raise_no_writer() {
  ereport(ERROR,
          (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
           errmsg("the snowflake reservation writer is not running"),
           errdetail("No ID is issued until the reservation is on disk."),
           errhint("It is a background worker: see max_worker_processes and the server log.")));
}

// The writer's view of the IDs' time (it never moves the clock itself; see clock_peek).
uint64_t writer_now_ms(const SharedState &state) {
  const int64_t ns = clock_peek(state.clock, read_clock(CLOCK_MONOTONIC));
  return ns > 0 ? static_cast<uint64_t>(ns / 1000000) : 0;
}

// The writer's loop: extend the reservation when a generator asks (and once at start), and
// sleep otherwise. A failed write is counted and retried; waiting generators turn it into
// an ERROR.
void forget_writer(int, Datum) {
  if (shared != nullptr) shared->reservation.writer.store(nullptr);
}

void run_writer(SharedState &state) {
  Reservation &r = state.reservation;
  // However the writer ends (a FATAL too), generators stop waking a latch nobody owns, and
  // after 10 s of waiting say that no writer runs.
  on_shmem_exit(forget_writer, 0);
  r.writer.store(MyLatch);
  bool first = true;
  while (!ShutdownRequestPending) {
    if (ConfigReloadPending) {
      ConfigReloadPending = false;
      ProcessConfigFile(PGC_SIGHUP);
    }
    const uint64_t window = static_cast<uint64_t>(reservation_window_ms);
    const uint64_t reserved = r.reserved_unix_ms.load(std::memory_order_acquire);
    const uint64_t requested = r.requested_unix_ms.load(std::memory_order_acquire);
    long timeout = 1000;
    const uint64_t now = writer_now_ms(state);
    if (first || reservation_due(requested, reserved, window, requested > now ? requested - now : 0)) {
      const uint64_t need = std::max(now, requested);
      const uint64_t target = reservation_target(
          need, now, window, r.last_write_ms.load(std::memory_order_relaxed), reserved);
      log_reservation(target);
      if (write_reservation_file(target, LOG)) {
        r.reserved_unix_ms.store(target, std::memory_order_release);
        r.writes.fetch_add(1, std::memory_order_relaxed);
        const uint64_t after = writer_now_ms(state);
        r.last_write_ms.store(after > now ? after - now : 0, std::memory_order_relaxed);
        first = false;
      } else {
        r.write_errno.store(errno, std::memory_order_relaxed);
        r.write_failures.fetch_add(1, std::memory_order_release);
        timeout = 100;  // try again soon
      }
    }
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout,
                    PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
  }
}

}  // namespace

void register_reservation_wal() {
  snowflake_rmgr.rm_name = "snowflake";
  snowflake_rmgr.rm_redo = snowflake_redo;
  snowflake_rmgr.rm_desc = snowflake_desc;
  snowflake_rmgr.rm_identify = snowflake_identify;
  RegisterCustomRmgr(SNOWFLAKE_RMGR_ID, &snowflake_rmgr);
}

void register_reservation_writer() {
  BackgroundWorker worker = {};
  worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
  // A standby issues no ID, so it extends no reservation.
  worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
  worker.bgw_restart_time = 1;
  snprintf(worker.bgw_library_name, sizeof worker.bgw_library_name, "snowflake");
  snprintf(worker.bgw_function_name, sizeof worker.bgw_function_name,
           "snowflake_reservation_writer");
  snprintf(worker.bgw_name, sizeof worker.bgw_name, "snowflake reservation writer");
  snprintf(worker.bgw_type, sizeof worker.bgw_type, "snowflake reservation writer");
  RegisterBackgroundWorker(&worker);
}

void load_reservation(SharedState &state) {
  const FileContents f = read_reservation_file();
  if (f.has_epoch && f.epoch_ms != static_cast<uint64_t>(epoch_ms))
    ereport(FATAL,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("snowflake.epoch is %lld, but IDs were issued with %llu",
                    static_cast<long long>(epoch_ms), static_cast<unsigned long long>(f.epoch_ms)),
             errdetail("Stored snowflake IDs count their time from the old epoch; with a new "
                       "one, new IDs would not sort above them, and could repeat them."),
             errhint("Set snowflake.epoch back to %llu. Only if no snowflake ID of the old "
                     "epoch is kept anywhere, remove the file \"%s\" instead.",
                     static_cast<unsigned long long>(f.epoch_ms), kFile)));
  state.reservation.reserved_unix_ms.store(f.unix_ms);
  // The reservation reaches a window and a quarter past the last IDs, and more while a burst
  // ran ahead of the clock; a wall clock further behind it than that was set back.
  const int64_t threshold_ns =
      static_cast<int64_t>(reservation_reach_ms(static_cast<uint64_t>(reservation_window_ms),
                                                static_cast<uint64_t>(max_lead_ms))) *
      1000000;
  const int64_t behind =
      clock_start_at(state.clock, read_clock(CLOCK_MONOTONIC), read_clock(CLOCK_REALTIME),
                     static_cast<int64_t>(f.unix_ms) * 1000000, threshold_ns);
  if (behind > threshold_ns)
    ereport(WARNING,
            (errmsg("system clock is %.3f s behind the snowflake reservation",
                    static_cast<double>(behind) / 1e9),
             errdetail("IDs continue above the reservation, above every ID issued before the "
                       "restart, and follow the clock again once it passes it.")));
  if (!IsUnderPostmaster) on_shmem_exit(lower_reservation_at_exit, 0);
}

void await_reservation(uint64_t needed_unix_ms) {
  SharedState &state = require_shared();
  Reservation &r = state.reservation;
  const uint64_t failures = r.write_failures.load(std::memory_order_acquire);
  if (r.request(needed_unix_ms))
    if (void *latch = r.writer.load()) SetLatch(static_cast<Latch *>(latch));
  r.waits.fetch_add(1, std::memory_order_relaxed);
  const TimestampTz started = GetCurrentTimestamp();
  while (r.reserved_unix_ms.load(std::memory_order_acquire) <= needed_unix_ms) {
    if (r.write_failures.load(std::memory_order_acquire) != failures)
      raise_write_failed(r.write_errno.load(std::memory_order_relaxed));
    if (r.writer.load() == nullptr &&
        TimestampDifferenceExceeds(started, GetCurrentTimestamp(), 10000))
      raise_no_writer();
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1,
                    reservation_wait_event());
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
  }
}

void request_reservation(Reservation &r, uint64_t unix_ms) {
  if (r.request(unix_ms))
    if (void *latch = r.writer.load()) SetLatch(static_cast<Latch *>(latch));
}

}  // namespace snowflake::glue

extern "C" PGDLLEXPORT void snowflake_reservation_writer(Datum);

extern "C" void snowflake_reservation_writer(Datum) {
  pqsignal(SIGHUP, SignalHandlerForConfigReload);
  pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
  BackgroundWorkerUnblockSignals();
  // Exit code 1, always: the postmaster starts the writer again (after a second), even when
  // it was ended on purpose (pg_terminate_backend); an exit code of 0 would unregister it.
  if (snowflake::glue::shared != nullptr) snowflake::glue::run_writer(*snowflake::glue::shared);
  proc_exit(1);
}
