// The lease worker (snowflake.shard_source = etcd): one background worker holds this server's
// shard lease in etcd (the core's LeaseMachine over EtcdStore) and publishes it in shared
// memory, where generators read it; it alone talks to etcd, with libcurl, one request at a
// time, each bounded in time and abandoned at shutdown. A standby runs none: it starts when
// recovery ends, so a promoted standby leases at once. At a clean stop it closes generation,
// stores the final mark just above the last ID and revokes the lease, so the shards are free
// at once; the data directory remembers them (snowflake.lease), so that a clean restart takes
// them back when they are still free.
//
// A worker that ends any other way (an ERROR, a SIGKILL and the crash-restart it causes)
// leaves a lease nobody renews, its shards blocked for lease_ttl: the next worker takes it
// back (LeaseMachine's known lease). Shared memory carries the lease's id across a worker's
// restart (LeaseSlot::lease_id), and snowflake.lease across a crash-restart, where it counts
// only for the postmaster that wrote it (its PID and start time): a copy of the data
// directory (a base backup, a promoted standby) must never take the lease of the server it
// was copied from.
//
// No PostgreSQL call that is expected to raise an ERROR runs while run()'s C++ objects are
// alive (an ERROR's longjmp would skip their destructors and the clean stop): the reload is
// wrapped so that its ERROR becomes a return value, and the rest is set up before run(). Two
// calls in the loop can still end the process without unwinding: WaitLatch (on the
// postmaster's death WL_EXIT_ON_PM_DEATH calls proc_exit; a failing epoll raises) and the
// LOG/WARNING reports (only on out of memory). Benign: the process exits, the skipped
// destructors free nothing that outlives it, and the next worker takes the lease back from
// shared memory (or, the postmaster gone, etcd expires it).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "core/etcd_store.hpp"
#include "core/lease.hpp"

#include "glue/system_clock.hpp"
#include "glue/lease_wait.hpp"
#include "glue/reservation.hpp"
#include "glue/reservation_storage.hpp"
#include "glue/settings.hpp"
#include "glue/shmem.hpp"

extern "C" {
#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "utils/elog.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/condition_variable.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
}

