// Unit tests of the lease state machine (lease.hpp) with a fake clock and a fake store that
// behaves as etcd does: leases expire ttl after the store last heard of them, and take their
// owner keys with them; marks outlive leases; a server cut off from the store gets errors.
#include "core/lease.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace snowflake;

namespace {

constexpr int64_t kMs = 1000000;
constexpr uint64_t kEpoch = 1577836800000;
constexpr uint64_t kWallMs = 1763000000000;

struct FakeStore;

// One server's view of the store: the same store, or none when it is cut off. An answer can
// be lost after the store did the request (lose_answers), and a mark write held back
// (hold_marks) to land later, as a write sent to a member that timed out may.
struct Link : LeaseStore {
  FakeStore &store;
  bool cut = false;
  int lose_claims = 0;      // the next claims go through, but their answers are lost
  bool hold_marks = false;  // mark writes are kept in held_marks, answered with a timeout
  const char *refuse_marks = nullptr;  // mark writes fail with this error (renewals go through)
  bool refuse_release = false;         // revokes time out, and do not reach the store
  struct HeldMark {
    int64_t lease;
    uint32_t first, count;
    StoredMark mark;
  };
  std::vector<HeldMark> held_marks;
  explicit Link(FakeStore &s) : store(s) {}
  StoreResult grant(int64_t ttl_s, int64_t *lease) override;
  StoreResult held(uint32_t low, uint32_t high, std::vector<ShardOwner> *owners,
                   int64_t *revision) override;
  StoreResult acquire(int64_t lease, uint32_t first, uint32_t count, int64_t listed,
                      StoredMark *mark) override;
  StoreResult renew(int64_t lease, int64_t *ttl_s) override;
  StoreResult mark(int64_t lease, uint32_t first, uint32_t count, StoredMark *m) override;
  StoreResult release(int64_t lease) override;
  StoreResult owned(int64_t lease, uint32_t first, uint32_t count) override;
  // The held mark writes reach the store now, in order; what each got.
  std::vector<StoreStatus> land_held_marks();
};

struct FakeStore {
  int64_t now = 1000 * kMs;  // the store's clock: the same rate as every server's
  int64_t next_lease = 100;
  int64_t revision = 1;                                   // etcd's: one more per write
  std::map<int64_t, std::pair<int64_t, int64_t>> leases;  // id -> (expiry, ttl)
  std::map<uint32_t, int64_t> owners;                     // shard -> lease
  std::map<uint32_t, StoredMark> marks;                   // shard -> mark, without a lease
  std::map<uint32_t, int64_t> mark_revisions;             // shard -> the mark's mod revision
  std::map<int64_t, int64_t> claim_revisions;             // lease -> the revision of its last claim
  int grants = 0;
  void expire() {
    for (auto it = leases.begin(); it != leases.end();) {
      if (it->second.first <= now) {
        for (auto o = owners.begin(); o != owners.end();)
          o = o->second == it->first ? owners.erase(o) : std::next(o);
        it = leases.erase(it);
      } else {
        ++it;
      }
    }
  }
  // The highest mark of a range, and any other epoch in it, as read at the current revision.
  StoredMark read_marks(uint32_t first, uint32_t count) {
    StoredMark mark;
    std::vector<StoredMark> found;
    for (uint32_t s = first; s < first + count; ++s)
      if (marks.count(s)) found.push_back(marks[s]);
    for (const StoredMark &m : found)
      if (m.unix_ms > mark.unix_ms) mark = m;
    for (const StoredMark &m : found)
      if (m.epoch_ms != mark.epoch_ms) mark.other_epoch_ms = m.epoch_ms;
    mark.revision = revision;
    return mark;
  }
  // A mark write as etcd's transaction does it: every owner key the lease's, no mark changed
  // after the revision given.
  StoreStatus write_marks(int64_t lease, uint32_t first, uint32_t count, StoredMark *m) {
    expire();
    for (uint32_t s = first; s < first + count; ++s) {
      auto o = owners.find(s);
      if (o == owners.end() || o->second != lease) return StoreStatus::kLost;
    }
    for (uint32_t s = first; s < first + count; ++s)
      if (mark_revisions.count(s) && mark_revisions[s] > m->revision) {
        *m = read_marks(first, count);
        return StoreStatus::kTaken;
      }
    ++revision;
    for (uint32_t s = first; s < first + count; ++s) {
      marks[s] = StoredMark{m->unix_ms, m->epoch_ms};
      mark_revisions[s] = revision;
    }
    m->revision = revision;
    return StoreStatus::kOk;
  }
};

StoreResult Link::grant(int64_t ttl_s, int64_t *lease) {
  if (cut) return StoreResult::failed("connection refused");
  store.expire();
  *lease = store.next_lease++;
  store.leases[*lease] = {store.now + ttl_s * 1000 * kMs, ttl_s};
  ++store.grants;
  return StoreResult::ok();
}
StoreResult Link::held(uint32_t low, uint32_t high, std::vector<ShardOwner> *owners,
                       int64_t *revision) {
  if (cut) return StoreResult::failed("connection refused");
  store.expire();
  *revision = store.revision;
  for (auto &o : store.owners)
    if (o.first >= low && o.first <= high) owners->push_back({o.first, o.second});
  return StoreResult::ok();
}
StoreResult Link::acquire(int64_t lease, uint32_t first, uint32_t count, int64_t listed,
                          StoredMark *mark) {
  if (cut) return StoreResult::failed("connection refused");
  store.expire();
  if (!store.leases.count(lease)) return StoreResult::lost();
  bool all_ours = true;
  for (uint32_t s = first; s < first + count; ++s) {
    auto o = store.owners.find(s);
    if (o == store.owners.end() || o->second != lease) all_ours = false;
    if (o != store.owners.end() && o->second != lease) return StoreResult::taken();
  }
  if (!all_ours) {
    for (uint32_t s = first; s < first + count; ++s)
      if (store.owners.count(s)) return StoreResult::taken();  // partly ours
    // Another claim of this lease after the listing: refused, as etcd's compare does.
    if (store.claim_revisions[lease] > listed) return StoreResult::taken();
    ++store.revision;
    for (uint32_t s = first; s < first + count; ++s) store.owners[s] = lease;
    store.claim_revisions[lease] = store.revision;
  }
  *mark = store.read_marks(first, count);
  if (lose_claims > 0) {
    --lose_claims;
    return StoreResult::failed("timed out");
  }
  return StoreResult::ok();
}
StoreResult Link::renew(int64_t lease, int64_t *ttl_s) {
  if (cut) return StoreResult::failed("connection refused");
  store.expire();
  auto it = store.leases.find(lease);
  if (it == store.leases.end()) return StoreResult::lost();
  it->second.first = store.now + it->second.second * 1000 * kMs;
  *ttl_s = it->second.second;
  return StoreResult::ok();
}
StoreResult Link::mark(int64_t lease, uint32_t first, uint32_t count, StoredMark *m) {
  if (cut) return StoreResult::failed("connection refused");
  if (refuse_marks != nullptr) return StoreResult::failed(refuse_marks);
  if (hold_marks) {
    held_marks.push_back({lease, first, count, *m});
    return StoreResult::failed("timed out");
  }
  return StoreResult{store.write_marks(lease, first, count, m), {}};
}
StoreResult Link::release(int64_t lease) {
  if (cut) return StoreResult::failed("connection refused");
  if (refuse_release) return StoreResult::failed("lease revoke: timed out");
  store.leases.erase(lease);
  for (auto o = store.owners.begin(); o != store.owners.end();)
    o = o->second == lease ? store.owners.erase(o) : std::next(o);
  return StoreResult::ok();
}
StoreResult Link::owned(int64_t lease, uint32_t first, uint32_t count) {
  if (cut) return StoreResult::failed("connection refused");
  store.expire();
  for (uint32_t s = first; s < first + count; ++s) {
    auto o = store.owners.find(s);
    if (o == store.owners.end() || o->second != lease) return StoreResult::lost();
  }
  return StoreResult::ok();
}
std::vector<StoreStatus> Link::land_held_marks() {
  std::vector<StoreStatus> got;
  for (HeldMark &h : held_marks)
    got.push_back(store.write_marks(h.lease, h.first, h.count, &h.mark));
  held_marks.clear();
  return got;
}

// A server: its clocks (the IDs' clock may be offset from the store's), what it was told.
struct Server : LeaseHost {
  FakeStore &store;
  Link link;
  LeaseSlot slot;
  int64_t ids_offset_ms;  // the IDs' clock against the store's
  uint64_t floor_ms = 0;  // taken(): IDs at or above this
  uint64_t needed = 0;
  std::vector<std::string> events;
  std::unique_ptr<LeaseMachine> machine;

