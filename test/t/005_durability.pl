# The durable reservation: after a clean restart, an immediate stop, a SIGKILL of the
# postmaster, and a start with the system clock set back 10 minutes, every new ID of every
# kind (snowflake, UUIDv7, ULID, sno, rsxid, ksuid) is greater than every ID issued before, and
# an rsxid's and a ksuid's second is later than every earlier one's. A reservation that cannot be written is an
# ERROR, and no ID is issued. A clock stepped back and forward in a running server (libfaketime
# with a changing offset) neither repeats nor reorders IDs, and warns once per step.
use strict;
use warnings FATAL => 'all';
use IPC::Run;
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $faketime = faketime_library();

my $node = snowflake_node('durable', qq{
snowflake.shard_id = 3
snowflake.max_lead = '10s'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (sf bigint, v7 uuid, ul ulid, sn sno, rx rsxid, ks ksuid);
CREATE TABLE maxima (era serial, sf3 bigint, sf9 bigint, v7 uuid, ul ulid, sn sno, rx rsxid, ks ksuid);
});

# Issues IDs of every kind into ids; shard 9 runs ahead of the clock: 3,000,000 IDs of one
# shard need about 3 s of sequence space, and are made in well under that (only their
# maximum is kept).
sub issue
{
	$node->safe_psql('postgres', q{
INSERT INTO ids SELECT snowflake(), snowflake_uuidv7(), ulid(), sno(n % 256), rsxid(), ksuid() FROM generate_series(1, 1000) n;
INSERT INTO ids (sf) SELECT max(s) FROM (SELECT snowflake(9) AS s FROM generate_series(1, 3000000)) x;
INSERT INTO ids SELECT snowflake(), snowflake_uuidv7(), ulid(), sno(n % 256), rsxid(), ksuid() FROM generate_series(1, 1000) n;
});
}

# Every ID just issued is above every ID issued before, per kind and shard; after a start, the
# rsxids and ksuids are in a later second than every earlier one (a stream starts in the second
# after its floor's: the same second could hold an earlier value with a higher counter). Then the
# maxima are kept and the IDs dropped.
sub check_above
{
	my ($what, $running) = @_;
	my $any_second = $running ? 'true' : 'false';
	is( $node->safe_psql(
			'postgres', qq{
SELECT coalesce((SELECT min(sf) FROM ids WHERE snowflake_shard(sf) = 3) > (SELECT max(sf3) FROM maxima), true),
       coalesce((SELECT min(sf) FROM ids WHERE snowflake_shard(sf) = 9) > (SELECT max(sf9) FROM maxima), true),
       coalesce((SELECT v7 FROM ids WHERE v7 IS NOT NULL ORDER BY v7 LIMIT 1)
                > (SELECT v7 FROM maxima WHERE v7 IS NOT NULL ORDER BY v7 DESC LIMIT 1), true),
       coalesce((SELECT min(ul) FROM ids) > (SELECT max(ul) FROM maxima), true),
       coalesce((SELECT sn FROM ids WHERE sn IS NOT NULL ORDER BY sn LIMIT 1)
                > (SELECT sn FROM maxima WHERE sn IS NOT NULL ORDER BY sn DESC LIMIT 1), true),
       coalesce((SELECT min(rx) FROM ids) > (SELECT max(rx) FROM maxima), true),
       coalesce((SELECT min(ks) FROM ids) > (SELECT max(ks) FROM maxima), true),
       coalesce((SELECT rsxid_timestamp(min(rx)) FROM ids) > (SELECT rsxid_timestamp(max(rx)) FROM maxima), true) OR $any_second,
       coalesce((SELECT ksuid_timestamp(min(ks)) FROM ids) > (SELECT ksuid_timestamp(max(ks)) FROM maxima), true) OR $any_second,
       (SELECT count(sf) - count(DISTINCT sf) FROM ids),
       (SELECT count(*) FROM maxima)}) =~ s/\|\d+$//r,
		't|t|t|t|t|t|t|t|t|0',
		"$what: every new ID of every kind is above every earlier one"
		  . ($running ? '' : ', the rsxids and ksuids in a later second'));
	$node->safe_psql('postgres', q{
INSERT INTO maxima (sf3, sf9, v7, ul, sn, rx, ks) SELECT max(sf) FILTER (WHERE snowflake_shard(sf) = 3),
       max(sf) FILTER (WHERE snowflake_shard(sf) = 9),
       (SELECT v7 FROM ids WHERE v7 IS NOT NULL ORDER BY v7 DESC LIMIT 1), max(ul),
       (SELECT sn FROM ids WHERE sn IS NOT NULL ORDER BY sn DESC LIMIT 1), max(rx), max(ks) FROM ids;
TRUNCATE ids;
});
}

