# sno(), rsxid() and ksuid() with more than one shard in use on one server (snowflake.shard_id
# set per role, a session's own, a reload): each shard has its own stream
# (src/core/stream_shard.hpp), so values of one shard never wait for another's. With one
# stream per kind, each change of shard ended the stream's unit, and at snowflake.max_lead
# every value waited for the clock: two roles calling rsxid() made 47 values in 6 s. No check
# here is timed: a wait for the clock is counted in snowflake_status().lead_waits, which must
# not move (each shard's stream is far below its capacity here); the rates are
# bench/two_shards.sh's.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $node = snowflake_node('two_shards', "snowflake.shard_id = 1\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE ROLE app5 LOGIN;
CREATE ROLE app6 LOGIN;
ALTER ROLE app5 SET snowflake.shard_id = 5;
ALTER ROLE app6 SET snowflake.shard_id = 6;
CREATE TABLE made (n bigserial, role text NOT NULL DEFAULT current_user,
                   x rsxid UNIQUE DEFAULT rsxid(), k ksuid UNIQUE DEFAULT ksuid(),
                   s sno UNIQUE DEFAULT sno(0));
GRANT INSERT, SELECT ON made TO app5, app6;
GRANT USAGE ON SEQUENCE made_n_seq TO app5, app6;
});

sub lead_waits
{
	return $node->safe_psql('postgres', 'SELECT lead_waits FROM snowflake_status()');
}

# The values of each shard strictly increasing in the order they were made (n), for every
# kind; a KSUID's order is its first 9 bytes' (time, shard, counter), the rest is random.
my $in_order = q{
SELECT count(*) FILTER (WHERE px >= x OR pk >= k9 OR ps >= s)
  FROM (SELECT x, substr(k::bytea, 1, 9) AS k9, s,
               lag(x) OVER w AS px, lag(substr(k::bytea, 1, 9)) OVER w AS pk, lag(s) OVER w AS ps
          FROM %s WINDOW w AS (PARTITION BY %s ORDER BY n)) v};

# 1. One session changing its shard before every value: 100 of each kind on shards 5 and 6 in
# turn. Before, every value went to the next unit and, past max_lead, waited for the clock.
my $waits = lead_waits();
$node->safe_psql('postgres', q{
CREATE TABLE alternating (n int, shard int, x rsxid, k ksuid, s sno);
DO $$
BEGIN
  FOR i IN 1..200 LOOP
    PERFORM set_config('snowflake.shard_id', (5 + i % 2)::text, false);
    INSERT INTO alternating VALUES (i, 5 + i % 2, rsxid(), ksuid(), sno(0));
  END LOOP;
END $$;
});
is(lead_waits(), $waits, 'a session alternating between two shards never waits for the clock');
is( $node->safe_psql('postgres', q{
SELECT count(*), count(DISTINCT x), count(DISTINCT k), count(DISTINCT s),
       bool_and((rsxid_decode(x)).machine = ('\x0000' || lpad(to_hex(shard), 2, '0'))::bytea),
       bool_and((sno_decode(s)).partition = shard)
  FROM alternating}),
	'200|200|200|200|t|t',
	'each value on the shard the session had, none repeated');
is($node->safe_psql('postgres', sprintf($in_order, 'alternating', 'shard')),
	'0', 'each shard\'s values increase in the order they were made');

