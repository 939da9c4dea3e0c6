# Without shared_preload_libraries: CREATE EXTENSION works, decoding works, and generating
# raises an ERROR whose HINT names the setting; never a silent per-backend fallback.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('not_preloaded');
$node->init;
$node->start;

is($node->psql('postgres', 'CREATE EXTENSION snowflake'), 0, 'CREATE EXTENSION works');

foreach my $call ('snowflake()', 'snowflake(3)')
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

# Preloading it and restarting makes generation work in the same database.
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'snowflake'");
$node->restart;
like($node->safe_psql('postgres', 'SELECT snowflake()'), qr/^\d+$/, 'after preloading, snowflake() works');

$node->stop;
done_testing();
