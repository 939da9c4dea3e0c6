# What an operator meets, and what the server does about it:
# - snowflake_status() is one row, always (before the first ID, on a standby, with writes
#   failing), with the server's columns; the streams are in snowflake_streams();
# - a fresh cluster needs no step beyond CREATE EXTENSION, and writes nothing before it;
# - restarts with no ID between them leave no lead;
# - a clock far behind the reservation at start: IDs run from it at real rate, with one
#   WARNING and no stall; a clock a little behind: IDs hold at it at 3/4 of real rate, and
#   the lead fades;
# - a hung writer (stopped, or blocked in a write) ends a generator's wait with an ERROR
#   after snowflake.reservation_timeout, and writer_busy_ms shows the write in progress;
# - a missing reservation file and a changed snowflake.epoch refuse generation (the server
#   runs), with a hint and the reason in snowflake_status(); snowflake_reservation_create()
#   accepts the clock;
# - WAL descriptions of the reservation records (pg_walinspect, pg_waldump) work;
# - the library can be removed after a clean stop, and a cluster that never ran CREATE
#   EXTENSION has nothing of it in WAL.
# The figures each part measures are printed (diag).
use strict;
use warnings FATAL => 'all';
use Fcntl qw(O_RDWR O_NONBLOCK);
use IPC::Run;
use List::Util qw(min);
use POSIX qw(mkfifo);
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $faketime = faketime_library();

my $node = snowflake_node('status', qq{
snowflake.shard_id = 4
}, allows_streaming => 1);
$node->start;
my $file = $node->data_dir . '/snowflake.reservation';

# A function's result columns, "name type" sorted by name.
sub columns_of
{
	my ($function) = @_;
	return $node->safe_psql('postgres', qq{
SELECT string_agg(n || ' ' || format_type(t, NULL), ', ' ORDER BY n COLLATE "C")
  FROM pg_proc p, unnest(p.proargnames, p.proallargtypes, p.proargmodes) AS u(n, t, m)
 WHERE p.oid = '$function'::regproc AND m IN ('o', 't')});
}

sub sorted_columns
{
	my %columns = @_;
	return join(', ', map { "$_ $columns{$_}" } sort keys %columns);
}

# --- A fresh cluster. Before CREATE EXTENSION the library writes nothing (the WAL side is
# checked at the end, on a cluster that never creates it); CREATE EXTENSION is the only step.
wait_for_writer($node);
sleep 1;    # time for a writer's first pass, had it one to make (a slow one only passes it)
ok(!-e $file, 'before CREATE EXTENSION, no reservation file is written');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
ok(-f $file, 'CREATE EXTENSION creates the reservation file');

is( $node->safe_psql('postgres', q{
SELECT count(*), bool_and(writer_pid IS NOT NULL), bool_and(NOT in_recovery),
       bool_and(generation_refused IS NULL) FROM snowflake_status()}),
	'1|t|t|t',
	'before any ID, snowflake_status() is one row: a primary that may generate, its writer running');
is(status_of($node, 'writer_pid'), join(',', writer_pids($node)),
	'writer_pid is the process "snowflake reservation writer"');
is( columns_of('snowflake_status'),
	sorted_columns(
		in_recovery => 'boolean',
		generation_refused => 'text',
		clock_gap_ms => 'bigint',
		clock_steps_back => 'bigint',
		clock_steps_forward => 'bigint',
		lead_waits => 'bigint',
		reserved_until => 'timestamp with time zone',
		reservation_writes => 'bigint',
		reservation_waits => 'bigint',
		reservation_failures => 'bigint',
		reservation_error => 'text',
		reservation_replayed_until => 'timestamp with time zone',
		writer_pid => 'integer',
		writer_busy_ms => 'bigint',
		observed_moves => 'bigint',
		observed_until => 'timestamp with time zone',
		observe_skipped => 'bigint',
		shard_collisions => 'bigint',
		shard_id => 'integer',
		shard_count => 'integer',
		shard_id_source => 'text',
		shard_source => 'text',
		lease_state => 'text',
		lease_shard => 'integer',
		lease_shard_count => 'integer',
		lease_expires_ms => 'bigint',
		etcd_endpoint => 'text',
		etcd_error => 'text',
		etcd_requests => 'bigint',
		mask_key_id => 'integer',
		mask_keys => 'integer',
		mask_key_problem => 'text',
		mask_key_fingerprint => 'text',
		blocks => 'bigint',
		block_ids => 'bigint',
		unknown_settings => 'text'),
	'snowflake_status() has the server\'s columns');
