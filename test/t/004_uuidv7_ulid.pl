# snowflake_uuidv7() and ulid() under concurrency: 8 clients each insert 250,000 values of each kind
# (SNOWFLAKE_004_TRANSACTIONS transactions of 10,000 each, 25 by default; the arm64 suite runs 5
# under emulation, where a value costs some 20 times more) into tables with primary keys (zero duplicates, each client's values strictly increasing);
# two sessions taking turns see one increasing series; 200 fresh connections draw 200
# distinct random parts; without preloading, both still work, monotonic per backend.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $node = snowflake_node('id128', qq{
max_connections = 40
shared_buffers = 256MB
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE SEQUENCE txn;
CREATE TABLE v7 (client int NOT NULL, t bigint NOT NULL, g int NOT NULL, id uuid PRIMARY KEY);
CREATE TABLE ul (client int NOT NULL, t bigint NOT NULL, g int NOT NULL, id ulid PRIMARY KEY);
});

# Issue order within a client: (transaction number, position in the transaction).
my $transactions = $ENV{SNOWFLAKE_004_TRANSACTIONS} // 25;
die "SNOWFLAKE_004_TRANSACTIONS must be a positive integer" unless $transactions =~ /^[1-9][0-9]*$/;
my $per_client = $transactions * 10000;
my $rows = 8 * $per_client;
foreach my $kind (['v7', 'snowflake_uuidv7()'], ['ul', 'ulid()'])
{
	my ($table, $call) = @$kind;
	$node->pgbench(
		"--no-vacuum --client=8 --jobs=2 --transactions=$transactions",
		0,
		[qr{number of transactions actually processed: @{[8 * $transactions]}/@{[8 * $transactions]}}],
		[qr{^$}],
		"8 clients insert $per_client $call values each",
		{
			"004_$table" => qq{
SELECT nextval('txn') AS t \\gset
INSERT INTO $table SELECT :client_id, :t, g, $call FROM generate_series(1, 10000) g;
}
		});
	is($node->safe_psql('postgres', "SELECT count(*), count(DISTINCT id) FROM $table"),
		"$rows|$rows", "$call: $rows rows, no duplicate");
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*) FROM (
  SELECT id, lag(id) OVER (PARTITION BY client ORDER BY t, g) AS prev FROM $table) s
WHERE id <= prev}),
		'0',
		"$call: each client's values strictly increase");
	$node->safe_psql('postgres', "TRUNCATE $table");
}

is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FILTER (WHERE get_byte(uuid_send(id), 6) >> 4 = 7) FROM (SELECT snowflake_uuidv7() AS id FROM generate_series(1, 1000)) s}
	),
	'1000',
	'every snowflake_uuidv7() is version 7');

# Two sessions taking turns: one series, increasing across both.
my $s1 = $node->background_psql('postgres');
my $s2 = $node->background_psql('postgres');
my (@v7, @ul);
for my $i (1 .. 200)
{
	my $s = $i % 2 ? $s1 : $s2;
	my ($a, $b) = split /\|/, $s->query_safe('SELECT snowflake_uuidv7(), ulid()');
	push @v7, $a;
	push @ul, $b;
}
$s1->quit;
$s2->quit;
my ($v7_ok, $ul_ok) = (1, 1);
for my $i (1 .. $#v7)
{
	$v7_ok = 0 unless $v7[$i] gt $v7[ $i - 1 ];
	$ul_ok = 0 unless $ul[$i] gt $ul[ $i - 1 ];
}
ok($v7_ok, 'snowflake_uuidv7(): two sessions taking turns see one increasing series');
ok($ul_ok, 'ulid(): two sessions taking turns see one increasing series');

# 200 fresh connections: the first random bits of each are distinct (each backend seeds its
# own stream after fork; a seed shared across backends would repeat from the second).
$node->safe_psql('postgres', 'CREATE TABLE fresh (v uuid, u ulid)');
$node->pgbench(
	'--no-vacuum --connect --client=4 --jobs=2 --transactions=50',
	0,
	[qr{number of transactions actually processed: 200/200}],
	[qr{^$}],
	'200 fresh connections draw random bits',
	{
		'004_fresh' => q{
INSERT INTO fresh VALUES (uuidv7_from_time(timestamptz '2001-01-01'), ulid_from_time(timestamptz '2001-01-01'));
}
	});
is( $node->safe_psql(
		'postgres',
		'SELECT count(*), count(DISTINCT v), count(DISTINCT u) FROM fresh'),
	'200|200|200',
	'200 connections, 200 distinct random parts of each kind');

$node->stop;

# Without preloading: both kinds work and are monotonic within a backend.
my $plain = PostgreSQL::Test::Cluster->new('id128_plain');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is( $plain->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE v <= pv), count(*) FILTER (WHERE u <= pu), count(DISTINCT v), count(DISTINCT u)
  FROM (SELECT v, lag(v) OVER (ORDER BY n) pv, u, lag(u) OVER (ORDER BY n) pu
          FROM (SELECT n, snowflake_uuidv7() v, ulid() u FROM generate_series(1, 50000) n) a) b}),
	'0|0|50000|50000',
	'not preloaded: snowflake_uuidv7() and ulid() are monotonic per backend');
$plain->stop;

done_testing();
