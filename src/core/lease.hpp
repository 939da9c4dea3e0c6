// Shard ids leased from a store (etcd in the server): the state machine of one server's
// lease, what backends read of it, and the interface to the store.
//
// Why no ID can repeat, in three rules (docs/internals.md has the full argument):
// 1. A server claims a range of shards only where no owner key exists, in one transaction
//    that ties every owner key to its lease: the store deletes them when the lease ends, and
//    never lets two leases hold one shard.
// 2. Each shard has a mark, on a key of its own that outlives leases: no ID of the shard was
//    issued at or above it. A holder writes the mark ahead of use, and only while its owner
//    keys are still its own (a compare in the same transaction), and issues only below the
//    mark it stored.
// 3. A new holder reads the marks in the transaction that claims the range, and starts at or
//    above them.
// So whatever the clocks say, and even when a holder keeps issuing after its lease is gone,
// the next holder's IDs are above the last holder's. On top of that, a holder stops issuing
// lease_fail_after after the last renewal it sent, before the store can expire the lease
// (lease_ttl after it received that renewal), so that no two servers issue on one shard at
// once even for a moment.
#pragma once
#include "core/pg_free.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace snowflake {

enum class LeaseState : int { kNone = 0, kAcquiring = 1, kHeld = 2, kFailing = 3, kLost = 4 };
const char *lease_state_name(LeaseState s) noexcept;

struct LeaseSettings {
  uint32_t pool_low = 0;
  uint32_t pool_high = 8191;
  uint32_t count = 1;             // contiguous shards per server (snowflake.shard_count)
  int64_t ttl_ms = 30000;         // the lease's time to live in the store
  int64_t renew_ms = 10000;       // how often it is renewed
  int64_t fail_after_ms = 15000;  // with no renewal for this long, generation stops
  // After etcd lost acknowledged writes (a snapshot restored, --force-new-cluster): a range
  // taken starts at or above the wall clock plus this, and at or above its mark (0: at its
  // mark).
  int64_t restore_margin_ms = 0;
};

// The most shards one server leases: one store transaction claims them all (etcd allows 128
// operations in one).
constexpr uint32_t kMaxLeasedShards = 64;

// Why these settings cannot work together ("" when they can): fail_after must end before the
// store could expire the lease, renewals must come before fail_after, and the pool must hold
// a range of count shards.
std::string lease_settings_problem(const LeaseSettings &s);

// "low-high" (or one number) into a pool within [0, max_shard]; false if it is not one.
bool parse_shard_pool(const char *text, uint32_t max_shard, uint32_t *low, uint32_t *high) noexcept;

// The range a server leases: (generation << 32) | (first << 16) | count; 0 for none. The
// generation changes with every lease, so that a generator can tell that the range it read
// is still the one held after it issued.
inline uint64_t lease_word(uint32_t generation, uint32_t first, uint32_t count) noexcept {
  return (uint64_t{generation} << 32) | (uint64_t{first} << 16) | count;
}
inline uint32_t lease_word_first(uint64_t w) noexcept { return (w >> 16) & 0xffff; }
inline uint32_t lease_word_count(uint64_t w) noexcept { return w & 0xffff; }

// What backends read, in shared memory; only the lease worker writes it. A generator reads
// the word and the deadline, issues, and reads both again: if either changed or the
// deadline passed, the value it issued is dropped (never returned). The worker closes the
// deadline (0) before it changes the word or computes the final mark, so every value is
// either seen by the worker or dropped by its generator (both sides use sequentially
// consistent operations).
// How long a request to the store may go unanswered before generators stop waiting on it
// (at least; twice the last answer's time if that is longer).
constexpr int64_t kRequestPatienceNs = 100 * 1000000;