namespace snowflake::glue {

namespace {

// In the data directory: the first shard last held, then "LEASE PID START" while a lease is
// granted (its id, the postmaster's PID and PgStartTime).
constexpr char kLeaseFile[] = "snowflake.lease";

bool stopping = false;  // the clean stop's requests run to their own timeouts

char failure[256];  // why the worker ended other than at a shutdown, for the log

void publish_text(const std::string &endpoint, const std::string &error) {
  SpinLockAcquire(&lease_text->lock);
  strlcpy(lease_text->endpoint, endpoint.c_str(), sizeof lease_text->endpoint);
  strlcpy(lease_text->error, error.c_str(), sizeof lease_text->error);
  SpinLockRelease(&lease_text->lock);
}

struct RememberedLease {
  int64_t first = -1;  // the first shard last held, -1: none
  int64_t lease = 0;   // a lease granted by this postmaster's worker, 0: none (or another's)
};

RememberedLease read_lease_file() {
  RememberedLease r;
  std::ifstream in(kLeaseFile);
  long long first = -1, lease = 0, pid = 0, start = 0;
  if (!(in >> first) || first < 0 || first > static_cast<long long>(kMaxShard)) return r;
  r.first = first;
  // Only this postmaster's lease: a crash-restart keeps the postmaster, a copy never has it.
  if (in >> lease >> pid >> start && lease > 0 && pid == PostmasterPid && start == PgStartTime)
    r.lease = lease;
  return r;
}

// Written, then renamed into place with the file and the directory fsynced (durable_rename at
// LOG, which reports and returns): a crash-restart must find the lease. False on failure.
bool write_lease_file(int64_t first, int64_t lease) {
  static const char kTemp[] = "snowflake.lease.tmp";
  {
    std::ofstream out(kTemp, std::ios::trunc);
    out << first << "\n";
    if (lease != 0)
      out << lease << " " << PostmasterPid << " " << static_cast<long long>(PgStartTime) << "\n";
    if (!out.flush()) {
      ereport(LOG, (errmsg("could not write file \"%s\"", kTemp)));
      return false;
    }
  }
  return durable_rename(kTemp, kLeaseFile, LOG) == 0;
}

int64_t file_first = -1;  // what snowflake.lease holds: the first shard,
int64_t file_lease = 0;   // and the lease
int64_t want_first = -1;  // what it should hold
int64_t want_lease = 0;
int64_t file_tried_ns = 0;  // when a write last failed (monotonic), 0: none failed

// Writes snowflake.lease where it differs from what it should hold. A write that failed
// (LOGged) is tried again at most every 10 s, from the worker's loop: until one succeeds, a
// crash-restart leaves the lease to expire, its shards blocked for lease_ttl.
void sync_lease_file() {
  if (want_first == file_first && want_lease == file_lease) return;
  const int64_t now = read_clock(CLOCK_MONOTONIC);
  if (file_tried_ns != 0 && now - file_tried_ns < int64_t{10} * 1000000000) return;
  if (want_first >= 0 && !write_lease_file(want_first, want_lease)) {
    file_tried_ns = now;
    return;
  }
  file_tried_ns = 0;
  file_first = want_first;
  file_lease = want_lease;
}

// The range's first shard and the lease, where a worker after a crash-restart finds them.
void remember_lease(int64_t first, int64_t lease) {
  want_first = first;
  want_lease = lease;
  file_tried_ns = 0;  // a new content: written at once
  sync_lease_file();
}

// The password, from a file only its owner can read (as ssl_key_file); "" with *error set
// when it cannot be had. Never logged.
std::string read_password(std::string *error) {
  const char *path = etcd_password_file;
  if (path == nullptr || path[0] == '\0') {
    *error = "snowflake.etcd_user is set, but snowflake.etcd_password_file is not";
    return {};
  }
  struct stat st;
  if (stat(path, &st) != 0) {
    *error = std::string("could not read snowflake.etcd_password_file \"") + path +
             "\": " + strerror(errno);
    return {};
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    *error = std::string("snowflake.etcd_password_file \"") + path +
             "\" has group or world access: its mode must be 0600 or less";
    return {};
  }
  std::ifstream in(path);
  std::string password;
  std::getline(in, password);
  if (!in && !in.eof()) {
    *error = std::string("could not read snowflake.etcd_password_file \"") + path + "\"";
    return {};
  }
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.empty()) {
    *error = std::string("snowflake.etcd_password_file \"") + path + "\" is empty";
    return {};
  }
  return password;
}

// The first TLS file setting that is set, or nullptr.
const char *tls_file_set() {
  if (etcd_cafile != nullptr && etcd_cafile[0] != '\0') return "snowflake.etcd_cafile";
  if (etcd_certfile != nullptr && etcd_certfile[0] != '\0') return "snowflake.etcd_certfile";
  if (etcd_keyfile != nullptr && etcd_keyfile[0] != '\0') return "snowflake.etcd_keyfile";
  return nullptr;
}

// The store's settings from the server's, and what is wrong with them ("" when nothing);
// *warning, what works but is likely not what was meant.
EtcdSettings etcd_settings(std::string *problem, std::string *warning) {
  EtcdSettings s;
  std::string error;
  if (!parse_endpoints(etcd_endpoints, &s.endpoints, &error)) *problem = error;
  if (s.endpoints.empty() && problem->empty()) *problem = "snowflake.etcd_endpoints is empty";
  s.prefix = etcd_prefix;
  s.cafile = etcd_cafile;
  s.certfile = etcd_certfile;
  s.keyfile = etcd_keyfile;
  s.user = etcd_user;
  const auto plain = std::find_if(s.endpoints.begin(), s.endpoints.end(),
                                  [](const std::string &u) { return u.rfind("http://", 0) == 0; });
  if (plain != s.endpoints.end() && tls_file_set() != nullptr)
    *warning = std::string(tls_file_set()) +
               " is set, but snowflake.etcd_endpoints has an http:// endpoint (" + *plain +
               "): TLS settings apply to https:// endpoints alone";
  // Checked before the password file is read: a password that must not be sent is not read.
  if (!s.user.empty() && plain != s.endpoints.end() && !etcd_allow_plaintext_password &&
      problem->empty())
    *problem =
        "snowflake.etcd_user is set, but snowflake.etcd_endpoints has an http:// endpoint: "
        "the password would cross the network in clear (" +
        *plain + "); use https:// endpoints, or set snowflake.etcd_allow_plaintext_password = on";
  if (!s.user.empty() && problem->empty()) {
    s.password = read_password(&error);
    if (s.password.empty()) *problem = error;
  }
  // Well within a renewal period, so that a hung member costs one period at most.
  s.request_timeout_ms = std::clamp<long>(lease_renew_ms, 500, 2000);
  s.connect_timeout_ms = s.request_timeout_ms / 2;
  std::ostringstream holder;
  holder << "{\"host\":\"";
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) == 0) holder << host;
  holder << "\",\"port\":" << PostPortNumber << ",\"pid\":" << PostmasterPid
         << ",\"system_identifier\":\"" << GetSystemIdentifier() << "\"}";
  s.holder = holder.str();
  return s;
}

