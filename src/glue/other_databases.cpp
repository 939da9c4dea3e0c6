// Whether another database of the cluster has the extension. A backend reads only its own
// database's catalogs, so a short-lived background worker connects to each other database in
// turn, looks the extension up, and writes the answer into a dynamic shared memory segment.
// The install script asks when the reservation file is missing (reservation.cpp): where
// another database has the extension, IDs were issued, and the missing file was lost.
#include "glue/other_databases.hpp"
#include "glue/system_clock.hpp"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/rel.h"
#include "utils/wait_event.h"
}

namespace snowflake::glue {
namespace {

// A connection and one catalog lookup take milliseconds; a database locked by a long CREATE
// DATABASE from it as template makes its worker wait, and this bounds the wait.
constexpr long kProbeTimeoutMs = 60000;

// One answer per database, written by its worker.
enum : uint32 { kNoAnswer = 0, kWithout = 1, kWith = 2 };

// What a worker is told, in bgw_extra: where to write its answer.
struct ProbeArgs {
  dsm_handle segment;
  uint32 slot;
};

uint32 probe_wait_event() {
  static uint32 event = 0;
  return named_wait_event("SnowflakeDatabaseCheck", &event);
}

struct Database {
  Oid oid;
  NameData name;
};

// Every database but this one (pg_database is shared: every database reads it), except one
// left invalid by an interrupted DROP DATABASE (datconnlimit -2 since 15.4), which cannot be
// connected to and whose data can only be dropped.
Database *other_databases(int *count) {
  Relation rel = table_open(DatabaseRelationId, AccessShareLock);
  SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, nullptr, 0, nullptr);
  int size = 16, n = 0;
  Database *databases = static_cast<Database *>(palloc(sizeof(Database) * size));
  HeapTuple tuple;
  while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
    const Form_pg_database db = reinterpret_cast<Form_pg_database>(GETSTRUCT(tuple));
    if (db->oid == MyDatabaseId || db->datconnlimit == -2) continue;
    if (n == size) {
      size *= 2;
      databases = static_cast<Database *>(repalloc(databases, sizeof(Database) * size));
    }
    databases[n].oid = db->oid;
    databases[n].name = db->datname;
    ++n;
  }
  systable_endscan(scan);
  table_close(rel, AccessShareLock);
  *count = n;
  return databases;
}

// Starts the worker that asks database oid and waits until it ends, at most kProbeTimeoutMs
// by the monotonic clock. Returns nullptr, or why no answer can come. A cancel or an ERROR
// while waiting ends the worker too: none is left holding a slot, or waiting on a lock.
const char *ask(Oid oid, dsm_segment *segment, uint32 slot) {
  BackgroundWorker worker = {};
  worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
  worker.bgw_start_time = BgWorkerStart_ConsistentState;
  worker.bgw_restart_time = BGW_NEVER_RESTART;
  snprintf(worker.bgw_library_name, sizeof worker.bgw_library_name, "snowflake");
  snprintf(worker.bgw_function_name, sizeof worker.bgw_function_name, "snowflake_database_check");
  snprintf(worker.bgw_name, sizeof worker.bgw_name, "snowflake check of database %u", oid);
  snprintf(worker.bgw_type, sizeof worker.bgw_type, "snowflake database check");
  worker.bgw_main_arg = ObjectIdGetDatum(oid);
  const ProbeArgs args{dsm_segment_handle(segment), slot};
  memcpy(worker.bgw_extra, &args, sizeof args);
  worker.bgw_notify_pid = MyProcPid;
  if (!IsUnderPostmaster)
    return "A server in single-user mode runs no background worker to check it";
  BackgroundWorkerHandle *handle;
  if (!RegisterDynamicBackgroundWorker(&worker, &handle))
    return "No background worker slot was free (max_worker_processes) to check it";
  const char *failed = nullptr;
  const int64_t started = monotonic_ms();
  // Only trivially destructible objects live in this frame: an ERROR may leave it.
  PG_TRY();
  {
    for (;;) {
      pid_t pid;
      if (GetBackgroundWorkerPid(handle, &pid) == BGWH_STOPPED) break;
      const long waited = ms_since(started);
      if (waited >= kProbeTimeoutMs) {
        TerminateBackgroundWorker(handle);
        failed = "Its check did not end within 60 s";
        break;
      }
      // The postmaster sets the latch when the worker ends (bgw_notify_pid).
      (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                      kProbeTimeoutMs - waited, probe_wait_event());
      ResetLatch(MyLatch);
      CHECK_FOR_INTERRUPTS();
    }
  }
  PG_CATCH();
  {
    TerminateBackgroundWorker(handle);
    PG_RE_THROW();
  }
  PG_END_TRY();
  return failed;
}

}  // namespace

OtherDatabases extension_in_other_databases() {
  OtherDatabases result = {};
  result.answer = OtherDatabases::kNone;
  int count;
  Database *databases = other_databases(&count);
  if (count == 0) return result;
  // Owned by the transaction: an error or a cancel while waiting removes it.
  dsm_segment *segment = dsm_create(sizeof(pg_atomic_uint32) * count, 0);
  auto *answers = static_cast<pg_atomic_uint32 *>(dsm_segment_address(segment));
  for (int i = 0; i < count; ++i) pg_atomic_init_u32(&answers[i], kNoAnswer);
  for (int i = 0; i < count && result.answer == OtherDatabases::kNone; ++i) {
    const char *failed = ask(databases[i].oid, segment, static_cast<uint32>(i));
    const uint32 answer = pg_atomic_read_u32(&answers[i]);
    if (answer == kWithout) continue;
    strlcpy(result.database, NameStr(databases[i].name), sizeof result.database);
    if (answer == kWith) {
      result.answer = OtherDatabases::kFound;
    } else {
      result.answer = OtherDatabases::kUnanswered;
      strlcpy(result.why,
              failed != nullptr ? failed : "Its check ended without an answer (see the server log)",
              sizeof result.why);
    }
  }
  dsm_detach(segment);
  pfree(databases);
  return result;
}

}  // namespace snowflake::glue

extern "C" PGDLLEXPORT void snowflake_database_check(Datum);

// The worker: connects to its database (also one that takes no connections, template0),
// looks the extension up, writes the answer, ends. A failure ends it without an answer.
extern "C" void snowflake_database_check(Datum main_arg) {
  BackgroundWorkerUnblockSignals();
  snowflake::glue::ProbeArgs args;
  memcpy(&args, MyBgworkerEntry->bgw_extra, sizeof args);
  BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(main_arg), InvalidOid,
                                            BGWORKER_BYPASS_ALLOWCONN);
  SetCurrentStatementStartTimestamp();
  StartTransactionCommand();
  const bool with = OidIsValid(get_extension_oid("snowflake", true));
  CommitTransactionCommand();
  // No segment: the backend that asked has given up.
  if (dsm_segment *segment = dsm_attach(args.segment)) {
    auto *answers = static_cast<pg_atomic_uint32 *>(dsm_segment_address(segment));
    pg_atomic_write_u32(&answers[args.slot],
                        with ? snowflake::glue::kWith : snowflake::glue::kWithout);
    dsm_detach(segment);
  }
  proc_exit(0);
}
