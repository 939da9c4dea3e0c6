// The durable reservation: a time that every ID of every kind stays below, kept in a file in the
// data directory and in WAL (reservation_storage.cpp). One background worker, the reservation
// writer, logs it to WAL (flushed), writes and fsyncs the file, and only then publishes it, ahead
// of need; generators never write it, and wait for it (interruptibly) only when a value would reach
// it. So the record that covers an ID is in WAL before any row that holds the ID, and a standby, a
// point-in-time recovery or a base backup started as a server replays the reservation of every row
// it has. At server start the reservation is a floor for the IDs' time; at server exit it is
// lowered to just above the last ID issued, so that a restart leaves no lead. With synchronous
// standbys, a reservation is published only once they have its record. A generator waits for the
// writer on a condition variable, for at most snowflake.reservation_timeout, and then raises an
// ERROR that names the writer.
#include <algorithm>
#include <cerrno>

#include "glue/other_databases.hpp"
#include "glue/reservation.hpp"
#include "glue/reservation_storage.hpp"
#include "glue/settings.hpp"
#include "glue/shmem.hpp"
#include "glue/system_clock.hpp"

extern "C" {
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
}

namespace snowflake::glue {

ConditionVariable *reservation_cv = nullptr;

// How far ahead of the clock a reservation may be and still be held as a floor that fades
// (its reach past the last IDs); further ahead, the clock was wrong, and runs from it.
int64_t hold_ns() {
  return static_cast<int64_t>(reservation_reach_ms(static_cast<uint64_t>(reservation_window_ms),
                                                   static_cast<uint64_t>(max_lead_ms))) *
         1000000;
}

// A snowflake.epoch other than the stored IDs': the server runs, and refuses to generate
// (refusal_error) until it is set back, rather than issue IDs that sort below stored ones.
void refuse_changed_epoch(Reservation &r, int64_t stored_epoch_ms) {
  r.file_epoch_ms.store(static_cast<uint64_t>(stored_epoch_ms));
  r.refusal.store(kEpochChanged);
  ereport(WARNING,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("snowflake.epoch is %lld, but IDs were issued with %lld",
                  static_cast<long long>(epoch_ms), static_cast<long long>(stored_epoch_ms)),
           errdetail("No ID is issued until snowflake.epoch is set back."),
           errhint("Set snowflake.epoch to %lld and restart the server.",
                   static_cast<long long>(stored_epoch_ms))));
}

namespace {

double ms_to_s(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

// At the postmaster's exit (a shutdown, or the reset after a crash), once no process can
// issue an ID any more: the reservation comes down to just above the last ID issued, so
// that the next start has no lead to carry (reservation_at_exit). It never goes below any ID
// issued, here or before. A server that refused to generate leaves the file as it is.
void lower_reservation_at_exit(int, Datum) {
  if (shared == nullptr) return;
  Reservation &r = shared->reservation;
  if (r.refusal.load() != kNotRefused) return;
  const uint64_t target = reservation_at_exit(
      high_water_unix_ms(*shared, static_cast<uint64_t>(epoch_ms)),
      std::max(r.loaded_unix_ms.load(), r.replayed_unix_ms.load()), r.reserved_unix_ms.load());
  if (target != 0 && write_reservation_file(target, LOG)) r.reserved_unix_ms.store(target);
}

// A generator's wait for the reservation writer.
uint32 reservation_wait_event() {
  static uint32 event = 0;
  return named_wait_event("SnowflakeReservation", &event);
}

pg_noinline void raise_write_failed(int saved_errno) {
  errno = saved_errno;
  ereport(ERROR, (errcode_for_file_access(),
                  errmsg("could not write the snowflake reservation file \"%s\": %m",
                         kReservationTempFile),
                  errdetail("No ID is issued until the reservation is on disk.")));
}

// The writer did not publish in time: not running, or stuck in a write (a hung disk, a WAL
// flush, a synchronous standby that does not answer).
pg_noinline void raise_writer_timeout(const Reservation &r) {
  const int pid = r.writer_pid.load();
  if (pid == 0)
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("the snowflake reservation writer is not running"),
             errdetail("No ID is issued until the reservation is on disk."),
             errhint("It is a background worker: see max_worker_processes and the server log.")));
  const uint64_t since = r.busy_since_mono_ms.load();
  const uint64_t now = static_cast<uint64_t>(monotonic_ms());
  ereport(ERROR,
          (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
           errmsg("the snowflake reservation writer (PID %d) has not extended the reservation "
                  "in %d ms",
                  pid, reservation_timeout_ms),
           since != 0 && now >= since
               ? errdetail("No ID is issued until the reservation is on disk. Its current write "
                           "has taken %.3f s: a hung disk, WAL flush or synchronous standby.",
                           ms_to_s(static_cast<int64_t>(now - since)))
               : errdetail("No ID is issued until the reservation is on disk. The writer is not "
                           "writing: it may be stopped."),
           errhint("See snowflake_status() and the server log. snowflake.reservation_timeout "
                   "sets how long generators wait.")));
}