struct alignas(64) LeaseSlot {
  std::atomic<uint64_t> word;             // lease_word of the range held, 0: none
  std::atomic<int64_t> deadline_mono_ns;  // issuing allowed while the monotonic clock is below
  std::atomic<uint64_t> mark_unix_ms;     // the mark stored for the range: IDs stay below it
  std::atomic<int> state;                 // a LeaseState
  std::atomic<int64_t> expires_mono_ns;   // the earliest the store can expire the lease, 0: none
  std::atomic<uint64_t> taken;            // leases taken since start
  std::atomic<uint64_t> lost;             // leases lost since start
  std::atomic<uint64_t> requests;         // requests made to the store since start
  std::atomic<uint32_t> generation;       // of the last lease taken
  // The etcd lease this server holds or is taking, 0: none. The glue keeps it across a
  // restart of the worker or of the server, so that the next worker takes the same lease and
  // its range back (LeaseMachine's known_lease) rather than waiting lease_ttl for it.
  std::atomic<int64_t> lease_id;
  // The last write of the mark failed (renewals may go through): IDs past the mark stored
  // wait for it, and SF001 must say that the mark is what failed.
  std::atomic<bool> mark_failing;
  // Attempts to take a lease and a range that failed since a range was last taken (the
  // machine's, and the worker's when its settings cannot work): a call then has nothing to
  // wait for.
  std::atomic<uint64_t> failed_attempts;
  std::atomic<void *> worker;  // the lease worker's latch; nullptr while none runs
  std::atomic<int> worker_pid;
  // The worker's request to the store in flight: when it was sent (0: none), and how long the
  // last one answered took. A generator waits for a mark only while the request is fresh.
  std::atomic<int64_t> request_sent_mono_ns;
  std::atomic<int64_t> request_took_ns;
  std::atomic<bool> request_is_mark;  // the request in flight writes the mark

  void init() noexcept {
    word.store(0);
    deadline_mono_ns.store(0);
    mark_unix_ms.store(0);
    state.store(static_cast<int>(LeaseState::kNone));
    expires_mono_ns.store(0);
    taken.store(0);
    lost.store(0);
    requests.store(0);
    generation.store(0);
    lease_id.store(0);
    mark_failing.store(false);
    failed_attempts.store(0);
    worker.store(nullptr);
    worker_pid.store(0);
    request_sent_mono_ns.store(0);
    request_took_ns.store(0);
    request_is_mark.store(false);
  }
  // A write of the mark in flight is what a call past the mark waits for: never stuck here
  // (the deadline, or reservation_timeout, ends that wait). Any other request, a renewal say,
  // holds the mark's write back: stuck once overdue.
  bool request_stuck(int64_t mono_ns) const noexcept {
    const int64_t sent = request_sent_mono_ns.load();
    return sent != 0 && !request_is_mark.load() &&
           mono_ns - sent > std::max(kRequestPatienceNs, 2 * request_took_ns.load());
  }
  bool open_at(int64_t mono_ns) const noexcept {
    return mono_ns < deadline_mono_ns.load(std::memory_order_seq_cst);
  }
  // The state as generators meet it: a range held past its deadline is lost, even while the
  // worker still waits for etcd's answer.
  LeaseState state_at(int64_t mono_ns) const noexcept {
    const LeaseState s = static_cast<LeaseState>(state.load());
    if ((s == LeaseState::kHeld || s == LeaseState::kFailing) && word.load() != 0 &&
        !open_at(mono_ns))
      return LeaseState::kLost;
    return s;
  }
  // Whether a generator with no open lease (or a mark to extend) may wait for the worker:
  // while a first lease is taken, or a known one taken back, with no attempt failed since; or
  // while a lease is held and open (a mark extension in flight, which answers in
  // milliseconds). Never once the deadline has passed, though the worker may still wait for
  // a renewal's answer: cut off from etcd, every call would wait out the request's timeout.
  // And never while the request in flight has gone unanswered for longer than a store that
  // answers takes (kRequestPatienceNs, or twice the last answer's time): cut off, the call
  // would only wait for the deadline, and then refuse.
  bool worth_waiting(int64_t mono_ns) const noexcept {
    if (word.load() != 0)
      return state_at(mono_ns) == LeaseState::kHeld && open_at(mono_ns) && !request_stuck(mono_ns);
    if (failed_attempts.load() != 0) return false;
    return taken.load() == 0 || lease_id.load() != 0;
  }
};

enum class StoreStatus : uint8_t { kOk, kTaken, kLost, kError };

struct StoreResult {
  StoreStatus status;
  std::string error;  // kError: what went wrong, for the status and the log
  static StoreResult ok() { return {StoreStatus::kOk, {}}; }
  static StoreResult taken() { return {StoreStatus::kTaken, {}}; }
  static StoreResult lost() { return {StoreStatus::kLost, {}}; }
  static StoreResult failed(std::string why) { return {StoreStatus::kError, std::move(why)}; }
};

