// ID blocks: snowflake_block(n) reserves the next n IDs of this server's stream in one
// compare-and-swap (core/generator.hpp's take_block), durable like every ID: the reservation,
// and in lease mode the lease's mark, covers the block's last ID before it is returned.
// snowflake_block_ids(first, last) expands a block in SQL.
#include "glue/snowflake.hpp"

#include "glue/lease_wait.hpp"
#include "glue/settings.hpp"
#include "glue/shmem.hpp"
#include "glue/streams.hpp"
#include "glue/system_clock.hpp"

extern "C" {
#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/memutils.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

struct Block {
  uint64_t first, last;  // state words: (ms << kSeqBits) | seq
  uint32_t shard;
};

pg_noinline void raise_bad_block_size(int32 n) {
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("a block holds 1 to %llu IDs, not %d",
                  static_cast<unsigned long long>(kMaxBlockValues), n),
           errdetail("A block of n IDs moves its shard's IDs n / 1024 ms ahead of the clock, and "
                     "no block reaches further ahead than snowflake.max_lead (%d ms).",
                     max_lead_ms)));
}

// The lead a block needs is over snowflake.max_lead: taken, it would make every snowflake()
// of its shard wait for the clock.
pg_noinline void raise_block_past_lead(uint64_t n, uint64_t lead_ms) {
  const uint64_t largest = std::min(kMaxBlockValues, lead_ms << kSeqBits);
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("a block of %llu IDs reaches %llu ms ahead of the clock, past "
                  "snowflake.max_lead (%llu ms)",
                  static_cast<unsigned long long>(n),
                  static_cast<unsigned long long>(block_span_ms<kSeqBits>(n)),
                  static_cast<unsigned long long>(lead_ms)),
           largest > 0 ? errhint("Take blocks of at most %llu IDs, or raise snowflake.max_lead.",
                                 static_cast<unsigned long long>(largest))
                       : errhint("snowflake.max_lead is 0: blocks need it at 1 ms or more.")));
}

pg_noinline void raise_not_a_block(const char *detail_format, long long a, long long b) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("first and last are not the ends of a snowflake block"),
                  errdetail_internal(detail_format, a, b)));
}

// Counted per shard, for snowflake_status() and snowflake_streams().
Block counted(SharedState &state, const Block &b, uint64_t n) {
  ShardSlot &slot = state.shards[b.shard];
  slot.blocks.fetch_add(1, std::memory_order_relaxed);
  slot.block_values.fetch_add(n, std::memory_order_relaxed);
  return b;
}

Block take(uint64_t n) {
  SharedState &state = generating_state();
  check_snowflake_settings();
  const uint32_t first_shard = static_cast<uint32_t>(shard_id);
  const uint32_t count = static_cast<uint32_t>(shard_count);
  if (first_shard + count - 1 > kMaxShard) raise_shard_range_too_far();
  ShardSlot *slots = &state.shards[first_shard];
  const uint64_t epoch = static_cast<uint64_t>(epoch_ms);
  for (;;) {
    const Limits limits = stream_limits(&state.reservation, kMaxTimeMs, epoch);
    if (!block_fits_lead<kSeqBits>(n, limits.max_lead_ms))
      raise_block_past_lead(n, limits.max_lead_ms);
    const uint64_t now_ms = clock_now_ms(state.clock);
    const RangeBlockResult r =
        count == 1 ? RangeBlockResult{take_block<kSeqBits>(slots[0].last, n, now_ms, 0, limits), 0}
                   : take_block_in_range<kSeqBits>(slots, count, slots[0].range_floor_ms, n, now_ms,
                                                   limits);
    if (r.block.step == Step::kIssued) {
      after_issue(&state.reservation, (r.block.value >> kSeqBits) + epoch, now_ms + epoch);
      return counted(state, Block{r.block.first, r.block.value, first_shard + r.shard}, n);
    }
    settle(r.block.step, r.block.step == Step::kReserve ? r.block.value + epoch : r.block.value,
           &state.reservation, "snowflake");
  }
}

// Lease mode, as snowflake()'s issue_leased: a block taken while the lease closed or changed
// is dropped, never returned.
Block take_leased(uint64_t n) {
  SharedState &state = generating_state();
  LeaseSlot &lease = state.lease;
  const uint64_t epoch = static_cast<uint64_t>(epoch_ms);
  for (;;) {
    const uint64_t word = lease.word.load(std::memory_order_seq_cst);
    int64_t mono;
    uint64_t now_ms;
    if (unlikely(!leased_clock_now(state.clock, &now_ms, &mono))) continue;
    if (unlikely(word == 0 || !(mono < lease.deadline_mono_ns.load(std::memory_order_seq_cst)))) {
      await_lease(lease);
      continue;
    }
    const uint32_t first_shard = lease_word_first(word), count = lease_word_count(word);
    Limits limits = stream_limits(&state.reservation, kMaxTimeMs, epoch);
    if (!block_fits_lead<kSeqBits>(n, limits.max_lead_ms))
      raise_block_past_lead(n, limits.max_lead_ms);
    const uint64_t mark = lease.mark_unix_ms.load(std::memory_order_acquire);
    limits.reserved_ms = std::min(limits.reserved_ms, mark > epoch ? mark - epoch : 0);
    ShardSlot *slots = &state.shards[first_shard];
    const RangeBlockResult r =
        count == 1 ? RangeBlockResult{take_block<kSeqBits>(slots[0].last, n, now_ms, 0, limits), 0}
                   : take_block_in_range<kSeqBits>(slots, count, slots[0].range_floor_ms, n, now_ms,
                                                   limits);
    if (likely(r.block.step == Step::kIssued)) {
      if (unlikely(lease.word.load(std::memory_order_seq_cst) != word ||
                   !(mono < lease.deadline_mono_ns.load(std::memory_order_seq_cst))))
        continue;
      after_issue(&state.reservation, (r.block.value >> kSeqBits) + epoch, now_ms + epoch);
      return counted(state, Block{r.block.first, r.block.value, first_shard + r.shard}, n);
    }
    if (r.block.step == Step::kReserve)
      await_lease_cover(state, r.block.value + epoch);
    else
      settle(r.block.step, r.block.value, &state.reservation, "snowflake");
  }
}

