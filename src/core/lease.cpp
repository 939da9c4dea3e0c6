#include "core/lease.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace snowflake {

const char *lease_state_name(LeaseState s) noexcept {
  switch (s) {
    case LeaseState::kNone:
      return "none";
    case LeaseState::kAcquiring:
      return "acquiring";
    case LeaseState::kHeld:
      return "held";
    case LeaseState::kFailing:
      return "failing";
    case LeaseState::kLost:
      return "lost";
  }
  return "none";
}

std::string lease_settings_problem(const LeaseSettings &s) {
  char buf[256];
  // At least a second apart: a renewal's answer may come late, and clocks drift.
  if (s.fail_after_ms > s.ttl_ms - 1000) {
    std::snprintf(buf, sizeof buf,
                  "snowflake.lease_fail_after (%lld ms) must be at least 1 s below "
                  "snowflake.lease_ttl (%lld ms): generation must stop before etcd can give the "
                  "shard to another server",
                  static_cast<long long>(s.fail_after_ms), static_cast<long long>(s.ttl_ms));
    return buf;
  }
  if (s.renew_ms >= s.fail_after_ms) {
    std::snprintf(buf, sizeof buf,
                  "snowflake.lease_renew (%lld ms) must be below snowflake.lease_fail_after "
                  "(%lld ms): a lease renewed less often stops generation between renewals",
                  static_cast<long long>(s.renew_ms), static_cast<long long>(s.fail_after_ms));
    return buf;
  }
  if (s.count > kMaxLeasedShards) {
    std::snprintf(buf, sizeof buf,
                  "snowflake.shard_count is %u, but a server leases at most %u shards (one etcd "
                  "transaction claims them all)",
                  s.count, kMaxLeasedShards);
    return buf;
  }
  if (s.pool_high < s.pool_low || s.pool_high - s.pool_low + 1 < s.count) {
    std::snprintf(buf, sizeof buf,
                  "snowflake.shard_pool %u-%u holds no range of snowflake.shard_count %u shards",
                  s.pool_low, s.pool_high, s.count);
    return buf;
  }
  return {};
}

namespace {

bool parse_number(const char *&p, uint32_t max, uint32_t *out) noexcept {
  if (*p < '0' || *p > '9') return false;
  uint64_t v = 0;
  while (*p >= '0' && *p <= '9') {
    v = v * 10 + static_cast<uint64_t>(*p - '0');
    if (v > max) return false;
    ++p;
  }
  *out = static_cast<uint32_t>(v);
  return true;
}

void skip_spaces(const char *&p) noexcept {
  while (*p == ' ' || *p == '\t') ++p;
}

}  // namespace

bool parse_shard_pool(const char *text, uint32_t max_shard, uint32_t *low,
                      uint32_t *high) noexcept {
  if (text == nullptr) return false;
  const char *p = text;
  skip_spaces(p);
  uint32_t lo, hi;
  if (!parse_number(p, max_shard, &lo)) return false;
  skip_spaces(p);
  if (*p == '-') {
    ++p;
    skip_spaces(p);
    if (!parse_number(p, max_shard, &hi)) return false;
    skip_spaces(p);
  } else {
    hi = lo;
  }
  if (*p != '\0' || hi < lo) return false;
  *low = lo;
  *high = hi;
  return true;
}

int64_t choose_range(const std::vector<uint32_t> &held, uint32_t low, uint32_t high, uint32_t count,
                     int64_t preferred) {
  if (count == 0 || high < low || high - low + 1 < count) return -1;
  std::vector<uint32_t> sorted;
  for (uint32_t s : held)
    if (s >= low && s <= high) sorted.push_back(s);
  std::sort(sorted.begin(), sorted.end());
  auto free_run = [&](uint32_t first) {
    if (first < low || first + count - 1 > high) return false;
    auto it = std::lower_bound(sorted.begin(), sorted.end(), first);
    return it == sorted.end() || *it > first + count - 1;
  };
  if (preferred >= 0 && free_run(static_cast<uint32_t>(preferred))) return preferred;
  // The lowest run: the gaps between held shards, in order.
  uint64_t start = low;
  for (uint32_t s : sorted) {
    if (s >= start && s - start >= count) return static_cast<int64_t>(start);
    if (s + 1 > start) start = uint64_t{s} + 1;
  }
  return high + 1 - start >= count ? static_cast<int64_t>(start) : -1;
}