my $started = time;
issue();
my $lead = $node->safe_psql('postgres', q{SELECT lead_ms FROM snowflake_streams() WHERE shard = 9});
my $elapsed_ms = (time - $started) * 1000;
diag(sprintf('shard 9 is %d ms ahead of the clock, %.0f ms after its burst began', $lead, $elapsed_ms));
# 3,000,000 IDs take 2,930 ms of one shard's ID time from the clock at their start: they are
# that far ahead of it, less the time since (measured: a slow machine only lowers the bound).
ok($lead > 2900 - $elapsed_ms, 'shard 9 runs ahead of the clock');
is( $node->safe_psql(
		'postgres',
		q{SELECT bool_and(reserved_until > last_ts) AND min(reservation_writes) > 0
		    FROM snowflake_status(), snowflake_streams()}),
	't',
	'the reservation is above every stream and was written');

check_above('first run');

$node->restart;
issue();
check_above('clean restart');

$node->stop('immediate');
$node->start;
issue();
check_above('immediate stop (crash)');

kill9_and_wait($node);
$node->start;
my $issued_at = time;    # every ID issue() makes is at this time or later
issue();
check_above('SIGKILL of the postmaster');

SKIP:
{
	skip $no_faketime, 8 unless $faketime;

	# Start with the system clock 10 minutes behind.
	$node->stop;
	start_with_clock($node, '-10m');
	my $since = time - $issued_at;
	my $log_offset = -s $node->logfile;
	issue();
	check_above('start with the clock 10 minutes back');
	# The reservation's reach (42 s here) and the time since the last IDs (measured) at most.
	my $between = 60 + time - $issued_at;
	is( $node->safe_psql(
			'postgres',
			qq{SELECT extract(epoch FROM snowflake_timestamp(sf3) - lag(snowflake_timestamp(sf3)) OVER (ORDER BY era)) BETWEEN 0 AND $between
			    FROM maxima ORDER BY era DESC LIMIT 1}),
		't',
		'and IDs continue from where they were, not 10 minutes back');
	# 600 s, less the time since the last IDs were made (measured), plus what the reservation
	# reaches past them.
	my ($behind) = slurp_file($node->logfile)
	  =~ /.*WARNING:  system clock is (\d+\.\d+) s behind the snowflake reservation/s;
	diag(sprintf('the WARNING says %s s behind, %.1f s after the last IDs', $behind // 'nothing', $since));
	ok(defined $behind && $behind > 600 - $since - 1 && $behind < 700,
		'a WARNING says the clock is behind the reservation');

	# Steps in a running server: the offset comes from a file that libfaketime rereads (at
	# most a second or two after it changes).
	$node->stop;
	my $offset_file = $node->basedir . '/faketime';
	my $set_offset = sub { set_clock_file($offset_file, $_[0]) };
	$set_offset->('+0');
	start_with_clock_file($node, $offset_file);
	$log_offset = -s $node->logfile;

  SKIP:
	{
		# The server's wall clock must follow the file, or nothing below tests anything. (Each
		# sleep 2 outlasts libfaketime's cache of the file, 1 s of real time, on any machine.)
		$set_offset->('-10');
		sleep 2;
		my $before = time;
		my $clock = $node->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
		my $after = time;
		# The offset is between $clock - $after and $clock - $before: -10 s must be in reach.
		skip sprintf('libfaketime did not step the running server\'s clock (off by %.1f to %.1f s, '
			  . 'not -10 s): live steps are not tested on this version', $clock - $after, $clock - $before), 5
		  if $clock - $before < -13 || $clock - $after > -7;
		foreach my $step ('-10', '-10m', '+1h', '+0')
		{
			$set_offset->($step);
			sleep 2;
			issue();
			check_above("running server, clock offset $step", 1);
		}
		my $log = log_since($node, $log_offset);
		my $back = () = $log =~ /WARNING:  system clock stepped back/g;
		my $forward = () = $log =~ /WARNING:  system clock stepped forward/g;
		# -10 s, -10 min: two steps back; +1 h: forward; back to +0: back again.
		is("$back|$forward", '3|1', 'one WARNING per step event, not per ID');
	}
	$node->stop;
	$node->start;
}

# A reservation that cannot be written: ERROR, and no ID.
$node->stop;
mkdir($node->data_dir . '/snowflake.reservation.tmp') or die;
$node->start;
my $before = $node->safe_psql('postgres', 'SELECT count(*) FROM ids');  # 0
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'INSERT INTO ids (sf) SELECT snowflake() FROM generate_series(1, 10)');
isnt($ret, 0, 'no reservation on disk: generating fails');
like($stderr, qr/could not write the snowflake reservation file/, 'with a clear ERROR');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'), $before, 'and nothing was written');
rmdir($node->data_dir . '/snowflake.reservation.tmp') or die;
like($node->safe_psql('postgres', 'SELECT snowflake()'), qr/^\d+$/, 'once it can be written, IDs flow again');

# A wait at the lead bound ends with statement_timeout, and with a cancel. With no lead
# allowed, 100,000,000 IDs of one shard would take 98 s. (generate_series in the select
# list yields its rows one by one, so the IDs are made from the start.)
# snowflake.max_lead is the server's (a session's own would hold back every other session):
# set in its configuration.
set_and_reload($node, 'snowflake.max_lead' => '0');
my $waits = $node->safe_psql('postgres', 'SELECT coalesce(max(lead_waits), 0) FROM snowflake_status()');
# (5 s: time for the first wait on any machine, and far short of the 98 s.)
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SET statement_timeout = '5s'; SELECT count(snowflake(12)) FROM (SELECT generate_series(1, 100000000)) s");
like($stderr, qr/canceling statement due to statement timeout/, 'statement_timeout ends a wait at the lead bound');
ok($node->safe_psql('postgres', 'SELECT max(lead_waits) FROM snowflake_status()') > $waits,
	'the waits are counted');

my ($out, $err) = ('', '');
my $h = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c',
	  'SELECT count(snowflake(13)) FROM (SELECT generate_series(1, 100000000)) s' ],
	'>', \$out, '2>', \$err);