// What an operator does about a missing reservation file.
constexpr const char *kMissingFileHint =
    "Copy the file from the old data directory or a backup, and restart the server. If there "
    "is none, call snowflake_reservation_create() once the system clock is past the time of "
    "every ID already issued.";

// Why a server that could run issues nothing: the operator must act (see Refusal).
pg_noinline void raise_refusal(const Reservation &r) {
  if (r.refusal.load() == kEpochChanged)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("snowflake.epoch is %lld, but IDs were issued with %llu",
                    static_cast<long long>(epoch_ms),
                    static_cast<unsigned long long>(r.file_epoch_ms.load())),
             errdetail("Stored snowflake IDs count their time from the old epoch; with a new "
                       "one, new IDs would not sort above them, and could repeat them."),
             errhint("Set snowflake.epoch back to %llu and restart the server. Only if no "
                     "snowflake ID of the old epoch is kept anywhere, remove the file \"%s\" "
                     "instead, restart, and call snowflake_reservation_create().",
                     static_cast<unsigned long long>(r.file_epoch_ms.load()), kReservationFile)));
  ereport(ERROR,
          (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
           errmsg("the snowflake reservation file \"%s\" is missing", kReservationFile),
           errdetail("Creating the extension makes the file, and it holds a time above every "
                     "ID issued since. That time is lost (pg_upgrade without copying the "
                     "file, a restore that skipped it, or a removal): from the clock alone, "
                     "new IDs could repeat IDs already issued."),
           errhint(kMissingFileHint)));
}

const char *refusal_text(int refusal) {
  switch (refusal) {
    case kFileMissing:
      return "the reservation file is missing";
    case kEpochChanged:
      return "snowflake.epoch differs from the stored IDs' epoch";
    default:
      return nullptr;
  }
}

// The writer's view of the IDs' time (it never moves the clock itself; see clock_peek).
uint64_t writer_now_ms(const SharedState &state) {
  const int64_t ns = clock_peek(state.clock, read_clock(CLOCK_MONOTONIC));
  return ns > 0 ? static_cast<uint64_t>(ns / 1000000) : 0;
}

// The writer's loop: extend the reservation when a generator asks, and sleep otherwise (a
// server where nothing is generated writes nothing: no record, no file). A failed write is
// counted and retried; waiting generators turn it into an ERROR. Each outcome wakes them.
void forget_writer(int, Datum) {
  if (shared == nullptr) return;
  shared->reservation.writer.store(nullptr);
  shared->reservation.writer_pid.store(0);
  shared->reservation.busy_since_mono_ms.store(0);
  ConditionVariableBroadcast(reservation_cv);
}