LeaseMachine::LeaseMachine(LeaseSlot &slot, LeaseHost &host, const LeaseSettings &settings,
                           int64_t preferred_first, int64_t known_lease)
    : slot_(slot),
      host_(host),
      settings_(settings),
      preferred_(preferred_first),
      lease_(known_lease),
      lease_checked_(known_lease == 0) {
  slot_.lease_id.store(known_lease);
  // A new machine holds no range: a range a previous worker published (its deadline closed
  // when it exited) is no longer one, so that calls read a lease being taken back, and wait.
  slot_.deadline_mono_ns.store(0, std::memory_order_seq_cst);
  slot_.word.store(0, std::memory_order_seq_cst);
}

void LeaseMachine::set_lease(int64_t lease) noexcept {
  lease_ = lease;
  lease_checked_ = true;
  slot_.lease_id.store(lease, std::memory_order_seq_cst);
}

void LeaseMachine::set_state(LeaseState s) noexcept { slot_.state.store(static_cast<int>(s)); }

int64_t LeaseMachine::request_timeout_retry() const noexcept {
  // After a failure, try again a quarter renewal period later (between 0.1 and 1 s).
  return std::clamp<int64_t>(settings_.renew_ms / 4, 100, 1000) * 1000000;
}

std::string LeaseMachine::why_closed() const {
  return last_error_.empty() ? std::string("no renewal reached etcd in time") : last_error_;
}

uint64_t LeaseMachine::need_ms() { return std::max(host_.ids_unix_ms(), host_.needed_unix_ms()); }

void LeaseMachine::fail(const StoreResult &r) {
  last_error_ = r.error;
  retry_ns_ = host_.mono_ns() + request_timeout_retry();
  // Failing, until step() finds the deadline passed: it alone says the lease is lost.
  if (has_range_ && static_cast<LeaseState>(slot_.state.load()) == LeaseState::kHeld)
    set_state(LeaseState::kFailing);
  // No range yet, and this attempt failed: calls stop waiting for one.
  if (!has_range_) slot_.failed_attempts.fetch_add(1);
}

bool LeaseMachine::settle(const StoreResult &r) {
  if (r.status == StoreStatus::kLost) {
    forget_lease("the lease expired in etcd");
    return true;
  }
  if (r.status != StoreStatus::kOk) {
    fail(r);
    return true;
  }
  return false;
}

void LeaseMachine::close() noexcept { slot_.deadline_mono_ns.store(0, std::memory_order_seq_cst); }

void LeaseMachine::forget_lease(const std::string &why) {
  close();
  slot_.word.store(0, std::memory_order_seq_cst);
  slot_.expires_mono_ns.store(0);
  if (has_range_) {
    slot_.lost.fetch_add(1);
    host_.lost(why);  // also after generation stopped: now the range may be another's
  }
  has_range_ = false;
  reported_lost_ = false;
  slot_.mark_failing.store(false);
  set_lease(0);
  last_error_ = why;
  set_state(LeaseState::kAcquiring);
  host_.changed();
}

bool LeaseMachine::take_lease(LeaseStore &store) {
  const int64_t ttl_s = std::max<int64_t>(1, (settings_.ttl_ms + 999) / 1000);
  if (lease_ != 0 && !lease_checked_) {
    // A lease a previous worker held: alive, it is this server's still, with its range.
    const int64_t sent = host_.mono_ns();
    int64_t live_s = 0;
    const StoreResult r = ask([&] { return store.renew(lease_, &live_s); });
    if (r.status == StoreStatus::kError) {
      fail(r);
      return false;
    }
    if (r.status == StoreStatus::kOk && live_s >= ttl_s) {
      lease_checked_ = true;
      alive_sent_ns_ = sent;
      return true;
    }
    // Gone; or granted with a shorter lease_ttl than the one set now, which the deadlines
    // could outlive: given up, for a new one. Not revoked: until its owner keys are read, the
    // id may be another server's (etcd can grant an expired lease's id again).
    set_lease(0);
  }
  const int64_t sent = host_.mono_ns();
  int64_t lease = 0;
  const StoreResult r = ask([&] { return store.grant(ttl_s, &lease); });
  if (r.status != StoreStatus::kOk) {
    fail(r);
    return false;
  }
  set_lease(lease);
  alive_sent_ns_ = sent;
  return true;
}

