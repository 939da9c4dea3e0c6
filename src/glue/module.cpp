// Module start-up: the magic block, _PG_init, and the shared state requested and created
// through the shared-memory hooks; the ERRORs of a server that cannot generate, and of a C++
// exception.
#include <new>

#include "glue/system_clock.hpp"
#include "glue/hints.hpp"
#include "glue/lease_wait.hpp"
#include "glue/reservation.hpp"
#include "glue/settings.hpp"
#include "glue/shmem.hpp"

extern "C" {
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

SNOWFLAKE_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);
}

namespace snowflake::glue {

SharedState *shared = nullptr;

namespace {

shmem_request_hook_type prev_shmem_request_hook = nullptr;
shmem_startup_hook_type prev_shmem_startup_hook = nullptr;

void request_shmem() {
  if (prev_shmem_request_hook) prev_shmem_request_hook();
  // Each ShmemInitStruct is aligned to a cache line: room for that padding too.
  RequestAddinShmemSpace(add_size(
      sizeof(SharedState), sizeof(ConditionVariable) + lease_text_size() + 3 * PG_CACHE_LINE_SIZE));
}

void startup_shmem() {
  if (prev_shmem_startup_hook) prev_shmem_startup_hook();
  bool found = false;
  LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
  void *mem = ShmemInitStruct("snowflake", sizeof(SharedState), &found);
  if (!found) {
    // ShmemInitStruct hands out cache-line-aligned space, as ShardSlot needs.
    Assert(reinterpret_cast<uintptr_t>(mem) % alignof(SharedState) == 0);
    SharedState *state = new (mem) SharedState;
    state->init();
    load_reservation(*state);
  }
  shared = static_cast<SharedState *>(mem);
  void *cv = ShmemInitStruct("snowflake reservation cv", sizeof(ConditionVariable), &found);
  if (!found) ConditionVariableInit(static_cast<ConditionVariable *>(cv));
  reservation_cv = static_cast<ConditionVariable *>(cv);
  void *text = ShmemInitStruct("snowflake lease text", lease_text_size(), &found);
  if (!found) init_lease_text(static_cast<LeaseText *>(text));
  lease_text = static_cast<LeaseText *>(text);
  LWLockRelease(AddinShmemInitLock);
}

}  // namespace

void raise_not_preloaded() {
  ereport(ERROR,
          (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
           errmsg("snowflake must be loaded via \"shared_preload_libraries\""),
           errdetail("The generator state lives in shared memory, shared by every backend; "
                     "without it IDs could repeat."),
           errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart "
                   "the server.")));
  pg_unreachable();
}

void warn_not_preloaded(bool creating) {
  ereport(
      WARNING,
      (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
       creating ? errmsg("snowflake is not loaded via \"shared_preload_libraries\": "
                         "snowflake_uuidv7() and ulid() will be in order within each session only")
                : errmsg("snowflake_uuidv7() and ulid() are in order within this session only: "
                         "snowflake is not loaded via \"shared_preload_libraries\""),
       errdetail("Without the library preloaded there is no server-wide state: the values "
                 "of concurrent sessions interleave out of order, and after a restart with "
                 "the clock behind, new values can sort below old ones. snowflake(), sno(), "
                 "rsxid(), ksuid(), the ID blocks and snowflake_status() refuse; decoding "
                 "works."),
       errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart "
               "the server.")));
}

bool recovery_seen_over = false;

void raise_in_recovery() {
  ereport(ERROR,
          (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
           errmsg("cannot generate snowflake IDs during recovery"),
           errdetail("A standby has its primary's snowflake.shard_id and no reservation of its "
                     "own: its IDs could repeat the primary's."),
           errhint("Generate IDs on the primary.")));
  pg_unreachable();
}

static char exception_message[256];

void keep_exception_message(const char *what) noexcept {
  std::strncpy(exception_message, what, sizeof exception_message - 1);
  exception_message[sizeof exception_message - 1] = '\0';
}

void raise_cxx_exception(const char *function) {
  ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                  errmsg("unexpected C++ exception in %s: %s", function, exception_message)));
  pg_unreachable();
}

}  // namespace snowflake::glue

extern "C" void _PG_init(void) {
  using namespace snowflake::glue;
  define_settings();
  detect_tsc();
  install_hints();
  if (!process_shared_preload_libraries_in_progress) return;
  prev_shmem_request_hook = shmem_request_hook;
  shmem_request_hook = request_shmem;
  prev_shmem_startup_hook = shmem_startup_hook;
  shmem_startup_hook = startup_shmem;
  register_reservation_writer();
  register_reservation_wal();
  if (lease_mode) {
    if (lease_setting_problem[0] != '\0')
      ereport(WARNING, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("snowflake.shard_source is etcd, but %s", lease_setting_problem),
                        errdetail("snowflake() refuses to generate until the settings fit "
                                  "together.")));
    else
      register_lease_worker();
  }
  if (!lease_mode && shard_id + shard_count - 1 > static_cast<int>(snowflake::kMaxShard))
    ereport(WARNING,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("snowflake.shard_id %d with snowflake.shard_count %d reaches past shard %u",
                    shard_id, shard_count, snowflake::kMaxShard),
             errdetail("snowflake() refuses to generate until the range fits.")));
}
