# snowflake.epoch: Instagram's epoch continues a table whose IDs came from Instagram's
# PL/pgSQL next_id() with larger IDs; an epoch in the future is an ERROR, not a wrong ID.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;
use File::Basename qw(dirname);
use Time::HiRes qw(time);

my $node = snowflake_node('epoch', qq{
snowflake.epoch = '1314220021721'
snowflake.shard_id = 5
});
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
# test/instagram_next_id.sql: Instagram's next_id() as published.
$node->safe_psql('postgres', slurp_file(dirname(__FILE__) . '/../instagram_next_id.sql'));
my $made_from = time;    # every ID below is made at this time or later
$node->safe_psql('postgres', q{
CREATE TABLE insta (id bigint PRIMARY KEY DEFAULT insta_next_id(), src text);
INSERT INTO insta (src) SELECT 'next_id' FROM generate_series(1, 1000);
});
$node->safe_psql('postgres', q{
ALTER TABLE insta ALTER COLUMN id SET DEFAULT snowflake();
INSERT INTO insta (src) SELECT 'snowflake' FROM generate_series(1, 1000);
});

is( $node->safe_psql(
		'postgres',
		q{SELECT max(id) FILTER (WHERE src = 'next_id') < min(id) FILTER (WHERE src = 'snowflake') FROM insta}),
	't',
	'snowflake() continues above next_id() with the same epoch');
# (Within a minute of the time they were made in, measured, however long that took.)
is( $node->safe_psql(
		'postgres',
		qq{SELECT count(*) FROM insta
		   WHERE snowflake_timestamp(id) BETWEEN to_timestamp($made_from) - interval '1 minute'
		                                     AND clock_timestamp() + interval '1 minute'
		     AND snowflake_shard(id) = 5}),
	'2000',
	'both kinds decode to the present time and shard 5 with the Instagram epoch');
is($node->safe_psql('postgres', 'SHOW snowflake.epoch'), '1314220021721', 'the setting reads back');

# An epoch after the present: generation refuses instead of issuing a wrapped ID. (The
# reservation records the epoch its IDs were issued with, and a server whose epoch changed
# starts but refuses to generate: 009_lead_and_writes.pl. Here the old IDs are given up with the
# file.)
$node->stop;
unlink($node->data_dir . '/snowflake.reservation') or die;
$node->append_conf('postgresql.conf', "snowflake.epoch = '4102444800000'");
$node->start;
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake()");
isnt($ret, 0, 'snowflake() fails when the clock is before the epoch');
like($stderr, qr/ERROR:  22008: system clock is before snowflake.epoch/, 'with a clear error');

$node->stop;
done_testing();