void LeaseMachine::drop_lease(LeaseStore &store) {
  // Revoked, its owner keys go; if the revocation fails, etcd expires it lease_ttl later.
  (void)ask([&] { return store.release(lease_); });
  set_lease(0);
}

bool LeaseMachine::own_range(LeaseStore &store, const std::vector<ShardOwner> &owners,
                             int64_t *first) {
  std::vector<uint32_t> ours;
  for (const ShardOwner &o : owners)
    if (o.lease == lease_) ours.push_back(o.shard);
  std::sort(ours.begin(), ours.end());
  *first = -1;
  if (ours.empty()) return true;
  if (ours.size() == settings_.count && ours.back() - ours.front() + 1 == settings_.count) {
    *first = ours.front();
    return true;
  }
  // Shards of this lease that are not one range of shard_count (the settings changed since
  // they were claimed, or the id is another server's lease): a new lease claims a range. This
  // one is left to expire, not revoked: the keys' holder was not read, and revoking another
  // server's lease would delete its owner keys while it issues.
  (void)store;
  set_lease(0);
  return false;
}

void LeaseMachine::acquire(LeaseStore &store) {
  set_state(LeaseState::kAcquiring);
  if ((lease_ == 0 || !lease_checked_) && !take_lease(store)) return;
  // Another server may claim the range chosen between the look and the claim: look again.
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::vector<ShardOwner> owners;
    int64_t listed = 0;
    StoreResult r =
        ask([&] { return store.held(settings_.pool_low, settings_.pool_high, &owners, &listed); });
    if (r.status != StoreStatus::kOk) {
      fail(r);
      return;
    }
    // Shards this lease holds already are its range: a claim that went through though its
    // answer was lost, or the range a previous worker of this server held. Taken back, they
    // are renewed for what they are instead of pinned beside another range.
    int64_t first = -1;
    if (!own_range(store, owners, &first)) {
      if (!take_lease(store)) return;
      continue;
    }
    std::vector<uint32_t> held;
    for (const ShardOwner &o : owners)
      if (o.lease != lease_) held.push_back(o.shard);
    if (first < 0)
      first =
          choose_range(held, settings_.pool_low, settings_.pool_high, settings_.count, preferred_);
    if (first < 0) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "the shard pool %u-%u has no %u free shard%s in a row: %zu of its %u "
                    "shards are leased by other servers",
                    settings_.pool_low, settings_.pool_high, settings_.count,
                    settings_.count == 1 ? "" : "s", held.size(),
                    settings_.pool_high - settings_.pool_low + 1);
      fail(StoreResult::failed(buf));
      return;
    }
    StoredMark mark;
    r = ask([&] {
      return store.acquire(lease_, static_cast<uint32_t>(first), settings_.count, listed, &mark);
    });
    if (r.status == StoreStatus::kTaken) continue;
    if (r.status == StoreStatus::kLost) {
      // Gone, or not this server's: forgotten, never revoked.
      set_lease(0);
      fail(StoreResult::failed(r.error.empty()
                                   ? std::string("the lease expired in etcd before a range was "
                                                 "claimed")
                                   : r.error));
      return;
    }
    if (r.status != StoreStatus::kOk) {
      fail(r);
      return;
    }
    const uint64_t epoch = host_.epoch_ms();
    const uint64_t other = mark.unix_ms != 0 && mark.epoch_ms != epoch ? mark.epoch_ms
                           : mark.other_epoch_ms != 0 && mark.other_epoch_ms != epoch
                               ? mark.other_epoch_ms
                               : 0;
    if (other != 0) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "shards %lld to %lld hold IDs issued with snowflake.epoch %llu, this "
                    "server's is %llu",
                    static_cast<long long>(first),
                    static_cast<long long>(first + settings_.count - 1),
                    static_cast<unsigned long long>(other), static_cast<unsigned long long>(epoch));
      drop_lease(store);
      fail(StoreResult::failed(buf));
      return;
    }
    // The marks of a restored etcd may be older than IDs issued since its snapshot: the
    // operator's margin starts the range above them and above this server's clock.
    // Over the wall clock, not the IDs' clock nor the mark: both carry the margin of a range
    // this server took before, and would push IDs a further margin ahead at every new range.
    if (settings_.restore_margin_ms > 0)
      mark.unix_ms = std::max(
          mark.unix_ms, host_.wall_unix_ms() + static_cast<uint64_t>(settings_.restore_margin_ms));
    first_ = static_cast<uint32_t>(first);
    count_ = settings_.count;
    has_range_ = true;
    reported_lost_ = false;
    preferred_ = first;
    mark_ms_ = mark.unix_ms;
    mark_revision_ = mark.revision;
    acquired_mark_ms_ = mark.unix_ms;
    last_error_.clear();
    // Every ID from here on is at or above the mark, before any generator may issue.
    host_.taken(first_, count_, mark_ms_);
    // Held before the range is published: a generator that finds it open never reads a state
    // that says otherwise (it would refuse with SF001 on a lease just taken).
    set_state(LeaseState::kHeld);
    slot_.failed_attempts.store(0);
    slot_.taken.fetch_add(1);
    const uint32_t generation = slot_.generation.fetch_add(1) + 1;
    slot_.mark_unix_ms.store(mark_ms_, std::memory_order_seq_cst);
    // The deadline before the word: the word is 0 until now, so the range is not open before
    // both are set, and a generator never finds the word set with no deadline (it would take
    // the lease just taken for lost and refuse).
    slot_.expires_mono_ns.store(alive_sent_ns_ + settings_.ttl_ms * 1000000);
    slot_.deadline_mono_ns.store(alive_sent_ns_ + settings_.fail_after_ms * 1000000,
                                 std::memory_order_seq_cst);
    slot_.word.store(lease_word(generation, first_, count_), std::memory_order_seq_cst);
    next_renew_ns_ = alive_sent_ns_ + settings_.renew_ms * 1000000;
    extend_mark(store);
    host_.changed();
    return;
  }
  fail(StoreResult::failed("other servers claimed every free range first, 8 times in a row"));
}