is( columns_of('snowflake_streams'),
	sorted_columns(
		kind => 'text',
		shard => 'integer',
		last_ts => 'timestamp with time zone',
		last_seq => 'bigint',
		lead_ms => 'bigint',
		blocks => 'bigint',
		block_ids => 'bigint'),
	'snowflake_streams() has the streams\' columns');

my $first_at = time;
like($node->safe_psql('postgres', 'SELECT snowflake()'), qr/^\d+$/,
	'a fresh cluster generates with no step beyond CREATE EXTENSION');
$node->safe_psql('postgres', 'SELECT snowflake_uuidv7(), ulid(), sno(7)');
# (lead_ms falls as the clock passes the ID: the bound below 0 grows with the time since.)
# The sno stream is its partition's (the shard, 4), its sequence the first of its unit.
is( $node->safe_psql('postgres', qq{
SELECT count(*) FILTER (WHERE kind = 'snowflake' AND shard = 4 AND lead_ms < 1000
                          AND lead_ms > -1000 - (extract(epoch FROM clock_timestamp()) - $first_at) * 1000),
       count(*) FILTER (WHERE kind IN ('uuidv7', 'ulid')),
       count(*) FILTER (WHERE kind = 'sno' AND shard = 4 AND last_seq = 0 AND lead_ms < 1000
                          AND lead_ms > -1000 - (extract(epoch FROM clock_timestamp()) - $first_at) * 1000)
  FROM snowflake_streams()}),
	'1|2|1', 'snowflake_streams() has a row per stream that issued an ID, sno\'s too');
is(status_of($node, 'count(*)'), '1', 'and snowflake_status() is still one row');

# --- Restarts with no ID between them: no lead builds up.
$node->safe_psql('postgres', 'SELECT snowflake()');
$node->restart for 1 .. 4;
my $idle_lead = lead_ms($node);
diag("lead of the first IDs after 4 clean restarts with no ID between them: $idle_lead ms");
ok(abs($idle_lead) <= 100, 'idle restarts leave the next IDs within 100 ms of the clock');

