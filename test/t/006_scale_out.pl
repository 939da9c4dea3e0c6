# Scaling out: three servers with shard ids 1, 2 and 3 generate IDs concurrently into tables
# published with PostgreSQL's logical replication; a fourth server subscribes to all three.
# Zero primary-key conflicts, and every row's decoded shard is its origin's.
use strict;
use warnings FATAL => 'all';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my @publishers;
foreach my $shard (1 .. 3)
{
	my $node = snowflake_node("shard$shard", qq{
snowflake.shard_id = $shard
}, allows_streaming => 'logical');
	$node->start;
	$node->safe_psql('postgres', qq{
CREATE EXTENSION snowflake;
CREATE TABLE events (id bigint PRIMARY KEY DEFAULT snowflake(), origin int NOT NULL);
CREATE PUBLICATION events_pub FOR TABLE events;
});
	push @publishers, $node;
}

my $hub = PostgreSQL::Test::Cluster->new('hub');
$hub->init;
$hub->start;
$hub->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE events (id bigint PRIMARY KEY, origin int NOT NULL);
});
foreach my $i (0 .. 2)
{
	my $shard = $i + 1;
	my $connstr =
	  'host=' . $publishers[$i]->host . ' port=' . $publishers[$i]->port . ' dbname=postgres';
	$hub->safe_psql('postgres',
		"CREATE SUBSCRIPTION sub$shard CONNECTION '$connstr' PUBLICATION events_pub");
}
# Until each table's initial copy is done: a change made meanwhile is the sync worker's,
# which the apply worker's catch-up does not wait for.
$hub->wait_for_subscription_sync($_, 'sub' . ($_->name =~ s/shard//r)) foreach @publishers;

# All three generate at once: 4 pgbench clients each, 250 transactions of 100 rows (a count,
# not a time: as many rows on a slow machine).
my $script = $publishers[0]->basedir . '/insert.sql';
append_to_file($script, "INSERT INTO events (origin) SELECT current_setting('snowflake.shard_id')::int FROM generate_series(1, 100);\n");
my @runs;
foreach my $node (@publishers)
{
	my ($out, $err) = ('', '');
	push @runs,
	  [
		IPC::Run::start(
			[
				'pgbench', '--no-vacuum', '-c', '4', '-j', '2', '-t', '250', '-f', $script,
				'-h', $node->host, '-p', $node->port, 'postgres'
			],
			'>', \$out, '2>', \$err),
		\$out, \$err
	  ];
}
foreach my $run (@runs)
{
	$run->[0]->finish;
	like(${ $run->[1] }, qr{number of transactions actually processed: 1000/1000}, 'pgbench ran');
}

my $total = 0;
foreach my $node (@publishers)
{
	$total += $node->safe_psql('postgres', 'SELECT count(*) FROM events');
	$node->wait_for_catchup("sub" . ($node->name =~ s/shard//r));
}
is($total, 300000, "the three servers wrote $total rows");

is($hub->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM events'),
	"$total|$total", 'the subscriber has every row, with no duplicate key');
is( $hub->safe_psql(
		'postgres',
		'SELECT count(*) FROM events WHERE snowflake_shard(id) <> origin'),
	'0',
	"every row's decoded shard is its origin's");
# Every error and conflict count the server keeps: their columns differ between majors
# (18 counts conflicts by kind, 19 splits sync errors into tables and sequences).
is( $hub->safe_psql(
		'postgres', q{
SELECT coalesce(sum(v::bigint), 0)
  FROM pg_stat_subscription_stats s, jsonb_each_text(to_jsonb(s)) AS c(k, v)
 WHERE k LIKE '%error_count' OR k LIKE 'confl\_%'}),
	'0',
	'no replication error or conflict');

$_->stop foreach @publishers, $hub;
done_testing();