  Server(FakeStore &s, const LeaseSettings &settings, int64_t offset_ms = 0, int64_t preferred = -1,
         int64_t known_lease = 0)
      : store(s), link(s), ids_offset_ms(offset_ms) {
    slot.init();
    machine = std::make_unique<LeaseMachine>(slot, *this, settings, preferred, known_lease);
  }
  int64_t mono_ns() override { return store.now; }
  uint64_t wall_unix_ms() override { return kWallMs + store.now / kMs + ids_offset_ms; }
  uint64_t ids_unix_ms() override { return std::max(wall_unix_ms(), floor_ms); }
  uint64_t needed_unix_ms() override { return needed; }
  uint64_t epoch_ms() override { return kEpoch; }
  void taken(uint32_t first, uint32_t count, uint64_t mark) override {
    floor_ms = std::max(floor_ms, mark);
    events.push_back("taken " + std::to_string(first) + "+" + std::to_string(count));
  }
  void lost(const std::string &why) override { events.push_back("lost: " + why); }
  void resumed(uint32_t first, uint32_t count) override {
    events.push_back("resumed " + std::to_string(first) + "+" + std::to_string(count));
  }
  void changed() override {}

  void step() { (void)machine->step(link); }
  LeaseState state() const { return static_cast<LeaseState>(slot.state.load()); }
  bool open() const { return slot.open_at(store.now); }
  uint32_t first() const { return lease_word_first(slot.word.load()); }
  // The highest ID time this server could issue now: below the mark, and only while open.
  bool can_issue_at(uint64_t unix_ms) const {
    return open() && slot.word.load() != 0 && unix_ms < slot.mark_unix_ms.load() &&
           unix_ms >= floor_ms;
  }
};

LeaseSettings settings(uint32_t low = 0, uint32_t high = 8191, uint32_t count = 1) {
  LeaseSettings s;
  s.pool_low = low;
  s.pool_high = high;
  s.count = count;
  s.ttl_ms = 6000;
  s.renew_ms = 1000;
  s.fail_after_ms = 3000;
  return s;
}

// Runs every server's worker for ms of the store's time, a pass each step_ms.
void run(FakeStore &store, std::vector<Server *> servers, int64_t ms, int64_t step_ms = 100) {
  for (int64_t t = 0; t < ms; t += step_ms) {
    for (Server *s : servers) s->step();
    store.now += step_ms * kMs;
  }
}

}  // namespace

