# The one setting that keeps servers apart is never silently replaced by its default: an
# invalid snowflake.shard_id or snowflake.epoch in the configuration file makes snowflake()
# refuse with the file's value (PostgreSQL itself would run on the default, with a line in
# the log), until it is corrected and reloaded; a shard id set nowhere is said once, and
# snowflake_status() shows where it came from.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $node = snowflake_node('settings');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# Set nowhere: shard 0, said once (to the first session that generates), and in the status.
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT snowflake()');
is($ret, 0, 'with no shard id set, snowflake() generates');
like($stderr, qr/WARNING:  snowflake.shard_id is not set: snowflake\(\) issues IDs on shard 0/,
	'and says so');
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT snowflake()');
is($stderr, '', 'once: the next session hears nothing');
is($node->safe_psql('postgres', 'SELECT shard_id, shard_id_source FROM snowflake_status()'),
	'0|default', 'snowflake_status() shows the shard and that it is the default');

# An out-of-range shard id in the configuration file.
$node->append_conf('postgresql.conf', "snowflake.shard_id = 9000\n");
$node->restart;
foreach my $call ('snowflake()', 'snowflake_uuidv7()')
{
	($ret, $stdout, $stderr) =
	  $node->psql('postgres', "SELECT $call", extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	if ($call eq 'snowflake()')
	{
		like($stderr,
			qr/ERROR:  22023: snowflake.shard_id is "9000" in the configuration, which is not a valid value.*HINT:  Correct snowflake.shard_id/s,
			'snowflake.shard_id = 9000 in the file: snowflake() refuses, naming the value');
	}
	else
	{
		is($ret, 0, 'the shard id does not concern snowflake_uuidv7()');
	}
}
like($node->safe_psql('postgres', 'SELECT generation_refused FROM snowflake_status()'),
	qr/snowflake.shard_id is "9000" in the configuration/, 'snowflake_status() says why');
like(slurp_file($node->logfile), qr/WARNING: .*9000.*"snowflake.shard_id"/,
	'(where PostgreSQL itself only logs it and runs on the default)');

# Corrected and reloaded: generates on the new shard, in new sessions and in this one.
$node->append_conf('postgresql.conf', "snowflake.shard_id = 12\n");
$node->reload;
$node->poll_query_until('postgres', q{SELECT current_setting('snowflake.shard_id') = '12'})
  or die 'snowflake.shard_id was not reloaded';
is($node->safe_psql('postgres', 'SELECT snowflake_shard(snowflake())'), '12',
	'corrected in the file and reloaded, it generates on that shard');
is($node->safe_psql('postgres', 'SELECT shard_id_source FROM snowflake_status()'),
	'configuration file', 'from the configuration file');

# A malformed epoch: every kind refuses (the reservation records the epoch).
$node->append_conf('postgresql.conf', "snowflake.epoch = '2020-01-01'\n");
$node->restart;
foreach my $call ('snowflake()', 'snowflake_uuidv7()', 'ulid()')
{
	($ret, $stdout, $stderr) =
	  $node->psql('postgres', "SELECT $call", extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($stderr,
		qr/ERROR:  22023: snowflake.epoch is "2020-01-01" in the configuration, which is not a valid value/,
		"a malformed snowflake.epoch: $call refuses, naming the value");
}
$node->append_conf('postgresql.conf', "snowflake.epoch = '1577836800000'\n");
$node->restart;
like($node->safe_psql('postgres', 'SELECT snowflake()'), qr/^\d+$/, 'corrected, it generates');

$node->stop;
done_testing();
