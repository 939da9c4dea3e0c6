# 8 concurrent clients (pgbench) insert 1,000,000 IDs of one shard, then the same over two
# shards: zero duplicates, and each client's IDs strictly increasing in issue order. Then
# 200,000 snos from 8 clients with metabytes of their own: one server-wide stream. 200,000 rsxids
# and ksuids from 8 clients: one server-wide stream per kind.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $node = snowflake_node('concurrency', qq{
snowflake.shard_id = 11
max_connections = 40
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (n bigserial, client int NOT NULL, id bigint PRIMARY KEY);
});

# One shard: 8 clients x 125 transactions x 1000 rows.
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=125',
	0,
	[qr{number of transactions actually processed: 1000/1000}],
	[qr{^$}],
	'8 clients insert 1,000,000 snowflake() IDs of one shard',
	{
		'001_one_shard' => q{
INSERT INTO ids (client, id) SELECT :client_id, snowflake() FROM generate_series(1, 1000);
}
	});

sub check_ids
{
	my ($what, $rows, $shards) = @_;
	is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM ids'),
		"$rows|$rows", "$what: $rows rows, no duplicate");
	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FROM (
  SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM ids) s
WHERE id <= prev}),
		'0',
		"$what: every client's IDs strictly increase");
	is( $node->safe_psql(
			'postgres',
			'SELECT string_agg(DISTINCT snowflake_shard(id)::text, \',\') FROM ids'),
		$shards,
		"$what: decoded shards");
}

check_ids('one shard', 1000000, '11');

# Two shards: odd clients write shard 1, even clients shard 2, with an explicit shard.
$node->safe_psql('postgres', 'TRUNCATE ids');
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=125',
	0,
	[qr{number of transactions actually processed: 1000/1000}],
	[qr{^$}],
	'8 clients insert 1,000,000 IDs over two shards',
	{
		'001_two_shards' => q{
INSERT INTO ids (client, id) SELECT :client_id, snowflake(1 + :client_id % 2)
  FROM generate_series(1, 1000);
}
	});
check_ids('two shards', 1000000, '1,2');
is( $node->safe_psql(
		'postgres',
		'SELECT count(*) FROM ids GROUP BY snowflake_shard(id) ORDER BY 1'),
	"500000\n500000",
	'two shards: half of the IDs each');

# The same shard from the setting and from the explicit argument is one sequence.
$node->safe_psql('postgres', 'TRUNCATE ids');
$node->safe_psql('postgres', q{
INSERT INTO ids (client, id)
  SELECT g % 2, CASE WHEN g % 2 = 0 THEN snowflake() ELSE snowflake(11) END
  FROM generate_series(1, 100000) g});
check_ids('setting and argument share a shard', 100000, '11');
is( $node->safe_psql(
		'postgres',
		'SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s WHERE id <= prev'),
	'0',
	'one sequence per shard, whichever way the shard is named');

# sno(): 8 clients x 25 transactions x 1000 snos, each client with metabytes of its own. One
# stream for the server: no (unit, sequence) twice whatever the metabyte, and in each 4 ms
# unit the sequences 0, 1, 2, ... with no gap, which only one counter shared by every backend
# gives; each client's (time, sequence) strictly increase, and its snos of one metabyte (the
# metabyte is before the sequence in the bytes); all on the server's shard.
$node->safe_psql('postgres',
	'CREATE TABLE snos (n bigserial, client int NOT NULL, meta int NOT NULL, id sno PRIMARY KEY)');
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=25',
	0,
	[qr{number of transactions actually processed: 200/200}],
	[qr{^$}],
	'8 clients insert 200,000 snos',
	{
		'001_snos' => q{
INSERT INTO snos (client, meta, id) SELECT :client_id, (:client_id * 31 + g) % 256, sno((:client_id * 31 + g) % 256)
  FROM generate_series(1, 1000) g;
}
	});
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT (d.ts, d.sequence)),
       bool_and(d.meta = s.meta AND d.partition = 11 AND NOT d.tick)
  FROM snos s, sno_decode(s.id) d}),
	'200000|200000|t',
	'snos: no unit and sequence twice, metabyte as asked, partition the shard');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (SELECT d.ts, count(*) AS c, max(d.sequence) AS top
                        FROM snos, sno_decode(id) d GROUP BY d.ts) u
 WHERE top <> c - 1}),
	'0',
	'snos: every unit holds sequences 0 to n - 1, from one server-wide counter');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE (d.ts, d.sequence) <= (p.ts, p.sequence)),
       count(*) FILTER (WHERE id <= prev_of_meta)
  FROM (SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev,
               lag(id) OVER (PARTITION BY client, meta ORDER BY n) AS prev_of_meta FROM snos) s,
       sno_decode(id) d, sno_decode(prev) p
 WHERE prev IS NOT NULL}),
	'0|0',
	"snos: each client's (time, sequence) strictly increase, and its snos of one metabyte");

