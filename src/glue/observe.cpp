// snowflake_observe(): causal order across servers. An ID seen from elsewhere raises the
// floor of this server's ID clock past its millisecond (clock_observe, src/core/clock.hpp), so that
// every ID issued here afterwards, of every kind and shard, is above it; and the durable
// reservation is made to cover it, so that this holds after a restart too.
// snowflake_observe_trigger() does the same for the ID columns of each row that replication
// applies, and never raises for a value: what it may not observe it counts.
#include "core/sno_codec.hpp"
#include "core/sno_stream.hpp"

#include "glue/system_clock.hpp"
#include "glue/streams.hpp"
#include "glue/reservation.hpp"
#include "glue/settings.hpp"
#include "glue/snowflake.hpp"
#include "glue/shmem.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "replication/origin.h"
#include "nodes/bitmapset.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"
#include "utils/uuid.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

[[noreturn]] pg_noinline void raise_too_far(const char *kind, uint64_t observed_unix_ms,
                                            int64_t clock_ns) {
  ereport(
      ERROR,
      (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
       errmsg("observed %s is %lld ms ahead of this server's clock", kind,
              static_cast<long long>(static_cast<int64_t>(observed_unix_ms) - clock_ns / 1000000)),
       errdetail("snowflake.max_clock_offset allows %d ms. The ID was not observed, and no "
                 "ID of this server moved.",
                 max_clock_offset_ms),
       errhint("Check the clocks of both servers; if the offset between them is real, raise "
               "snowflake.max_clock_offset.")));
  pg_unreachable();
}

// Observes a value whose time is observed_unix_ms. Too far ahead, it raises an ERROR, or
// with quiet (an apply trigger) counts it and returns false.
bool observe(ClockState &clock, Reservation *r, uint64_t observed_unix_ms, const char *kind,
             bool quiet) {
  const uint64_t tick_ms = clock_now_unix_ms(clock);
  // The common case: the ID is at least a millisecond in the past here (clock_observe says
  // why a full one), and already covered on disk.
  if (tick_ms > observed_unix_ms + 1 &&
      (r == nullptr || r->reserved_unix_ms.load(std::memory_order_acquire) > observed_unix_ms))
    return true;
  const int64_t mono = read_clock(CLOCK_MONOTONIC);
  const int64_t clock_ns = clock_unfloored(clock, mono);
  const Observed o =
      clock_observe(clock, static_cast<int64_t>(tick_ms) * 1000000, clock_ns, mono,
                    static_cast<int64_t>(observed_unix_ms), int64_t{max_clock_offset_ms});
  if (o == Observed::kTooFarAhead) {
    if (!quiet) raise_too_far(kind, observed_unix_ms, clock_ns);
    if (r != nullptr) r->observe_skipped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (r == nullptr) return true;  // not preloaded: this backend's own clock, nothing durable
  if (o == Observed::kRaised) r->observed_moves.fetch_add(1, std::memory_order_relaxed);
  Reservation::raise(r->observed_unix_ms, observed_unix_ms);
  if (r->reserved_unix_ms.load(std::memory_order_acquire) <= observed_unix_ms)
    await_reservation(observed_unix_ms);
  return true;
}

pg_noinline void raise_not_v7() {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("only a version 7 UUID can be observed"),
                  errdetail("Other versions hold no time, or not in their first 48 bits.")));
}

void skipped() {
  if (shared != nullptr)
    shared->reservation.observe_skipped.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_observe) {
  const uint64_t id = checked_id(PG_GETARG_INT64(0));
  SharedState &state = generating_state();
  observe(state.clock, &state.reservation, unpack(id).ms + static_cast<uint64_t>(epoch_ms),
          "snowflake ID", false);
  PG_RETURN_VOID();
}

SNOWFLAKE_FUNCTION(snowflake_observe_uuid) {
  const pg_uuid_t *u = PG_GETARG_UUID_P(0);
  if (uuid_version(u->data) != 7) raise_not_v7();
  const Sources128 src = sources128();
  observe(src.clock, src.reservation, uuid_unix_ms(u->data), "UUIDv7", false);
  PG_RETURN_VOID();
}

// A sno is observed at the last millisecond of its 4 ms unit, as the apply trigger does: the
// server's next snos are then in a later unit, above it whatever their partition and metabyte.
SNOWFLAKE_FUNCTION(snowflake_observe_sno) {
  const uint8_t *bytes = reinterpret_cast<const uint8_t *>(DatumGetPointer(PG_GETARG_DATUM(0)));
  const Sources128 src = sources128();
  observe(src.clock, src.reservation, sno::unit_end_unix_ms(sno::fields(bytes).units), "sno",
          false);
  PG_RETURN_VOID();
}