TEST(LeaseSettings, ProblemsAreNamed) {
  EXPECT_EQ(lease_settings_problem(LeaseSettings{}), "");
  LeaseSettings s;
  s.fail_after_ms = s.ttl_ms;
  EXPECT_NE(lease_settings_problem(s).find("snowflake.lease_fail_after"), std::string::npos);
  s = LeaseSettings{};
  s.fail_after_ms = s.ttl_ms - 500;  // less than a second apart
  EXPECT_NE(lease_settings_problem(s).find("at least 1 s below"), std::string::npos);
  s = LeaseSettings{};
  s.renew_ms = s.fail_after_ms;
  EXPECT_NE(lease_settings_problem(s).find("snowflake.lease_renew"), std::string::npos);
  s = LeaseSettings{};
  s.pool_low = 10;
  s.pool_high = 12;
  s.count = 4;
  EXPECT_NE(lease_settings_problem(s).find("snowflake.shard_pool 10-12"), std::string::npos);
  s = LeaseSettings{};
  s.count = 65;
  EXPECT_NE(lease_settings_problem(s).find("at most 64 shards"), std::string::npos);
}

TEST(LeaseSettings, ParsePool) {
  uint32_t lo, hi;
  ASSERT_TRUE(parse_shard_pool("0-8191", 8191, &lo, &hi));
  EXPECT_EQ(lo, 0u);
  EXPECT_EQ(hi, 8191u);
  ASSERT_TRUE(parse_shard_pool(" 7 ", 8191, &lo, &hi));
  EXPECT_EQ(lo, 7u);
  EXPECT_EQ(hi, 7u);
  ASSERT_TRUE(parse_shard_pool("100 - 200", 8191, &lo, &hi));
  EXPECT_EQ(hi, 200u);
  for (const char *bad :
       {"", "-", "5-", "-5", "9-3", "0-8192", "a-b", "1-2-3", "1,2", "99999999999"})
    EXPECT_FALSE(parse_shard_pool(bad, 8191, &lo, &hi)) << bad;
}

TEST(ChooseRange, LowestFreeRunOrThePreferredOne) {
  EXPECT_EQ(choose_range({}, 0, 10, 1, -1), 0);
  EXPECT_EQ(choose_range({0, 1, 3}, 0, 10, 1, -1), 2);
  EXPECT_EQ(choose_range({0, 1, 3}, 0, 10, 2, -1), 4);
  EXPECT_EQ(choose_range({0, 1, 3}, 0, 10, 1, 7), 7);   // preferred, free
  EXPECT_EQ(choose_range({0, 1, 3}, 0, 10, 1, 3), 2);   // preferred, held
  EXPECT_EQ(choose_range({0, 1, 3}, 0, 10, 2, 9), 9);   // 9 and 10
  EXPECT_EQ(choose_range({0, 1, 3}, 0, 10, 2, 10), 4);  // 10 and 11: past the pool
  EXPECT_EQ(choose_range({5, 6, 7}, 5, 7, 1, -1), -1);  // full
  EXPECT_EQ(choose_range({5, 7}, 5, 7, 2, -1), -1);     // room, but not in a row
  EXPECT_EQ(choose_range({1, 2}, 0, 3, 1, -1), 0);
  EXPECT_EQ(choose_range({0, 1, 2}, 0, 3, 1, -1), 3);
  EXPECT_EQ(choose_range({100}, 5, 7, 3, -1), 5);  // held outside the pool: ignored
}

