# How far IDs lead the clock after restarts, crashes and a clock set back, and how often the
# reservation is written and waited for:
# - restarts (clean or crash) leave no lasting lead, and count no clock step;
# - after a real backward step over a restart, IDs stay above the reservation and run from it
#   at real-time rate, until the clock is corrected;
# - a burst and a sustained load write the reservation a few times, not once per millisecond;
# - calls close to the reservation ask the writer for more before any reaches it, and a hung
#   disk does not hang a statement past statement_timeout;
# - a standby generates nothing, and runs no writer;
# - a changed snowflake.epoch: the server starts, and refuses to generate.
# The figures each part measures are printed (diag) for the record.
use strict;
use warnings FATAL => 'all';
use Fcntl qw(O_RDWR O_NONBLOCK);
use List::Util qw(max);
use POSIX qw(mkfifo);
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $faketime = faketime_library();

my $node = snowflake_node('reservation', qq{
snowflake.shard_id = 4
}, allows_streaming => 1);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

sub status
{
	my ($column) = @_;
	return status_of($node, "coalesce(max($column), 0)");
}

sub issue_some
{
	$node->safe_psql('postgres', q{
SELECT count(snowflake()) + count(snowflake_uuidv7()) + count(ulid()) FROM generate_series(1, 20000)});
}

# --- Clean restarts: no lead, however many.
my $log_from = -s $node->logfile;
my @drift;
for my $i (1 .. 4)
{
	issue_some();
	$node->restart;
	push @drift, lead_ms($node);
}
diag("lead of new IDs over the clock right after each of 4 clean restarts, ms: @drift");
ok(max(@drift) <= 20, 'clean restarts leave IDs with the clock, restart after restart');
is(status('clock_steps_back'), '0', 'and count no clock step');
unlike(log_since($node, $log_from), qr/behind the snowflake reservation/,
	'nor warn');

# SIGKILL of the postmaster, and a start once its children are gone.
sub crash_and_start
{
	kill9_and_wait($node);
	$node->start;
}

# --- A crash: the reservation was not lowered, so IDs start at most its reach ahead (a window
# and a quarter), and are back with the clock once that has passed.
issue_some();
crash_and_start();
my $after_crash = lead_ms($node);
# The lead fades: the IDs' time rises at 3/4 of real-time rate until the clock catches up,
# so within four times the lead (polled: the fade takes real time on any machine).
my $faded_after = time;
my $later;
poll_until(sub { ($later = lead_ms($node)) <= 20 });
$faded_after = time - $faded_after;
diag(sprintf('after a SIGKILL of the postmaster: lead %d ms at once, %d ms %.1f s later',
	$after_crash, $later, $faded_after));
ok($after_crash <= 1300, 'after a crash, new IDs are at most the reservation\'s reach ahead');
ok($later <= 20, 'and with the clock once the lead has faded');
is(status('clock_steps_back'), '0', 'a crash counts no clock step');

