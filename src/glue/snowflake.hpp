// What the snowflake kind's file (snowflake.cpp) shares with the other 64-bit ones: the
// check of an ID argument and the records that the decode functions return.
#pragma once

#include "glue/pg.hpp"
#include "glue/timestamps.hpp"

namespace snowflake::glue {

// A 64-bit ID argument, refused when negative (IDs of every 64-bit layout are positive
// bigints); kind names the layout in the message ("snowflake", "twitter", ...).
[[noreturn]] void raise_negative_id(int64 id, const char *kind);
inline uint64_t checked_id(int64 id, const char *kind = "snowflake") {
  if (unlikely(id < 0)) raise_negative_id(id, kind);
  return static_cast<uint64_t>(id);
}

// The record of the calling function's OUT parameters, from count values (at most 8, none
// NULL).
Datum out_record(FunctionCallInfo fcinfo, const Datum *values, int count);

// A block of a range of shards taken by this backend (block.cpp): this backend's next
// snowflake() IDs of the range come after it. word: the lease's, or 0 for the configured range
// first .. first + count - 1; last: the block's last state word; index: its shard in the range.
// This backend's place in a range of shards, as note_range_block's arguments name the range.
RangeCursor range_place(uint64_t word, uint32_t first, uint32_t count);
void note_range_block(uint64_t word, uint32_t first, uint32_t count, uint64_t last, uint32_t index);
// snowflake.shard_id with snowflake.shard_count reaches past the last shard.
[[noreturn]] void raise_shard_range_too_far();

}  // namespace snowflake::glue