# --- The clock behind the reservation at start.
SKIP:
{
	skip $no_faketime, 13 unless $faketime;

	# 4 bursts of 500,000 IDs a second apart: 2 s of one shard's IDs over about 4 s, never
	# more than half a second ahead. Returns the lead waits it caused, how long it took, and
	# the statements that failed (a stall ends at statement_timeout).
	my $paced_load = sub {
		my $waits = status_of($node, 'lead_waits');
		my $started = time;
		my $failed = 0;
		for my $i (1 .. 4)
		{
			my ($ret) = $node->psql('postgres',
				"SET statement_timeout = '10s'; SELECT count(snowflake()) FROM generate_series(1, 500000)");
			$failed++ if $ret != 0;
			sleep 1;
		}
		return (status_of($node, 'lead_waits') - $waits, time - $started, $failed);
	};
	my ($waits_right, $time_right, $failed_right) = $paced_load->();
	diag(sprintf('with a right clock, 4 bursts of 500,000 snowflake() a second apart: %.2f s, '
		  . '%d lead waits, %d failed', $time_right, $waits_right, $failed_right));

	# Far behind: 30 s, beyond the reservation's reach (2 windows and 4 times max_lead: 6 s).
	# The gap is 30 s less the time from the last IDs to the start (measured: a slow restart
	# only lowers the bounds).
	my $ids_at = time;
	$node->safe_psql('postgres', q{
CREATE TABLE before_ids AS SELECT snowflake() AS sf, snowflake_uuidv7() AS u, ulid() AS l
  FROM generate_series(1, 1000)});
	$node->stop;
	my $from = -s $node->logfile;
	start_with_clock($node, '-30s');
	my $least_gap = 30000 - (time - $ids_at) * 1000 - 100;
	is( $node->safe_psql('postgres', q{
WITH n AS (SELECT snowflake() AS sf, snowflake_uuidv7() AS u, ulid() AS l FROM generate_series(1, 1000))
SELECT (SELECT min(sf) FROM n) > (SELECT max(sf) FROM before_ids),
       (SELECT u FROM n ORDER BY u LIMIT 1) > (SELECT u FROM before_ids ORDER BY u DESC LIMIT 1),
       (SELECT min(l) FROM n) > (SELECT max(l) FROM before_ids)}),
		't|t|t', 'the clock 30 s behind at start: every new ID of every kind is above the old ones');

	my $gap = sub {
		return (split /\n/,
			$node->safe_psql('postgres', 'SELECT snowflake(); SELECT clock_gap_ms FROM snowflake_status()'))[-1];
	};
	my $gap1 = $gap->();
	my $at1 = time;
	sleep 2;
	my $gap2 = $gap->();
	my $at2 = time;
	my $stream_lead = $node->safe_psql('postgres',
		q{SELECT lead_ms FROM snowflake_streams() WHERE kind = 'snowflake' AND shard = 4});
	# (The stream's last ID, of the second $gap->(), falls behind as the clock passes it.)
	my $least_lead = 30000 - (time - $ids_at) * 1000 - 100;
	diag(sprintf('clock 30 s behind: clock_gap_ms %d, and %d %.2f s later; the stream\'s lead_ms %d; '
		  . 'least gap %d, least lead %d', $gap1, $gap2, $at2 - $at1, $stream_lead, $least_gap, $least_lead));
	ok($gap1 >= $least_gap && $gap1 <= 30500, 'clock_gap_ms shows the gap');
	ok(abs($gap2 - $gap1) <= 200,
		'the IDs\' clock runs from the reservation at real rate: the gap stays as it was');
	ok($stream_lead >= $least_lead, 'snowflake_streams().lead_ms is measured from the system clock');

	my ($waits_behind, $time_behind, $failed_behind) = $paced_load->();
	diag(sprintf('with the clock 30 s behind, the same load: %.2f s, %d lead waits, %d failed',
		$time_behind, $waits_behind, $failed_behind));
	is($failed_behind, 0, 'no stall: the same load completes, statement by statement');
	ok($waits_behind <= $waits_right, 'with no more lead waits than with a right clock');

	my @warnings = log_since($node, $from)
	  =~ /WARNING:  system clock is (\d+\.\d{3}) s behind the snowflake reservation/g;
	diag("WARNINGs: @warnings");
	is(scalar @warnings, 1, 'one WARNING says the clock is behind');
	ok(@warnings && $warnings[0] >= $least_gap / 1000 && $warnings[0] <= 30.5, 'and by how much');

	# Once the clock is right again (a restart), no lead is left.
	$node->stop;
	$node->start;
	my $lead_right = lead_ms($node);
	my $gap_right = $gap->();
	diag("after a restart with the clock right again: lead $lead_right ms, clock_gap_ms $gap_right");
	ok(abs($lead_right) <= 100 && abs($gap_right) <= 100, 'a right clock again leaves no lead');

	# A little behind: 4 s, within the reach (what a crash can leave). IDs hold at the
	# reservation, which advances at 3/4 of real rate, so the lead fades in 4 times its size.
	# It starts at 4 s less the time from the last ID to the first (measured), and the times
	# between the readings are bracketed by what was measured around them.
	my $last_at = time;
	$node->safe_psql('postgres', 'SELECT snowflake()');
	$node->stop;
	$from = -s $node->logfile;
	start_with_clock($node, '-4s');
	my $t0 = time;
	my $lead0 = lead_ms($node);
	my $t0_done = time;
	sleep 4;
	my $t1 = time;
	my $lead1 = lead_ms($node);
	my $t1_done = time;
	my $least_lead0 = 4000 - ($t0_done - $last_at) * 1000 - 100;
	my ($least_span, $most_span) = (($t1 - $t0_done) * 1000, ($t1_done - $t0) * 1000);
	my $drop = $lead0 - $lead1;
	diag(sprintf('clock 4 s behind: lead %d ms at once (at least %d), %d ms %.2f to %.2f s later '
		  . '(%.2f of the time passed)', $lead0, $least_lead0, $lead1, $least_span / 1000,
		$most_span / 1000, $drop / $least_span));
	ok($lead0 >= $least_lead0, 'the clock 4 s behind at start: new IDs start at the reservation, ahead of it');
	# (A lead gone before the second reading dropped by all it had.)
	ok($drop >= min($least_span / 8, $lead0 - 20) && $drop <= $most_span / 2,
		'the lead fades a quarter as fast as time passes (IDs at 3/4 of real rate)');
	my $lead2;
	poll_until(sub { ($lead2 = lead_ms($node)) <= 20 });
	diag("once the clock has caught up: lead $lead2 ms");
	ok($lead2 <= 20, 'and is gone once the clock catches up');
	unlike(log_since($node, $from), qr/behind the snowflake reservation/,
		'a gap within the reservation\'s reach is no clock fault: no WARNING');
	$node->stop;
	$node->start;
	$node->safe_psql('postgres', 'DROP TABLE before_ids');
}

