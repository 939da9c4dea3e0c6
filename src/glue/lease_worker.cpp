// The lease worker (snowflake.shard_source = etcd): one background worker holds this server's
// shard lease in etcd (the core's LeaseMachine over EtcdStore) and publishes it in shared
// memory, where generators read it; it alone talks to etcd, with libcurl, one request at a
// time, each bounded in time and abandoned at shutdown. A standby runs none: it starts when
// recovery ends, so a promoted standby leases at once. At a clean stop it closes generation,
// stores the final mark just above the last ID and revokes the lease, so the shards are free
// at once; the data directory remembers them (snowflake.lease), so that a clean restart takes
// them back when they are still free.
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
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/wait_event.h"
}

namespace snowflake::glue {

namespace {

constexpr char kLeaseFile[] = "snowflake.lease";  // the first shard last held, in the data dir

bool stopping = false;  // the clean stop's requests run to their own timeouts

void publish_text(const std::string &endpoint, const std::string &error) {
  SpinLockAcquire(&lease_text->lock);
  strlcpy(lease_text->endpoint, endpoint.c_str(), sizeof lease_text->endpoint);
  strlcpy(lease_text->error, error.c_str(), sizeof lease_text->error);
  SpinLockRelease(&lease_text->lock);
}

int64_t remembered_first() {
  std::ifstream in(kLeaseFile);
  long long first = -1;
  if (!(in >> first) || first < 0 || first > static_cast<long long>(kMaxShard)) return -1;
  return first;
}

void remember_first(uint32_t first) {
  const std::string tmp = std::string(kLeaseFile) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << first << "\n";
    if (!out.flush()) return;
  }
  (void)std::rename(tmp.c_str(), kLeaseFile);
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

// The store's settings from the server's, and what is wrong with them ("" when nothing).
EtcdSettings etcd_settings(std::string *problem) {
  EtcdSettings s;
  std::string error;
  if (!parse_endpoints(etcd_endpoints, &s.endpoints, &error)) *problem = error;
  if (s.endpoints.empty() && problem->empty()) *problem = "snowflake.etcd_endpoints is empty";
  s.prefix = etcd_prefix;
  s.cafile = etcd_cafile;
  s.certfile = etcd_certfile;
  s.keyfile = etcd_keyfile;
  s.user = etcd_user;
  if (!s.user.empty()) {
    s.password = read_password(&error);
    if (s.password.empty() && problem->empty()) *problem = error;
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
    remember_first(first);
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

// The latest time an ID of the range was issued at, in Unix ms (0: none).
uint64_t range_high_ms(const SharedState &state, uint64_t word) {
  const uint32_t first = lease_word_first(word), count = lease_word_count(word);
  uint64_t high = 0;
  for (uint32_t s = first; s < first + count && s <= kMaxShard; ++s) {
    const uint64_t last = state.shards[s].last.load(std::memory_order_seq_cst);
    if (last != 0) high = std::max(high, (last >> kSeqBits) + static_cast<uint64_t>(epoch_ms));
  }
  return high;
}

uint32 worker_wait_event() {
  static uint32 event = 0;
  return named_wait_event("SnowflakeLeaseWorker", &event);
}

void forget_worker(int, Datum) {
  if (shared == nullptr) return;
  shared->lease.worker.store(nullptr);
  shared->lease.worker_pid.store(0);
  // Whatever ended the worker, no generator issues on a lease nobody renews.
  shared->lease.deadline_mono_ns.store(0);
  ConditionVariableBroadcast(reservation_cv);
}

// The worker's life. Nothing here raises an ERROR (a bgworker's ERROR ends it); C++
// exceptions are caught by the caller.
void run(SharedState &state) {
  LeaseSlot &slot = state.lease;
  on_shmem_exit(forget_worker, 0);
  slot.worker.store(MyLatch);
  slot.worker_pid.store(MyProcPid);
  std::string problem;
  EtcdStore store(etcd_settings(&problem), [] { return ShutdownRequestPending && !stopping; });
  ServerHost host(state);
  LeaseMachine machine(slot, host, configured_lease(), remembered_first());
  slot.state.store(static_cast<int>(LeaseState::kAcquiring));
  while (!ShutdownRequestPending) {
    if (ConfigReloadPending) {
      ConfigReloadPending = false;
      ProcessConfigFile(PGC_SIGHUP);
      // New settings that cannot work do not end a lease that the old ones hold.
      std::string reload_problem;
      EtcdSettings settings = etcd_settings(&reload_problem);
      if (reload_problem.empty() || slot.word.load() == 0) {
        problem = reload_problem;
        store.reconfigure(std::move(settings));
      } else {
        ereport(WARNING, (errmsg("snowflake keeps its etcd settings from before the reload: %s",
                                 reload_problem.c_str())));
      }
    }
    long timeout_ms = 1000;
    if (problem.empty()) {
      const int64_t next = machine.step(store);
      const int64_t now = read_clock(CLOCK_MONOTONIC);
      timeout_ms = std::clamp<long>(static_cast<long>((next - now) / 1000000), 1, 60000);
      publish_text(store.endpoint(), machine.last_error());
    } else {
      publish_text(store.endpoint(), problem);
    }
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout_ms,
                    worker_wait_event());
    ResetLatch(MyLatch);
  }
  // A clean stop: no generator issues from here on (close), then the final mark is just above
  // what they issued, and the lease goes.
  stopping = true;
  const uint64_t word = slot.word.load();
  machine.close();
  machine.stop(store, word == 0 ? 0 : range_high_ms(state, word));
  publish_text(store.endpoint(), machine.last_error());
}

char failure[256];

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

bool run_lease_worker() noexcept {
  try {
    if (shared != nullptr && lease_text != nullptr) run(*shared);
    return true;
  } catch (const std::exception &e) {
    strlcpy(failure, e.what(), sizeof failure);
  } catch (...) {
    strlcpy(failure, "unknown C++ exception", sizeof failure);
  }
  return false;
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
    ereport(LOG, (errmsg("snowflake lease worker stopped on a C++ exception: %s",
                         snowflake::glue::failure)));
  // Exit code 1: the postmaster starts it again a second later (0 would unregister it).
  proc_exit(1);
}
