// The snowflake ID layout. THIS IS A FOREVER CONTRACT: IDs are stored as primary keys and
// decoded by other software, so no constant here may ever change.
//
//   bits 63..23 : 41 bits, milliseconds since the epoch
//   bits 22..10 : 13 bits, shard (0 to 8191)
//   bits  9..0  : 10 bits, per-shard sequence within the millisecond (0 to 1023)
// This is Instagram's layout (time << 23 | shard << 10 | seq). IDs are positive bigints, so
// bit 63, the time field's top bit, is always 0: the time field holds 0 to 2^40 - 1 ms,
// about 34.8 years after the epoch (2020-01-01 to 2054-11-03 with the default epoch).
#pragma once
#include "core/pg_free.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake {

constexpr int kTimeBits = 41;
constexpr int kShardBits = 13;
constexpr int kSeqBits = 10;
static_assert(kTimeBits + kShardBits + kSeqBits == 64, "layout must fill 64 bits");

// The sign bit stays 0.
constexpr uint64_t kMaxTimeMs = (uint64_t{1} << (kTimeBits - 1)) - 1;
constexpr uint32_t kMaxShard = (1u << kShardBits) - 1;
constexpr uint32_t kMaxSeq = (1u << kSeqBits) - 1;
constexpr uint32_t kShardCount = kMaxShard + 1;

// 2020-01-01T00:00:00Z in milliseconds since the Unix epoch.
constexpr int64_t kDefaultEpochMs = 1577836800000;

struct Decoded {
  uint64_t ms;  // since the epoch
  uint32_t shard;
  uint32_t seq;
};

constexpr uint64_t pack(uint64_t ms, uint32_t shard, uint32_t seq) noexcept {
  return (ms << (kShardBits + kSeqBits)) | (uint64_t{shard} << kSeqBits) | seq;
}

constexpr Decoded unpack(uint64_t id) noexcept {
  return Decoded{(id >> (kShardBits + kSeqBits)) & ((uint64_t{1} << kTimeBits) - 1),
                 static_cast<uint32_t>((id >> kSeqBits) & kMaxShard),
                 static_cast<uint32_t>(id & kMaxSeq)};
}

static_assert(pack(kMaxTimeMs, kMaxShard, kMaxSeq) == uint64_t{INT64_MAX},
              "largest ID is INT64_MAX");
static_assert(unpack(pack(5, 7, 9)).shard == 7, "round trip");

}  // namespace snowflake