void run_writer(SharedState &state) {
  Reservation &r = state.reservation;
  // However the writer ends (a FATAL too), generators stop waking a latch nobody owns, and
  // say that no writer runs once their wait is over.
  on_shmem_exit(forget_writer, 0);
  r.writer.store(MyLatch);
  r.writer_pid.store(MyProcPid);
  while (!ProcDiePending) {
    if (ConfigReloadPending) {
      ConfigReloadPending = false;
      ProcessConfigFile(PGC_SIGHUP);
    }
    const uint64_t window = static_cast<uint64_t>(reservation_window_ms);
    const uint64_t reserved = r.reserved_unix_ms.load(std::memory_order_acquire);
    const uint64_t requested = r.requested_unix_ms.load(std::memory_order_acquire);
    long timeout = 1000;
    const uint64_t now = writer_now_ms(state);
    if (r.refusal.load() == kNotRefused && requested != 0 &&
        reservation_due(requested, reserved, window, requested > now ? requested - now : 0)) {
      const uint64_t need = std::max(now, requested);
      const uint64_t target = reservation_target(
          need, now, window, r.last_write_ms.load(std::memory_order_relaxed), reserved);
      r.busy_since_mono_ms.store(static_cast<uint64_t>(std::max<int64_t>(1, monotonic_ms())));
      if (!log_reservation(target)) break;  // being stopped: publish nothing
      if (write_reservation_file(target, LOG)) {
        r.reserved_unix_ms.store(target, std::memory_order_release);
        r.writes.fetch_add(1, std::memory_order_relaxed);
        const uint64_t after = writer_now_ms(state);
        r.last_write_ms.store(after > now ? after - now : 0, std::memory_order_relaxed);
      } else {
        r.write_errno.store(errno, std::memory_order_relaxed);
        r.write_failures.fetch_add(1, std::memory_order_release);
        timeout = 100;  // try again soon
      }
      r.busy_since_mono_ms.store(0);
      ConditionVariableBroadcast(reservation_cv);
    }
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout,
                    PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
  }
}

}  // namespace

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
  Reservation &r = state.reservation;
  // A server that must not generate publishes no reservation, so that every generator takes
  // its slow path and meets the refusal there (await_reservation).
  if (!f.missing && f.epoch_ms != static_cast<uint64_t>(epoch_ms))
    refuse_changed_epoch(r, static_cast<int64_t>(f.epoch_ms));
  else
    r.reserved_unix_ms.store(f.unix_ms);
  // Without a file, only the extension's install script (or the operator) may create one:
  // a file that went missing after IDs were issued is refused, never taken as a fresh start.
  if (f.missing) r.refusal.store(kFileMissing);
  r.loaded_unix_ms.store(f.unix_ms);
  // Every value of an earlier run is below it: the one-second streams start past its second.
  state.streams.raise_floors(f.unix_ms);
  // The reservation reaches a window and a quarter past the last IDs, and more while a burst
  // ran ahead of the clock; a wall clock further behind it than that was set back, and IDs
  // run from the reservation instead of waiting for the clock.
  const int64_t hold = hold_ns();
  const int64_t behind =
      clock_start_at(state.clock, read_clock(CLOCK_MONOTONIC), read_clock(CLOCK_REALTIME),
                     static_cast<int64_t>(f.unix_ms) * 1000000, hold);
  if (behind > hold)
    ereport(WARNING,
            (errmsg("system clock is %.3f s behind the snowflake reservation",
                    static_cast<double>(behind) / 1e9),
             errdetail("IDs run from the reservation at real-time rate, above every ID issued "
                       "before, ahead of the system clock by that much until the clock catches "
                       "up or is corrected.")));
  if (!IsUnderPostmaster) on_shmem_exit(lower_reservation_at_exit, 0);
}

const char *generation_refused() {
  if (shared == nullptr) return nullptr;
  return refusal_text(shared->reservation.refusal.load());
}

// Whether a missing reservation file may be made now. Called by the operator, the answer is
// yes: that accepts the clock. Called by the install script, the file may be a new cluster's
// first, or one lost where IDs were issued (pg_upgrade without the copy, a removal): it is
// the first only when no other database has the extension, and creating the extension again
// elsewhere (a trusted extension: any database owner may) must not accept the clock.
static bool may_make_missing_file() {
  if (!creating_extension) return true;
  const OtherDatabases other = extension_in_other_databases();
  if (other.answer == OtherDatabases::kNone) return true;
  const char *outcome = shared != nullptr
                            ? "Generation stays refused on this server."
                            : "No file is made: once the library is preloaded, generation is "
                              "refused.";
  if (other.answer == OtherDatabases::kFound)
    ereport(WARNING,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("the snowflake reservation file \"%s\" is missing, and database \"%s\" "
                    "has the extension",
                    kReservationFile, other.database),
             errdetail("IDs issued there are below a time this server no longer knows: from "
                       "the clock alone, new IDs could repeat them. %s",
                       outcome),
             errhint(kMissingFileHint)));
  else
    ereport(WARNING,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("the snowflake reservation file \"%s\" is missing, and database \"%s\" "
                    "could not be checked for the extension",
                    kReservationFile, other.database),
             errdetail("%s; IDs may have been issued there. %s", other.why, outcome),
             errhint(kMissingFileHint)));
  return false;
}