# --- A real backward step over a restart: the clock 60 s back at start, more than the
# reservation's reach (2 windows and 4 times snowflake.max_lead: 6 s here) by far more than
# a restart takes, however slow.
SKIP:
{
	skip $no_faketime, 5 unless $faketime;
	issue_some();
	my $before_at = time;    # the last IDs before the restart are at this time or later
	my $before = $node->safe_psql('postgres', 'SELECT snowflake()');
	$node->stop;
	$log_from = -s $node->logfile;
	start_with_clock($node, '-60s');
	# The IDs run 60 s ahead of the clock, less the time since $before (measured).
	my $since = time - $before_at;
	my $first = $node->safe_psql('postgres', 'SELECT snowflake()');
	ok($first > $before, 'after the clock went 60 s back over a restart, IDs stay above the old ones');
	my ($behind) = log_since($node, $log_from)
	  =~ /WARNING:  system clock is (\d+\.\d+) s behind the snowflake reservation/;
	diag(sprintf('the WARNING says %s s behind, %.1f s after the last ID', $behind // 'nothing', $since));
	ok(defined $behind && $behind > 60 - $since - 0.5 && $behind < 61, 'with a WARNING');
	sleep 2;
	my $lead = lead_ms($node);
	diag("2 s later, the IDs run ahead of the server's clock by $lead ms");
	ok($lead > 60000 - $since * 1000 - 500 && $lead < 62000,
		'IDs run from the reservation at real-time rate, ahead of the wrong clock');
	ok(status('clock_gap_ms') > 60000 - $since * 1000 - 500, 'and snowflake_status() shows the gap');
	# The clock corrected (no libfaketime): with the clock again.
	$node->stop;
	$node->start;
	is(lead_ms($node) <= 20 ? 1 : 0, 1, 'once the clock is corrected, a restart leaves no lead');
}

# --- snowflake.max_lead = 10 s for the rest: room for bursts ahead of the clock.
set_and_reload($node, 'snowflake.max_lead' => '10s');

# --- A hung disk: the writer cannot write (the temporary file is a FIFO nobody reads, so its
# open blocks); a generator that reaches the reservation waits, and statement_timeout ends it.
# (8,000,000 IDs of one shard need 7.8 s of its sequence space: past the reservation, which
# reaches about a second and a quarter ahead, and within snowflake.max_lead. statement_timeout
# leaves the wait time to begin on any machine, and ends it before reservation_timeout, 10 s.)
my $fifo = $node->data_dir . '/snowflake.reservation.tmp';
mkfifo($fifo, 0600) or die "mkfifo: $!";
my $waits = status('reservation_waits');
my $started = time;
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"SET statement_timeout = '5s'; SELECT count(snowflake(12)) FROM generate_series(1, 8000000)");
my $elapsed = time - $started;
diag(sprintf('with the writer stuck, the statement ended after %.2f s: %s', $elapsed,
	$stderr =~ s/\n.*//sr));
like($stderr, qr/canceling statement due to statement timeout/,
	'a hung disk: statement_timeout ends the wait for the reservation');
ok(status('reservation_waits') > $waits, 'which was a wait for the reservation');
# (The ERROR says statement_timeout ended it: this bound catches only a hang.)
ok($elapsed < 5 + 60, 'promptly');
# The writer gets its reader and completes its write (into the FIFO, which it may rename
# into place before the unlink here); the FIFO goes, and the next write, which a burst
# needs, goes to a real file.
my $writes = status('reservation_writes');
sysopen(my $reader, $fifo, O_RDWR | O_NONBLOCK) or die "open fifo: $!";
unlink($fifo);
$node->poll_query_until('postgres',
	"SELECT max(reservation_writes) > $writes FROM snowflake_status()")
  or die 'the reservation writer did not recover';
$writes = status('reservation_writes');
like($node->safe_psql('postgres', 'SELECT count(snowflake(12)) FROM generate_series(1, 3000000)'),
	qr/^3000000$/, 'once the disk answers, IDs flow again');
ok(status('reservation_writes') > $writes && -f $node->data_dir . '/snowflake.reservation'
	  && !-p $node->data_dir . '/snowflake.reservation',
	'and the reservation is a real file again');
close($reader);

# --- Writes per window: a burst that runs ahead of the clock, and a sustained load.
$writes = status('reservation_writes');
$started = time;
$node->safe_psql('postgres', 'SELECT count(snowflake(11)) FROM generate_series(1, 2000000)');
$elapsed = time - $started;
my $burst_writes = status('reservation_writes') - $writes;
diag(sprintf('a burst of 2,000,000 snowflake(11) (2 s of one shard\'s IDs) took %.2f s and '
	  . '%d reservation writes', $elapsed, $burst_writes));
# A few while it runs ahead; a slow machine makes it follow the clock instead, with a write
# per window (1 s) of the time it took (measured).
ok($burst_writes <= 6 + $elapsed, 'a burst ahead of the clock takes a few reservation writes');

$writes = status('reservation_writes');
$started = time;
$node->pgbench(
	'--no-vacuum --client=2 --jobs=2 --time=4',
	0,
	[qr{processed: \d+}],
	[qr{^$}],
	'2 clients issue IDs for 4 s',
	{ '009_sustained' => q{SELECT count(snowflake(20 + :client_id)) FROM generate_series(1, 1000);} });
my $sustained_writes = status('reservation_writes') - $writes;
$elapsed = time - $started;
diag(sprintf('4 s of 2 clients (%.2f s with pgbench\'s start and end): %d reservation writes',
	$elapsed, $sustained_writes));
# Once per window of the time it ran (measured, however slow), and one or two more.
ok($sustained_writes <= 2 + $elapsed, 'a sustained load writes about once per window (1 s)');

# The writer is asked ahead of need: single calls at the clock's pace issue IDs until one is
# within 150 ms of the reservation, past the point (a quarter window, 250 ms, before it)
# where a call asks the writer for more. None reaches the reservation, so none waits; and
# the writer extends it, which it does only when asked. (How long calls take while the
# writer keeps up, however busy the machine, is measured by bench/reservation.sh.)
poll_until(sub {
	$node->safe_psql('postgres', q{SELECT snowflake(41);
SELECT reserved_until > clock_timestamp() + interval '600 ms' AND writer_busy_ms IS NULL
  FROM snowflake_status()}) =~ /t$/;
}) or die 'the reservation is not 600 ms ahead of an idle writer';
my $reserved = status_of($node, 'reserved_until');
$waits = status('reservation_waits');
$node->safe_psql('postgres', qq{
DO \$\$
BEGIN
  WHILE snowflake_timestamp(snowflake(41)) < timestamptz '$reserved' - interval '150 ms' LOOP
  END LOOP;
END \$\$});
ok( poll_until(sub { status_of($node, "reserved_until > timestamptz '$reserved'") eq 't' }),
	'calls close to the reservation ask the writer for more before any reaches it');
is(status('reservation_waits') - $waits, 0, 'and none waits for it');

# A crash right after a burst: the reservation is further ahead (the burst's lead), which is
# still no clock step.
$node->safe_psql('postgres', 'SELECT count(snowflake(13)) FROM generate_series(1, 3000000)');
crash_and_start();
is(status('clock_steps_back'), '0', 'a crash right after a burst counts no clock step');

# --- A standby generates nothing, and writes no reservation.
$node->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'base', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
foreach my $call ('snowflake()', 'snowflake_uuidv7()', 'ulid()')
{
	($ret, $stdout, $stderr) =
	  $standby->psql('postgres', "SELECT $call", extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($stderr, qr/ERROR:  25006: cannot generate snowflake IDs during recovery.*HINT:  Generate IDs on the primary/s,
		"a standby refuses $call, with a hint");
}
is(scalar writer_pids($standby), 0, 'a standby runs no reservation writer');
is(scalar writer_pids($node), 1, 'the primary runs one');
# A burst on the primary takes new reservations, which the standby replays.
my $last = $node->safe_psql('postgres',
	'SELECT max(snowflake_timestamp(id)) FROM (SELECT snowflake(14) AS id FROM generate_series(1, 3000000)) s');
$node->wait_for_catchup($standby);
is($standby->safe_psql('postgres',
		"SELECT count(*), bool_and(in_recovery), bool_and(reservation_replayed_until > '$last') FROM snowflake_status()"),
	'1|t|t', 'a standby\'s snowflake_status() is one row, with the reservation it replayed above the primary\'s IDs');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
like($standby->safe_psql('postgres', 'SELECT snowflake()'), qr/^\d+$/,
	'once promoted, it generates');
$standby->stop;

# --- snowflake.epoch changed across a restart: the server starts, every database stays up,
# and generation is refused with the reason; never a smaller ID.
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.epoch = '1314220021721'\n");
$log_from = -s $node->logfile;
$node->start;
like(log_since($node, $log_from),
	qr/WARNING:  snowflake.epoch is 1314220021721, but IDs were issued with 1577836800000/,
	'a changed snowflake.epoch: the server starts, and says which epoch the IDs were issued with');
foreach my $call ('snowflake()', 'snowflake_uuidv7()', 'ulid()')
{
	($ret, $stdout, $stderr) =
	  $node->psql('postgres', "SELECT $call", extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($stderr,
		qr/ERROR:  22023: snowflake.epoch is 1314220021721, but IDs were issued with 1577836800000.*HINT:  Set snowflake.epoch back to 1577836800000/s,
		"$call is refused, with a hint");
}
like($node->safe_psql('postgres', 'SELECT generation_refused FROM snowflake_status()'),
	qr/snowflake.epoch/, 'snowflake_status() says why');
# The decoders that read snowflake.epoch would give stored IDs a wrong time (2012 instead of
# 2020 here): they refuse too, naming the form with the epoch given, which still works.
my $old_id = '262144000000000000';    # 2020-12-27 16:33:20 UTC with the 2020 epoch
foreach my $call ("snowflake_timestamp($old_id)", "snowflake_decode($old_id)",
	"snowflake_at('2024-01-01 00:00+00')")
{
	($ret, $stdout, $stderr) =
	  $node->psql('postgres', "SELECT $call", extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($stderr,
		qr/ERROR:  22023: snowflake.epoch is 1314220021721, but IDs were issued with 1577836800000.*HINT:  Set snowflake.epoch back to 1577836800000 and restart the server, or give the epoch as an argument: snowflake_\w+\((id|ts), epoch\) with epoch => to_timestamp\(1577836800000 \/ 1000.0\)/s,
		"$call is refused, with the form that gives the epoch in the hint");
}
is( $node->safe_psql('postgres',
		"SET timezone = 'UTC'; SELECT snowflake_timestamp($old_id, epoch => to_timestamp(1577836800000 / 1000.0)), snowflake_shard($old_id)"),
	'2020-12-27 16:33:20+00|0',
	'the form with the epoch given, and the shard, still decode');
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.epoch = '1577836800000'\n");
$node->start;
like($node->safe_psql('postgres', 'SELECT snowflake()'), qr/^\d+$/, 'set back, it starts');

$node->stop;
done_testing();
