# ID blocks (snowflake_block): 8 sessions take blocks at once while 4 others call snowflake()
# on the same range of shards; then a crash right after a block of 1,048,576 IDs and a start
# with the clock 2 minutes behind; then a failover to a standby whose clock is 2 minutes
# behind too. Over everything: no two blocks or IDs share an ID, and after each fault every
# new ID is above every earlier one of its shard (the reservation, and the WAL that carries it,
# covered each block's last ID before the block was returned).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;
use EtcdCluster;
use JSON::PP qw(decode_json);

my $faketime = faketime_library();
plan skip_all => $no_faketime unless $faketime;

my $primary = snowflake_node('primary', qq{
snowflake.shard_id = 4
snowflake.shard_count = 2
snowflake.reservation_window = '100ms'
# Blocks of 1,048,576 move their shard 1,024 ms ahead: the bound for a trusted role.
snowflake.block_max_lead = '1024ms'
max_connections = 40
}, allows_streaming => 1);
$primary->start;
# Blocks are kept as their ends (a block is every ID of its shard from first to last), single
# IDs as themselves; era is NULL until the rows are checked against the earlier ones.
$primary->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE blocks (first bigint NOT NULL, last bigint NOT NULL, count int NOT NULL, era int);
CREATE TABLE ids (id bigint NOT NULL, era int);
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
start_with_clock($standby, '-2m');

# Up to 1,024 IDs a block is n consecutive integers, from snowflake_block(n) and from
# snowflake_block_first(n) alike, whatever shard of the server's range (or lease) it is on;
# and no two of the 2,048 blocks share an ID.
sub consecutive
{
	my ($node, $what, $lo, $hi) = @_;
	is( $node->safe_psql(
			'postgres', qq{
WITH b AS (
  SELECT n, b.first, b.last, b.count FROM generate_series(1, 1024) n, LATERAL snowflake_block(n) b
  UNION ALL
  SELECT n, f, f + n - 1, n FROM generate_series(1, 1024) n, LATERAL snowflake_block_first(n) f),
s AS (
  SELECT *, lag(last) OVER (PARTITION BY snowflake_shard(first) ORDER BY first) AS before FROM b)
SELECT count(*),
       count(*) FILTER (WHERE last = first + n - 1 AND count = n
                          AND snowflake_shard(last) = snowflake_shard(first)),
       count(*) FILTER (WHERE before >= first),
       bool_and(snowflake_shard(first) BETWEEN $lo AND $hi)
  FROM s}),
		'2048|2048|0|t',
		"$what: blocks of every n from 1 to 1,024 are n consecutive integers, none overlapping");
	return;
}

# 12 clients: 1 to 8 take blocks of 1 to 4,000 IDs, 9 to 12 insert snowflake() IDs.
my $rounds = 0;
sub take_at_once
{
	my ($node, $what) = @_;
	$node->pgbench(
		'--no-vacuum --client=12 --jobs=2 --transactions=40',
		0,
		[qr{number of transactions actually processed: 480/480}],
		[qr{^$}],
		"$what: 8 sessions take blocks while 4 call snowflake()",
		{
			'024_blocks_' . ++$rounds => q{
\if :client_id < 8
\set n random(1, 4000)
INSERT INTO blocks (first, last, count) SELECT first, last, count FROM snowflake_block(:n);
\else
INSERT INTO ids (id) SELECT snowflake() FROM generate_series(1, 1000);
\endif
}
		});
	return;
}