SNOWFLAKE_FUNCTION(snowflake_observe_ulid) {
  const uint8_t *bytes = reinterpret_cast<const uint8_t *>(DatumGetPointer(PG_GETARG_DATUM(0)));
  const Sources128 src = sources128();
  observe(src.clock, src.reservation, uuid_unix_ms(bytes), "ULID", false);
  PG_RETURN_VOID();
}

namespace {

// A row applied by replication whose snowflake ID is of one of this server's own shards, or
// whose sno is of the partition this server issues snos on, was not issued here: another
// server issues IDs with this server's shard, and sooner or later two rows will share a key.
// Counted always; reported once per origin and backend as a WARNING, or as an ERROR every
// time with snowflake.on_shard_collision = error. what names the ID ("snowflake ID 1 of
// shard 5", "sno ... of partition 5").
void report_collision(Relation rel, const char *column, const char *what) {
  if (shared != nullptr)
    shared->reservation.shard_collisions.fetch_add(1, std::memory_order_relaxed);
  static SnowflakeOriginId reported_origin = 0;
  static bool reported = false;
  const SnowflakeOriginId origin = SNOWFLAKE_APPLYING_ORIGIN;
  if (on_shard_collision != ERROR && reported && reported_origin == origin) return;
  reported = true;
  reported_origin = origin;
  char *origin_name = nullptr;
  if (origin == 0 || !replorigin_by_oid(origin, true, &origin_name))  // 0: no origin
    origin_name = pstrdup("(none)");
  ereport(on_shard_collision,
          (errcode(ERRCODE_INTEGRITY_CONSTRAINT_VIOLATION),
           errmsg("shard collision: a row applied by replication into \"%s\" carries %s, this "
                  "server's own",
                  RelationGetRelationName(rel), what),
           lease_mode ? errdetail("Column \"%s\", from replication origin \"%s\": another "
                                  "server issues IDs on a shard this server leases, and two "
                                  "servers on one shard can issue the same ID.",
                                  column, origin_name)
                      : errdetail("Column \"%s\", from replication origin \"%s\": another "
                                  "server issues IDs with this server's snowflake.shard_id, and "
                                  "two servers on one shard can issue the same ID.",
                                  column, origin_name),
           lease_mode ? errhint("This server leases the shard from etcd: the other server "
                                "issues on it without a lease (snowflake.shard_source = config, "
                                "or another etcd prefix).")
                      : errhint("Give every server that writes these tables its own "
                                "snowflake.shard_id (and range of snowflake.shard_count).")));
}

// One column's value, observed as its type says; a value that cannot be observed (negative,
// a UUID of another version, too far ahead) is counted, never raised.
// Whether shard is one this server issues on: the configured range, or in lease mode the
// range it leases now (none while it holds no lease).
bool own_shard(uint32_t shard) {
  uint32_t first = static_cast<uint32_t>(shard_id), count = static_cast<uint32_t>(shard_count);
  if (lease_mode) {
    const uint64_t word = shared != nullptr ? shared->lease.word.load() : 0;
    first = lease_word_first(word);
    count = lease_word_count(word);
  }
  return shard >= first && shard - first < count;
}

// Whether partition is the one this server issues snos on: the configured shard (a range's
// first), or in lease mode the leased range's first (none while it holds no lease).
bool own_sno_partition(uint32_t partition) {
  if (lease_mode) {
    const uint64_t word = shared != nullptr ? shared->lease.word.load() : 0;
    return lease_word_count(word) > 0 && partition == lease_word_first(word);
  }
  return partition == static_cast<uint32_t>(shard_id);
}

// With guard (snowflake_replica_guard()), a bigint of this server's own shards in a row that
// replication applies is a collision.
// Only a row that replication applies is observed (apply workers, PostgreSQL's and
// pglogical's, run with session_replication_role = replica): a row written here holds IDs
// issued here, in the current millisecond, and observing them would move the IDs' time a
// millisecond further with every row, ratcheting it ahead of the clock. Its columns are still
// checked, so that a trigger set up wrong says so at once.
// A sno is observed at the last millisecond of its 4 ms unit: the server's next snos are then
// in a later unit, above it whatever their partition and metabyte.
void observe_column(Datum value, Oid type, Oid ulid_type, Oid sno_type, const char *column,
                    Relation rel, bool guard) {
  const bool applied = SessionReplicationRole == SESSION_REPLICATION_ROLE_REPLICA;
  if (type == INT8OID) {
    if (!applied) return;
    const int64 id = DatumGetInt64(value);
    if (id < 0) return skipped();
    if (guard) {
      const uint32_t shard = unpack(static_cast<uint64_t>(id)).shard;
      if (own_shard(shard))
        report_collision(
            rel, column,
            psprintf("snowflake ID %lld of shard %u", static_cast<long long>(id), shard));
    }
    SharedState &state = generating_state();
    observe(state.clock, &state.reservation,
            unpack(static_cast<uint64_t>(id)).ms + static_cast<uint64_t>(epoch_ms), "snowflake ID",
            true);
  } else if (type == UUIDOID || (type == ulid_type && type != InvalidOid)) {
    if (!applied) return;
    const uint8_t *bytes = reinterpret_cast<const uint8_t *>(DatumGetPointer(value));
    if (type == UUIDOID && uuid_version(bytes) != 7) return skipped();
    const Sources128 src = sources128();
    observe(src.clock, src.reservation, uuid_unix_ms(bytes), "ID", true);
  } else if (type == sno_type && type != InvalidOid) {
    if (!applied) return;
    const uint8_t *bytes = reinterpret_cast<const uint8_t *>(DatumGetPointer(value));
    const sno::Fields f = sno::fields(bytes);
    if (guard && own_sno_partition(f.partition)) {
      char text[sno::kTextLen + 1];
      sno::encode(bytes, text);
      text[sno::kTextLen] = '\0';
      report_collision(
          rel, column,
          psprintf("sno %s of partition %u", text, static_cast<unsigned>(f.partition)));
    }
    const Sources128 src = sources128();
    observe(src.clock, src.reservation, sno::unit_end_unix_ms(f.units), "ID", true);
  } else {
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" is of type %s", column, format_type_be(type)),
                    errdetail("The trigger observes bigint (snowflake), uuid (version 7), "
                              "ulid and sno columns.")));
  }
}

