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
#include "access/xact.h"
#include "funcapi.h"
#include "catalog/pg_type.h"
#include "storage/ipc.h"
#include "utils/array.h"
#include "utils/memutils.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

struct Block {
  uint64_t first, last;  // state words: (ms << kSeqBits) | seq
  uint32_t shard;
  uint64_t count;  // IDs from first to last (0: none, the no-wait form)
};

pg_noinline void raise_bad_block_size(int32 n) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("a block holds 1 to %llu IDs, not %d",
                         static_cast<unsigned long long>(kMaxBlockValues), n),
                  errdetail("A block of n IDs moves its shard's IDs about n / 1024 ms ahead of the "
                            "clock, within snowflake.block_max_lead (%d ms) and snowflake.max_lead "
                            "(%d ms).",
                            block_max_lead_ms, max_lead_ms)));
}

pg_noinline void raise_bad_first_block_size(int32 n) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("snowflake_block_first takes blocks of 1 to %u IDs, not %d",
                         static_cast<unsigned>(kMaxSeq) + 1, n),
                  errdetail("Its blocks are consecutive integers, and a millisecond of a shard "
                            "holds %u.",
                            static_cast<unsigned>(kMaxSeq) + 1),
                  errhint("Take larger blocks with snowflake_block(n), which returns first, last "
                          "and count.")));
}

// The lead a block needs is over its bound: taken, it would move every snowflake() of its
// shard further ahead of the clock than the operator allows.
pg_noinline void raise_block_past_lead(uint64_t n, uint64_t lead_ms) {
  // The largest n with block_span_ms(n) <= lead_ms.
  const uint64_t largest = std::min(kMaxBlockValues, ((lead_ms + 1) << kSeqBits) - 1023);
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("a block of %llu IDs reaches %llu ms ahead of the clock, past its bound of "
                  "%llu ms",
                  static_cast<unsigned long long>(n),
                  static_cast<unsigned long long>(block_span_ms<kSeqBits>(n)),
                  static_cast<unsigned long long>(lead_ms)),
           errdetail("A block may move its shard's IDs ahead of the clock by the lower of "
                     "snowflake.block_max_lead (%d ms) and snowflake.max_lead (%d ms).",
                     block_max_lead_ms, max_lead_ms),
           max_lead_ms < block_max_lead_ms
               ? errhint("Take blocks of at most %llu IDs, or raise snowflake.max_lead in the "
                         "server's configuration.",
                         static_cast<unsigned long long>(largest))
               : errhint("Take blocks of at most %llu IDs, or have a superuser raise "
                         "snowflake.block_max_lead for this role (ALTER ROLE ... SET).",
                         static_cast<unsigned long long>(largest))));
}

// The block does not fit before the layout's end, though fewer IDs still do.
pg_noinline void raise_block_past_end(uint64_t n, uint64_t left) {
  ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                  errmsg("a block of %llu IDs does not fit before the end of the snowflake layout",
                         static_cast<unsigned long long>(n)),
                  errdetail("%llu IDs of this shard remain before the layout's last millisecond.",
                            static_cast<unsigned long long>(left)),
                  errhint("Take a smaller block; snowflake.epoch sets where the layout's 69 "
                          "years begin.")));
}

pg_noinline void raise_not_a_block(const char *detail_format, long long a, long long b) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("first and last are not the ends of a snowflake block"),
                  errdetail_internal(detail_format, a, b)));
}

// Counted per shard, for snowflake_status() and snowflake_streams(): in the backend while its
// transaction runs, and in shared memory when it ends (committed or not: the IDs are taken
// either way) or the backend exits, as PostgreSQL's own statistics are: two atomic additions
// on shared cache lines in every call were a good part of what a block call cost beyond a
// snowflake() call.
struct PendingCount {
  uint32_t shard;
  uint64_t blocks, ids;
};
constexpr int kPendingShards = 4;
PendingCount pending[kPendingShards];
int pending_shards = 0;

void flush_counts() {
  if (shared != nullptr) {
    for (int i = 0; i < pending_shards; ++i) {
      ShardSlot &slot = shared->shards[pending[i].shard];
      slot.blocks.fetch_add(pending[i].blocks, std::memory_order_relaxed);
      slot.block_values.fetch_add(pending[i].ids, std::memory_order_relaxed);
    }
  }
  pending_shards = 0;
}