# Every block has the shape of its count; no two of all the blocks and IDs (taken as ranges
# of one shard: within a shard ID order is the stream's order) share an ID; every row not yet
# checked is above every earlier one of its shard. Then the new rows join the earlier ones.
sub check
{
	my ($node, $what, $era) = @_;
	is( $node->safe_psql(
			'postgres', q{
WITH every AS (
  SELECT first AS lo, last AS hi, era FROM blocks UNION ALL SELECT id, id, era FROM ids),
ordered AS (
  SELECT lo, hi, era, max(hi) OVER (PARTITION BY snowflake_shard(lo) ORDER BY lo, hi
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS below
    FROM every),
shards AS (
  SELECT min(lo) FILTER (WHERE era IS NULL) AS new_min, max(hi) FILTER (WHERE era IS NOT NULL) AS old_max
    FROM every GROUP BY snowflake_shard(lo))
SELECT (SELECT count(*) FROM blocks
         WHERE snowflake_shard(first) <> snowflake_shard(last)
            OR ((last >> 23) * 1024 + (last & 1023)) - ((first >> 23) * 1024 + (first & 1023)) + 1 <> count),
       (SELECT count(*) FROM ordered WHERE lo <= below),
       (SELECT count(*) FROM shards WHERE new_min <= old_max),
       (SELECT count(*) > 0 FROM every WHERE era IS NULL)}),
		'0|0|0|t',
		"$what: every block has its shape, no ID is in two places, new IDs are above the earlier ones");
	$node->safe_psql('postgres',
		"UPDATE blocks SET era = $era WHERE era IS NULL; UPDATE ids SET era = $era WHERE era IS NULL;");
	return;
}

# A block of 1,048,576 IDs, the largest, with snowflake() IDs after it: the reservation
# covers its last ID as soon as it is returned (with a reservation window of 100 ms, the block
# reaches past the reservation it found).
sub take_large
{
	my ($node, $what) = @_;
	is( $node->safe_psql(
			'postgres', q{
INSERT INTO blocks (first, last, count) SELECT first, last, count FROM snowflake_block(1048576)
  RETURNING (SELECT reserved_until FROM snowflake_status()) > snowflake_timestamp(last);
INSERT INTO ids (id) SELECT snowflake() FROM generate_series(1, 1000);
}),
		't',
		"$what: the reservation covers the largest block when it is returned");
	return;
}

take_at_once($primary, 'first run');
take_large($primary, 'first run');
check($primary, 'first run', 1);
is( $primary->safe_psql(
		'postgres', q{
SELECT (s.blocks, s.block_ids) = (b.n, b.ids)
  FROM snowflake_status() s, (SELECT count(*) AS n, sum(count) AS ids FROM blocks) b}),
	't',
	'snowflake_status() counts every block and its IDs');
consecutive($primary, 'a range of two shards', 4, 5);

# snowflake.max_lead under the largest block's span (100 ms here): no block takes the stream
# past it, since every snowflake() of the shard would then wait; a block too large for it is
# refused with the bound in the message. (Before, the block went 1,023 ms ahead.)
set_and_reload($primary, 'snowflake.max_lead' => '100ms');
my ($ret, $out, $err) = $primary->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT count FROM snowflake_block(1048576)");
like($err, qr/ERROR:  22023: [^\n]*past its bound of 100 ms.*DETAIL:  [^\n]*snowflake\.max_lead \(100 ms\)/s,
	'a block that cannot fit within snowflake.max_lead is refused (22023), the bound in the message');
# (Its shard's lead: the range's other shard may still be ahead from the largest block; and a
# millisecond of rounding, since lead_ms is read against the system clock.)
is( $primary->safe_psql(
		'postgres', q{
SELECT count, snowflake_shard(last) AS block_shard FROM snowflake_block(102400) \gset
SELECT :count, lead_ms <= 101 FROM snowflake_streams()
 WHERE kind = 'snowflake' AND shard = :block_shard}),
	"102400|t",
	'a block of 100 ms of IDs is taken within snowflake.max_lead');
$primary->safe_psql('postgres', 'ALTER SYSTEM RESET snowflake.max_lead');
$primary->reload;
$primary->poll_query_until('postgres', q{SELECT current_setting('snowflake.max_lead') <> '100ms'})
  or die 'snowflake.max_lead not reset';

# A crash right after the largest block, then a start with the clock 2 minutes behind.
take_large($primary, 'before a crash');
$primary->stop('immediate');
start_with_clock($primary, '-2m');
take_at_once($primary, 'after a crash, the clock 2 minutes behind');
take_large($primary, 'after a crash');
check($primary, 'after a crash, the clock 2 minutes behind', 2);

# A failover to the standby (its clock 2 minutes behind) right after the largest block.
take_large($primary, 'before a failover');
$primary->wait_for_catchup($standby);
$primary->stop('immediate');
$standby->promote;
take_at_once($standby, 'on the promoted standby');
take_large($standby, 'on the promoted standby');
check($standby, 'on the promoted standby', 3);

# Lease mode: a block's last ID is below the mark stored in etcd when the block is returned
# (one etcd member, one leased shard). With the mark not applied to blocks, the mark read
# right after is below the last block's last ID.
SKIP:
{
	skip 'no etcd binary (Debian: etcd-server)', 3 unless EtcdCluster::etcd_binary();
	my $etcd = EtcdCluster->new('blocks', members => 1);
	my $leased = snowflake_node('leased', qq{
snowflake.shard_source = etcd
snowflake.etcd_endpoints = '@{[ $etcd->endpoints ]}'
snowflake.shard_pool = '0-0'
snowflake.max_lead = 10s
snowflake.block_max_lead = 10s
snowflake.lease_ttl = 6s
snowflake.lease_renew = 1s
snowflake.lease_fail_after = 3s
});
	$leased->start;
	$leased->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	$leased->poll_query_until('postgres', q{SELECT lease_state = 'held' FROM snowflake_status()})
	  or die 'no lease: ' . status_of($leased, 'etcd_error');
	# 5 blocks of 1,048,576 at once run the shard about 5 s ahead (snowflake.max_lead 10 s),
	# past the mark the lease worker keeps ahead of the clock.
	my $last_ms = $leased->safe_psql('postgres', q{
SELECT (extract(epoch FROM snowflake_timestamp(max(b.last))) * 1000)::bigint
  FROM generate_series(1, 5) g, LATERAL snowflake_block(1048576 + 0 * g) b});
	my $kv = $etcd->keys_under('/snowflake/mark/')->{'/snowflake/mark/0000'};
	my $mark = $kv ? decode_json($kv->[0])->{unix_ms} : 0;
	ok($mark > $last_ms, "lease mode: the mark in etcd ($mark) is above the block's last ID ($last_ms ms)");
	is( $leased->safe_psql('postgres', q{
SELECT snowflake_shard(first), snowflake_shard(last), count FROM snowflake_block(1000)}),
		'0|0|1000',
		'lease mode: a block is on the leased shard');
	consecutive($leased, 'lease mode', 0, 0);
	$leased->stop;
}

done_testing();