void LeaseMachine::extend_mark(LeaseStore &store) {
  const uint64_t need = std::max(need_ms(), acquired_mark_ms_);
  if (!mark_due(need, mark_ms_, settings_.renew_ms)) return;
  const uint64_t target = mark_target(need, settings_.renew_ms);
  if (!write_mark(store, target, false)) return;
  mark_ms_ = target;
  slot_.mark_unix_ms.store(mark_ms_, std::memory_order_seq_cst);
  host_.changed();
}

bool LeaseMachine::write_mark(LeaseStore &store, uint64_t unix_ms, bool may_lower) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    StoredMark m{unix_ms, host_.epoch_ms()};
    m.revision = mark_revision_;
    const StoreResult r = ask([&] { return store.mark(lease_, first_, count_, &m); }, true);
    if (r.status == StoreStatus::kTaken) {
      // A write of this lease whose answer was lost landed after the revision known: the
      // marks are still ours to write, from the revision read now. Never lower them, but to
      // the final mark of a clean stop, which knows the last ID.
      mark_revision_ = m.revision;
      if (!may_lower && m.unix_ms >= unix_ms) return true;
      continue;
    }
    slot_.mark_failing.store(r.status == StoreStatus::kError);
    if (settle(r)) return false;
    mark_revision_ = m.revision;
    return true;
  }
  slot_.mark_failing.store(true);
  fail(StoreResult::failed("write of the mark: the marks changed in etcd while written, twice"));
  return false;
}