class ServerHost : public LeaseHost {
 public:
  explicit ServerHost(SharedState &state) : state_(state) {}
  int64_t mono_ns() override { return read_clock(CLOCK_MONOTONIC); }
  uint64_t ids_unix_ms() override {
    const int64_t ns = clock_peek(state_.clock, read_clock(CLOCK_MONOTONIC));
    return ns > 0 ? static_cast<uint64_t>(ns / 1000000) : 0;
  }
  uint64_t wall_unix_ms() override {
    const int64_t ns = read_clock(CLOCK_REALTIME);
    return ns > 0 ? static_cast<uint64_t>(ns / 1000000) : 0;
  }
  uint64_t needed_unix_ms() override {
    return state_.reservation.requested_unix_ms.load(std::memory_order_acquire);
  }
  uint64_t epoch_ms() override { return static_cast<uint64_t>(glue::epoch_ms); }
  void taken(uint32_t first, uint32_t count, uint64_t mark_unix_ms) override {
    // Above the last holder's IDs, whatever this server's clock says: within the reach of a
    // crashed holder's mark the lead fades, further (a clock behind) IDs run from it at full
    // pace, as after a restart behind the reservation.
    const int64_t hold =
        std::max<int64_t>(hold_ns(), (2 * int64_t{lease_renew_ms} + max_lead_ms) * 1000000);
    // A millisecond past the mark: a backend's extrapolated monotonic reading may trail the
    // worker's by microseconds, and must not land in the mark's last millisecond.
    if (mark_unix_ms != 0)
      (void)clock_carry(state_.clock, static_cast<int64_t>(mark_unix_ms + 1) * 1000000,
                        read_clock(CLOCK_MONOTONIC), read_clock(CLOCK_REALTIME), hold);
    // The one-second streams start past the mark's second, and past every value they issued
    // on a range before (generation is closed: the word is 0 until the range is published).
    state_.streams.raise_floors_for_range(mark_unix_ms);
    // Before any ID is issued on it: a crash-restart from here on takes the lease back.
    remember_lease(first, state_.lease.lease_id.load());
    if (count == 1)
      ereport(WARNING, (errmsg("snowflake leased shard %u from etcd", first)));
    else
      ereport(WARNING,
              (errmsg("snowflake leased shards %u to %u from etcd", first, first + count - 1)));
  }
  void resumed(uint32_t first, uint32_t count) override {
    if (count == 1)
      ereport(WARNING, (errmsg("snowflake renewed its lease of shard %u again", first),
                        errdetail("snowflake() issues IDs again.")));
    else
      ereport(WARNING, (errmsg("snowflake renewed its lease of shards %u to %u again", first,
                               first + count - 1),
                        errdetail("snowflake() issues IDs again.")));
  }
  void lost(const std::string &why) override {
    ereport(WARNING, (errmsg("snowflake lost its shard lease: %s", why.c_str()),
                      errdetail("snowflake() issues no ID until a lease is held again.")));
  }
  void changed() override { ConditionVariableBroadcast(reservation_cv); }

 private:
  SharedState &state_;
};

// The latest time an ID of the range was issued at, snos included, in Unix ms (0: none).
uint64_t range_high_ms(const SharedState &state, uint64_t word) {
  return range_high_unix_ms(state, lease_word_first(word), lease_word_count(word),
                            static_cast<uint64_t>(epoch_ms));
}

