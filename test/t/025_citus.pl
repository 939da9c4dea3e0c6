# A real Citus cluster (a coordinator and two workers, each its own server on loopback with
# shared_preload_libraries = 'citus,snowflake') with ONE snowflake configuration on every node:
# lease mode against a 3-member etcd. Skipped when Citus is not installed for this major (it is
# in no Debian suite; the citus suite of scripts/test.sh runs this test where it is).
# - CREATE EXTENSION snowflake on the coordinator reaches the workers, one added after it too;
#   the three nodes lease three distinct shards.
# - Distributed tables keyed by bigint DEFAULT snowflake(), uuid DEFAULT snowflake_uuidv7() and
#   ulid DEFAULT ulid(), the ID as distribution column and as a plain column beside another
#   one, and a reference table, written at once from several sessions through every path:
#   multi-row INSERT through the coordinator and through each worker, COPY text and binary
#   through the coordinator and a worker, INSERT ... SELECT in each of Citus's strategies, a
#   distributed function; one shard moved between the workers meanwhile. Which node evaluated
#   the DEFAULT in each path (its shard is in the ID) is checked against docs/citus.md; no ID
#   repeats over all rows, also where Citus enforces no UNIQUE across shards; the moved rows
#   keep their IDs.
# - Reading: a bound by snowflake_at() prunes the partitions of a time-partitioned distributed
#   table on the workers; the decoders in worker-side aggregates give what the coordinator
#   gives; ulid and sno values cross nodes exactly, in text and in binary.
# - Masking: one key file on every node gives one token wherever it is computed; a node with
#   another key file shows it in snowflake_status() (mask_key_fingerprint).
# - A worker SIGKILLed under load and started again leases again and takes writes.
# - Config mode: a distinct snowflake.shard_id per node, each path on the expected shard.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;
use EtcdCluster;

my $libdir = `pg_config --pkglibdir`;
chomp $libdir;
plan skip_all => "needs Citus installed for this major ($libdir/citus.so), which no Debian suite packages"
  unless -f "$libdir/citus.so";
plan skip_all => 'no etcd binary (Debian: etcd-server)' unless EtcdCluster::etcd_binary();

my $etcd = EtcdCluster->new('citus');
my $endpoints = $etcd->endpoints;

# The one snowflake configuration of every node (the mask key file is in each data directory).
my $snowflake_conf = qq{
snowflake.shard_source = etcd
snowflake.etcd_endpoints = '$endpoints'
snowflake.shard_pool = '0-7'
snowflake.lease_ttl = 6s
snowflake.lease_renew = 1s
snowflake.lease_fail_after = 3s
snowflake.mask_key_file = 'mask.keys'
};
sub random_key { return join '', map { sprintf '%02x', int(rand(256)) } 1 .. 32; }
# Key 1 masks; key 0, retired, unmasks the tokens made before key 1 was (a file after a rotation).
my $mask_key = random_key();
my $retired_key = random_key();

sub citus_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'citus,snowflake'
listen_addresses = '127.0.0.1'
max_connections = 100
max_prepared_transactions = 50
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
citus.node_conninfo = 'sslmode=disable'
citus.shard_count = 4
citus.log_distributed_deadlock_detection = off
} . $snowflake_conf);
	write_key($node, $mask_key, $retired_key);
	return $node;
}

sub write_key
{
	my ($node, $key, $retired) = @_;
	my $file = $node->data_dir . '/mask.keys';
	open my $fh, '>', "$file.tmp" or die "open $file.tmp: $!";
	print $fh "0 $retired\n1 $key active\n";
	close $fh;
	chmod 0600, "$file.tmp";
	rename "$file.tmp", $file or die "rename $file: $!";
	return;
}

my $coord = citus_node('coord');
my $w1 = citus_node('w1');
my $w2 = citus_node('w2');
my @nodes = ($coord, $w1, $w2);
$_->start foreach @nodes;
$_->safe_psql('postgres', 'CREATE EXTENSION citus') foreach @nodes;
my $host = '127.0.0.1';
$coord->safe_psql('postgres', qq{
SELECT citus_set_coordinator_host('$host', ${\ $coord->port});
SELECT citus_add_node('$host', ${\ $w1->port});
CREATE EXTENSION snowflake;
SELECT citus_add_node('$host', ${\ $w2->port});
});