void flush_counts_at_end(XactEvent event, void *) {
  switch (event) {
    case XACT_EVENT_COMMIT:
    case XACT_EVENT_PARALLEL_COMMIT:
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
    case XACT_EVENT_PREPARE:
      flush_counts();
      break;
    default:
      break;
  }
}

Block counted(const Block &b, uint64_t n) {
  int i = 0;
  while (i < pending_shards && pending[i].shard != b.shard) ++i;
  if (i == kPendingShards) {
    flush_counts();
    i = 0;
  }
  if (i == pending_shards) pending[pending_shards++] = PendingCount{b.shard, 0, 0};
  pending[i].blocks += 1;
  pending[i].ids += n;
  return b;
}

// This backend's place in the block line (core/block_line.hpp), given up when the call ends:
// taken, refused, cancelled, or the backend exiting.
LinePlace place;
bool exit_hook_registered = false;

void leave_line(uint64_t now_unix_ms, bool served) {
  if (place.slot >= 0 && shared != nullptr) line_leave(shared->line, place, now_unix_ms, served);
}

// The system clock's Unix millisecond: for a block that leaves the line without its own last
// reading (a cancel, an ERROR, the backend's exit), so that the cool-down after its pause of
// single IDs counts from now (core/block_line.hpp), not from 1970.
uint64_t wall_unix_ms() {
  const int64_t ns = read_clock(CLOCK_REALTIME);
  return ns > 0 ? static_cast<uint64_t>(ns / 1000000) : 0;
}

void leave_line_at_exit(int, Datum) {
  leave_line(wall_unix_ms(), false);
  flush_counts();
}

// A block (core/issue_loop.hpp's kind) of n IDs from the server's range: snowflake.shard_id and
// shard_count, or in lease mode the range leased.
struct BlockKind {
  SharedState &state;
  uint64_t n;
  bool wait;  // false: what the stream holds now, possibly none (take_block_now)
  uint32_t first, count;
  uint64_t word = 0;   // the lease's, in lease mode
  uint32_t index = 0;  // kIssued: the block's shard in the range
  uint64_t first_value = 0;
  uint64_t now_unix_ms = 0;

  uint64_t origin_unix_ms() const { return static_cast<uint64_t>(epoch_ms); }
  [[noreturn]] void raise_before_origin(uint64_t unix_ms) {
    raise_before_epoch(static_cast<int64_t>(unix_ms));
  }
  [[noreturn]] void raise_exhausted(const IssueStep &r) {
    if (r.value > 0) raise_block_past_end(n, r.value);
    glue::raise_exhausted("snowflake");
  }

  IssueStep step(const IssueInput &in) {
    const uint64_t epoch = origin_unix_ms();
    if (in.lease_word != 0) {
      word = in.lease_word;
      first = lease_word_first(word);
      count = lease_word_count(word);
    }
    const uint64_t lead = static_cast<uint64_t>(std::min(max_lead_ms, block_max_lead_ms));
    // A block that can never fit is refused; the no-wait form takes what fits now instead.
    if (wait && !block_fits_lead<kSeqBits>(n, lead)) raise_block_past_lead(n, lead);
    const Limits limits{lead, kMaxTimeMs, limit_since(in.limit_unix_ms, epoch)};
    ShardSlot *slots = &state.shards[first];
    now_unix_ms = in.now_unix_ms;
    const RangeBlockResult r = line_take_block<kSeqBits>(
        state.line, place, slots, count, shard_span(first, count), slots[0].range_floor_ms, n,
        in.now_unix_ms - epoch, in.now_unix_ms, limits,
        count > 1 ? range_place(word, first, count) : RangeCursor{}, wait);
    index = r.shard;
    first_value = r.block.first;
    if (r.block.step == Step::kExhausted) return IssueStep{Step::kExhausted, r.block.value, 0};
    if (r.block.step == Step::kIssued && r.block.value == 0) {
      // Nothing now (the no-wait form). If the reservation is what stopped it, the writer is
      // asked for more, so that a loader looping on this form finds it soon.
      if (in.limit_unix_ms <= in.now_unix_ms + lead)
        request_reservation(state.reservation, in.limit_unix_ms);
      return IssueStep{Step::kIssued, 0, in.now_unix_ms};
    }
    return unix_step(r.block.step, r.block.value, r.block.value >> kSeqBits, epoch);
  }
};

