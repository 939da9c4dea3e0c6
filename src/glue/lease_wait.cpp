// Lease mode, the generators' side: they read the lease from shared memory on every ID and
// touch nothing else of it; only when it is not open (none yet, renewals failing for too long,
// a mark to extend) do they come here, to wait for the lease worker or to say why not.
#include "core/lease.hpp"

#include "glue/system_clock.hpp"
#include "glue/lease_wait.hpp"
#include "glue/reservation.hpp"
#include "glue/settings.hpp"
#include "glue/shmem.hpp"

extern "C" {
#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "utils/acl.h"
#include "storage/latch.h"
#include "utils/timestamp.h"
}

namespace snowflake::glue {

LeaseText *lease_text = nullptr;

Size lease_text_size() { return sizeof(LeaseText); }

void init_lease_text(LeaseText *t) {
  SpinLockInit(&t->lock);
  t->endpoint[0] = '\0';
  t->error[0] = '\0';
}

void read_lease_text(char *endpoint, size_t endpoint_size, char *error, size_t error_size) {
  endpoint[0] = '\0';
  error[0] = '\0';
  if (lease_text == nullptr) return;
  SpinLockAcquire(&lease_text->lock);
  strlcpy(endpoint, lease_text->endpoint, endpoint_size);
  strlcpy(error, lease_text->error, error_size);
  SpinLockRelease(&lease_text->lock);
}

namespace {

uint32 lease_wait_event() {
  static uint32 event = 0;
  return named_wait_event("SnowflakeLease", &event);
}

void wake_lease_worker(const LeaseSlot &lease) {
  if (void *latch = lease.worker.load()) SetLatch(static_cast<Latch *>(latch));
}

bool lease_open(const LeaseSlot &lease) {
  return lease.word.load() != 0 && lease.open_at(read_clock(CLOCK_MONOTONIC));
}

// Whether a generator may wait (LeaseSlot::worth_waiting): a first lease or one taken back
// with nothing failed yet, or a mark extension of a lease held and open. Anything else refuses
// at once: cut off from etcd, every call would otherwise wait reservation_timeout.
bool worth_waiting(const LeaseSlot &lease) {
  return lease.worth_waiting(read_clock(CLOCK_MONOTONIC));
}

// Whether this role may read etcd's errors: they can name files of settings that only
// superusers and pg_read_all_settings see (certificates, the password file).
bool may_read_etcd_errors() {
  return superuser() || has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_SETTINGS);
}

// Why there is no open lease, in words for a DETAIL: the state and etcd's last error.
const char *lease_detail(const LeaseSlot &lease) {
  char endpoint[256], error[512];
  read_lease_text(endpoint, sizeof endpoint, error, sizeof error);
  LeaseState state = lease.state_at(read_clock(CLOCK_MONOTONIC));
  const char *what;
  switch (state) {
    case LeaseState::kAcquiring:
      what = "no shard lease is held yet";
      break;
    case LeaseState::kLost:
      what = psprintf(
          "no renewal of the lease reached etcd within snowflake.lease_fail_after "
          "(%d ms)",
          lease_fail_after_ms);
      break;
    case LeaseState::kFailing:
      what = "the lease's renewals are failing";
      break;
    case LeaseState::kHeld:
      what = "a lease is being taken";
      break;
    default:
      what = lease.worker_pid.load() == 0 ? "the lease worker is not running"
                                          : "the lease worker has not started leasing";
  }
  // A lease held and open, but etcd has not answered the worker's request in flight: IDs that
  // need the mark raised do not wait for it.
  const int64_t now_ns = read_clock(CLOCK_MONOTONIC);
  if (state == LeaseState::kHeld && lease.request_stuck(now_ns))
    what = psprintf(
        "etcd has not answered the lease worker's request for %lld ms, and the IDs asked for "
        "need the shards' mark raised",
        static_cast<long long>((now_ns - lease.request_sent_mono_ns.load()) / 1000000));
  // Renewals that go through hold the lease, but IDs stop all the same at a mark that cannot
  // be written: name the mark, not the renewals.
  if (lease.mark_failing.load() && (state == LeaseState::kHeld || state == LeaseState::kFailing)) {
    state = LeaseState::kFailing;
    what =
        "the writes of the shards' mark to etcd are failing (renewals go through), so no ID "
        "may pass the mark stored";
  }
  if (error[0] != '\0' && may_read_etcd_errors())
    return psprintf("lease_state is %s: %s. Last etcd error: %s", lease_state_name(state), what,
                    error);
  if (error[0] != '\0')
    return psprintf(
        "lease_state is %s: %s. snowflake_status().etcd_error (pg_monitor) has "
        "etcd's last error.",
        lease_state_name(state), what);
  return psprintf("lease_state is %s: %s.", lease_state_name(state), what);
}

pg_noinline void raise_setting_problem() {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("snowflake.shard_source is etcd, but %s", lease_setting_problem),
                  errdetail("snowflake() issues no ID until the settings fit together."),
                  errhint("Correct the settings in the configuration file and restart the "
                          "server.")));
}