TEST(Lease, ServersWithOneConfigurationTakeDistinctShards) {
  FakeStore store;
  Server a(store, settings(0, 2)), b(store, settings(0, 2)), c(store, settings(0, 2));
  run(store, {&a, &b, &c}, 500);
  std::set<uint32_t> firsts{a.first(), b.first(), c.first()};
  EXPECT_EQ(firsts, (std::set<uint32_t>{0, 1, 2}));
  for (Server *s : {&a, &b, &c}) {
    EXPECT_EQ(s->state(), LeaseState::kHeld);
    EXPECT_TRUE(s->open());
    EXPECT_GT(s->slot.mark_unix_ms.load(), s->ids_unix_ms());
  }
  // A fourth finds the pool full, says so, and issues nothing.
  Server d(store, settings(0, 2));
  run(store, {&a, &b, &c, &d}, 2000);
  EXPECT_EQ(d.state(), LeaseState::kAcquiring);
  EXPECT_FALSE(d.open());
  EXPECT_EQ(d.slot.word.load(), 0u);
  EXPECT_NE(d.machine->last_error().find("pool 0-2 has no 1 free shard in a row: 3 of its 3"),
            std::string::npos)
      << d.machine->last_error();
  // One stops cleanly: the fourth takes its shard, above the last ID issued on it.
  const uint32_t freed = b.first();
  const uint64_t b_high = b.ids_unix_ms();
  b.machine->close();
  b.machine->stop(b.link, b_high);
  run(store, {&a, &c, &d}, 1000);
  EXPECT_EQ(d.state(), LeaseState::kHeld);
  EXPECT_EQ(d.first(), freed);
  EXPECT_EQ(d.floor_ms, b_high + 1);
}

TEST(Lease, ShardRangesDoNotOverlap) {
  FakeStore store;
  Server a(store, settings(0, 15, 4)), b(store, settings(0, 15, 4));
  run(store, {&a, &b}, 300);
  EXPECT_EQ(lease_word_count(a.slot.word.load()), 4u);
  const uint32_t fa = a.first(), fb = b.first();
  EXPECT_TRUE(fa + 4 <= fb || fb + 4 <= fa) << fa << " " << fb;
}

TEST(Lease, CutOffServerStopsBeforeItsLeaseCanExpireAndTheNextHolderStartsAbove) {
  FakeStore store;
  // b's IDs' clock is 10 minutes behind a's.
  Server a(store, settings(0, 0)), b(store, settings(0, 0), -600000);
  run(store, {&a}, 1500);
  ASSERT_EQ(a.state(), LeaseState::kHeld);
  a.link.cut = true;
  const int64_t cut_at = store.now;
  bool was_failing = false;
  int64_t closed_at = 0;
  uint64_t a_highest = 0;  // the latest time a could still issue at
  while (closed_at == 0) {
    a.step();
    b.step();
    if (a.state() == LeaseState::kFailing) was_failing = true;
    const uint64_t t = a.ids_unix_ms();
    if (a.can_issue_at(t)) a_highest = t;
    if (!a.open()) closed_at = store.now;
    // The lease is alive in the store for as long as a may issue: b cannot have it.
    ASSERT_TRUE(store.leases.count(a.machine->lease()));
    EXPECT_EQ(b.slot.word.load(), 0u);
    store.now += 10 * kMs;
  }
  EXPECT_TRUE(was_failing);
  EXPECT_LE(closed_at - cut_at, 3000 * kMs);  // lease_fail_after of the last renewal sent
  run(store, {&a, &b}, 200);
  EXPECT_EQ(a.state(), LeaseState::kLost);
  ASSERT_FALSE(a.events.empty());
  EXPECT_EQ(a.events.back(), "lost: connection refused");  // said once, when it stopped
  EXPECT_NE(a.machine->last_error(), "");
  // Once the store expires a's lease, b takes the shard, above everything a could issue.
  run(store, {&a, &b}, 6000);
  ASSERT_EQ(b.state(), LeaseState::kHeld);
  EXPECT_GT(b.floor_ms, a_highest);
  EXPECT_GE(b.floor_ms, a.slot.mark_unix_ms.load());
  // Healed, a finds its lease gone, and waits for a free shard (the pool has one).
  a.link.cut = false;
  run(store, {&a, &b}, 2000);
  EXPECT_EQ(a.state(), LeaseState::kAcquiring);
  EXPECT_EQ(a.slot.lost.load(), 1u);
  // b stops cleanly: a takes the shard back, above b's IDs.
  const uint64_t b_high = b.ids_unix_ms();
  b.machine->close();
  b.machine->stop(b.link, b_high);
  run(store, {&a}, 1000);
  EXPECT_EQ(a.state(), LeaseState::kHeld);
  EXPECT_GT(a.floor_ms, b_high);
}

TEST(Lease, AShortOutageKeepsTheSameLeaseAndShard) {
  FakeStore store;
  Server a(store, settings(0, 9));
  run(store, {&a}, 500);
  const int64_t lease = a.machine->lease();
  const uint32_t first = a.first();
  a.link.cut = true;
  run(store, {&a}, 4000);  // past fail_after, within the ttl
  EXPECT_EQ(a.state(), LeaseState::kLost);
  EXPECT_FALSE(a.open());
  a.link.cut = false;
  run(store, {&a}, 500);
  EXPECT_EQ(a.state(), LeaseState::kHeld);
  EXPECT_TRUE(a.open());
  EXPECT_EQ(a.machine->lease(), lease);
  EXPECT_EQ(a.first(), first);
  // The log says generation stopped and went on.
  ASSERT_GE(a.events.size(), 3u);
  EXPECT_EQ(a.events[a.events.size() - 2].rfind("lost: connection refused", 0), 0u);
  EXPECT_EQ(a.events.back(), "resumed " + std::to_string(first) + "+1");
}