void LeaseMachine::keep(LeaseStore &store) {
  const LeaseState state = static_cast<LeaseState>(slot_.state.load());
  const int64_t now = host_.mono_ns();
  if (now >= next_renew_ns_ || state != LeaseState::kHeld) {
    int64_t ttl_s = 0;
    const int64_t old_deadline = slot_.deadline_mono_ns.load();
    const StoreResult renewed = ask([&] { return store.renew(lease_, &ttl_s); });
    // Renewals failing too: they, not the mark, are what SF001 names.
    if (renewed.status != StoreStatus::kOk) slot_.mark_failing.store(false);
    if (settle(renewed)) return;
    const bool closed_before = host_.mono_ns() >= old_deadline;
    // Generation stopped, long enough maybe for etcd to expire the lease: if it did, its
    // owner keys went with it, and the renewal went through only because etcd granted the
    // same id to another server since. The range is this server's only while its owner keys
    // still carry the lease and name this server; else another may issue on it now.
    if (closed_before) {
      const StoreResult owned = ask([&] { return store.owned(lease_, first_, count_); });
      if (owned.status == StoreStatus::kLost) {
        forget_lease(
            "the lease's owner keys are gone or name another server: etcd expired the lease "
            "while generation was stopped");
        return;
      }
      if (settle(owned)) return;
    }
    alive_sent_ns_ = now;
    // The store counts the time to live from its receipt, after now: the lease outlives both.
    const int64_t live_ms = std::min(settings_.ttl_ms, ttl_s * 1000);
    const int64_t open_ms = std::min(settings_.fail_after_ms, live_ms - 500);
    slot_.expires_mono_ns.store(now + live_ms * 1000000);
    slot_.deadline_mono_ns.store(now + open_ms * 1000000, std::memory_order_seq_cst);
    next_renew_ns_ = now + settings_.renew_ms * 1000000;
    // Generation stopped meanwhile (the deadline passed before this renewal's answer): say
    // so, and that the same lease and range go on. The lease never ended, so no other server
    // issued on the range: the IDs' clock need not move.
    if (closed_before && !reported_lost_) host_.lost(why_closed());
    if (closed_before || reported_lost_) host_.resumed(first_, count_);
    reported_lost_ = false;
    if (state != LeaseState::kHeld) {
      last_error_.clear();
      set_state(LeaseState::kHeld);
      host_.changed();
    }
  }
  extend_mark(store);
}

int64_t LeaseMachine::step(LeaseStore &store) {
  int64_t now = host_.mono_ns();
  if (now >= retry_ns_) {
    if (!has_range_)
      acquire(store);
    else
      keep(store);
  }
  now = host_.mono_ns();
  if (has_range_) {
    const int64_t deadline = slot_.deadline_mono_ns.load();
    const LeaseState state = static_cast<LeaseState>(slot_.state.load());
    if (now >= deadline && state != LeaseState::kLost) {
      set_state(LeaseState::kLost);
      if (!reported_lost_) host_.lost(why_closed());
      reported_lost_ = true;
      host_.changed();
    }
  }
  int64_t next = std::max(retry_ns_, now);
  if (has_range_ && static_cast<LeaseState>(slot_.state.load()) == LeaseState::kHeld) {
    next = std::max(now, next_renew_ns_);
    const int64_t deadline = slot_.deadline_mono_ns.load();
    if (deadline > now) next = std::min(next, deadline);
  } else if (retry_ns_ <= now) {
    next = now + request_timeout_retry();
  }
  return next;
}

void LeaseMachine::stop(LeaseStore &store, uint64_t high_unix_ms) {
  close();
  if (lease_ == 0) return;
  if (has_range_) {
    // No ID of the range reached high_unix_ms + 1, and none of an earlier holder's the mark
    // read when it was taken: the next holder may start from there.
    const uint64_t final_ms = std::max(high_unix_ms + 1, acquired_mark_ms_);
    // Fenced as every write: one of this lease's writes that lands later is refused.
    if (final_ms < mark_ms_ && write_mark(store, final_ms, true)) mark_ms_ = final_ms;
  }
  const StoreResult released = ask([&] { return store.release(lease_); });
  slot_.word.store(0, std::memory_order_seq_cst);
  slot_.expires_mono_ns.store(0);
  has_range_ = false;
  // A revoke that failed leaves the lease and its range in etcd: kept (in the slot, and by the
  // glue in snowflake.lease), the next worker takes them back rather than waiting lease_ttl.
  // That is safe: the final mark is above every ID issued.
  if (released.status == StoreStatus::kOk)
    set_lease(0);
  else
    last_error_ = released.error;
  set_state(LeaseState::kNone);
}

}  // namespace snowflake
