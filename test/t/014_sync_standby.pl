# A synchronous standby: the reservation writer publishes a reservation only once the
# synchronous standby has confirmed its WAL record. A client takes IDs of every kind in a
# loop while the standby confirms; then the standby stops confirming, and the client goes on,
# with a burst that would run 20 s ahead: the primary's IDs stop at the end of the
# reservation the standby holds (55000 after snowflake.reservation_timeout), not past it.
# The primary's postmaster is then killed, and the standby, its clock 10 minutes behind,
# promoted: every ID it issues, of every kind, is above every ID the client got, and it
# generates at its usual pace. (Before the writer waited, IDs flowed on past the frozen
# standby, and the promoted standby issued IDs below them.)
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
plan skip_all => $no_faketime
  unless $faketime;

# (snowflake.reservation_timeout is generous while the standby confirms, however slowly; it is
# lowered to 2 s once it stops.)
my $primary = snowflake_node('primary', qq{
snowflake.shard_id = 3
snowflake.reservation_timeout = '${PostgreSQL::Test::Utils::timeout_default}s'
}, allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# 1,000,000 snowflake() in one statement: its time and the lead waits it caused.
sub pace
{
	my ($node) = @_;
	my $waits = status_of($node, 'lead_waits');
	my $started = time;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"SET statement_timeout = '60s'; SELECT count(snowflake()) FROM generate_series(1, 1000000)");
	return ($stdout, time - $started, status_of($node, 'lead_waits') - $waits);
}
my ($count, $secs, $waits) = pace($primary);
diag(sprintf('1,000,000 snowflake() on the primary: %.2f s, %d lead waits', $secs, $waits));

# The standby, its clock 10 minutes behind, connects as sync1. (Its copy of the
# configuration names no synchronous standby: once promoted, it waits for none.)
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf',
	"primary_conninfo = '" . $primary->connstr . " application_name=sync1'\n");
start_with_clock($standby, '-10m');
my $offset = $standby->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())') - time;
diag(sprintf('the standby\'s clock is %.1f s off', $offset));
ok(abs($offset + 600) < 30, 'the standby\'s clock is 10 minutes behind');

# (Set on the primary alone: the standby's copy of the configuration keeps the defaults.)
# snowflake.max_lead = 30 s lets a burst run far ahead of the clock, and of the reservation
# the standby holds.
set_and_reload($primary, synchronous_standby_names => 'sync1', 'snowflake.max_lead' => '30s');
$primary->poll_query_until('postgres',
	q{SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'sync1'})
  or die 'the standby did not become synchronous';

# The client: one session, plain SELECTs, every ID it got recorded, every ERROR kept.
my $client = $primary->background_psql('postgres',
	on_error_stop => 0,
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
my (@sf, @uuid, @ulid, @errors);
my $last_ok_at = 0;
# Takes IDs for $seconds, or until $done->() says so after $min_seconds.
sub take_ids
{
	my ($seconds, $min_seconds, $done) = @_;
	my ($got, $failed) = (0, 0);
	my $started = time;
	while (time < $started + $seconds)
	{
		last if $done && time >= $started + $min_seconds && $done->();
		my ($out) = $client->query('SELECT snowflake(), snowflake_uuidv7(), ulid()');
		my $err = $client->{stderr};
		$client->{stderr} = '';    # the session keeps what it read from stderr: one query's only
		if ($err =~ /ERROR/)
		{
			push @errors, $err;
			$failed++;
		}
		elsif ($out =~ /^(\d+)\|([0-9a-f-]{36})\|([0-9A-Z]{26})$/)
		{
			push @sf, $1;
			push @uuid, $2;
			push @ulid, $3;
			$got++;
			$last_ok_at = time;
		}
		else
		{
			die "unexpected output: '$out', '$err'";
		}
	}
	return ($got, $failed);
}

# Until the writer has extended the reservation twice with the standby confirming, so that
# the standby holds reservations it replayed (a condition polled: a slow standby takes longer).
my $writes = status_of($primary, 'reservation_writes');
my $started = time;
my ($before, $failed_before) = take_ids($PostgreSQL::Test::Utils::timeout_default, 1,
	sub { status_of($primary, 'reservation_writes') >= $writes + 2 });
my $writes_before = status_of($primary, 'reservation_writes') - $writes;
diag(sprintf('with the synchronous standby confirming: %d rows of IDs in %.1f s, %d errors, '
	  . '%d reservation writes', $before, time - $started, $failed_before, $writes_before));
ok($before > 0 && $failed_before == 0 && $writes_before >= 2,
	'with the synchronous standby confirming, IDs flow and the reservation is extended');
# (The client's session takes the reload before its next statement.)
set_and_reload($primary, 'snowflake.reservation_timeout' => '2s');

# The standby stops confirming: its walreceiver is stopped (SIGSTOP), and so is the
# primary's walsender, first, so that no WAL sent after this point waits in the standby's
# socket to be read when the walreceiver runs again (the standby must have only what it
# had confirmed, or it would hold reservations the primary never had confirmed).
my $walsender = $primary->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_replication WHERE application_name = 'sync1'});
my $walreceiver = $standby->safe_psql('postgres', 'SELECT pid FROM pg_stat_wal_receiver');
die "no walsender or walreceiver: '$walsender', '$walreceiver'" unless $walsender && $walreceiver;
kill('STOP', $walsender) or die "kill -STOP $walsender: $!";
kill('STOP', $walreceiver) or die "kill -STOP $walreceiver: $!";
my $frozen_at = time;
# A burst of 20,000,000 IDs of shard 7 (19.5 s of its ID time) in one statement: only its
# largest ID is kept, if it completes.
my ($burst) = $client->query(
	'SELECT max(s) FROM (SELECT snowflake(7) AS s FROM generate_series(1, 20000000)) x');
