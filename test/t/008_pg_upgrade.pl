# pg_upgrade from an older major: pg_upgrade carries the tables over but not the reservation
# file, so the documented step copies it into the new data directory before the new server
# first starts. Then, with the clock 10 minutes behind and a shard that ran ahead of the
# clock, every new ID of every kind is above every ID of the old cluster, and the old ulid
# data and its index are read by the new server.
use strict;
use warnings FATAL => 'all';
use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $old_install = $ENV{SNOWFLAKE_UPGRADE_FROM} // '';
plan skip_all => 'SNOWFLAKE_UPGRADE_FROM names no older PostgreSQL with the extension installed '
  . '(scripts/test.sh sets it from SNOWFLAKE_UPGRADE_FROM_MAJOR, which scripts/matrix.sh sets '
  . 'where two majors meet in one Debian suite)'
  unless $old_install ne '' && -x "$old_install/bin/pg_ctl";
my $faketime = faketime_library();
plan skip_all => $no_faketime unless $faketime;

my $conf = qq{
shared_preload_libraries = 'snowflake'
snowflake.shard_id = 3
snowflake.max_lead = '10s'
};

# (Not snowflake_node(): the old server runs from the older installation.)
my $old = PostgreSQL::Test::Cluster->new('old', install_path => $old_install);
$old->init;
$old->append_conf('postgresql.conf', $conf);
$old->start;
# Shard 9 runs about 3 s ahead of the clock (3,000,000 IDs of one shard, made in well under
# that).
$old->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (sf bigint, v7 uuid, ul ulid, x rsxid, k ksuid);
INSERT INTO ids SELECT snowflake(), snowflake_uuidv7(), ulid(), rsxid(), ksuid() FROM generate_series(1, 10000);
INSERT INTO ids (sf) SELECT max(s) FROM (SELECT snowflake(9) AS s FROM generate_series(1, 3000000)) x;
INSERT INTO ids SELECT snowflake(), snowflake_uuidv7(), ulid(), rsxid(), ksuid() FROM generate_series(1, 10000);
CREATE INDEX ids_ul ON ids (ul);
});
my $old_max_ms = $old->safe_psql('postgres',
	'SELECT round(extract(epoch FROM max(snowflake_timestamp(sf))) * 1000) FROM ids');
my $old_major = $old->pg_version->major;
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('new');
$new->init;
$new->append_conf('postgresql.conf', $conf);
ok($new->pg_version->major > $old_major, "upgrading $old_major to " . $new->pg_version->major);

# pg_upgrade writes its logs into the new data directory (and the current one): run it in a
# folder of the test's.
my $workdir = PostgreSQL::Test::Utils::tempdir;
chdir $workdir or die;
# pg_upgrade, and the servers it starts, with the clock 10 minutes back.
with_clock(
	'-10m',
	sub {
		command_ok(
			[
				'pg_upgrade', '--no-sync',
				'-d', $old->data_dir, '-D', $new->data_dir,
				'-b', $old->config_data('--bindir'), '-B', $new->config_data('--bindir'),
				'-s', $new->host, '-p', $old->port, '-P', $new->port
			],
			'pg_upgrade');
	});

# pg_upgrade carries no reservation over (no file, no WAL), and the extension it restores
# runs no install script: the new cluster has no file, and refuses to generate rather than
# start from its own clock. The documented step copies the old one.
sub reserved
{
	my ($node) = @_;
	my $file = $node->data_dir . '/snowflake.reservation';
	return -f $file ? (split /\n/, slurp_file($file))[1] : 0;
}
ok(!-e $new->data_dir . '/snowflake.reservation', 'pg_upgrade leaves the new cluster without a reservation file');
ok(reserved($old) > $old_max_ms, 'the old cluster\'s is above the old IDs');
$new->start;
my ($ret, $stdout, $stderr) =
  $new->psql('postgres', 'SELECT snowflake()', extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($stderr, qr/ERROR:  55000: the snowflake reservation file "snowflake.reservation" is missing.*HINT:  Copy the file/s,
	'without the copy, the new cluster refuses to generate, with a hint');
$new->stop;
ok(!-e $new->data_dir . '/snowflake.reservation', 'and writes no file of its own');
copy($old->data_dir . '/snowflake.reservation', $new->data_dir . '/snowflake.reservation')
  or die "copy: $!";

start_with_clock($new, '-10m');
new_ids_above_old($new, 9,
	'with the clock 10 minutes back, every new ID of every kind is above every old one');

# The old ulid column and its index, read by the new server's build of the type.
my $probe = $new->safe_psql('postgres', 'SELECT ul FROM ids WHERE ul IS NOT NULL ORDER BY ul LIMIT 1 OFFSET 5000');
is( $new->safe_psql(
		'postgres', qq{
SET enable_seqscan = off;
SELECT count(*) FROM ids WHERE ul <= '$probe'}),
	'5001',
	'the old ulid index answers');
like(
	$new->safe_psql('postgres',
		q{SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT count(*) FROM ids WHERE ul <= '00000000000000000000000000'}),
	qr/Index Only Scan using ids_ul|Index Scan using ids_ul|Bitmap Index Scan on ids_ul/,
	'through the index');

$new->stop;
done_testing();