// The mark of a shard as stored: the time (Unix ms) no ID reached, and the epoch the IDs
// were issued with.
struct StoredMark {
  uint64_t unix_ms = 0;  // 0: none stored yet
  uint64_t epoch_ms = 0;
  // Read for a range: an epoch of another mark of the range that is not epoch_ms (0: none),
  // so that a range whose shards were used with two epochs is refused, whichever is highest.
  uint64_t other_epoch_ms = 0;
  // The store's revision at which the range's marks were last read or written (0: never).
  // A write of the marks goes through only if none changed after it: a write sent earlier
  // whose answer was lost can never land after a later one and move a mark back.
  int64_t revision = 0;
};

// A shard some lease holds, and which.
struct ShardOwner {
  uint32_t shard;
  int64_t lease;
};

// What the lease needs of a store. Every call is bounded in time by the implementation.
class LeaseStore {
 public:
  virtual ~LeaseStore() = default;
  // A new lease that lives ttl_s seconds from the store's receipt of each renewal.
  virtual StoreResult grant(int64_t ttl_s, int64_t *lease) = 0;
  // The shards of [low, high] that some lease holds now, and which lease (every one, however
  // many: the store pages through them); *revision, the store's revision they were read at.
  virtual StoreResult held(uint32_t low, uint32_t high, std::vector<ShardOwner> *owners,
                           int64_t *revision) = 0;
  // Ties [first, first + count) to lease if none of it is held by another lease (kTaken
  // otherwise, kLost if the lease is gone), and reads the highest mark of the range and the
  // revision it was read at, in the same transaction. Shards this lease holds already (a
  // claim whose answer was lost, a lease taken back after a restart) are its own: kOk.
  // Fenced like a mark: kTaken too if another claim of this lease went through after listed
  // (the revision of the owners it was chosen from), so that a claim sent earlier whose answer
  // was lost can never land after a later one and pin a second range.
  virtual StoreResult acquire(int64_t lease, uint32_t first, uint32_t count, int64_t listed,
                              StoredMark *mark) = 0;
  // Renews the lease (kLost if it is gone); *ttl_s is what the store gives it from now.
  virtual StoreResult renew(int64_t lease, int64_t *ttl_s) = 0;
  // Stores mark->unix_ms and epoch_ms as the mark of every shard of the range, only while
  // lease holds all of them (kLost otherwise) and while no mark of the range changed after
  // mark->revision. kOk: stored, mark->revision is the write's. kTaken: a mark changed after
  // mark->revision (a write of this lease whose answer was lost, that landed); nothing is
  // written, and *mark is the range's mark as stored now (highest, and its revision).
  virtual StoreResult mark(int64_t lease, uint32_t first, uint32_t count, StoredMark *mark) = 0;
  // Ends the lease: the range is free at once.
  virtual StoreResult release(int64_t lease) = 0;
  // Whether every owner key of the range still carries lease and names this server (kOk), or
  // not (kLost: gone with an expiry, deleted, or another server's under the same lease id).
  virtual StoreResult owned(int64_t lease, uint32_t first, uint32_t count) = 0;
};

// What the lease machine needs of the server around it.
class LeaseHost {
 public:
  virtual ~LeaseHost() = default;
  virtual int64_t mono_ns() = 0;          // the monotonic clock
  virtual uint64_t ids_unix_ms() = 0;     // the IDs' clock, in Unix ms
  virtual uint64_t wall_unix_ms() = 0;    // the system's real-time clock, in Unix ms
  virtual uint64_t needed_unix_ms() = 0;  // the latest time a generator asked to be covered
  virtual uint64_t epoch_ms() = 0;        // snowflake.epoch
  // A range was taken: every ID from now on must be at or above mark_unix_ms.
  virtual void taken(uint32_t first, uint32_t count, uint64_t mark_unix_ms) = 0;
  // Renewals went through again after generation had stopped: the same lease and range.
  virtual void resumed(uint32_t first, uint32_t count) = 0;
  // The lease ended (why) or generation stopped on it.
  virtual void lost(const std::string &why) = 0;
  // Generators may have something to wake for.
  virtual void changed() = 0;
};

// The first shard of the lowest run of count free shards in [low, high], trying preferred
// first (a server takes back the range it had); -1 if there is none. May throw bad_alloc (it
// sorts a copy of held): the lease worker ends on it with a clean stop, not std::terminate.
int64_t choose_range(const std::vector<uint32_t> &held, uint32_t low, uint32_t high, uint32_t count,
                     int64_t preferred);

// The mark to store when need_ms must be covered: two renewal periods further, so that at
// real-time rate one write per period keeps it ahead. Due when need_ms comes within one.
inline uint64_t mark_target(uint64_t need_ms, int64_t renew_ms) noexcept {
  return need_ms + 2 * static_cast<uint64_t>(renew_ms);
}
inline bool mark_due(uint64_t need_ms, uint64_t mark_ms, int64_t renew_ms) noexcept {
  return need_ms + static_cast<uint64_t>(renew_ms) >= mark_ms;
}

