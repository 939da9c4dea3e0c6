# A range of shards per server (snowflake.shard_count): 16 clients over a range of 4 make no
# duplicate, every ID's shard is inside the range, and every client's IDs strictly increase;
# a restart with the clock set back and changes of the count across restarts (down and up)
# never repeat an ID; a range reaching past shard 8191 is refused.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $faketime = faketime_library();

my $node = snowflake_node('shard_range', qq{
snowflake.shard_id = 4
snowflake.shard_count = 4
max_connections = 40
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (n bigserial, era int NOT NULL DEFAULT 0, client int NOT NULL, id bigint PRIMARY KEY);
});
is($node->safe_psql('postgres', q{SELECT setting, context FROM pg_settings WHERE name = 'snowflake.shard_count'}),
	'4|postmaster', 'snowflake.shard_count is set at server start');

# 16 clients x 50 transactions x 1,000 rows.
sub load
{
	my ($era, $name) = @_;
	$node->pgbench(
		'--no-vacuum --client=16 --jobs=2 --transactions=50',
		0,
		[qr{number of transactions actually processed: 800/800}],
		[qr{^$}],
		"16 clients insert 800,000 snowflake() IDs ($name)",
		{
			"016_range_$era" => qq{
INSERT INTO ids (era, client, id) SELECT $era, :client_id, snowflake() FROM generate_series(1, 1000);
}
		});
}

# Every era's IDs: no duplicate anywhere, each client's IDs strictly increasing in issue
# order, every shard inside [first, last], and every ID above every ID of the eras before.
sub check_era
{
	my ($era, $first, $last, $what) = @_;
	is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'),
		't', "$what: no duplicate");
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*) FROM (
  SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM ids WHERE era = $era) s
WHERE id <= prev}),
		'0',
		"$what: every client's IDs strictly increase");
	is( $node->safe_psql(
			'postgres', qq{
SELECT min(snowflake_shard(id)) >= $first AND max(snowflake_shard(id)) <= $last
  FROM ids WHERE era = $era}),
		't',
		"$what: every ID's shard is in $first to $last");
	is( $node->safe_psql(
			'postgres', qq{
SELECT coalesce(min(id) > (SELECT max(id) FROM ids WHERE era < $era), true)
  FROM ids WHERE era = $era}),
		't',
		"$what: above every earlier ID");
}

load(0, 'range 4 to 7');
check_era(0, 4, 7, 'a range of 4');
my ($used, $full) = split /\|/, $node->safe_psql('postgres',
	'SELECT count(DISTINCT snowflake_shard(id)), max(snowflake_seq(id)) = 1023 FROM ids');
diag("shards used by 16 clients over a range of 4: $used; a millisecond of a shard filled: $full");
# The next shard takes over when one's millisecond is full (1,024 IDs), which a slow machine
# may never reach: then one shard is right. A millisecond filled on the only shard used is not.
ok($used >= 2 || $full eq 'f', 'more than one shard of the range carries the load');
is( $node->safe_psql(
		'postgres', q{SELECT count(*) FROM snowflake_streams() WHERE kind = 'snowflake' AND shard BETWEEN 4 AND 7}),
	$used, 'snowflake_streams() shows each shard of the range that issued');

# A restart with the clock set back 10 s (further than the reservation's reach).
SKIP:
{
	skip $no_faketime, 5 unless $faketime;
	$node->stop;
	start_with_clock($node, '-10s');
	load(1, 'the clock 10 s back');
	check_era(1, 4, 7, 'the clock 10 s back over a restart');
	$node->stop;
	$node->start;
}

# The count changed across restarts, down and up.
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.shard_count = 2\n");
$node->start;
load(2, 'range 4 to 5');
check_era(2, 4, 5, 'the count lowered to 2');
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.shard_count = 8\n");
$node->start;
load(3, 'range 4 to 11');
check_era(3, 4, 11, 'the count raised to 8');

# One session of a range: 3,000,000 IDs in one statement fill several shards per
# millisecond, each session's IDs still increasing.
# (Spread once a shard's millisecond is full, as above.)
is( $node->safe_psql(
		'postgres', q{
SELECT count(DISTINCT snowflake_shard(id)) > 1 OR max(snowflake_seq(id)) < 1023, bool_and(id > prev)
  FROM (SELECT id, lag(id) OVER (ORDER BY o) AS prev
          FROM (SELECT o, snowflake() AS id FROM generate_series(1, 3000000) o) g) s}),
	't|t', 'one statement of 3,000,000 IDs spreads over the range, in increasing order');

# A range reaching past shard 8191: refused with the reason.
set_and_reload($node, 'snowflake.shard_id' => '8190');
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SELECT snowflake()', extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($stderr,
	qr/ERROR:  22023: snowflake.shard_id 8190 with snowflake.shard_count 8 reaches past shard 8191.*HINT:  Lower snowflake.shard_id to at most 8184/s,
	'a range past shard 8191 is refused, with a hint');

$node->stop;
done_testing();