TEST(Lease, AStateHeldPastItsDeadlineReadsLost) {
  FakeStore store;
  Server a(store, settings(0, 9));
  run(store, {&a}, 300);
  ASSERT_EQ(a.slot.state_at(store.now), LeaseState::kHeld);
  // The worker is stuck in a request: nothing changed the state, the deadline passed.
  EXPECT_EQ(a.slot.state_at(store.now + 3001 * kMs), LeaseState::kLost);
}

TEST(Lease, StoreDownAtStartThenUp) {
  FakeStore store;
  Server a(store, settings());
  a.link.cut = true;
  run(store, {&a}, 3000);
  EXPECT_EQ(a.state(), LeaseState::kAcquiring);
  EXPECT_EQ(a.machine->last_error(), "connection refused");
  EXPECT_FALSE(a.open());
  a.link.cut = false;
  run(store, {&a}, 1500);
  EXPECT_EQ(a.state(), LeaseState::kHeld);
  EXPECT_TRUE(a.open());
}

TEST(Lease, TheMarkStaysAheadOfNeedAndTheFinalMarkComesDown) {
  FakeStore store;
  Server a(store, settings(3, 3));
  run(store, {&a}, 300);
  const uint64_t mark = a.slot.mark_unix_ms.load();
  EXPECT_GE(mark, a.ids_unix_ms() + 1000);
  EXPECT_EQ(store.marks[3].unix_ms, mark);  // stored before it is published
  EXPECT_EQ(store.marks[3].epoch_ms, kEpoch);
  // A burst asks for more than the mark covers: the next pass stores more, first.
  a.needed = mark + 5000;
  a.step();
  EXPECT_GE(a.slot.mark_unix_ms.load(), a.needed + 1000);
  EXPECT_EQ(store.marks[3].unix_ms, a.slot.mark_unix_ms.load());
  // Over a minute at real-time rate, the mark keeps ahead with one write per renewal.
  a.needed = 0;
  const uint64_t before = a.slot.requests.load();
  run(store, {&a}, 60000);
  EXPECT_GT(a.slot.mark_unix_ms.load(), a.ids_unix_ms());
  EXPECT_LE(a.slot.requests.load() - before, 2u * 61);  // a renewal and a mark a second, at most
  // Stopped, the mark is just above the last ID issued, and the shard is free.
  const uint64_t high = a.ids_unix_ms();
  a.machine->close();
  EXPECT_FALSE(a.open());
  a.machine->stop(a.link, high);
  EXPECT_EQ(store.marks[3].unix_ms, high + 1);
  EXPECT_TRUE(store.owners.empty());
  EXPECT_EQ(a.state(), LeaseState::kNone);
}

TEST(Lease, AnyMarkOfAnotherEpochInTheRangeIsRefused) {
  FakeStore store;
  // The highest mark of the range has this server's epoch, a lower one another.
  store.marks[4] = StoredMark{kWallMs - 5000, 1288834974657};
  store.marks[5] = StoredMark{kWallMs, kEpoch};
  Server a(store, settings(4, 5, 2));
  run(store, {&a}, 500);
  EXPECT_EQ(a.slot.word.load(), 0u);
  EXPECT_NE(a.machine->last_error().find(
                "shards 4 to 5 hold IDs issued with snowflake.epoch 1288834974657"),
            std::string::npos)
      << a.machine->last_error();
}

TEST(Lease, AMarkOfAnotherEpochIsRefused) {
  FakeStore store;
  store.marks[0] = StoredMark{kWallMs, 1288834974657};
  Server a(store, settings(0, 0));
  run(store, {&a}, 500);
  EXPECT_EQ(a.slot.word.load(), 0u);
  EXPECT_NE(a.machine->last_error().find("epoch 1288834974657"), std::string::npos)
      << a.machine->last_error();
  EXPECT_TRUE(store.owners.empty());  // released, not kept
}

TEST(Lease, ALeaseLostInTheStoreIsForgottenAndReplaced) {
  FakeStore store;
  Server a(store, settings(0, 9));
  run(store, {&a}, 300);
  const uint64_t word = a.slot.word.load();
  // An operator revokes it (or etcd lost it): the next renewal finds out.
  store.leases.clear();
  store.owners.clear();
  run(store, {&a}, 1500);
  EXPECT_EQ(a.state(), LeaseState::kHeld);
  EXPECT_NE(a.slot.word.load(), word);  // a new generation, so no generator mixes the two
  EXPECT_EQ(a.slot.lost.load(), 1u);
  EXPECT_EQ(a.slot.taken.load(), 2u);
}