# 2. Two roles on shards 5 and 6, each a pgbench client inserting rows as fast as it can, at
# once: no value repeated (the UNIQUE indexes), each on its role's shard, each role's in order,
# and no wait for the clock.
my $dir = PostgreSQL::Test::Utils::tempdir;
open(my $fh, '>', "$dir/insert.sql") or die "$dir/insert.sql: $!";
print $fh "INSERT INTO made DEFAULT VALUES;\n";
close $fh;
sub start_pgbench
{
	my ($role, $out, $err) = @_;
	return IPC::Run::start(
		[ 'pgbench', '--no-vacuum', '--client=1', '--jobs=1', '--transactions=5000',
		  '--file', "$dir/insert.sql", '-h', $node->host, '-p', $node->port, '-U', $role,
		  'postgres' ],
		'>', $out, '2>', $err);
}
$waits = lead_waits();
my ($out5, $err5, $out6, $err6) = ('', '', '', '');
my $h5 = start_pgbench('app5', \$out5, \$err5);
my $h6 = start_pgbench('app6', \$out6, \$err6);
ok($h5->finish, "pgbench as app5: $err5");
ok($h6->finish, "pgbench as app6: $err6");
is(lead_waits(), $waits, 'two roles on two shards at once never wait for the clock');
is( $node->safe_psql('postgres', q{
SELECT role, count(*),
       bool_and((rsxid_decode(x)).machine = CASE role WHEN 'app5' THEN '\x000005'::bytea ELSE '\x000006'::bytea END),
       bool_and(substr((ksuid_decode(k)).payload, 1, 2) = CASE role WHEN 'app5' THEN '\x0005'::bytea ELSE '\x0006'::bytea END),
       bool_and((sno_decode(s)).partition = CASE role WHEN 'app5' THEN 5 ELSE 6 END)
  FROM made GROUP BY role ORDER BY role}),
	"app5|5000|t|t|t\napp6|5000|t|t|t",
	'each role\'s 5,000 rows carry its shard, none repeated');
is($node->safe_psql('postgres', sprintf($in_order, 'made', 'role')),
	'0', 'each role\'s values increase in the order it made them');
is( $node->safe_psql('postgres', q{
SELECT kind, shard FROM snowflake_streams() WHERE kind IN ('sno', 'rsxid', 'ksuid') ORDER BY 1, 2}),
	"ksuid|5\nksuid|6\nrsxid|5\nrsxid|6\nsno|5\nsno|6",
	'snowflake_streams() has a row per shard\'s stream');

# 3. A reload that changes the server's shard while the role on shard 5 goes on: the server's
# sessions move to shard 2, shard 5 keeps its stream, and nothing waits.
$node->safe_psql('postgres', q{
CREATE TABLE reloaded (n serial, x rsxid DEFAULT rsxid(), k ksuid DEFAULT ksuid(), s sno DEFAULT sno(0));
INSERT INTO reloaded (x) SELECT rsxid() FROM generate_series(1, 100);
});
$waits = lead_waits();
($out5, $err5) = ('', '');
$h5 = start_pgbench('app5', \$out5, \$err5);
$node->append_conf('postgresql.conf', "snowflake.shard_id = 2\n");
$node->reload;
$node->poll_query_until('postgres', 'SHOW snowflake.shard_id', '2')
  or die 'the reload did not reach new sessions';
$node->safe_psql('postgres',
	'INSERT INTO reloaded (x) SELECT rsxid() FROM generate_series(1, 100)');
ok($h5->finish, "pgbench as app5 across the reload: $err5");
is(lead_waits(), $waits, 'a reload that changes the shard makes nothing wait');
is( $node->safe_psql('postgres', q{
SELECT string_agg(DISTINCT encode((rsxid_decode(x)).machine, 'hex'), ','
                  ORDER BY encode((rsxid_decode(x)).machine, 'hex'))
  FROM reloaded}),
	'000001,000002',
	'the server\'s values before the reload on shard 1, after it on shard 2');
# Across shards the promise is the time unit's order, as between two servers: no value of the
# new shard in a second before the last of the old one's.
is( $node->safe_psql('postgres', q{
SELECT max(rsxid_timestamp(x)) FILTER (WHERE n <= 100) <= min(rsxid_timestamp(x)) FILTER (WHERE n > 100),
       max(ksuid_timestamp(k)) FILTER (WHERE n <= 100) <= min(ksuid_timestamp(k)) FILTER (WHERE n > 100),
       max(sno_timestamp(s)) FILTER (WHERE n <= 100) <= min(sno_timestamp(s)) FILTER (WHERE n > 100)
  FROM reloaded}),
	't|t|t', 'the server\'s values after the reload are in no earlier unit than those before');
is($node->safe_psql('postgres', sprintf($in_order, 'made', 'role')),
	'0', 'the role on shard 5 stays in order across the reload');

$node->stop;
done_testing();