# rsxid() and ksuid(): 8 clients x 25 transactions x 1000 of each. One stream per kind for the
# server: no value twice, each second's counters 0 to n - 1 with no gap (one counter shared by
# every backend), each client's values strictly increasing; the server's shard in the xid's
# machine id and the KSUID's payload, the xid's process id the postmaster's.
$node->safe_psql('postgres',
	'CREATE TABLE second_ids (n bigserial, client int NOT NULL, x rsxid NOT NULL UNIQUE, k ksuid NOT NULL UNIQUE)');
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=25',
	0,
	[qr{number of transactions actually processed: 200/200}],
	[qr{^$}],
	'8 clients insert 200,000 rsxids and 200,000 ksuids',
	{
		'001_second_ids' => q{
INSERT INTO second_ids (client, x, k) SELECT :client_id, rsxid(), ksuid() FROM generate_series(1, 1000);
}
	});
my ($postmaster_pid) = slurp_file($node->data_dir . '/postmaster.pid') =~ /^(\d+)/;
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT x), count(DISTINCT k),
       bool_and(d.machine = '\x00000b'::bytea), min(d.pid) || '/' || max(d.pid),
       bool_and(substr(e.payload, 1, 2) = '\x000b'::bytea), count(DISTINCT substr(e.payload, 6))
  FROM second_ids, rsxid_decode(x) d, ksuid_decode(k) e}),
	'200000|200000|200000|t|' . ($postmaster_pid & 0xffff) . '/' . ($postmaster_pid & 0xffff) . '|t|200000',
	'rsxids and ksuids: none twice, the shard in each, the postmaster\'s PID, a random KSUID tail');
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM (SELECT d.ts, count(*) AS c, max(d.counter) AS top
                                FROM second_ids, rsxid_decode(x) d GROUP BY d.ts) u WHERE top <> c - 1),
       (SELECT count(*) FROM (SELECT e.ts, count(*) AS c,
                                     max((get_byte(e.payload, 2) << 16) | (get_byte(e.payload, 3) << 8)
                                         | get_byte(e.payload, 4)) AS top
                                FROM second_ids, ksuid_decode(k) e GROUP BY e.ts) u WHERE top <> c - 1)}),
	'0|0',
	'rsxids and ksuids: every second holds counters 0 to n - 1, from one server-wide counter per kind');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE x <= prev_x), count(*) FILTER (WHERE k <= prev_k)
  FROM (SELECT x, k, lag(x) OVER (PARTITION BY client ORDER BY n) AS prev_x,
               lag(k) OVER (PARTITION BY client ORDER BY n) AS prev_k FROM second_ids) s
 WHERE prev_x IS NOT NULL}),
	'0|0',
	"rsxids and ksuids: each client's strictly increase");

# On 18 and later the module's magic block names it and its version, the control file's.
SKIP:
{
	skip 'pg_get_loaded_modules() is new in PostgreSQL 18', 1 if $node->pg_version < 18;
	my ($version) = slurp_file('snowflake.control') =~ /^default_version = '([^']+)'/m;
	is( $node->safe_psql('postgres',
			q{SELECT module_name || ' ' || version FROM pg_get_loaded_modules() WHERE file_name = 'snowflake.so'}),
		"snowflake $version",
		'the loaded module reports its name and version');
}

$node->stop;
done_testing();