TEST(Lease, AClaimWhoseAnswerWasLostIsTakenBackNotPinned) {
  FakeStore store;
  // A pool the size of the fleet: a range pinned by a lost answer leaves the other without.
  Server a(store, settings(0, 1)), b(store, settings(0, 1));
  a.link.lose_claims = 1;
  run(store, {&a}, 2000);
  ASSERT_EQ(a.state(), LeaseState::kHeld);
  EXPECT_EQ(a.first(), 0u);  // the shard its lost claim holds
  const int64_t lease = a.machine->lease();
  size_t of_a = 0;
  for (auto &o : store.owners) of_a += o.second == lease;
  EXPECT_EQ(of_a, 1u);
  run(store, {&a, &b}, 2000);
  EXPECT_EQ(b.state(), LeaseState::kHeld) << b.machine->last_error();
  EXPECT_EQ(b.first(), 1u);
}

TEST(Lease, ARestartedMachineTakesItsLeaseAndRangeBackAtOnce) {
  FakeStore store;
  Server a(store, settings(0, 9), 0, 4);
  run(store, {&a}, 1500);
  ASSERT_EQ(a.state(), LeaseState::kHeld);
  const int64_t lease = a.machine->lease();
  EXPECT_EQ(a.slot.lease_id.load(), lease);  // published, for the glue to keep
  const uint64_t stored = store.marks[4].unix_ms;
  ASSERT_GT(stored, 0u);
  // The worker dies (or the server crashes): no stop, the lease and its owner key stay. The
  // next worker, its IDs' clock 10 minutes behind, starts from the lease kept.
  const int grants = store.grants;
  Server again(store, settings(0, 9), -600000, -1, lease);
  EXPECT_EQ(again.slot.lease_id.load(), lease);
  again.step();  // one pass, no wait for lease_ttl
  ASSERT_EQ(again.state(), LeaseState::kHeld) << again.machine->last_error();
  EXPECT_EQ(again.first(), 4u);
  EXPECT_EQ(again.machine->lease(), lease);
  EXPECT_EQ(store.grants, grants);
  EXPECT_GE(again.floor_ms, stored);  // IDs above every one the dead worker could issue
  EXPECT_TRUE(again.can_issue_at(again.ids_unix_ms()));
  EXPECT_EQ(store.owners.size(), 1u);
  // Restarted after the lease expired: a new one, and the range above its mark.
  run(store, {&again}, 500);
  store.now += 7000 * kMs;  // past lease_ttl with no renewal
  Server late(store, settings(0, 9), -600000, -1, lease);
  late.step();
  ASSERT_EQ(late.state(), LeaseState::kHeld) << late.machine->last_error();
  EXPECT_NE(late.machine->lease(), lease);
  EXPECT_EQ(late.slot.lease_id.load(), late.machine->lease());
  EXPECT_EQ(store.grants, grants + 1);
  EXPECT_EQ(late.first(), 0u);
  EXPECT_EQ(store.owners.size(), 1u);
}

TEST(Lease, AKnownLeaseHoldingNoRangeOfTheSettingsIsGivenUp) {
  FakeStore store;
  Server a(store, settings(0, 9, 2));
  run(store, {&a}, 500);
  ASSERT_EQ(a.state(), LeaseState::kHeld);
  const int64_t lease = a.machine->lease();
  // Restarted with one shard per server: the two shards of the old lease are no such range.
  Server again(store, settings(0, 9, 1), 0, -1, lease);
  run(store, {&again}, 500);
  ASSERT_EQ(again.state(), LeaseState::kHeld) << again.machine->last_error();
  EXPECT_NE(again.machine->lease(), lease);
  // Not revoked (an id etcd may have granted again could be another server's), and renewed
  // by nobody: etcd expires it, and its two shards, lease_ttl later.
  EXPECT_EQ(store.leases.count(lease), 1u);
  run(store, {&again}, 7000);
  EXPECT_EQ(store.leases.count(lease), 0u);
  EXPECT_EQ(store.owners.size(), 1u);
}

TEST(Lease, AStoppedWorkerForgetsItsLease) {
  FakeStore store;
  Server a(store, settings(0, 9));
  run(store, {&a}, 500);
  ASSERT_NE(a.slot.lease_id.load(), 0);
  a.machine->close();
  a.machine->stop(a.link, a.ids_unix_ms());
  EXPECT_EQ(a.slot.lease_id.load(), 0);
}

TEST(Lease, AMarkWriteLandingLateIsRefusedAndTheHigherMarkStands) {
  FakeStore store;
  Server a(store, settings(3, 3));
  run(store, {&a}, 300);
  ASSERT_EQ(a.state(), LeaseState::kHeld);
  // A raise of the mark times out, but is on its way (a member that answers late).
  a.link.hold_marks = true;
  a.needed = a.slot.mark_unix_ms.load() + 5000;
  a.step();
  ASSERT_EQ(a.link.held_marks.size(), 1u);
  const uint64_t lower = a.link.held_marks[0].mark.unix_ms;
  // A higher one goes through, through another member.
  a.link.hold_marks = false;
  a.needed = lower + 5000;
  run(store, {&a}, 600);  // past the retry
  const uint64_t higher = store.marks[3].unix_ms;
  ASSERT_GT(higher, lower);
  EXPECT_EQ(a.slot.mark_unix_ms.load(), higher);
  // The late one lands: refused, the higher mark stands.
  EXPECT_EQ(a.link.land_held_marks(), std::vector<StoreStatus>{StoreStatus::kTaken});
  EXPECT_EQ(store.marks[3].unix_ms, higher);
}