# The reservation writer's PID, once it runs (after a start it may not yet).
sub running_writer
{
	my $pid;
	poll_until(sub { ($pid = status_of($node, 'writer_pid')) ne '' })
	  or die 'no reservation writer';
	return $pid;
}

# Starts 3,000,000 snowflake($shard) in a psql of its own, its output and errors into $$out
# and $$err, for at most $timeout s; returns the IPC::Run harness.
sub start_burst
{
	my ($shard, $out, $err, $timeout) = @_;
	return IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-d', $node->connstr('postgres'), '-c',
		  "SELECT count(snowflake($shard)) FROM generate_series(1, 3000000)" ],
		'>', $out, '2>', $err, IPC::Run::timeout($timeout));
}

# --- A hung writer: stopped (SIGSTOP). A generator that needs a new reservation (3,000,000
# IDs of one shard need about 3 s of ID time; the reservation reaches about 1.25 s) ends with
# an ERROR after snowflake.reservation_timeout, and IDs flow once the writer runs again.
is($node->safe_psql('postgres', 'SHOW snowflake.reservation_timeout'), '10s',
	'snowflake.reservation_timeout is 10 s by default');
my $writer = running_writer();
kill('STOP', $writer) or die "kill -STOP $writer: $!";
my $timed_out = 0;
my $started = time;
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	'SELECT count(snowflake(12)) FROM generate_series(1, 3000000)',
	extra_params => [ '-v', 'VERBOSITY=verbose' ],
	timeout => 120,
	timed_out => \$timed_out);