void create_reservation() {
  if (shared == nullptr) {
    if (creating_extension) warn_not_preloaded(true);
    // Not preloaded: no writer exists, and nothing is generated; the file is only made to
    // exist, so that a later start with the library preloaded knows the extension's history.
    const int fd = OpenTransientFile(kReservationFile, O_RDONLY | PG_BINARY);
    if (fd >= 0) {
      CloseTransientFile(fd);
      return;
    }
    if (may_make_missing_file()) (void)write_reservation_file(0, ERROR);
    return;
  }
  Reservation &r = shared->reservation;
  if (r.refusal.load() == kEpochChanged) raise_refusal(r);
  if (r.refusal.load() != kFileMissing || !may_make_missing_file()) return;
  int missing = kFileMissing;
  if (!r.refusal.compare_exchange_strong(missing, kNotRefused)) return;
  // The writer makes the file, with a reservation from the clock as it is now.
  await_reservation(clock_now_unix_ms(shared->clock));
}

void await_reservation(uint64_t needed_unix_ms) {
  SharedState &state = require_shared();
  Reservation &r = state.reservation;
  if (r.refusal.load() != kNotRefused) raise_refusal(r);
  const uint64_t failures = r.write_failures.load(std::memory_order_acquire);
  request_reservation(r, needed_unix_ms);
  r.waits.fetch_add(1, std::memory_order_relaxed);
  const int64_t started = monotonic_ms();
  // The writer broadcasts after each write, failed or not, and when it exits; a cancel,
  // statement_timeout or postmaster death ends the sleep (and the abort cancels it).
  ConditionVariablePrepareToSleep(reservation_cv);
  while (r.reserved_unix_ms.load(std::memory_order_acquire) <= needed_unix_ms) {
    const bool failed = r.write_failures.load(std::memory_order_acquire) != failures;
    const long waited_ms = failed ? 0 : ms_since(started);
    if (failed || waited_ms >= reservation_timeout_ms || r.refusal.load() != kNotRefused) {
      ConditionVariableCancelSleep();
      if (failed) raise_write_failed(r.write_errno.load(std::memory_order_relaxed));
      if (r.refusal.load() != kNotRefused) raise_refusal(r);
      raise_writer_timeout(r);
    }
    (void)ConditionVariableTimedSleep(reservation_cv, reservation_timeout_ms - waited_ms,
                                      reservation_wait_event());
  }
  ConditionVariableCancelSleep();
}

void request_reservation(Reservation &r, uint64_t unix_ms) {
  if (r.request(unix_ms))
    if (void *latch = r.writer.load()) SetLatch(static_cast<Latch *>(latch));
}

}  // namespace snowflake::glue

extern "C" PGDLLEXPORT void snowflake_reservation_writer(Datum);

extern "C" void snowflake_reservation_writer(Datum) {
  pqsignal(SIGHUP, SignalHandlerForConfigReload);
  // die(): a stop ends a wait for synchronous standbys too (which ShutdownRequestPending
  // would not); the loop then ends.
  pqsignal(SIGTERM, die);
  BackgroundWorkerUnblockSignals();
  // Exit code 1, always: the postmaster starts the writer again (after a second), even when
  // it was ended on purpose (pg_terminate_backend); an exit code of 0 would unregister it.
  if (snowflake::glue::shared != nullptr) snowflake::glue::run_writer(*snowflake::glue::shared);
  proc_exit(1);
}