TEST(Lease, AMarkWriteThatLandedBeforeTheNextIsWrittenOver) {
  FakeStore store;
  Server a(store, settings(3, 3));
  run(store, {&a}, 300);
  a.link.hold_marks = true;
  a.needed = a.slot.mark_unix_ms.load() + 5000;
  a.step();
  a.link.hold_marks = false;
  // It lands before the next write: that one finds the marks moved, and writes over them.
  EXPECT_EQ(a.link.land_held_marks(), std::vector<StoreStatus>{StoreStatus::kOk});
  a.needed += 5000;
  run(store, {&a}, 600);
  EXPECT_EQ(a.state(), LeaseState::kHeld) << a.machine->last_error();
  EXPECT_EQ(store.marks[3].unix_ms, a.slot.mark_unix_ms.load());
  EXPECT_GE(a.slot.mark_unix_ms.load(), a.needed);
  // The same at a clean stop: the final mark comes down past a write that landed late.
  a.link.hold_marks = true;
  a.needed += 5000;
  a.step();
  ASSERT_EQ(a.link.held_marks.size(), 1u);
  a.link.hold_marks = false;
  EXPECT_EQ(a.link.land_held_marks(), std::vector<StoreStatus>{StoreStatus::kOk});
  const uint64_t high = a.ids_unix_ms();
  a.machine->close();
  a.machine->stop(a.link, high);
  EXPECT_EQ(store.marks[3].unix_ms, high + 1);
}

TEST(Lease, MarkWritesFailingWhileRenewalsGoThroughAreNamed) {
  FakeStore store;
  Server a(store, settings(0, 9));
  run(store, {&a}, 300);
  ASSERT_EQ(a.state(), LeaseState::kHeld);
  EXPECT_FALSE(a.slot.mark_failing.load());
  // As with JWT tokens after a change to users or roles: keepalives go on, the mark does not.
  a.link.refuse_marks = "write of the mark: etcdserver: revision of auth store is old";
  const uint64_t mark = a.slot.mark_unix_ms.load();
  run(store, {&a}, 5000);
  EXPECT_TRUE(a.open());  // renewed: the lease is held
  EXPECT_EQ(a.slot.mark_unix_ms.load(), mark);
  EXPECT_TRUE(a.slot.mark_failing.load());
  EXPECT_EQ(a.state(), LeaseState::kFailing);
  EXPECT_EQ(a.machine->last_error(), a.link.refuse_marks);
  // Then renewals fail too: the mark is no longer what is named.
  a.link.cut = true;
  run(store, {&a}, 1500);
  EXPECT_FALSE(a.slot.mark_failing.load());
  a.link.cut = false;
  run(store, {&a}, 1500);
  EXPECT_EQ(a.state(), LeaseState::kFailing);
  EXPECT_TRUE(a.slot.mark_failing.load());
  a.link.refuse_marks = nullptr;
  run(store, {&a}, 500);
  EXPECT_FALSE(a.slot.mark_failing.load());
  EXPECT_GT(a.slot.mark_unix_ms.load(), mark);
}

TEST(Lease, AfterARestoreTheMarginStartsARangeAboveItsMarkAndTheClock) {
  FakeStore store;
  // A restored snapshot holds a mark an hour old; the IDs since went further.
  store.marks[2] = StoredMark{kWallMs + 1000 * 1000 - 3600000, kEpoch};
  LeaseSettings s = settings(2, 2);
  s.restore_margin_ms = 600000;
  Server a(store, s, -30000);  // its IDs' clock 30 s behind
  a.step();
  ASSERT_EQ(a.state(), LeaseState::kHeld) << a.machine->last_error();
  const uint64_t clock = kWallMs + store.now / kMs - 30000;
  EXPECT_GE(a.floor_ms, clock + 600000);
  EXPECT_GT(store.marks[2].unix_ms, a.floor_ms);  // stored before any ID
  EXPECT_FALSE(a.can_issue_at(clock + 599999));
  // Without the margin, the range starts at the clock.
  FakeStore plain;
  plain.marks[2] = store.marks[2];
  plain.marks[2].unix_ms = kWallMs + 1000 * 1000 - 3600000;
  Server b(plain, settings(2, 2), -30000);
  b.step();
  EXPECT_LT(b.floor_ms, clock);
}