uint32 worker_wait_event() {
  static uint32 event = 0;
  return named_wait_event("SnowflakeLeaseWorker", &event);
}

void forget_worker(int, Datum) {
  if (shared == nullptr) return;
  shared->lease.worker.store(nullptr);
  shared->lease.worker_pid.store(0);
  // Whatever ended the worker, no generator issues on a lease nobody renews; and none takes
  // the range for one that lapsed (refusing at once) while the next worker takes it back.
  shared->lease.deadline_mono_ns.store(0);
  shared->lease.word.store(0);
  ConditionVariableBroadcast(reservation_cv);
}

// ProcessConfigFile, with an ERROR turned into false and its message into why: no C++ object
// lives in this frame, and the ERROR's longjmp ends here instead of at the worker's exit,
// past run()'s objects and its clean stop. (SNOWFLAKE_TEST_ERROR_AT_RELOAD, in the server's
// environment, raises one here for the tests; with a file snowflake_test_exit_at_reload in
// the data directory besides, the worker exits instead, without its stop and with no
// crash-restart. One getenv per reload is all it costs a production server.)
bool reload_config(char *why, size_t why_size) noexcept {
  MemoryContext context = CurrentMemoryContext;
  volatile bool ok = true;
  PG_TRY();
  {
    ProcessConfigFile(PGC_SIGHUP);
    if (getenv("SNOWFLAKE_TEST_ERROR_AT_RELOAD") != nullptr) {
      if (access("snowflake_test_exit_at_reload", F_OK) == 0) proc_exit(1);
      elog(ERROR, "error injected at a reload (SNOWFLAKE_TEST_ERROR_AT_RELOAD)");
    }
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(context);
    ErrorData *error = CopyErrorData();
    FlushErrorState();
    snprintf(why, why_size, "an ERROR at a reload: %s",
             error->message != nullptr ? error->message : "(no message)");
    FreeErrorData(error);
    ok = false;
  }
  PG_END_TRY();
  return ok;
}

// The worker's life. Nothing here raises an ERROR (a bgworker's ERROR ends it, skipping
// these objects); a reload's ERROR or a C++ exception in the loop ends it with the clean stop.
void run(SharedState &state) {
  LeaseSlot &slot = state.lease;
  slot.worker.store(MyLatch);
  slot.worker_pid.store(MyProcPid);
  std::string problem, warning, said_problem;
  EtcdStore store(etcd_settings(&problem, &warning),
                  [] { return ShutdownRequestPending && !stopping; });
  if (!warning.empty()) ereport(WARNING, (errmsg("%s", warning.c_str())));
  ServerHost host(state);
  const RememberedLease remembered = read_lease_file();
  file_first = want_first = remembered.first;
  file_lease = want_lease = remembered.lease;
  // A lease the worker before this one held, which nobody renews now: every process that
  // could issue on it has exited (a crash-restart) or met the deadline forget_worker closed.
  // Taken back (renewed, its range reclaimed above its marks), the shards need not wait out
  // lease_ttl.
  int64_t known = slot.lease_id.load();
  const bool after_crash = known == 0;
  if (known == 0) known = remembered.lease;
  if (known != 0)
    ereport(LOG, (errmsg("snowflake takes back the lease %lld it held before the %s",
                         static_cast<long long>(known),
                         after_crash ? "crash-restart" : "restart of its lease worker")));
  LeaseMachine machine(slot, host, configured_lease(), remembered.first, known);
  slot.state.store(static_cast<int>(LeaseState::kAcquiring));
  try {
    while (!ShutdownRequestPending) {
      if (ConfigReloadPending) {
        ConfigReloadPending = false;
        if (!reload_config(failure, sizeof failure)) break;
        // New settings that cannot work do not end a lease that the old ones hold.
        std::string reload_problem, reload_warning;
        EtcdSettings settings = etcd_settings(&reload_problem, &reload_warning);
        if (!reload_warning.empty() && reload_warning != warning)
          ereport(WARNING, (errmsg("%s", reload_warning.c_str())));
        warning = reload_warning;
        if (reload_problem.empty() || slot.word.load() == 0) {
          problem = reload_problem;
          store.reconfigure(std::move(settings));
        } else {
          ereport(WARNING, (errmsg("snowflake keeps its etcd settings from before the reload: %s",
                                   reload_problem.c_str())));
        }
      }
      if (problem != said_problem && !problem.empty())
        ereport(WARNING, (errmsg("snowflake cannot lease shards from etcd: %s", problem.c_str())));
      said_problem = problem;
      long timeout_ms = 1000;
      if (!problem.empty()) {
        publish_text(store.endpoint(), problem);
        // No lease can come: calls refuse at once instead of waiting reservation_timeout.
        if (slot.word.load() == 0) slot.failed_attempts.fetch_add(1);
      } else {
        const int64_t next = machine.step(store);
        const int64_t now = read_clock(CLOCK_MONOTONIC);
        timeout_ms = std::clamp<long>(static_cast<long>((next - now) / 1000000), 1, 60000);
        publish_text(store.endpoint(), machine.last_error());
        // A lease given up or forgotten is no longer one to take back.
        if (slot.lease_id.load() != want_lease && want_lease != 0)
          remember_lease(want_first, slot.lease_id.load());
        else
          sync_lease_file();  // a write that failed, again
      }
      (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout_ms,
                      worker_wait_event());
      ResetLatch(MyLatch);
    }
  } catch (const std::exception &e) {
    snprintf(failure, sizeof failure, "a C++ exception: %s", e.what());
  } catch (...) {
    snprintf(failure, sizeof failure, "an unknown C++ exception");
  }
  // A clean stop: no generator issues from here on (close), then the final mark is just above
  // what they issued, and the lease goes.
  stopping = true;
  const uint64_t word = slot.word.load();
  machine.close();
  try {
    machine.stop(store, word == 0 ? 0 : range_high_ms(state, word));
    publish_text(store.endpoint(), machine.last_error());
    // Revoked: nothing to take back. A revoke that failed leaves the lease in the slot and
    // the file, for the next worker (or the next start of this postmaster) to take back.
    remember_lease(want_first, slot.lease_id.load());
  } catch (...) {
    // The lease stays remembered: the next worker takes it back.
  }
}

}  // namespace