// One server's lease. The worker calls step() in a loop and sleeps until the time it
// returns (or until a generator wakes it); stop() at a clean shutdown.
class LeaseMachine {
 public:
  // known_lease: the lease a previous worker of this server held (slot.lease_id as it was
  // kept), 0 for none. It is renewed first: if it lives, the range it holds is taken back at
  // once (above its marks); if it is gone, a new lease is granted.
  LeaseMachine(LeaseSlot &slot, LeaseHost &host, const LeaseSettings &settings,
               int64_t preferred_first, int64_t known_lease = 0);

  // One pass: take a lease and a range, renew, extend the mark, as due. Returns the
  // monotonic time of the next pass.
  int64_t step(LeaseStore &store);

  // A clean stop: generation closes, the final mark (just above high_unix_ms, the last
  // value the caller saw issued after close()) is stored, and the lease released. A lease
  // whose revoke failed stays in lease() and slot.lease_id, for the next worker to take back.
  void close() noexcept;
  void stop(LeaseStore &store, uint64_t high_unix_ms);

  const std::string &last_error() const noexcept { return last_error_; }
  int64_t lease() const noexcept { return lease_; }
  void set_settings(const LeaseSettings &s) noexcept { settings_ = s; }

 private:
  // One request to the store, counted and timed in the slot (request_sent_mono_ns).
  template <typename Request>
  StoreResult ask(Request &&request, bool mark = false) {
    slot_.requests.fetch_add(1);
    const int64_t sent = host_.mono_ns();
    slot_.request_is_mark.store(mark);
    slot_.request_sent_mono_ns.store(sent);
    // Answered or not (an exception), no request is in flight after this.
    struct Done {
      LeaseSlot &slot;
      ~Done() { slot.request_sent_mono_ns.store(0); }
    } done{slot_};
    StoreResult r = request();
    if (r.status != StoreStatus::kError) slot_.request_took_ns.store(host_.mono_ns() - sent);
    return r;
  }

  void acquire(LeaseStore &store);
  // A lease from the store: the known one if it still lives, or a new one. False on failure.
  bool take_lease(LeaseStore &store);
  void set_lease(int64_t lease) noexcept;
  // Gives the lease up in the store (its owner keys go with it) and forgets it.
  void drop_lease(LeaseStore &store);
  // The first shard of the range this lease holds already among owners (-1: none); false
  // when it holds shards that are no such range (then it is dropped, and the claim starts
  // over).
  bool own_range(LeaseStore &store, const std::vector<ShardOwner> &owners, int64_t *first);
  void keep(LeaseStore &store);
  void extend_mark(LeaseStore &store);
  // Stores unix_ms as the range's mark, fenced to the revision last known. True when stored,
  // or (may_lower false) when a higher mark of this lease stands already.
  bool write_mark(LeaseStore &store, uint64_t unix_ms, bool may_lower);
  void forget_lease(const std::string &why);
  void fail(const StoreResult &r);
  // An answer about the held lease other than kOk: the lease gone (forgotten), or a failure
  // (retried). True if it was one.
  bool settle(const StoreResult &r);
  void set_state(LeaseState s) noexcept;
  int64_t request_timeout_retry() const noexcept;
  uint64_t need_ms();
  std::string why_closed() const;  // why generation stopped, for the log

  LeaseSlot &slot_;
  LeaseHost &host_;
  LeaseSettings settings_;
  int64_t preferred_;
  int64_t lease_ = 0;          // the lease held, 0: none
  bool lease_checked_ = true;  // false: lease_ is a known lease not yet renewed by this machine
  int64_t alive_sent_ns_ = 0;  // when the last grant or renewal that the store took was sent
  int64_t next_renew_ns_ = 0;
  int64_t retry_ns_ = 0;  // after a failure: when to try again
  uint32_t first_ = 0, count_ = 0;
  bool has_range_ = false;
  bool reported_lost_ = false;     // host_.lost() was said for the range held
  uint64_t mark_ms_ = 0;           // the mark stored for the range
  int64_t mark_revision_ = 0;      // the store's revision the marks were last read or written at
  uint64_t acquired_mark_ms_ = 0;  // the mark read when the range was taken
  std::string last_error_;
};

}  // namespace snowflake
