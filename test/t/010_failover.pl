# Every path that copies a server: the reservation travels through WAL, so a promoted
# streaming standby, a promoted cascading standby, a point-in-time recovery from a base
# backup and archived WAL, and a base backup started as a new server, each with its clock
# 10 minutes behind and with no operator step, issue every ID of every kind above every ID
# in the data they hold, including a shard that ran ahead of the clock. A standby
# without the library preloaded stops with a clear error instead of guessing.
use strict;
use warnings FATAL => 'all';
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $faketime = faketime_library();
plan skip_all => $no_faketime unless $faketime;

my $primary = snowflake_node('primary', qq{
snowflake.shard_id = 3
snowflake.max_lead = '10s'
snowflake.reservation_window = '100ms'
}, allows_streaming => 1, has_archiving => 1);
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (sf bigint, v7 uuid, ul ulid, x rsxid, k ksuid);
});
# Before any ID: a point-in-time recovery from here replays every reservation.
$primary->backup('early');

# IDs of every kind, and shard 9 running more than 1.5 s ahead of the clock: batches of its
# IDs until it does, since how fast a batch is made depends on the machine (a shard's
# sequence holds 1,024 IDs a millisecond, and a backend makes several times that); its
# highest ID goes into the table.
$primary->safe_psql('postgres', q{
INSERT INTO ids SELECT snowflake(), snowflake_uuidv7(), ulid(), rsxid(), ksuid() FROM generate_series(1, 10000);
DO $$
DECLARE top bigint := 0;
BEGIN
  FOR batch IN 1 .. 60 LOOP
    top := greatest(top, (SELECT max(s) FROM (SELECT snowflake(9) AS s FROM generate_series(1, 500000)) x));
    EXIT WHEN (SELECT lead_ms FROM snowflake_streams() WHERE shard = 9) > 1500;
  END LOOP;
  INSERT INTO ids (sf) VALUES (top);
END $$;
INSERT INTO ids SELECT snowflake(), snowflake_uuidv7(), ulid(), rsxid(), ksuid() FROM generate_series(1, 10000);
});
ok( $primary->safe_psql('postgres', q{SELECT lead_ms FROM snowflake_streams() WHERE shard = 9}) > 1000,
	'shard 9 runs ahead of the clock on the primary');

# Copies, all taken with the IDs above in their data.
$primary->backup('late');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'late', has_streaming => 1);
my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init_from_backup($primary, 'late');
my $pitr = PostgreSQL::Test::Cluster->new('pitr');
# (standby => 0: a targeted recovery, which ends at the end of the archive and promotes.)
$pitr->init_from_backup($primary, 'early', has_restoring => 1, standby => 0);

# Every server below starts with its clock 10 minutes behind the primary's.
sub start_behind
{
	my ($node) = @_;
	start_with_clock($node, '-10m');
}

start_behind($standby);
$primary->wait_for_catchup($standby);
$standby->backup('from_standby');
my $cascade = PostgreSQL::Test::Cluster->new('cascade');
$cascade->init_from_backup($standby, 'from_standby', has_streaming => 1);
start_behind($cascade);

# More IDs after the standbys started, once the clock has passed the reservation that the
# copies' files hold: only the reservations replayed from WAL cover these.
my $file_reserved = $primary->safe_psql('postgres',
	q{SELECT extract(epoch FROM max(reserved_until)) FROM snowflake_status()});
sleep 1 while time < $file_reserved + 0.5;
$primary->safe_psql('postgres', q{
INSERT INTO ids SELECT snowflake(), snowflake_uuidv7(), ulid(), rsxid(), ksuid() FROM generate_series(1, 10000);
INSERT INTO ids (sf) SELECT max(s) FROM (SELECT snowflake(9) AS s FROM generate_series(1, 1000000)) x;
});
ok( $primary->safe_psql('postgres',
		"SELECT extract(epoch FROM snowflake_timestamp(max(sf))) > $file_reserved FROM ids"),
	'the later IDs are above the reservation in the copies\' files');
$primary->wait_for_catchup($standby);
# (From a standby, the target is the primary's position: PostgreSQL 15's test module would
# ask the standby for a current WAL position, which a standby has not.)
$standby->wait_for_catchup($cascade, 'replay', $primary->lsn('insert'));

# A standby without the library: the first reservation it replays stops it, with the
# server's own error for a resource manager it does not know.
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init_from_backup($primary, 'late', has_streaming => 1);
$plain->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
ok(start_expecting_stop($plain, qr/resource manager with ID 219 not registered/),
	'a standby without the library stops at the first reservation it replays');
like(slurp_file($plain->logfile),
	qr/resource manager with ID 219 not registered\n.*HINT:  Include the extension module that implements this resource manager in "?shared_preload_libraries"?/,
	'with an error that names the remedy');

# Archive everything the primary wrote, for the point-in-time recovery, then fail it.
my $walfile = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
  or die 'the WAL was not archived';
$primary->stop('immediate');

# New IDs on a copy, with its clock 10 minutes behind: each kind above every one in the data.
sub check_above
{
	my ($node, $what) = @_;
	new_ids_above_old($node, 9,
		"$what: with the clock 10 minutes behind, every new ID of every kind is above every ID in its data");
}

# (The point-in-time recovery goes first: a promoted standby would archive a timeline of
# its own beside the primary's.)
start_behind($pitr);
$pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
is($pitr->safe_psql('postgres', 'SELECT count(*) FROM ids'), '30002',
	'the point-in-time recovery replayed every row from the archive');
check_above($pitr, 'a point-in-time recovery from a base backup and archived WAL');

start_behind($copy);
check_above($copy, 'a base backup started as a new server');

$cascade->promote;
$cascade->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
check_above($cascade, 'a promoted cascading standby');
is( $cascade->safe_psql('postgres',
		q{SELECT bool_and(reservation_replayed_until >= (SELECT snowflake_timestamp(max(sf)) FROM ids))
		    FROM snowflake_status()}),
	't', 'snowflake_status() shows the reservation replayed from WAL, above the replayed IDs');

$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
check_above($standby, 'a promoted streaming standby');

$_->stop for ($cascade, $standby, $pitr, $copy);
done_testing();