void register_lease_worker() {
  BackgroundWorker worker = {};
  worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
  // A standby issues no ID and holds no lease: a promoted one leases at once.
  worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
  worker.bgw_restart_time = 1;
  snprintf(worker.bgw_library_name, sizeof worker.bgw_library_name, "snowflake");
  snprintf(worker.bgw_function_name, sizeof worker.bgw_function_name, "snowflake_lease_worker");
  snprintf(worker.bgw_name, sizeof worker.bgw_name, "snowflake lease worker");
  snprintf(worker.bgw_type, sizeof worker.bgw_type, "snowflake lease worker");
  RegisterBackgroundWorker(&worker);
}

// False when the worker ended other than at a shutdown (failure says why).
bool run_lease_worker() noexcept {
  if (shared == nullptr || lease_text == nullptr) return true;
  // What can raise an ERROR runs before run()'s C++ objects exist.
  on_shmem_exit(forget_worker, 0);
  (void)worker_wait_event();
  failure[0] = '\0';
  try {
    run(*shared);
  } catch (const std::exception &e) {
    snprintf(failure, sizeof failure, "a C++ exception: %s", e.what());
  } catch (...) {
    snprintf(failure, sizeof failure, "an unknown C++ exception");
  }
  return failure[0] == '\0';
}

}  // namespace snowflake::glue

extern "C" PGDLLEXPORT void snowflake_lease_worker(Datum);

extern "C" void snowflake_lease_worker(Datum) {
  pqsignal(SIGHUP, SignalHandlerForConfigReload);
  // Not die(): the default handler would end the worker inside libcurl; this one sets a flag
  // that the request's progress callback and the loop read.
  pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
  BackgroundWorkerUnblockSignals();
  if (!snowflake::glue::run_lease_worker())
    ereport(
        LOG,
        (errmsg("snowflake lease worker stopped on %s", snowflake::glue::failure),
         errdetail("It closed generation and revoked its lease where it could; it starts again.")));
  // Exit code 1: the postmaster starts it again a second later (0 would unregister it).
  proc_exit(1);
}