int64 block_id(uint64_t state_word, uint32_t shard) {
  return static_cast<int64>(
      pack(state_word >> kSeqBits, shard, static_cast<uint32_t>(state_word & kMaxSeq)));
}

// An ID's place in its shard's stream.
uint64_t state_word(uint64_t id) {
  const Decoded d = unpack(id);
  return (d.ms << kSeqBits) | d.seq;
}

// snowflake_block's row type, built and blessed once per backend (and function): reading it
// from the catalog on every call would cost more than taking the block.
TupleDesc block_row_desc(FunctionCallInfo fcinfo) {
  static Oid cached_fn = InvalidOid;
  static TupleDesc cached = nullptr;
  if (cached_fn != fcinfo->flinfo->fn_oid) {
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
      elog(ERROR, "snowflake_block must return a record");
    const MemoryContext caller = MemoryContextSwitchTo(TopMemoryContext);
    cached = BlessTupleDesc(CreateTupleDescCopy(desc));
    MemoryContextSwitchTo(caller);
    cached_fn = fcinfo->flinfo->fn_oid;
  }
  return cached;
}

struct Expansion {
  uint64_t first;  // state word
  uint32_t shard;
};

}  // namespace

// One row, returned value-per-call: no tuplestore for a single row (the cost of a call is
// what bench/blocks.sh compares with one snowflake() call).
SNOWFLAKE_FUNCTION(snowflake_block) {
  FuncCallContext *fctx;
  if (SRF_IS_FIRSTCALL()) {
    const int32 n = PG_GETARG_INT32(0);
    if (!block_size_ok(n)) raise_bad_block_size(n);
    const Block b =
        lease_mode ? take_leased(static_cast<uint64_t>(n)) : take(static_cast<uint64_t>(n));
    fctx = SRF_FIRSTCALL_INIT();
    const MemoryContext caller = MemoryContextSwitchTo(fctx->multi_call_memory_ctx);
    const TupleDesc desc = block_row_desc(fcinfo);
    Datum values[3] = {Int64GetDatum(block_id(b.first, b.shard)),
                       Int64GetDatum(block_id(b.last, b.shard)), Int32GetDatum(n)};
    bool nulls[3] = {};
    fctx->user_fctx = heap_form_tuple(desc, values, nulls);
    fctx->max_calls = 1;
    MemoryContextSwitchTo(caller);
  }
  fctx = SRF_PERCALL_SETUP();
  if (fctx->call_cntr < fctx->max_calls) {
    const Datum row = HeapTupleGetDatum(static_cast<HeapTuple>(fctx->user_fctx));
    SRF_RETURN_NEXT(fctx, row);
  }
  SRF_RETURN_DONE(fctx);
}

SNOWFLAKE_FUNCTION(snowflake_block_ids) {
  FuncCallContext *fctx;
  if (SRF_IS_FIRSTCALL()) {
    const uint64_t first = checked_id(PG_GETARG_INT64(0));
    const uint64_t last = checked_id(PG_GETARG_INT64(1));
    const uint32_t shard = unpack(first).shard;
    if (unpack(last).shard != shard)
      raise_not_a_block("first is on shard %lld and last on shard %lld: a block is on one shard.",
                        static_cast<long long>(shard), static_cast<long long>(unpack(last).shard));
    const uint64_t from = state_word(first), to = state_word(last);
    if (to < from)
      raise_not_a_block("last (%lld) is below first (%lld).", static_cast<long long>(last),
                        static_cast<long long>(first));
    if (to - from >= kMaxBlockValues)
      raise_not_a_block("They span %lld IDs; a block holds at most %lld.",
                        static_cast<long long>(to - from + 1),
                        static_cast<long long>(kMaxBlockValues));
    fctx = SRF_FIRSTCALL_INIT();
    Expansion *e = static_cast<Expansion *>(
        MemoryContextAlloc(fctx->multi_call_memory_ctx, sizeof(Expansion)));
    e->first = from;
    e->shard = shard;
    fctx->user_fctx = e;
    fctx->max_calls = to - from + 1;
  }
  fctx = SRF_PERCALL_SETUP();
  if (fctx->call_cntr < fctx->max_calls) {
    const Expansion *e = static_cast<const Expansion *>(fctx->user_fctx);
    // Computed before SRF_RETURN_NEXT, which counts the call before it reads its value.
    const Datum id = Int64GetDatum(block_id(e->first + fctx->call_cntr, e->shard));
    SRF_RETURN_NEXT(fctx, id);
  }
  SRF_RETURN_DONE(fctx);
}
