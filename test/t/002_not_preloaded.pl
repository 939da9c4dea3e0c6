# Without shared_preload_libraries: CREATE EXTENSION works, decoding works, and snowflake()
# (and sno(), rsxid() and ksuid(), whose values carry a shard too) raises an ERROR whose HINT names the setting: its
# shards are the server's, never a backend's
# (the 128-bit kinds run per backend: 004_uuidv7_ulid.pl), and that loss is never silent: a
# WARNING at CREATE EXTENSION, and one in each session at its first 128-bit value.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('not_preloaded');
$node->init;
$node->start;

my ($ret, $stdout, $stderr) = $node->psql('postgres', 'CREATE EXTENSION snowflake');
is($ret, 0, 'CREATE EXTENSION works');
like($stderr,
	qr/WARNING:  snowflake is not loaded via "shared_preload_libraries": snowflake_uuidv7\(\) and ulid\(\) will be in order within each session only\nDETAIL:  .*concurrent sessions interleave out of order.*\nHINT:  Add snowflake to shared_preload_libraries/s,
	'with a WARNING that says what is lost and how to fix it');
like($stderr,
	qr/DETAIL:  .*snowflake\(\), sno\(\), rsxid\(\), ksuid\(\), the ID blocks and snowflake_status\(\) refuse; decoding works\./s,
	'the WARNING names every call that refuses');

($ret, $stdout, $stderr) = $node->psql('postgres',
	'SELECT snowflake_uuidv7() IS NOT NULL; SELECT ulid() IS NOT NULL; SELECT snowflake_uuidv7() IS NOT NULL');
is($ret, 0, 'the 128-bit kinds work');
my @warnings = $stderr =~ /WARNING:  snowflake_uuidv7\(\) and ulid\(\) are in order within this session only: snowflake is not loaded via "shared_preload_libraries"/g;
is(scalar @warnings, 1, 'a session is told once, at its first 128-bit value')
  or diag($stderr);

foreach my $call ('snowflake()', 'snowflake(3)', 'sno()', 'rsxid()', 'ksuid()')
{
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT $call");
	isnt($ret, 0, "$call fails");
	like($stderr, qr/ERROR:  55000: snowflake must be loaded via "shared_preload_libraries"/,
		"$call: object_not_in_prerequisite_state");
	like($stderr, qr/HINT:  Add snowflake to shared_preload_libraries/, "$call: the hint names the setting");
}

is( $node->safe_psql(
		'postgres',
		"SELECT snowflake_shard(snowflake_at('2024-01-01') | (7 << 10)), snowflake_timestamp(0) = '2020-01-01 00:00+00'"
	),
	'7|t',
	'decoding and bounds work without preloading');

# What the README says works without the preload (where it runs): the decoders and bounds of
# every kind, the types, the backfill generators and TypeIDs; blocks refuse as snowflake() does.
is( $node->safe_psql(
		'postgres', q{SET timezone = 'UTC';
SELECT uuidv7_timestamp(uuidv7_at('2024-01-01')), ulid_timestamp(ulid_at('2024-01-01')),
       sno_timestamp(sno_at('2024-01-01')), (sno_decode('6ncg4s4cr5wwi222')).meta,
       (discord_decode(175928847299117063)).worker,
       uuidv7_timestamp(uuidv7_from_time('2024-01-01')), ulid_timestamp(ulid_from_time('2024-01-01')),
       typeid_uuid(typeid('user', '01890a5d-ac96-774b-bcce-b302099a8057'))}),
	'2024-01-01 00:00:00+00|2024-01-01 00:00:00+00|2024-01-01 00:00:00+00|200|1|2024-01-01 00:00:00+00|2024-01-01 00:00:00+00|01890a5d-ac96-774b-bcce-b302099a8057',
	'the decoders, bounds, types, backfills and TypeIDs work without preloading');
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT * FROM snowflake_block(10)');
like($stderr, qr/ERROR:  snowflake must be loaded via "shared_preload_libraries"/, 'blocks refuse');
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT * FROM snowflake_status()');
like($stderr, qr/ERROR:  snowflake must be loaded via "shared_preload_libraries"/,
	'snowflake_status() refuses, as the WARNING says');

# The install script makes the reservation file, where no other database has the
# extension: a file missing while one has it was lost, and creating the extension in another
# database makes none (with the library preloaded, generation is then refused) until an
# operator accepts the clock.
my $file = $node->data_dir . '/snowflake.reservation';
ok(-f $file, 'CREATE EXTENSION makes the reservation file');
unlink($file) or die;
$node->safe_psql('postgres', 'CREATE DATABASE second');
($ret, $stdout, $stderr) = $node->psql('second', 'CREATE EXTENSION snowflake');
is($ret, 0, 'the extension is created in a second database');
like($stderr,
	qr/WARNING:  the snowflake reservation file "snowflake\.reservation" is missing, and database "postgres" has the extension.*once the library is preloaded, generation is refused/s,
	'with a WARNING that names the database that has it');
ok(!-f $file, 'and no file is made');
# A database that cannot be asked (here no background worker slot is free to ask it) counts
# as one that may hold IDs.
$node->append_conf('postgresql.conf', 'max_worker_processes = 0');
$node->restart;
$node->safe_psql('postgres', 'CREATE DATABASE third');
($ret, $stdout, $stderr) = $node->psql('third', 'CREATE EXTENSION snowflake');
is($ret, 0, 'the extension is created in a third database');
like($stderr,
	qr/WARNING:  the snowflake reservation file "snowflake\.reservation" is missing, and database "\w+" could not be checked for the extension\nDETAIL:  No background worker slot was free/,
	'with a WARNING that says which database could not be checked, and why');
ok(!-f $file, 'and no file is made');
$node->append_conf('postgresql.conf', 'max_worker_processes = 8');
$node->restart;
$node->safe_psql('second', 'SELECT snowflake_reservation_create()');
ok(-f $file, 'snowflake_reservation_create() makes it');

# Preloading it and restarting makes generation work in the same database.
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'snowflake'");
$node->restart;
like($node->safe_psql('postgres', 'SELECT snowflake()'), qr/^\d+$/, 'after preloading, snowflake() works');

$node->stop;
done_testing();