// Other systems' 64-bit layouts, for reading the IDs they put into tables: each is a time
// field (units since an epoch), a node field and a sequence field at fixed bit positions.
// Like our own layout these are contracts of the systems that issue them, copied here once:
//   twitter    : 41 bits of ms since 1288834974657 | 5 datacenter + 5 worker | 12 sequence
//   discord    : 42 bits of ms since 1420070400000 | 5 worker + 5 process | 12 increment
//   sonyflake  : 39 bits of 10 ms since 2014-09-01 | 8 sequence | 16 machine (sequence above
//                the machine, unlike the others)
//   pgedge     : 41 bits of ms since 2023-01-01 | 10 node | 12 count (pgEdge snowflake 1.2
//                and later)
//   pgedge_1_1 : 41 bits of ms since 2023-01-01 | 12 count | 10 node (pgEdge snowflake 1.0
//                and 1.1: the same fields, count above node)
//   instagram  : ours (41 | 13 shard | 10 sequence) with Instagram's epoch, 1314220021721
// IDs are positive bigints here, so a time field reaches bit 62 at most: Twitter's and
// Discord's IDs fit until 2080 and 2084, when their 42nd bit of time would be the sign bit.
// The node field is what snowflake_decode(id, layout) returns as the shard: for Twitter and
// Discord it is two 5-bit fields (split_node), for the others one.
namespace snowflake::foreign {

struct Layout {
  const char *name;
  int64_t epoch_unix_ms;  // time 0
  uint32_t unit_ms;       // the time field's unit
  int time_shift;         // the time field: bits time_shift to 62
  int node_shift, node_bits;
  int seq_shift, seq_bits;
};

constexpr Layout kLayouts[] = {
    {"twitter", 1288834974657, 1, 22, 12, 10, 0, 12},
    {"discord", 1420070400000, 1, 22, 12, 10, 0, 12},
    {"sonyflake", 1409529600000, 10, 24, 0, 16, 16, 8},
    {"pgedge", 1672531200000, 1, 22, 12, 10, 0, 12},
    {"pgedge_1_1", 1672531200000, 1, 22, 0, 10, 10, 12},
    {"instagram", 1314220021721, 1, kShardBits + kSeqBits, kSeqBits, kShardBits, 0, kSeqBits},
};
constexpr int kLayoutCount = sizeof kLayouts / sizeof kLayouts[0];

// Each layout by name, for the decoders with a layout's own fields.
inline constexpr const Layout &kTwitter = kLayouts[0];
inline constexpr const Layout &kDiscord = kLayouts[1];
inline constexpr const Layout &kSonyflake = kLayouts[2];
inline constexpr const Layout &kPgedge = kLayouts[3];
inline constexpr const Layout &kPgedge11 = kLayouts[4];

constexpr bool same_name(const char *a, const char *b) {
  for (; *a != '\0' && *a == *b; ++a, ++b) {
  }
  return *a == *b;
}
static_assert(same_name(kTwitter.name, "twitter") && same_name(kDiscord.name, "discord") &&
                  same_name(kSonyflake.name, "sonyflake") && same_name(kPgedge.name, "pgedge") &&
                  same_name(kPgedge11.name, "pgedge_1_1"),
              "each named layout is the one of its name");

constexpr bool fields_fit(const Layout &l) {
  return l.node_shift + l.node_bits <= l.time_shift && l.seq_shift + l.seq_bits <= l.time_shift &&
         (l.node_shift >= l.seq_shift + l.seq_bits || l.seq_shift >= l.node_shift + l.node_bits) &&
         l.node_bits + l.seq_bits == l.time_shift;
}
constexpr bool all_fields_fit() {
  for (const Layout &l : kLayouts)
    if (!fields_fit(l)) return false;
  return true;
}
static_assert(all_fields_fit(),
              "the fields of a layout fill the bits below its time field, without overlap");

// The layout of that name (ASCII letters in any case), or nullptr.
inline const Layout *find(const char *name, size_t len) noexcept {
  for (const Layout &l : kLayouts) {
    size_t i = 0;
    for (; i < len && l.name[i] != '\0'; ++i) {
      const char c = name[i] >= 'A' && name[i] <= 'Z' ? static_cast<char>(name[i] + 32) : name[i];
      if (c != l.name[i]) break;
    }
    if (i == len && l.name[i] == '\0') return &l;
  }
  return nullptr;
}

// The largest value of the time field, in its units.
constexpr uint64_t max_units(const Layout &l) { return (uint64_t{1} << (63 - l.time_shift)) - 1; }

struct Fields {
  int64_t unix_ms;  // the start of the ID's time unit
  uint32_t node;
  uint32_t seq;
};

// A positive ID's fields (the caller refuses negative ones).
constexpr Fields decode(const Layout &l, uint64_t id) noexcept {
  return Fields{l.epoch_unix_ms + static_cast<int64_t>((id >> l.time_shift) * l.unit_ms),
                static_cast<uint32_t>((id >> l.node_shift) & ((uint64_t{1} << l.node_bits) - 1)),
                static_cast<uint32_t>((id >> l.seq_shift) & ((uint64_t{1} << l.seq_bits) - 1))};
}

// The smallest ID of the time unit that holds unix_ms; false when the layout cannot hold that
// time (before its epoch, or past its last unit).
constexpr bool at(const Layout &l, int64_t unix_ms, uint64_t &id) noexcept {
  if (unix_ms < l.epoch_unix_ms) return false;
  const uint64_t units = static_cast<uint64_t>(unix_ms - l.epoch_unix_ms) / l.unit_ms;
  if (units > max_units(l)) return false;
  id = units << l.time_shift;
  return true;
}

// Twitter's and Discord's node field is two 5-bit fields: the high one is Twitter's datacenter
// and Discord's worker, the low one Twitter's worker and Discord's process.
constexpr int kNodePartBits = 5;

struct NodeParts {
  uint32_t high, low;
};

constexpr NodeParts split_node(uint32_t node) noexcept {
  return NodeParts{node >> kNodePartBits, node & ((1u << kNodePartBits) - 1)};
}

// The last millisecond a layout can hold, in Unix ms.
constexpr int64_t last_unix_ms(const Layout &l) {
  return l.epoch_unix_ms + static_cast<int64_t>((max_units(l) + 1) * l.unit_ms) - 1;
}

}  // namespace snowflake::foreign
