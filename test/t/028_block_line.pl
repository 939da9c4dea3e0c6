# Blocks as an ordinary role meets them beside other sessions: the lead a role without
# privileges can give every session's IDs with blocks (snowflake.block_max_lead, 100 ms by
# default); the largest block such a role may take is served beside a session looping blocks
# and sessions calling snowflake() flat out (the line, core/block_line.hpp), where it used to
# wait for ever; and with a range of shards a session's IDs after its block are above the block.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time);
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $node = snowflake_node('line', qq{
snowflake.shard_id = 20
max_connections = 30
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE ROLE taker LOGIN;
});
my $as_taker = $node->connstr('postgres') . ' user=taker';

# --- The lead: three of the largest blocks the role may take, back to back, then another
# session's snowflake(): at most 100 ms ahead of the clock it read just before (and 1 ms of
# rounding). (Before, blocks of 1,048,576 put every session's IDs a whole second ahead.)
is( $node->safe_psql('postgres', 'SHOW snowflake.block_max_lead'), '100ms',
	'snowflake.block_max_lead is 100 ms by default');
my ($ret, $out, $err) = $node->psql('postgres', 'SET snowflake.block_max_lead = 1000',
	connstr => $as_taker);
like($err, qr/permission denied to set parameter "snowflake\.block_max_lead"/,
	'an ordinary role cannot raise snowflake.block_max_lead');
($ret, $out, $err) = $node->psql('postgres', 'SELECT count FROM snowflake_block(1048576)',
	connstr => $as_taker, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  22023: a block of 1048576 IDs reaches 1024 ms ahead of the clock, past its bound of 100 ms/,
	'a block past the bound is refused (22023)');
like($err, qr/HINT:  Take blocks of at most 102401 IDs/, 'the hint names the largest block');
is( $node->safe_psql(
		'postgres',
		'SELECT sum(b.count) FROM generate_series(1, 3) g, LATERAL snowflake_block(102401 + 0 * g) b',
		connstr => $as_taker),
	'307203',
	'the role takes three of the largest blocks it may');
my ($ahead_ms) = split /\n/, $node->safe_psql('postgres', q{
SELECT extract(epoch FROM snowflake_timestamp(id) - t0) * 1000
  FROM (SELECT clock_timestamp() AS t0, snowflake() AS id) s});
cmp_ok($ahead_ms, '<=', 101,
	"another session's next ID is at most 100 ms ahead of the clock ($ahead_ms ms)");

# --- No block starves. Competitors: a session of the role looping blocks of 8,192 and two
# sessions calling snowflake() flat out, as fast as the shard lets them (pgbench, bounded to
# 300 s and ended as soon as the checks are done). Then the largest block the role may take,
# with a statement_timeout far above the bound docs/applications.md states (about 2.35 s for
# itself and each block ahead in line: 4.7 s here, behind the looping session's): it returns. (Before, it waited for ever: a
# block needs the stream within its lead, which competitors at capacity never left.)
my $dir = PostgreSQL::Test::Utils::tempdir;
sub script
{
	my ($name, $sql) = @_;
	my $file = "$dir/$name.sql";
	open my $fh, '>', $file or die "$file: $!";
	print $fh $sql;
	close $fh;
	return $file;
}
my $loop_blocks = script('blocks', "SELECT count FROM snowflake_block(8192);\n");
my $flat_out = script('singles', "SELECT count(snowflake()) FROM generate_series(1, 20000);\n");
my ($bout, $berr, $sout, $serr) = ('', '', '', '');
my $blocks_before = $node->safe_psql('postgres',
	q{SELECT blocks FROM snowflake_streams() WHERE kind = 'snowflake' AND shard = 20});
my $blocks = IPC::Run::start(
	[ 'pgbench', '-n', '-T', '300', '-c', '1', '-f', $loop_blocks, $as_taker ],
	'>', \$bout, '2>', \$berr);
my $singles = IPC::Run::start(
	[ 'pgbench', '-n', '-T', '300', '-c', '2', '-j', '2', '-f', $flat_out, $node->connstr('postgres') ],
	'>', \$sout, '2>', \$serr);
# Both competitors running: the looping session's blocks counted, and the shard ahead of the
# clock. (Each of its blocks waits in line for up to about 2 s beside the singles at capacity.)
$node->poll_query_until('postgres', qq{
SELECT blocks > $blocks_before + 2 AND lead_ms > 0 FROM snowflake_streams() WHERE kind = 'snowflake' AND shard = 20})
  or die "the competitors did not start: $berr $serr";
# Sessions behind a block (single IDs paused for the looping session's block, or a block
# behind another) wait under a wait event of their own, not SnowflakeMaxLead's (named wait
# events: 17 and later).
SKIP:
{
	skip 'named wait events: PostgreSQL 17 and later', 1 if $node->pg_version < 17;
	ok( $node->poll_query_until('postgres', q{
SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event = 'SnowflakeBlockLine'}),
		'a session behind a block in line shows the wait event SnowflakeBlockLine');
}
my @waits;
for my $round (1 .. 3)
{
	my $started = time;
	($ret, $out, $err) = $node->psql('postgres', q{
SET statement_timeout = '60s';
SELECT count FROM snowflake_block(102401)}, connstr => $as_taker);
	push @waits, sprintf('%.0f ms', 1000 * (time - $started));
	is($out, '102401', "round $round: the largest block is served beside competitors at capacity")
	  or diag($err);
}
diag('the largest block waited ' . join(', ', @waits) . ' (load ' . (`cat /proc/loadavg` =~ s/ .*//sr) . ')');
# The competitors are served meanwhile: a statement of 3,000 snowflake() IDs, and the
# looping session's blocks.
my $blocks0 = $node->safe_psql('postgres',
	q{SELECT blocks FROM snowflake_streams() WHERE kind = 'snowflake' AND shard = 20});
is( $node->safe_psql('postgres', q{
SET statement_timeout = '60s';
SELECT count(snowflake()) FROM generate_series(1, 3000)}),
	'3000', 'snowflake() is served beside the line');
$node->poll_query_until('postgres', qq{
SELECT blocks > $blocks0 + 2 FROM snowflake_streams() WHERE kind = 'snowflake' AND shard = 20})
  or die 'the looping session stopped';
pass('the looping session goes on taking blocks');
$_->kill_kill for $blocks, $singles;

# --- A range of shards: snowflake(), a block, snowflake() in one session, ten times: each
# block above the ID before it and below the ID after it, though it comes from the range's
# shard furthest behind. (Before, the next ID came from the session's shard and was below the
# block: 3 runs of 3.)
my $range = snowflake_node('range', qq{
snowflake.shard_id = 40
snowflake.shard_count = 4
});
$range->start;
$range->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is( $range->safe_psql(
		'postgres', q{
CREATE TEMP TABLE runs (before bigint, first bigint, last bigint, after bigint);
DO $$
DECLARE b record; x bigint;
BEGIN
  FOR i IN 1..10 LOOP
    x := snowflake();
    SELECT * INTO b FROM snowflake_block(3000);
    INSERT INTO runs VALUES (x, b.first, b.last, snowflake());
  END LOOP;
END $$;
SELECT count(*) FILTER (WHERE before < first AND last < after),
       count(DISTINCT snowflake_shard(first)) > 1
  FROM runs}),
	'10|t',
	"with a range of shards, a session's IDs after its block are above the block");

done_testing();