my $elapsed = time - $started;
kill('CONT', $writer) or die "kill -CONT $writer: $!";
diag(sprintf('with the writer stopped, the statement ended after %.2f s: %s', $elapsed,
	$stderr =~ s/\n.*//sr));
like($stderr,
	qr/ERROR:  55000: the snowflake reservation writer \(PID $writer\) has not extended the reservation/,
	'a stopped writer: the generator ends with an ERROR (55000) that names it');
# (snowflake.reservation_timeout, 10 s, ended it, as the ERROR says: only a hang takes a
# minute more.)
ok(!$timed_out && $elapsed < 10 + 60, 'after snowflake.reservation_timeout, not a hang');
is($node->safe_psql('postgres', 'SELECT count(snowflake(12)) FROM generate_series(1, 1000)'),
	'1000', 'once the writer runs again, IDs flow');

# --- The same, with the system clock stepped back an hour while the generator waits: the
# wait is timed by the monotonic clock, so it still ends after snowflake.reservation_timeout,
# not once the stepped clock has caught up, an hour later. (The generator wakes at the
# timeout; libfaketime has the new offset by then, from the file it rereads.)
SKIP:
{
	skip $no_faketime, 2 unless $faketime;
	my $offset_file = $node->basedir . '/faketime';
	set_clock_file($offset_file, '+0');
	$node->stop;
	start_with_clock_file($node, $offset_file);
	$writer = running_writer();
	my $waits = status_of($node, 'reservation_waits');
	kill('STOP', $writer) or die "kill -STOP $writer: $!";
	my ($out, $err) = ('', '');
	$started = time;
	my $h = start_burst(12, \$out, \$err, 180);
	my $waiting = poll_until(sub { status_of($node, 'reservation_waits') > $waits });
	set_clock_file($offset_file, '-1h');
	eval { $h->finish; };
	$elapsed = time - $started;
	kill('CONT', $writer) or die "kill -CONT $writer: $!";
	diag(sprintf('with the writer stopped and the clock stepped back an hour during the wait, '
		  . 'the statement ended after %.2f s: %s', $elapsed, $err =~ s/\n.*//sr));
	ok($waiting, 'the generator waits for the stopped writer');
	like($err,
		qr/ERROR:  55000: the snowflake reservation writer \(PID $writer\) has not extended the reservation in 10000 ms/,
		'a clock stepped back during the wait: it still ends after snowflake.reservation_timeout');
	$node->stop;
	$node->start;
}

# --- A write that hangs (the temporary file is a FIFO nobody reads: its open blocks), with
# snowflake.reservation_timeout lowered to 2 s: writer_busy_ms shows it, the generator ends
# with the ERROR.
set_and_reload($node, 'snowflake.reservation_timeout' => '2s');
($ret, $stdout, $stderr) = $node->psql('postgres', "SET snowflake.reservation_timeout = '1s'",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($stderr, qr/ERROR:  55P02:/, 'a session cannot set snowflake.reservation_timeout (the server\'s)');
ok($node->poll_query_until('postgres', 'SELECT writer_busy_ms IS NULL FROM snowflake_status()'),
	'an idle writer shows no write in progress (writer_busy_ms is NULL)');
my $fifo = $node->data_dir . '/snowflake.reservation.tmp';
mkfifo($fifo, 0600) or die "mkfifo: $!";
my ($out, $err) = ('', '');
$started = time;
my $h = start_burst(13, \$out, \$err, 120);
my $busy_seen = $node->poll_query_until('postgres',
	'SELECT writer_busy_ms >= 1000 FROM snowflake_status()');
ok($busy_seen, 'a write that hangs shows in writer_busy_ms');
$h->finish;
$elapsed = time - $started;
diag(sprintf('with the writer blocked in a write, the statement ended after %.2f s: %s', $elapsed,
	$err =~ s/\n.*//sr));
like($err, qr/ERROR:  55000: .*reservation/, 'and the generator ends with an ERROR (55000)');
my $writes = status_of($node, 'reservation_writes');
# (The completed write went into the FIFO, which the writer may rename into place before the
# unlink here: the burst after it takes a write that puts a real file there.)
sysopen(my $reader, $fifo, O_RDWR | O_NONBLOCK) or die "open fifo: $!";
unlink($fifo);
$node->poll_query_until('postgres',
	"SELECT reservation_writes > $writes AND writer_busy_ms IS NULL FROM snowflake_status()")
  or die 'the reservation writer did not recover';
$writes = status_of($node, 'reservation_writes');
is($node->safe_psql('postgres', 'SELECT count(snowflake(13)) FROM generate_series(1, 3000000)'),
	'3000000', 'once the write completes, IDs flow');
ok(status_of($node, 'reservation_writes') > $writes && !-p $node->data_dir . '/snowflake.reservation',
	'and the reservation is a real file again');
close($reader);
$node->safe_psql('postgres', 'ALTER SYSTEM RESET snowflake.reservation_timeout');
$node->reload;

# --- Writes that fail (the temporary file's path is a directory): the generator's ERROR,
# and snowflake_status() still one row that says why.
$node->stop;
mkdir($node->data_dir . '/snowflake.reservation.tmp') or die;
$node->start;
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT snowflake()',
	timeout => 120, timed_out => \$timed_out);
like($stderr, qr/ERROR:  .*reservation/, 'writes failing: snowflake() raises an ERROR');
is( $node->safe_psql('postgres', q{
SELECT count(*), bool_and(reservation_failures > 0),
       bool_and(reservation_error LIKE '%snowflake.reservation%') FROM snowflake_status()}),
	'1|t|t', 'snowflake_status() is one row, with the failures and the last error, which names the file');
diag('reservation_error: ' . status_of($node, 'reservation_error'));
rmdir($node->data_dir . '/snowflake.reservation.tmp') or die;
ok($node->poll_query_until('postgres', 'SELECT snowflake() > 0'), 'once it can write, IDs flow again');

# --- A streaming standby: one row, in recovery, with the reservation it replayed. (A burst
# of 2,000,000 IDs of one shard needs reservations written after the standby started.)
$node->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'base', has_streaming => 1);
$standby->start;
my $last = $node->safe_psql('postgres',
	'SELECT max(s) FROM (SELECT snowflake(14) AS s FROM generate_series(1, 2000000)) x');
$node->wait_for_catchup($standby);
is( $standby->safe_psql('postgres', qq{
SELECT count(*), bool_and(in_recovery), bool_and(reservation_replayed_until >= snowflake_timestamp($last)),
       bool_and(writer_pid IS NULL) FROM snowflake_status()}),
	'1|t|t|t',
	'a standby: one row, in recovery, with a replayed reservation above the primary\'s last ID, no writer');
$standby->stop;

# --- The reservation file lost from a cluster that issued IDs: generation is refused (the
# server runs), until an operator accepts the clock.
my $before_loss = $node->safe_psql('postgres', 'SELECT snowflake()');
$node->stop;
unlink($file) or die;
ok($node->start(fail_ok => 1), 'a missing reservation file does not stop the server');
foreach my $call ('snowflake()', 'snowflake(5)', 'snowflake_uuidv7()', 'ulid()', 'sno()', 'rsxid()', 'ksuid()')
{
	($ret, $stdout, $stderr) = $node->psql('postgres', "SELECT $call",
		extra_params => [ '-v', 'VERBOSITY=verbose' ], timeout => 120, timed_out => \$timed_out);
	like($stderr,
		qr/ERROR:  55000: the snowflake reservation file "snowflake\.reservation" is missing.*HINT:  \S/s,
		"the file missing: $call is refused, with a hint");
}
is( $node->safe_psql('postgres',
		'SELECT count(*), bool_and(generation_refused IS NOT NULL) FROM snowflake_status()'),
	'1|t', 'snowflake_status().generation_refused says why');
diag('generation_refused: ' . status_of($node, 'generation_refused'));
$node->restart;
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT snowflake()',
	timeout => 120, timed_out => \$timed_out);
like($stderr, qr/the snowflake reservation file "snowflake\.reservation" is missing/,
	'still refused after a restart: never a silent fresh start');
$node->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT snowflake_reservation_create()',
	connstr => $node->connstr('postgres') . ' user=plain');
like($stderr, qr/ERROR:/, 'an ordinary role cannot accept the clock');
# Nor can a database owner, through the install script (the extension is trusted, so its
# script runs as a superuser): in a cluster where another database has the extension, a
# missing file was lost, and creating the extension again elsewhere leaves it refused.
$node->safe_psql('postgres', 'CREATE DATABASE owned OWNER plain');
($ret, $stdout, $stderr) = $node->psql('owned', 'CREATE EXTENSION snowflake',
	connstr => $node->connstr('owned') . ' user=plain');
is($ret, 0, 'a database owner creates the extension in another database');
like($stderr,
	qr/WARNING:  the snowflake reservation file "snowflake\.reservation" is missing, and database "postgres" has the extension/,
	'with a WARNING that names the database that has it');
foreach my $db ('owned', 'postgres')
{
	($ret, $stdout, $stderr) = $node->psql($db, 'SELECT snowflake()',
		timeout => 120, timed_out => \$timed_out);
	like($stderr, qr/the snowflake reservation file "snowflake\.reservation" is missing/,
		"and generation in $db stays refused");
}
ok(!-f $file, 'and no file is made');
$node->safe_psql('postgres', 'SELECT snowflake_reservation_create()');
ok(-f $file, 'snowflake_reservation_create() writes the file');
is( $node->safe_psql('postgres', qq{
SELECT snowflake() > $before_loss, snowflake_uuidv7() IS NOT NULL, ulid() IS NOT NULL,
       (SELECT generation_refused IS NULL FROM snowflake_status())}),
	't|t|t|t', 'and generation works again');

# --- A changed snowflake.epoch: the server starts, and every generator refuses.
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.epoch = '1314220021721'\n");
my $from = -s $node->logfile;
ok($node->start(fail_ok => 1), 'a changed snowflake.epoch does not stop the server');
foreach my $call ('snowflake()', 'snowflake(5)', 'snowflake_uuidv7()', 'ulid()', 'sno()', 'rsxid()', 'ksuid()')
{
	($ret, $stdout, $stderr) = $node->psql('postgres', "SELECT $call",
		extra_params => [ '-v', 'VERBOSITY=verbose' ], timeout => 120, timed_out => \$timed_out);
	like($stderr,
		qr/ERROR:  22023: snowflake\.epoch is 1314220021721, but IDs were issued with 1577836800000.*HINT:  \S/s,
		"a changed epoch: $call is refused, with a hint");
}
is( $node->safe_psql('postgres',
		q{SELECT count(*), bool_and(generation_refused LIKE '%snowflake.epoch%') FROM snowflake_status()}),
	'1|t', 'snowflake_status().generation_refused says so');
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.epoch = '1577836800000'\n");
$node->start;
is( $node->safe_psql('postgres',
		q{SELECT snowflake() > 0, (SELECT generation_refused IS NULL FROM snowflake_status())}),
	't|t', 'set back and restarted, it generates');

# --- The reservation's WAL records described: pg_walinspect (in the server, where a bad
# description would take the server down) and pg_waldump.
my $lsn0 = $node->lsn('insert');
$node->safe_psql('postgres', 'SELECT count(snowflake(15)) FROM generate_series(1, 2000000)');
my $lsn1 = $node->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
SKIP:
{
	skip 'pg_walinspect is not available', 2
	  unless $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_walinspect'});
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');
	my $records = $node->safe_psql('postgres', qq{
SELECT count(*), min(record_type), min(description)
  FROM pg_get_wal_records_info('$lsn0', '$lsn1') WHERE resource_manager = 'snowflake'});
	diag("pg_walinspect: snowflake records (count|type|description): $records");
	like($records, qr/^[1-9]\d*\|/, 'pg_walinspect lists and describes the reservation records');
	is($node->safe_psql('postgres', 'SELECT 1'), '1', 'and the server is still up');
	$node->safe_psql('postgres', 'DROP EXTENSION pg_walinspect');
}
my ($dump, $dump_err) = ('', '');
IPC::Run::run([ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $lsn0, '-e', $lsn1 ],
	'>', \$dump, '2>', \$dump_err);
my $dump_rc = $?;
my @dumped = grep { /rmgr: (?:snowflake|custom219)/ } split /\n/, $dump;
diag('pg_waldump: ' . (@dumped ? $dumped[0] : "no reservation record; exit $dump_rc: $dump_err"));
ok($dump_rc == 0 && @dumped > 0, 'pg_waldump reads the reservation records');

# --- Removing the library: after a clean stop (whose checkpoint leaves no WAL to replay)
# the server starts without it, the rows are there, and the extension can be dropped.
$node->safe_psql('postgres', q{
CREATE TABLE kept (id bigint PRIMARY KEY, u uuid);
INSERT INTO kept SELECT snowflake(), snowflake_uuidv7() FROM generate_series(1, 1000);
});
$node->stop('fast');
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
ok($node->start(fail_ok => 1), 'after a clean stop, the server starts without the library preloaded');
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM kept'), '1000|1000',
	'the rows are there');
is($node->psql('postgres', 'DROP EXTENSION snowflake'), 0, 'DROP EXTENSION snowflake works');
$node->stop('immediate');
ok($node->start(fail_ok => 1), 'and a crash after that recovers without the library');
is($node->safe_psql('postgres', 'SELECT count(*) FROM kept'), '1000', 'with the rows');
$node->stop;

# --- A cluster with the library preloaded that never ran CREATE EXTENSION: nothing of it in
# WAL, so after a crash it recovers without the library (no "resource manager with ID 219
# not registered").
my $bare = snowflake_node('bare');
$bare->start;
$bare->safe_psql('postgres', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g');
wait_for_writer($bare);
sleep 2;    # time for a writer's first pass, had it one to make (a slow one only passes it)
ok(!-e $bare->data_dir . '/snowflake.reservation', 'never CREATE EXTENSION: no reservation file');
$bare->stop('immediate');
$bare->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$from = -s $bare->logfile;
ok($bare->start(fail_ok => 1), 'nor a reservation in WAL: after an immediate stop it recovers without the library');
unlike(log_since($bare, $from), qr/resource manager with ID 219/,
	'no record of the resource manager 219 was met');
is($bare->safe_psql('postgres', 'SELECT count(*) FROM t'), '1000', 'and the data is there');
$bare->stop;

done_testing();
