# The extension is trusted: a database owner who is not a superuser creates it, and its objects
# then belong to the bootstrap superuser. The functions PUBLIC may not call that the docs say
# "the extension's owner grants" (snowflake(shard), snowflake_observe(), its trigger and
# snowflake_replica_guard()) are that owner's to call and to grant; a role without the grant
# is refused with a HINT saying who grants it. Every other function but the monitoring ones
# (pg_monitor's) and snowflake_reservation_create() (a superuser's) is PUBLIC's.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $node = snowflake_node('owner', "snowflake.shard_id = 3\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE ROLE dbowner LOGIN;
CREATE ROLE app LOGIN;
CREATE DATABASE appdb OWNER dbowner;
});
my $as_owner = $node->connstr('appdb') . ' user=dbowner';
my $as_app = $node->connstr('appdb') . ' user=app';
sub as
{
	my ($connstr, $sql) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('appdb', $sql, connstr => $connstr,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return ($ret, $stdout, $stderr);
}

my ($ret, $stdout, $stderr) = as($as_owner, 'CREATE EXTENSION snowflake');
is($ret, 0, "the database owner, not a superuser, creates the extension: $stderr");
is( $node->safe_psql('appdb', q{
SELECT r.rolname, o.rolsuper FROM pg_extension e JOIN pg_roles r ON r.oid = e.extowner,
       pg_proc p JOIN pg_roles o ON o.oid = p.proowner
 WHERE e.extname = 'snowflake' AND p.oid = 'snowflake(integer)'::regprocedure}),
	'dbowner|t', 'the extension is its; the functions belong to the bootstrap superuser');

# The owner calls and grants each one.
($ret, $stdout, $stderr) = as($as_owner, 'SELECT snowflake_shard(snowflake(42))');
is($stdout, '42', "the extension's owner issues on a shard it names: $stderr");
my @owner_grants = ('snowflake(integer)', 'snowflake_observe(bigint)', 'snowflake_observe(uuid)',
	'snowflake_observe(ulid)', 'snowflake_observe(sno)', 'snowflake_observe_trigger()',
	'snowflake_replica_guard()');

# Without a grant, a role is refused with who grants it.
($ret, $stdout, $stderr) = as($as_app, 'SELECT snowflake(42)');
like($stderr,
	qr/ERROR:  42501: permission denied for function snowflake\n.*HINT:  snowflake\(shard\) issues on a shard the caller chooses: the extension's owner \(see \\dx snowflake\) grants it: GRANT EXECUTE ON FUNCTION snowflake\(integer\) TO role\./s,
	'a role without the grant is refused snowflake(42), with a HINT that says who grants it');
($ret, $stdout, $stderr) = as($as_app, 'SELECT snowflake_observe(1::bigint)');
like($stderr, qr/HINT:  snowflake_observe\(\) moves the IDs' clock of every role: the extension's owner/,
	'and snowflake_observe() likewise');
($ret, $stdout, $stderr) = as($as_app, 'SELECT * FROM snowflake_status()');
like($stderr, qr/HINT:  It is pg_monitor's: GRANT pg_monitor TO role\./,
	'snowflake_status() names pg_monitor');
($ret, $stdout, $stderr) = as($as_app, 'SELECT snowflake_reservation_create()');
like($stderr, qr/HINT:  Only a superuser may call it\./, 'snowflake_reservation_create() a superuser');

foreach my $f (@owner_grants)
{
	($ret, $stdout, $stderr) = as($as_owner, "GRANT EXECUTE ON FUNCTION $f TO app");
	is($ret, 0, "the extension's owner grants $f: $stderr");
}
($ret, $stdout, $stderr) = as($as_app, 'SELECT snowflake_shard(snowflake(42))');
is($stdout, '42', "granted, the role issues on shard 42: $stderr");
($ret, $stdout, $stderr) = as($as_owner, 'REVOKE EXECUTE ON FUNCTION snowflake(integer) FROM app');
is($ret, 0, 'and the owner takes the grant back');
($ret, $stdout, $stderr) = as($as_app, 'SELECT snowflake(42)');
like($stderr, qr/42501/, 'after which the role is refused again');

# Exactly these are not PUBLIC's: the owner's grants, the monitoring functions and the
# reservation's creation. Every other function of the extension is.
is( $node->safe_psql('appdb', q{
SELECT string_agg(p.oid::regprocedure::text, ', ' ORDER BY p.oid::regprocedure::text COLLATE "C")
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE NOT has_function_privilege('public', p.oid, 'EXECUTE')}),
	'snowflake(integer), snowflake_observe(bigint), snowflake_observe(sno), '
	  . 'snowflake_observe(ulid), snowflake_observe(uuid), snowflake_observe_trigger(), '
	  . 'snowflake_replica_guard(), snowflake_reservation_create(), snowflake_status(), '
	  . 'snowflake_streams()',
	'the functions PUBLIC may not call are these ten');

$node->stop;
done_testing();