pg_noinline void raise_no_lease(const LeaseSlot &lease) {
  ereport(ERROR,
          (errcode(ERRCODE_SNOWFLAKE_NO_LEASE), errmsg("snowflake() has no shard lease from etcd"),
           errdetail("%s", lease_detail(lease)),
           errhint("Check that etcd answers at snowflake.etcd_endpoints; "
                   "snowflake_status() shows the lease. IDs resume by themselves once a "
                   "lease is held, with no restart.")));
}

}  // namespace

void await_lease(LeaseSlot &lease) {
  if (lease_setting_problem[0] != '\0') raise_setting_problem();
  wake_lease_worker(lease);
  const int64_t started = monotonic_ms();
  ConditionVariablePrepareToSleep(reservation_cv);
  while (!lease_open(lease)) {
    const long waited = ms_since(started);
    if (waited >= reservation_timeout_ms || !worth_waiting(lease)) {
      ConditionVariableCancelSleep();
      raise_no_lease(lease);
    }
    // Woken when the worker takes or renews a lease; a cancel or statement_timeout ends it.
    (void)ConditionVariableTimedSleep(
        reservation_cv, std::min<long>(reservation_timeout_ms - waited, 100), lease_wait_event());
  }
  ConditionVariableCancelSleep();
}

bool lease_pending(LeaseSlot &lease) {
  if (lease_setting_problem[0] != '\0') raise_setting_problem();
  if (lease_open(lease)) return false;
  if (!worth_waiting(lease)) raise_no_lease(lease);
  wake_lease_worker(lease);
  return true;
}

void await_lease_cover(SharedState &state, uint64_t needed_unix_ms) {
  LeaseSlot &lease = state.lease;
  // The reservation first (it raises the request the lease worker reads, too).
  if (state.reservation.reserved_unix_ms.load() <= needed_unix_ms)
    await_reservation(needed_unix_ms);
  request_reservation(state.reservation, needed_unix_ms);
  wake_lease_worker(lease);
  const int64_t started = monotonic_ms();
  ConditionVariablePrepareToSleep(reservation_cv);
  while (lease.mark_unix_ms.load() <= needed_unix_ms) {
    const long waited = ms_since(started);
    if (!lease_open(lease) || waited >= reservation_timeout_ms || !worth_waiting(lease)) {
      ConditionVariableCancelSleep();
      raise_no_lease(lease);
    }
    // Woken when the mark moves; and every 10 ms, so that a request to etcd that goes
    // unanswered ends the wait as soon as it is overdue (worth_waiting).
    (void)ConditionVariableTimedSleep(
        reservation_cv, std::min<long>(reservation_timeout_ms - waited, 10), lease_wait_event());
  }
  ConditionVariableCancelSleep();
}

void raise_shard_not_leased(int32 shard, uint64_t word) {
  const uint32_t first = lease_word_first(word), count = lease_word_count(word);
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("shard %d is not leased by this server", shard),
                  count == 1 ? errdetail("snowflake.shard_source is etcd, and this server "
                                         "leases shard %u.",
                                         first)
                             : errdetail("snowflake.shard_source is etcd, and this server "
                                         "leases shards %u to %u.",
                                         first, first + count - 1)));
  pg_unreachable();
}

const char *lease_refusal() {
  if (!lease_mode || shared == nullptr) return nullptr;
  if (lease_setting_problem[0] != '\0')
    return psprintf("snowflake.shard_source is etcd, but %s", lease_setting_problem);
  if (lease_open(shared->lease)) return nullptr;
  return psprintf("no shard lease from etcd (%s)", lease_detail(shared->lease));
}

}  // namespace snowflake::glue