my $burst_err = $client->{stderr};
$client->{stderr} = '';
my $burst_secs = time - $frozen_at;
if ($burst_err =~ /ERROR/)
{
	push @errors, $burst_err;
}
elsif ($burst =~ /^\d+$/)
{
	push @sf, $burst;
}
else
{
	die "unexpected output: '$burst', '$burst_err'";
}
diag(sprintf('with the standby frozen, a burst of 20,000,000 snowflake(7) ended after %.2f s: %s',
	$burst_secs, $burst_err =~ /ERROR/ ? $burst_err =~ s/\n.*//sr : "completed, up to $burst"));
ok($burst_err =~ /ERROR:  55000: .*reservation/,
	'with the standby frozen, a burst stops at the end of the confirmed reservation, with an ERROR (55000)');
$frozen_at = time;
my ($after, $failed_after) = take_ids(4);
my $busy = status_of($primary, "coalesce(writer_busy_ms::text, 'idle')");
diag(sprintf('then plain SELECTs: %d rows of IDs (the last %.2f s after the burst), %d errors '
	  . 'over %.1f s; the writer: %s', $after, $last_ok_at - $frozen_at, $failed_after,
	time - $frozen_at, $busy));
ok($failed_after > 0, 'and so do plain calls');
like($errors[-1] // '', qr/ERROR:  55000: .*reservation/, 'with the same ERROR');
$client->quit;

# The primary fails: its postmaster is killed, and its stopped walsender (which would not
# notice). The standby's walreceiver runs again, and the standby is promoted.
$primary->kill9;
kill('KILL', $walsender);
kill('CONT', $walreceiver) or die "kill -CONT $walreceiver: $!";
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';

my ($max_sf) = sort { length($b) <=> length($a) || $b cmp $a } @sf;
my ($max_uuid) = sort { $b cmp $a } @uuid;
my ($max_ulid) = sort { $b cmp $a } @ulid;
$standby->safe_psql('postgres', q{
CREATE TABLE new_ids AS SELECT snowflake() AS sf, snowflake_uuidv7() AS u, ulid() AS l
  FROM generate_series(1, 1000)});
my $behind = $standby->safe_psql('postgres', qq{
SELECT round(extract(epoch FROM snowflake_timestamp(min(sf)) - snowflake_timestamp($max_sf)) * 1000)
  FROM new_ids});
diag(scalar(@sf) . " rows of IDs recorded; the promoted standby's first snowflake ID is $behind ms "
	  . 'after the largest recorded one');
is( $standby->safe_psql('postgres', qq{
SELECT bool_and(sf > $max_sf), bool_and(u > '$max_uuid'::uuid), bool_and(l > '$max_ulid'::ulid)
  FROM new_ids}),
	't|t|t',
	'promoted with its clock 10 minutes behind, it issues every ID of every kind above every ID the client got');
is( $standby->safe_psql('postgres', qq{
SELECT reservation_replayed_until >= greatest(snowflake_timestamp($max_sf), uuidv7_timestamp('$max_uuid'),
                                              ulid_timestamp('$max_ulid'))
  FROM snowflake_status()}),
	't', 'the reservation it replayed covers every ID the client got');

my $gap = status_of($standby, 'clock_gap_ms');
($count, $secs, $waits) = pace($standby);
diag(sprintf('on the promoted standby: clock_gap_ms %d; 1,000,000 snowflake() took %.2f s, %d lead waits',
	$gap, $secs, $waits));
ok($gap >= 570000 && $gap <= 610000, 'its IDs\' clock runs 10 minutes ahead of its system clock');
is($count, '1000000', 'and generates at its usual pace: 1,000,000 snowflake() complete');
ok($waits <= 100, 'with few lead waits');

$standby->stop;
done_testing();
