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
#include "pg_free.hpp"

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

static_assert(pack(kMaxTimeMs, kMaxShard, kMaxSeq) == uint64_t{INT64_MAX}, "largest ID is INT64_MAX");
static_assert(unpack(pack(5, 7, 9)).shard == 7, "round trip");

}  // namespace snowflake