TEST(Lease, NoCallWaitsOnceTheDeadlineHasPassed) {
  // The issue's settings: a renewal sent 2 s after the last one still hangs (its 2 s timeout)
  // when fail_after passes, and the worker has not changed the state yet.
  LeaseSettings s = settings(0, 9);
  s.renew_ms = 2000;
  FakeStore store;
  Server a(store, s);
  a.step();
  ASSERT_EQ(a.state(), LeaseState::kHeld);
  EXPECT_TRUE(a.slot.worth_waiting(store.now));  // held and open: a mark extension in flight
  const int64_t deadline = a.slot.deadline_mono_ns.load();
  EXPECT_TRUE(a.slot.worth_waiting(deadline - 1));
  EXPECT_EQ(a.state(), LeaseState::kHeld);  // the worker is stuck in its request
  EXPECT_FALSE(a.slot.worth_waiting(deadline));
  EXPECT_FALSE(a.slot.worth_waiting(deadline + 1100 * kMs));
  // Renewals known to fail: no wait either, open or not.
  a.link.cut = true;
  store.now += 2000 * kMs;
  a.step();
  ASSERT_EQ(a.state(), LeaseState::kFailing);
  EXPECT_FALSE(a.slot.worth_waiting(store.now));
}

TEST(Lease, CallsWaitForAFirstLeaseOnlyUntilAnAttemptFails) {
  FakeStore store;
  Server a(store, settings(0, 0));
  a.link.cut = true;
  EXPECT_TRUE(a.slot.worth_waiting(store.now));  // the first attempt is under way
  a.step();
  ASSERT_EQ(a.state(), LeaseState::kAcquiring);
  EXPECT_FALSE(a.slot.worth_waiting(store.now));  // it failed: no lease is coming soon
  a.link.cut = false;
  run(store, {&a}, 1500);
  ASSERT_EQ(a.state(), LeaseState::kHeld);
  EXPECT_EQ(a.slot.failed_attempts.load(), 0u);
  // The pool is full: a second server refuses at once after its first look.
  Server b(store, settings(0, 0));
  EXPECT_TRUE(b.slot.worth_waiting(store.now));
  b.step();
  EXPECT_EQ(b.slot.word.load(), 0u);
  EXPECT_FALSE(b.slot.worth_waiting(store.now));
  // a's worker restarts on the same shared memory (its range still published, the deadline
  // closed when it exited) and takes its lease back: calls wait for it, the range comes back
  // in one pass.
  const int64_t lease = a.machine->lease();
  a.slot.deadline_mono_ns.store(0);
  a.machine = std::make_unique<LeaseMachine>(a.slot, a, settings(0, 0), -1, lease);
  a.slot.state.store(static_cast<int>(LeaseState::kAcquiring));
  EXPECT_TRUE(a.slot.worth_waiting(store.now));
  a.step();
  EXPECT_EQ(a.state(), LeaseState::kHeld);
  EXPECT_EQ(a.machine->lease(), lease);
}

TEST(Lease, ALeaseWhoseRevokeFailedIsKeptForTheNextWorker) {
  FakeStore store;
  Server a(store, settings(0, 9), 0, 4);
  run(store, {&a}, 500);
  ASSERT_EQ(a.state(), LeaseState::kHeld);
  const int64_t lease = a.machine->lease();
  a.link.refuse_release = true;
  const uint64_t high = a.ids_unix_ms();
  a.machine->close();
  a.machine->stop(a.link, high);
  EXPECT_EQ(store.marks[4].unix_ms, high + 1);  // the final mark went through
  EXPECT_EQ(a.slot.lease_id.load(), lease);     // the revoke did not: the lease is kept
  EXPECT_EQ(a.machine->lease(), lease);
  // The next worker takes it back at once, above the final mark: no lease_ttl to wait.
  const int grants = store.grants;
  Server again(store, settings(0, 9), -600000, -1, a.slot.lease_id.load());
  again.step();
  ASSERT_EQ(again.state(), LeaseState::kHeld) << again.machine->last_error();
  EXPECT_EQ(again.first(), 4u);
  EXPECT_EQ(store.grants, grants);
  EXPECT_GE(again.floor_ms, high + 1);
  // A revoke that goes through forgets it.
  again.machine->close();
  again.machine->stop(again.link, again.ids_unix_ms());
  EXPECT_EQ(again.slot.lease_id.load(), 0);
  EXPECT_TRUE(store.owners.empty());
}

TEST(Lease, TheRestoreMarginIsAddedOnceNotAtEveryNewRange) {
  FakeStore store;
  LeaseSettings s = settings(2, 2);
  s.restore_margin_ms = 600000;
  Server a(store, s);
  a.step();
  ASSERT_EQ(a.state(), LeaseState::kHeld) << a.machine->last_error();
  const uint64_t first_floor = a.floor_ms;
  EXPECT_GE(first_floor, a.wall_unix_ms() + 600000);
  // The lease is lost (revoked by an operator) and a new range taken, twice: IDs start above
  // the marks, but no further margin is stacked on the lead the first one gave.
  for (int i = 0; i < 2; ++i) {
    store.leases.clear();
    store.owners.clear();
    run(store, {&a}, 2000);
    ASSERT_EQ(a.state(), LeaseState::kHeld) << a.machine->last_error();
  }
  EXPECT_EQ(a.slot.taken.load(), 3u);
  EXPECT_GE(a.floor_ms, first_floor);
  EXPECT_LT(a.floor_ms, first_floor + 600000) << "the margin was added again";
}