is( $coord->safe_psql(
		'postgres',
		q{SELECT string_agg(result, ',') FROM run_command_on_workers(
  $$SELECT extversion FROM pg_extension WHERE extname = 'snowflake'$$)}),
	join(',', ($coord->safe_psql('postgres',
		q{SELECT extversion FROM pg_extension WHERE extname = 'snowflake'})) x 2),
	'CREATE EXTENSION snowflake on the coordinator reaches the worker there and the one added after');

sub wait_held
{
	my ($node) = @_;
	$node->poll_query_until('postgres', q{SELECT lease_state = 'held' FROM snowflake_status()})
	  or die $node->name . ' holds no lease: ' . status_of($node, 'lease_state, etcd_error');
	return status_of($node, 'lease_shard');
}
my %shard_of;    # node name => leased shard
$shard_of{ $_->name } = wait_held($_) foreach @nodes;
is(scalar(keys %{ { reverse %shard_of } }), 3,
	'one configuration, three nodes: three distinct leased shards ('
	  . join(', ', map { "$_ $shard_of{$_}" } sort keys %shard_of) . ')');

# ---- The tables.
$coord->safe_psql('postgres', q{
CREATE TABLE t_sf (id bigint DEFAULT snowflake() PRIMARY KEY, path text NOT NULL, n int);
CREATE TABLE t_v7 (id uuid DEFAULT snowflake_uuidv7() PRIMARY KEY, path text NOT NULL);
CREATE TABLE t_ul (id ulid DEFAULT ulid() PRIMARY KEY, path text NOT NULL);
CREATE TABLE t_x (id rsxid DEFAULT rsxid() PRIMARY KEY, path text NOT NULL);
CREATE TABLE t_k (id ksuid DEFAULT ksuid() PRIMARY KEY, path text NOT NULL);
-- The ID beside another distribution column: Citus enforces no UNIQUE (id) across shards.
CREATE TABLE t_acct (account int NOT NULL, id bigint DEFAULT snowflake(), path text NOT NULL,
  PRIMARY KEY (account, id));
CREATE TABLE t_ref (id bigint DEFAULT snowflake() PRIMARY KEY, path text NOT NULL);
-- Sources of INSERT ... SELECT, colocated with t_acct.
CREATE TABLE t_src (account int NOT NULL, n int NOT NULL);
SELECT create_distributed_table('t_sf', 'id');
SELECT create_distributed_table('t_v7', 'id');
SELECT create_distributed_table('t_ul', 'id');
SELECT create_distributed_table('t_x', 'id');
SELECT create_distributed_table('t_k', 'id');
SELECT create_distributed_table('t_acct', 'account');
SELECT create_distributed_table('t_src', 'account', colocate_with := 't_acct');
SELECT create_reference_table('t_ref');
INSERT INTO t_src SELECT n % 50, n FROM generate_series(1, 200) n;
-- Rows that exist before the shard move, to see that it keeps their IDs.
INSERT INTO t_sf (path, n) SELECT 'before', n FROM generate_series(1, 500) n;
CREATE FUNCTION add_rows(a int, k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO t_acct (account, path) SELECT a, 'function' FROM generate_series(1, k);
END $$;
SELECT create_distributed_function('add_rows(int,int)', 'a', colocate_with := 't_acct');
});

my $base = PostgreSQL::Test::Utils::tempdir('citus_load');
# A binary COPY file of one text column (the path) of $rows rows.
foreach my $p (qw(coord_copy_binary w1_copy_binary))
{
	$coord->safe_psql('postgres',
		"COPY (SELECT '$p'::text FROM generate_series(1, 100)) TO '$base/$p.bin' (FORMAT binary)");
}

# The script of one session: $repeat times $body.
sub session
{
	my ($node, $name, $repeat, $body) = @_;
	my $file = "$base/$name.sql";
	open my $fh, '>', $file or die "open $file: $!";
	print $fh $body x $repeat;
	close $fh;
	return [
		$name,
		IPC::Run::start(
			[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-f', $file ],
			'>', "$file.out", '2>', "$file.err") ];
}

sub values_of
{
	my ($path, $rows, $account) = @_;
	return join(',', map { defined $account ? "($_ % 50, '$path')" : "('$path')" } 1 .. $rows);
}

sub insert_body
{
	my ($p) = @_;
	return "INSERT INTO t_sf (path) VALUES " . values_of($p, 50) . ";\n"
	  . "INSERT INTO t_v7 (path) VALUES " . values_of($p, 50) . ";\n"
	  . "INSERT INTO t_ul (path) VALUES " . values_of($p, 50) . ";\n"
	  . "INSERT INTO t_x (path) VALUES " . values_of($p, 50) . ";\n"
	  . "INSERT INTO t_k (path) VALUES " . values_of($p, 50) . ";\n"
	  . "INSERT INTO t_acct (account, path) VALUES " . values_of($p, 50, 1) . ";\n"
	  . "INSERT INTO t_ref (path) VALUES " . values_of($p, 10) . ";\n";
}

sub copy_body
{
	my ($p) = @_;
	return "COPY t_sf (path) FROM STDIN;\n" . ("${p}_text\n" x 100) . "\\.\n"
	  . "COPY t_acct (account, path) FROM STDIN;\n"
	  . join('', map { ($_ % 50) . "\t${p}_text\n" } 1 .. 100) . "\\.\n"
	  . "\\copy t_sf (path) FROM '$base/${p}_binary.bin' WITH (FORMAT binary)\n";
}

# Every path at once, and the shard move meanwhile.
my $before = $coord->safe_psql('postgres',
	q{SELECT md5(string_agg(id::text, ',' ORDER BY id)) FROM t_sf WHERE path = 'before'});
my @sessions = (
	session($coord, 'coord_insert', 20, insert_body('coord_insert')),
	session($w1, 'w1_insert', 20, insert_body('w1_insert')),
	session($w2, 'w2_insert', 20, insert_body('w2_insert')),
	session($coord, 'coord_copy', 10, copy_body('coord_copy')),
	session($w1, 'w1_copy', 10, copy_body('w1_copy')),
	session(
		$coord, 'insert_select', 10, q{
INSERT INTO t_acct (account, path) SELECT account, 'is_colocated' FROM t_src;
INSERT INTO t_sf (path, n) SELECT 'is_coordinator', n FROM t_src ORDER BY n LIMIT 100;
SET citus.enable_repartitioned_insert_select = on;
INSERT INTO t_acct (account, path) SELECT n, 'is_repartition' FROM t_src;
RESET citus.enable_repartitioned_insert_select;
}),
	session($coord, 'function', 20, join('', map { "SELECT add_rows($_, 10);\n" } 1 .. 10)),
);

# One shard of t_sf that the first worker holds goes to the second, rows and all, while the
# sessions write.
my $moved = $coord->safe_psql('postgres', qq{
SELECT shardid FROM citus_shards WHERE table_name = 't_sf'::regclass AND nodeport = ${\ $w1->port}
 ORDER BY shardid LIMIT 1});
$coord->safe_psql('postgres', qq{
SELECT citus_move_shard_placement($moved, '$host', ${\ $w1->port}, '$host', ${\ $w2->port},
  shard_transfer_mode := 'force_logical')});
is($coord->safe_psql('postgres', "SELECT nodeport FROM citus_shards WHERE shardid = $moved"),
	$w2->port, 'a shard of t_sf moved from the first worker to the second');

foreach my $s (@sessions)
{
	my ($name, $h) = @$s;
	$h->finish;
	is($h->result(0), 0, "session $name ended without an error")
	  or diag(slurp_file("$base/$name.sql.err"));
}

# The strategy Citus took for each INSERT ... SELECT of the sessions. Between colocated tables
# Citus would push it down, but not with a VOLATILE function in it (the DEFAULT snowflake()):
# it repartitions instead, the workers evaluating the DEFAULT all the same.
my %strategy = (
	q{INSERT INTO t_acct (account, path) SELECT account, 'is_colocated' FROM t_src} => 'repartition',
	q{INSERT INTO t_sf (path, n) SELECT 'is_coordinator', n FROM t_src ORDER BY n LIMIT 100} =>
	  'pull to coordinator',
	q{INSERT INTO t_acct (account, path) SELECT n, 'is_repartition' FROM t_src} => 'repartition');
foreach my $sql (sort keys %strategy)
{
	my $plan = $coord->safe_psql('postgres',
		"SET citus.enable_repartitioned_insert_select = on; EXPLAIN (COSTS OFF) $sql");
	is($plan =~ /INSERT\/SELECT method: (.*)/ ? $1 : 'pushed down',
		$strategy{$sql}, "INSERT ... SELECT, $strategy{$sql}: $sql");
}

is($coord->safe_psql('postgres',
		q{SELECT md5(string_agg(id::text, ',' ORDER BY id)) FROM t_sf WHERE path = 'before'}),
	$before, 'the rows written before the move keep their IDs');

# ---- Which node evaluated the DEFAULT, path by path (docs/citus.md has this table): the
# node whose leased shard the IDs carry. No path folds one value per statement (every ID of a
# path is distinct) and none evaluates on a node without a lease.
my %node_of = reverse %shard_of;    # leased shard => node name
my %expected = (    # path => rows written, and the nodes the IDs carry the shards of
	't_sf coord_insert' => '1000 coord',
	't_sf w1_insert' => '1000 w1',
	't_sf w2_insert' => '1000 w2',
	't_sf coord_copy_text' => '1000 coord',
	't_sf coord_copy_binary' => '1000 coord',
	't_sf w1_copy_text' => '1000 w1',
	't_sf w1_copy_binary' => '1000 w1',
	# pulled to the coordinator: Citus gives the DEFAULT to the SELECT, run on the workers
	't_sf is_coordinator' => '1000 w1 w2',
	't_acct coord_insert' => '1000 coord',
	't_acct w1_insert' => '1000 w1',
	't_acct w2_insert' => '1000 w2',
	't_acct coord_copy_text' => '1000 coord',
	't_acct w1_copy_text' => '1000 w1',
	't_acct is_colocated' => '2000 w1 w2',
	't_acct is_repartition' => '2000 w1 w2',
	't_acct function' => '2000 w1 w2',
	't_ref coord_insert' => '200 coord',
	't_ref w1_insert' => '200 w1',
	't_ref w2_insert' => '200 w2',
	# rsxid() and ksuid(): the shard in the xid's machine id and at the head of the KSUID's payload
	't_x coord_insert' => '1000 coord',
	't_x w1_insert' => '1000 w1',
	't_x w2_insert' => '1000 w2',
	't_k coord_insert' => '1000 coord',
	't_k w1_insert' => '1000 w1',
	't_k w2_insert' => '1000 w2');
my $paths = $coord->safe_psql('postgres', q{
SELECT tbl, path, count(*), count(DISTINCT id), string_agg(DISTINCT shard::text, ' ')
  FROM (SELECT 't_sf' AS tbl, path, id::text AS id, snowflake_shard(id) AS shard
          FROM t_sf WHERE path <> 'before'
        UNION ALL SELECT 't_acct', path, id::text, snowflake_shard(id) FROM t_acct
        UNION ALL SELECT 't_ref', path, id::text, snowflake_shard(id) FROM t_ref
        UNION ALL SELECT 't_x', path, id::text, get_byte(d.machine, 1) << 8 | get_byte(d.machine, 2)
          FROM t_x, rsxid_decode(id) d
        UNION ALL SELECT 't_k', path, id::text, get_byte(d.payload, 0) << 8 | get_byte(d.payload, 1)
          FROM t_k, ksuid_decode(id) d) a
 GROUP BY 1, 2 ORDER BY 1, 2});
my %seen;
foreach my $line (split /\n/, $paths)
{
	my ($tbl, $path, $rows, $distinct, $shards) = split /\|/, $line;
	my $where = join ' ', sort map { $node_of{$_} // "unleased_shard_$_" } split / /, $shards;
	$seen{"$tbl $path"} = $distinct == $rows ? "$rows $where" : "$rows rows, $distinct distinct";
}
is_deeply(\%seen, \%expected,
	'every path: every row written, every ID distinct, evaluated where docs/citus.md says')
  or diag($paths);

# Every row sits in the shard its ID hashes to (a DEFAULT evaluated after routing would not).
foreach my $t ([ 't_sf', 'id' ], [ 't_v7', 'id' ], [ 't_ul', 'id' ], [ 't_x', 'id' ], [ 't_k', 'id' ],
	[ 't_acct', 'account' ])
{
	my ($table, $column) = @$t;
	is( $coord->safe_psql(
			'postgres', qq{
SELECT sum(result::bigint) FROM run_command_on_shards('$table',
  \$\$SELECT count(*) FROM %1\$s WHERE get_shard_id_for_distribution_column('$table', $column)::text
      <> substring('%1\$s' from '[0-9]+\$')\$\$)}),
		'0', "$table: every row in the shard of its distribution column");
}

# ---- Uniqueness over every row of every table, also where Citus enforces none (t_acct.id).
$coord->safe_psql('postgres', q{
CREATE TABLE all_ids (id bigint);
INSERT INTO all_ids SELECT id FROM t_sf;
INSERT INTO all_ids SELECT id FROM t_acct;
INSERT INTO all_ids SELECT id FROM t_ref;
});
my ($rows, $distinct) = split /\|/, $coord->safe_psql('postgres',
	'SELECT count(*), count(DISTINCT id) FROM all_ids');
is($distinct, $rows, "$rows bigint IDs over every table and path: none repeats");
is($coord->safe_psql('postgres', q{
SELECT (SELECT count(*) = count(DISTINCT id) FROM t_v7) AND (SELECT count(*) = count(DISTINCT id) FROM t_ul)
   AND (SELECT count(*) = count(DISTINCT id) FROM t_x) AND (SELECT count(*) = count(DISTINCT id) FROM t_k)
   AND (SELECT count(*) FROM t_v7) > 0 AND (SELECT count(*) FROM t_ul) > 0
   AND (SELECT count(*) FROM t_x) > 0 AND (SELECT count(*) FROM t_k) > 0}),
	't', 'the uuid, ulid, rsxid and ksuid IDs repeat none either');
is($coord->safe_psql('postgres',
		'SELECT count(*) FROM (SELECT id FROM t_acct GROUP BY id HAVING count(*) > 1) d'),
	'0', 'where the ID is not the distribution column, a count over the cluster finds no repeat');

# ---- Reading across the cluster.
# A table partitioned by time on snowflake bounds, distributed by account.
my ($hour_ago, $day_ahead) = split /\|/, $coord->safe_psql('postgres',
	q{SELECT snowflake_at(now() - interval '1 hour'), snowflake_at(now() + interval '1 day')});
$coord->safe_psql('postgres', qq{
CREATE TABLE events (account int NOT NULL, id bigint NOT NULL DEFAULT snowflake(), what text,
  PRIMARY KEY (account, id)) PARTITION BY RANGE (id);
CREATE TABLE events_old PARTITION OF events FOR VALUES FROM (MINVALUE) TO ($hour_ago);
CREATE TABLE events_recent PARTITION OF events FOR VALUES FROM ($hour_ago) TO ($day_ahead);
SELECT create_distributed_table('events', 'account');
INSERT INTO events (account, id, what)
  SELECT n % 10, snowflake_at(now() - interval '2 hours') + n, 'old' FROM generate_series(1, 100) n;
INSERT INTO events (account, what) SELECT n % 10, 'new' FROM generate_series(1, 100) n;
ANALYZE events;
});
my $plan = $coord->safe_psql('postgres', q{
SET citus.explain_all_tasks = on;
EXPLAIN (COSTS OFF) SELECT count(*) FROM events WHERE id >= snowflake_at(now() - interval '1 hour')});
like($plan, qr/events_recent_\d+/, 'a bound by snowflake_at() scans the recent partition on the workers');
unlike($plan, qr/events_old_\d+/, 'and prunes the old one');
like($plan, qr/Node: host=127\.0\.0\.1 port=${\ $w1->port}.*Node: host=127\.0\.0\.1 port=${\ $w2->port}|Node: host=127\.0\.0\.1 port=${\ $w2->port}.*Node: host=127\.0\.0\.1 port=${\ $w1->port}/s,
	'on both workers');
note($plan);
is($coord->safe_psql('postgres',
		q{SELECT count(*) FROM events WHERE id >= snowflake_at(now() - interval '1 hour')}),
	'100', 'the bound finds the recent rows');

# The decoders in aggregates the workers compute, against the same over rows brought to the
# coordinator first.
my $agg = q{SELECT snowflake_shard(id) AS shard, count(*), min(snowflake_timestamp(id)),
  max(snowflake_seq(id)), count(*) FILTER (WHERE (snowflake_decode(id)).ts = snowflake_timestamp(id))
  FROM %s GROUP BY 1 ORDER BY 1};
my $on_workers = $coord->safe_psql('postgres', sprintf($agg, 't_sf'));
my $plan_agg = $coord->safe_psql('postgres', 'EXPLAIN (COSTS OFF) ' . sprintf($agg, 't_sf'));
like($plan_agg, qr/Task Count: 4.*HashAggregate.*Group Key: snowflake_shard\(id\)/s,
	'the decoders run in partial aggregates on the workers');
$coord->safe_psql('postgres', 'CREATE TABLE local_sf AS SELECT id FROM t_sf');
is($on_workers, $coord->safe_psql('postgres', sprintf($agg, 'local_sf')),
	'and give what the coordinator computes over the same rows');

# ---- ulid, sno, rsxid and ksuid across nodes, in text and in binary.
$coord->safe_psql('postgres', q{
CREATE TABLE ul_local AS
  SELECT n, ulid() AS u, sno_at(now() - n * interval '1 second') AS s, rsxid() AS x, ksuid() AS k
    FROM generate_series(1, 300) n;
CREATE TABLE ul_by_n (n int, u ulid, s sno, x rsxid, k ksuid);
CREATE TABLE ul_by_u (u ulid, s sno, n int, x rsxid, k ksuid);
CREATE TABLE ul_by_s (s sno, u ulid, n int, x rsxid, k ksuid);
CREATE TABLE ul_by_x (x rsxid, k ksuid, n int);
CREATE TABLE ul_by_k (k ksuid, x rsxid, n int);
SELECT create_distributed_table('ul_by_n', 'n');
SELECT create_distributed_table('ul_by_u', 'u');
SELECT create_distributed_table('ul_by_s', 's');
SELECT create_distributed_table('ul_by_x', 'x');
SELECT create_distributed_table('ul_by_k', 'k');
INSERT INTO ul_by_n SELECT n, u, s, x, k FROM ul_local;
});
my $expect = $coord->safe_psql('postgres',
	q{SELECT md5(string_agg(n || ' ' || u || ' ' || s || ' ' || x || ' ' || k, ',' ORDER BY n)) FROM ul_local});
foreach my $binary (qw(off on))
{
	my $set = "SET citus.enable_binary_protocol = $binary; SET citus.enable_repartition_joins = on;"
	  . " SET citus.enable_repartitioned_insert_select = on;";
	$coord->safe_psql('postgres', qq{$set
TRUNCATE ul_by_u, ul_by_s, ul_by_x, ul_by_k;
INSERT INTO ul_by_u SELECT u, s, n, x, k FROM ul_by_n;
INSERT INTO ul_by_s SELECT s, u, n, x, k FROM ul_by_u;
INSERT INTO ul_by_x SELECT x, k, n FROM ul_by_s;
INSERT INTO ul_by_k SELECT k, x, n FROM ul_by_x;});
	is( $coord->safe_psql(
			'postgres', qq{$set
SELECT md5(string_agg(a.n || ' ' || b.u || ' ' || c.s || ' ' || d.x || ' ' || e.k, ',' ORDER BY a.n))
  FROM ul_by_n a JOIN ul_by_u b ON b.u = a.u JOIN ul_by_s c ON c.s = a.s AND c.u = b.u
  JOIN ul_by_x d ON d.x = a.x JOIN ul_by_k e ON e.k = a.k AND e.x = d.x}),
		$expect,
		"ulid, sno, rsxid and ksuid exact through repartitioned INSERT ... SELECT and joins, binary protocol $binary");
}
# COPY in binary through the coordinator and a worker.
$coord->safe_psql('postgres', qq{
COPY (SELECT u, s, n, x, k FROM ul_local) TO '$base/ul.bin' (FORMAT binary);
TRUNCATE ul_by_u;
COPY ul_by_u FROM '$base/ul.bin' (FORMAT binary);});
is($coord->safe_psql('postgres',
		q{SELECT md5(string_agg(n || ' ' || u || ' ' || s || ' ' || x || ' ' || k, ',' ORDER BY n)) FROM ul_by_u}),
	$expect, 'ulid, sno, rsxid and ksuid exact through a binary COPY on the coordinator');
$w2->safe_psql('postgres', qq{TRUNCATE ul_by_u; COPY ul_by_u FROM '$base/ul.bin' (FORMAT binary);});
is($coord->safe_psql('postgres',
		q{SELECT md5(string_agg(n || ' ' || u || ' ' || s || ' ' || x || ' ' || k, ',' ORDER BY n)) FROM ul_by_u}),
	$expect, 'and on a worker');

# ---- Masking: one key file on every node.
my @sample = split /\n/, $coord->safe_psql('postgres',
	'SELECT id FROM local_sf ORDER BY id % 97, id LIMIT 40');
my $tokens = $coord->safe_psql('postgres',
	'SELECT string_agg(snowflake_mask(x), \',\') FROM unnest(\'{' . join(',', @sample) . '}\'::bigint[]) x');
my $count_tokens = "SELECT count(*) FROM t_sf WHERE snowflake_mask(id) = ANY ('{$tokens}'::text[])";
is($coord->safe_psql('postgres', $count_tokens), scalar(@sample),
	'one key file: the workers mask every ID to the token the coordinator makes');
is($coord->safe_psql('postgres', 'SELECT count(*) FROM t_sf WHERE snowflake_unmask(snowflake_mask(id)) = id'),
	$coord->safe_psql('postgres', 'SELECT count(*) FROM t_sf'),
	'and snowflake_unmask() in a filter on the workers finds every row');
my $one = (split /,/, $tokens)[0];
is($coord->safe_psql('postgres', "SELECT id FROM t_sf WHERE id = snowflake_unmask('$one')"),
	$sample[0], 'a lookup by token finds its row');
# A token made on the coordinator, unmasked in a filter on every shard of t_acct (its ID is not
# the distribution column: no pruning, the workers evaluate snowflake_unmask() themselves).
my $acct_id = $coord->safe_psql('postgres', 'SELECT min(id) FROM t_acct');
my $acct_token = $coord->safe_psql('postgres', "SELECT snowflake_mask($acct_id)");
my $by_token = "SELECT count(*), min(id) FROM t_acct WHERE id = snowflake_unmask('$acct_token')";
like($coord->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $by_token"),
	qr/Task Count: 4.*Filter: \(.*snowflake_unmask\('$acct_token'/s,
	'snowflake_unmask() of a token runs in the filter on the workers');
is($coord->safe_psql('postgres', $by_token), "1|$acct_id",
	'and finds the row of the coordinator\'s token there');
# Each node's fingerprint, every one read (run_command_on_all_nodes gives an ERROR's text as
# the result, with success false).
my $fingerprints = q{SELECT bool_and(success) AND bool_and(result ~ '^[0-9a-f]{16}$'),
  count(DISTINCT result) FROM run_command_on_all_nodes($$SELECT mask_key_fingerprint FROM snowflake_status()$$)};
is($coord->safe_psql('postgres', $fingerprints), 't|1',
	'every node shows the same mask_key_fingerprint');
# The second worker gets another key under the same id.
write_key($w2, random_key(), $retired_key);
my $fp_coord = status_of($coord, 'mask_key_fingerprint');
$w2->reload;
poll_until(sub { status_of($w2, 'mask_key_fingerprint') ne $fp_coord })
  or die 'the second worker kept its key';
is(status_of($w2, 'mask_key_id || \'|\' || mask_keys'), status_of($coord, 'mask_key_id || \'|\' || mask_keys'),
	'another key file with the same key id: the id and count alone do not tell');
is($coord->safe_psql('postgres', $fingerprints), 't|2',
	'the fingerprints do: that worker shows another one');
cmp_ok($coord->safe_psql('postgres', $count_tokens), '<', scalar(@sample),
	'and its shards mask to other tokens');
# Its active key back, but another retired key (which unmasks the tokens of before the
# rotation): the same active key, key id and key count, and still another fingerprint.
write_key($w2, $mask_key, random_key());
$w2->reload;
ok(poll_until(sub { $coord->safe_psql('postgres', $count_tokens) == scalar(@sample) }),
	'the second worker back on the active key masks like the others');
is($coord->safe_psql('postgres', $fingerprints), 't|2',
	'but its fingerprint shows that its retired key differs');
write_key($w2, $mask_key, $retired_key);
$w2->reload;
poll_until(sub { status_of($w2, 'mask_key_fingerprint') eq $fp_coord })
  or die 'the second worker did not take the key file back';

# ---- A worker SIGKILLed under load, and started again.
my @load = (
	session($coord, 'kill_coord', 200, "INSERT INTO t_sf (path) VALUES ('kill_coord');\n"),
	session($w1, 'kill_w1', 400, "INSERT INTO t_sf (path) VALUES ('kill_w1');\n"));
poll_until(sub {
	$coord->safe_psql('postgres', q{SELECT count(*) FROM t_sf WHERE path = 'kill_w1'}) >= 50 })
  or die 'no load through the first worker';
kill9_and_wait($w1);
$_->[1]->finish foreach @load;
$w1->start;
my $again = wait_held($w1);
note("the first worker leased shard $again after the restart (before: $shard_of{w1})");
ok($again >= 0 && $again <= 7, 'the killed worker, started again, holds a lease');
$w1->safe_psql('postgres', q{INSERT INTO t_sf (path) SELECT 'after_kill' FROM generate_series(1, 200)});
is($coord->safe_psql('postgres', q{SELECT count(*), count(DISTINCT snowflake_shard(id)) FROM t_sf WHERE path = 'after_kill'}),
	'200|1', 'writes through it go on, on its new lease');
is($coord->safe_psql('postgres', q{SELECT snowflake_shard(id) FROM t_sf WHERE path = 'after_kill' LIMIT 1}),
	$again, 'on the shard it leased');
$coord->safe_psql('postgres', q{TRUNCATE all_ids;
INSERT INTO all_ids SELECT id FROM t_sf;
INSERT INTO all_ids SELECT id FROM t_acct;
INSERT INTO all_ids SELECT id FROM t_ref;});
($rows, $distinct) = split /\|/, $coord->safe_psql('postgres',
	'SELECT count(*), count(DISTINCT id) FROM all_ids');
is($distinct, $rows, "$rows IDs over the whole run, the kill included: none repeats");

# ---- A STABLE wrapper of snowflake() (the README's pitfall), against snowflake() itself.
$coord->safe_psql('postgres', q{
CREATE FUNCTION stable_id() RETURNS bigint LANGUAGE sql STABLE AS 'SELECT snowflake()';
CREATE TABLE t_fold (k int, p text, a bigint DEFAULT snowflake(), b bigint DEFAULT stable_id());
SELECT create_distributed_table('t_fold', 'k', colocate_with := 't_acct');
INSERT INTO t_fold (k, p) VALUES (1, 'values'), (2, 'values'), (3, 'values'), (4, 'values'), (5, 'values'), (6, 'values');
INSERT INTO t_fold (k, p) SELECT account, 'colocated' FROM t_src;
INSERT INTO t_fold (k, p) SELECT n, 'coordinator' FROM t_src ORDER BY n LIMIT 50;
INSERT INTO t_fold (k, p, a, b) SELECT account, 'explicit', snowflake(), stable_id() FROM t_src;
CREATE TABLE t_fold2 (k int, p text, a bigint, b bigint);
SELECT create_distributed_table('t_fold2', 'k', colocate_with := 't_acct');
INSERT INTO t_fold2 SELECT k, 'update', 0, 0 FROM t_fold;
UPDATE t_fold2 SET b = stable_id();
});
$w1->safe_psql('postgres', q{INSERT INTO t_fold (k, p) VALUES (1, 'w1values'), (2, 'w1values'), (3, 'w1values'), (4, 'w1values');});
is( $coord->safe_psql(
		'postgres', q{
SELECT string_agg(p || ':' || n || '/' || a || '/' || b, ' ' ORDER BY p) FROM (
  SELECT p, count(*) AS n, count(DISTINCT a) AS a, count(DISTINCT b) AS b
    FROM (SELECT * FROM t_fold UNION ALL SELECT * FROM t_fold2) f GROUP BY p) s}),
	'colocated:200/200/200 coordinator:50/50/50 explicit:200/200/200 update:456/1/1 values:6/6/6 w1values:4/4/4',
	'INSERTs evaluate snowflake() and a STABLE wrapper per row; a multi-shard UPDATE folds the wrapper to one value');
my ($ret, $out, $err) = $coord->psql('postgres', 'UPDATE t_fold2 SET a = snowflake()');
like($err, qr/ERROR:  functions used in UPDATE queries on distributed tables must not be VOLATILE/,
	'and refuses snowflake() itself there');

# ---- Config mode: a distinct snowflake.shard_id per node.
my %config_shard = (coord => 100, w1 => 101, w2 => 102);
foreach my $node (@nodes)
{
	$node->append_conf('postgresql.conf',
		"snowflake.shard_source = config\nsnowflake.shard_id = $config_shard{$node->name}\n");
	$node->restart;
}
foreach my $node (@nodes)
{
	$node->safe_psql('postgres',
		"INSERT INTO t_sf (path) SELECT 'config_${\ $node->name}' FROM generate_series(1, 100)");
	$node->safe_psql('postgres', "COPY t_sf (path) FROM '$base/coord_copy_binary.bin' (FORMAT binary)")
	  if $node == $coord;
}
is($coord->safe_psql('postgres', q{
SELECT string_agg(path || ':' || shards, ' ' ORDER BY path) FROM (
  SELECT path, string_agg(DISTINCT snowflake_shard(id)::text, ',') AS shards FROM t_sf
   WHERE path LIKE 'config_%' OR (path = 'coord_copy_binary' AND snowflake_shard(id) >= 100)
   GROUP BY path) s}),
	'config_coord:100 config_w1:101 config_w2:102 coord_copy_binary:100',
	'config mode: each node evaluates on its own snowflake.shard_id');
is($coord->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM t_sf'), 't',
	'and no ID repeats');

done_testing();