pg_noinline void raise_trigger_misuse(const char *function, const char *what) {
  ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                  errmsg("%s() must be %s", function, what)));
}

// Both triggers: the arguments name the columns to observe; without any, the primary key's.
// The ulid and sno types are found in the trigger function's own schema: an apply worker's
// search_path is empty.
Datum key_trigger(FunctionCallInfo fcinfo, const char *function, bool guard) {
  if (!CALLED_AS_TRIGGER(fcinfo)) raise_trigger_misuse(function, "called as a trigger");
  TriggerData *td = reinterpret_cast<TriggerData *>(fcinfo->context);
  if (!TRIGGER_FIRED_FOR_ROW(td->tg_event) || TRIGGER_FIRED_BY_DELETE(td->tg_event))
    raise_trigger_misuse(function, "fired FOR EACH ROW on INSERT or UPDATE");
  HeapTuple tuple = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;

  Relation rel = td->tg_relation;
  TupleDesc desc = RelationGetDescr(rel);
  const Oid ulid_type =
      GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("ulid"),
                      ObjectIdGetDatum(get_func_namespace(fcinfo->flinfo->fn_oid)));
  const Oid sno_type =
      GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("sno"),
                      ObjectIdGetDatum(get_func_namespace(fcinfo->flinfo->fn_oid)));
  const Trigger *trigger = td->tg_trigger;
  if (trigger->tgnargs > 0) {
    for (int i = 0; i < trigger->tgnargs; ++i) {
      const int attnum = SPI_fnumber(desc, trigger->tgargs[i]);
      if (attnum <= 0)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                        errmsg("column \"%s\" of relation \"%s\" does not exist",
                               trigger->tgargs[i], RelationGetRelationName(rel))));
      bool isnull;
      const Datum value = heap_getattr(tuple, attnum, desc, &isnull);
      if (!isnull)
        observe_column(value, TupleDescAttr(desc, attnum - 1)->atttypid, ulid_type, sno_type,
                       trigger->tgargs[i], rel, guard);
    }
  } else {
    Bitmapset *key = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_PRIMARY_KEY);
    if (key == nullptr)
      ereport(ERROR, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                      errmsg("relation \"%s\" has no primary key", RelationGetRelationName(rel)),
                      errhint("Name the columns to observe as the trigger's arguments.")));
    for (int member = -1; (member = bms_next_member(key, member)) >= 0;) {
      const int attnum = member + FirstLowInvalidHeapAttributeNumber;
      bool isnull;
      const Datum value = heap_getattr(tuple, attnum, desc, &isnull);
      const Form_pg_attribute att = TupleDescAttr(desc, attnum - 1);
      if (!isnull)
        observe_column(value, att->atttypid, ulid_type, sno_type, NameStr(att->attname), rel,
                       guard);
    }
  }
  return PointerGetDatum(TRIGGER_FIRED_BEFORE(td->tg_event) ? tuple : nullptr);
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_observe_trigger) {
  return key_trigger(fcinfo, "snowflake_observe_trigger", false);
}

// The same, and a row applied by replication whose snowflake ID has one of this server's own
// shards, or whose sno has the partition this server issues snos on, is reported
// (report_collision).
SNOWFLAKE_FUNCTION(snowflake_replica_guard) {
  return key_trigger(fcinfo, "snowflake_replica_guard", true);
}