# pg_stat_activity names the wait: SnowflakeMaxLead on 17 and later, where extensions have
# wait events of their own; the generic Extension before.
my $wait_event = $node->pg_version >= 17 ? 'SnowflakeMaxLead' : 'Extension';
$node->poll_query_until('postgres',
	qq{SELECT pg_cancel_backend(pid) FROM pg_stat_activity
		  WHERE query LIKE '%snowflake(13)%' AND wait_event_type = 'Extension'
		    AND wait_event = '$wait_event' AND pid <> pg_backend_pid()})
  or die "the statement waiting on $wait_event was not found";
my $cancelled = time;
$h->finish;
like($err, qr/canceling statement due to user request/, 'a cancel ends a wait at the lead bound');
# Uncancelled it would run 98 s: only a hang takes a minute after the cancel.
ok(time - $cancelled < 60, 'promptly');

# A corrupt reservation is never guessed at: the server does not start.
$node->stop;
my $file = $node->data_dir . '/snowflake.reservation';
my $good = slurp_file($file);
# (9223372036855 ms is past 2262-04-11, which the clock's nanoseconds cannot hold; the
# header of another format, or a number past 64 bits, is corrupt too.)
foreach my $bad ("snowflake reservation 2\n-5\nepoch 1577836800000\n",
	"snowflake reservation 2\n99999999999999999999\nepoch 1577836800000\n",
	"snowflake reservation 2\n", "something else\n", "snowflake reservation 1\n1000\n",
	"snowflake reservation 2\n9223372036855\nepoch 1577836800000\n",
	"snowflake reservation 2\n1000\n", "snowflake reservation 2\n1000\nepoch x\n")
{
	open my $fh, '>', $file or die;
	print $fh $bad;
	close $fh;
	my $from = -s $node->logfile;
	ok(!$node->start(fail_ok => 1), 'a corrupt reservation file stops the server from starting');
	like(log_since($node, $from),
		qr/FATAL:  the snowflake reservation file "snowflake.reservation" is corrupt/, 'and says so');
}
open my $fh, '>', $file or die;
print $fh $good;
close $fh;
$node->start;
like($node->safe_psql('postgres', 'SELECT snowflake()'), qr/^\d+$/, 'the restored file works');

# The floor of the one-second streams, alone: rsxids and ksuids made at the start of a second
# (the loop runs until the stream's second changes) are the server's latest values, so the
# reservation at exit is just above that second's first millisecond; started with the clock 10
# minutes back, the clock runs from the reservation, in that very second. Without the floor,
# new rsxids and ksuids would be in it too, their counters from 0 again. (max_lead is 0 here:
# the first call waits for the clock's next second.)
SKIP:
{
	skip $no_faketime, 2 unless $faketime;
	$node->safe_psql('postgres', q{
DO $$
DECLARE
  s timestamptz := rsxid_timestamp(rsxid());
BEGIN
  WHILE rsxid_timestamp(rsxid()) = s LOOP END LOOP;
END $$;
INSERT INTO ids (rx, ks) SELECT rsxid(), ksuid() FROM generate_series(1, 1000);});
	check_above('rsxids and ksuids at the start of a second', 1);
	$node->stop;
	start_with_clock($node, '-10m');
	$node->safe_psql('postgres', 'INSERT INTO ids (rx, ks) SELECT rsxid(), ksuid() FROM generate_series(1, 1000)');
	check_above('a start 10 minutes back right after them');
}

$node->stop;
done_testing();