// The issue loop for a block, leaving the line however it ends. (Nothing here has a
// destructor, and nothing set inside PG_TRY is read after a longjmp.)
void take_in_line(BlockKind *kind, IssueStep *out) {
  if (!exit_hook_registered) {
    before_shmem_exit(leave_line_at_exit, 0);
    RegisterXactCallback(flush_counts_at_end, nullptr);
    exit_hook_registered = true;
  }
  IssueEnv env = IssueEnv::of(kind->state);
  PG_TRY();
  { *out = issue_loop(env, *kind); }
  PG_CATCH();
  {
    leave_line(wall_unix_ms(), false);
    PG_RE_THROW();
  }
  PG_END_TRY();
  leave_line(kind->now_unix_ms, true);
}

// A block of n IDs (count 0, first and last 0, when wait is false and the stream holds none
// now).
Block take(uint64_t n, bool wait) {
  SharedState &state = generating_state();
  BlockKind kind{state, n, wait, 0, 1};
  if (!lease_mode) {
    check_snowflake_settings();
    kind.first = static_cast<uint32_t>(shard_id);
    kind.count = static_cast<uint32_t>(shard_count);
    if (kind.first + kind.count - 1 > kMaxShard) raise_shard_range_too_far();
  }
  // The no-wait form never waits, in lease mode before the first lease either: a lease on its
  // way, nothing now; no lease to wait for, the ERROR that says why.
  if (!wait && lease_mode && lease_pending(state.lease)) return Block{0, 0, 0, 0};
  IssueStep r;
  take_in_line(&kind, &r);
  if (r.value == 0) return Block{0, 0, 0, 0};
  const uint64_t taken = r.value - kind.first_value + 1;
  if (kind.count > 1) note_range_block(kind.word, kind.first, kind.count, r.value, kind.index);
  return counted(Block{kind.first_value, r.value, kind.first + kind.index, taken}, taken);
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

// One row (first, last, count), a plain record: no set-returning path for one row. With wait
// false and nothing to take now, count 0 and first and last NULL.
SNOWFLAKE_FUNCTION(snowflake_block) {
  const int32 n = PG_GETARG_INT32(0);
  if (!block_size_ok(n)) raise_bad_block_size(n);
  const Block b = take(static_cast<uint64_t>(n), PG_GETARG_BOOL(1));
  const Datum values[3] = {Int64GetDatum(block_id(b.first, b.shard)),
                           Int64GetDatum(block_id(b.last, b.shard)),
                           Int32GetDatum(static_cast<int32>(b.count))};
  bool nulls[3] = {b.count == 0, b.count == 0, false};
  return HeapTupleGetDatum(
      heap_form_tuple(block_row_desc(fcinfo), const_cast<Datum *>(values), nulls));
}

// The first ID of a block of n consecutive IDs (1 to 1,024): the block is first .. first + n - 1,
// what a pooled-lo or HiLo optimizer expects of a sequence value. One bigint, no row to form
// or read back: a call costs about what a snowflake() call does.
SNOWFLAKE_FUNCTION(snowflake_block_first) {
  const int32 n = PG_GETARG_INT32(0);
  if (n < 1 || n > static_cast<int32>(kMaxSeq) + 1) raise_bad_first_block_size(n);
  const Block b = take(static_cast<uint64_t>(n), true);
  PG_RETURN_INT64(block_id(b.first, b.shard));
}

// The block's IDs as an array, which every driver maps to a list: no client rule needed.
SNOWFLAKE_FUNCTION(snowflake_block_array) {
  const int32 n = PG_GETARG_INT32(0);
  if (!block_size_ok(n)) raise_bad_block_size(n);
  const Block b = take(static_cast<uint64_t>(n), PG_GETARG_BOOL(1));
  Datum *ids = static_cast<Datum *>(palloc(sizeof(Datum) * (b.count > 0 ? b.count : 1)));
  for (uint64_t i = 0, word = b.first; i < b.count; ++i, ++word) {
    // The next value of the stream's word: within a millisecond the next sequence, then
    // sequence 0 of the next millisecond (the word carries by itself).
    ids[i] = Int64GetDatum(block_id(word, b.shard));
  }
  return PointerGetDatum(construct_array(ids, static_cast<int>(b.count), INT8OID, 8,
                                         FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
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
