# Shards leased from etcd (snowflake.shard_source = etcd), against a real 3-member etcd cluster
# of the platform's etcd-server, with lease_ttl 6 s, lease_fail_after 3 s, lease_renew 1 s:
# - servers with one identical configuration lease distinct shards, and a million IDs each,
#   made at once, repeat none; a base backup started as a new server with the pool full
#   issues no ID and says why; a clean stop frees the shard at once, and the next holder
#   starts above its IDs; a clean restart takes its shard back;
# - a server cut off from etcd (a paused proxy) refuses before its lease can expire, within
#   lease_fail_after of the cut and at once on every call from then on; a server
#   with its clock 10 minutes behind then takes the shard and issues only above the cut-off
#   server's IDs; healed, the cut-off server leases again by itself once the shard is free;
# - etcd unreachable at start: the server serves everything but snowflake(), which waits
#   reservation_timeout and says why; the first lease later needs no restart;
# - a standby holds no lease; promoted while its primary still runs, it leases another shard;
# - with 2 of 3 members stopped, generation stops, and resumes when quorum returns;
# - snowflake.shard_id and snowflake(shard) outside the lease are refused;
# - with one shard in the pool and lease_ttl 60 s, a lease worker that ends on an ERROR (one
#   injected at a reload) stops cleanly and revokes its lease, and after a SIGKILL of the lease
#   worker or of a backend (a crash-restart) the lease is taken back and snowflake() works
#   again long before the lease could have expired; its clean stop leaves the final mark
#   above its snos (their partition is the leased shard).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use IPC::Run;
use JSON::PP;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;
use EtcdCluster;

plan skip_all => 'no etcd binary (Debian: etcd-server)' unless EtcdCluster::etcd_binary();
my $faketime = faketime_library();

my $etcd = EtcdCluster->new('leases');

# A server in lease mode on $endpoints, leasing from $pool.
sub lease_node
{
	my ($name, $endpoints, $pool, $extra) = @_;
	return snowflake_node($name, qq{
snowflake.shard_source = etcd
snowflake.etcd_endpoints = '$endpoints'
snowflake.shard_pool = '$pool'
snowflake.lease_ttl = 6s
snowflake.lease_renew = 1s
snowflake.lease_fail_after = 3s
snowflake.reservation_timeout = 5s
} . ($extra // ''), allows_streaming => 1);
}

sub wait_state
{
	my ($node, $state) = @_;
	$node->poll_query_until('postgres',
		"SELECT lease_state = '$state' FROM snowflake_status()")
	  or die $node->name . " did not reach lease_state $state: "
	  . status_of($node, 'lease_state, etcd_error');
	return;
}

# snowflake() on $node: the ERROR's SQLSTATE and text, or '' when it issued an ID.
sub generate_error
{
	my ($node) = @_;
	my ($ret, $out, $err) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake()");
	return $ret == 0 ? '' : $err;
}

# Waits until snowflake() on $node fails (status first, then a real call); the ERROR.
sub wait_refusing
{
	my ($node) = @_;
	$node->poll_query_until('postgres',
		'SELECT generation_refused IS NOT NULL FROM snowflake_status()')
	  or die $node->name . ' kept generating';
	return generate_error($node);
}

# Calls $code every 100 ms until it returns true or $seconds have passed: the seconds it took,
# or undef.
sub within
{
	my ($seconds, $code) = @_;
	my $start = time;
	while (time - $start < $seconds)
	{
		return time - $start if $code->();
		usleep(100_000);
	}
	return undef;
}

# ---- One configuration, three servers: distinct shards, no repeat.
my @fleet = map { lease_node("fleet$_", $etcd->endpoints, '0-2') } 1 .. 3;
$_->start foreach @fleet;
$_->safe_psql('postgres', 'CREATE EXTENSION snowflake') foreach @fleet;
wait_state($_, 'held') foreach @fleet;
my @shards = map { status_of($_, 'lease_shard') } @fleet;
is(join(',', sort @shards), '0,1,2', 'three servers with one configuration lease distinct shards');
is(status_of($fleet[0], 'shard_source || lease_shard_count || (etcd_error IS NULL)::text'),
	'etcd1true', 'snowflake_status() shows the source, the range and no etcd error');
like(slurp_file($fleet[0]->logfile), qr/WARNING:  snowflake leased shard $shards[0] from etcd/,
	'the log says which shard was taken');

# A million IDs each, at once, gathered in one table.
my @runs;
foreach my $i (0 .. 2)
{
	my $file = $fleet[$i]->basedir . '/ids.txt';
	push @runs,
	  [ $file,
		IPC::Run::start(
			[ 'psql', '-XAtq', '-d', $fleet[$i]->connstr('postgres'),
				'-c', 'COPY (SELECT snowflake() FROM generate_series(1, 1000000)) TO STDOUT' ],
			'>', $file, '2>', "$file.err") ];
}
foreach my $run (@runs)
{
	$run->[1]->finish or die "generation failed: " . slurp_file("$run->[0].err");
}
$fleet[0]->safe_psql('postgres', 'CREATE TABLE fleet_ids (id bigint)');
$fleet[0]->safe_psql('postgres', "COPY fleet_ids FROM '$_->[0]'") foreach @runs;
is( $fleet[0]->safe_psql('postgres',
		'SELECT count(*), count(DISTINCT id), count(DISTINCT snowflake_shard(id)) FROM fleet_ids'),
	'3000000|3000000|3',
	'3,000,000 IDs made at once on three servers: none repeats, three shards');

# snowflake.shard_id and snowflake(shard) cannot leave the lease.
my ($ret, $out, $err) = $fleet[0]->psql('postgres', 'SET snowflake.shard_id = 5');
like($err, qr/snowflake.shard_id cannot be set while snowflake.shard_source is etcd/,
	'SET snowflake.shard_id is refused in lease mode');
($ret, $out, $err) = $fleet[0]->psql('postgres', 'ALTER ROLE CURRENT_USER SET snowflake.shard_id = 5');
like($err, qr/cannot be set while snowflake.shard_source is etcd/, 'and so is ALTER ROLE ... SET');
my $other = ($shards[0] + 1) % 3;
($ret, $out, $err) = $fleet[0]->psql('postgres', "SELECT snowflake($other)");
like($err, qr/shard $other is not leased by this server/, 'snowflake(shard) outside the lease is refused');
is($fleet[0]->safe_psql('postgres', "SELECT snowflake_shard(snowflake($shards[0]))"), $shards[0],
	'snowflake(shard) inside it works');

# snowflake_replica_guard() knows the leased shard as this server's own.
$fleet[0]->safe_psql('postgres', q{
CREATE TABLE applied (id bigint);
CREATE TRIGGER applied_guard BEFORE INSERT ON applied FOR EACH ROW EXECUTE FUNCTION snowflake_replica_guard('id');
ALTER TABLE applied ENABLE ALWAYS TRIGGER applied_guard;});
($ret, $out, $err) = $fleet[0]->psql('postgres', qq{SET session_replication_role = replica;
INSERT INTO applied VALUES ((snowflake() & ~(8191::bigint << 10)) | (${other}::bigint << 10));
INSERT INTO applied VALUES (snowflake());});
like($err, qr/shard collision: .* of shard $shards[0], this server's own.*on a shard this server leases/s,
	'an applied row with an ID of the leased shard is a shard collision');
unlike($err, qr/of shard $other,/, 'one of another server\'s shard is not');
# So does a sno of the leased range's first shard, the partition of this server's snos (in a
# session of its own: the WARNING is once per origin and backend).
$fleet[0]->safe_psql('postgres', q{
CREATE TABLE applied_sno (id sno);
CREATE TRIGGER applied_sno_guard BEFORE INSERT ON applied_sno FOR EACH ROW EXECUTE FUNCTION snowflake_replica_guard('id');
ALTER TABLE applied_sno ENABLE ALWAYS TRIGGER applied_sno_guard;});
($ret, $out, $err) = $fleet[0]->psql('postgres', qq{SET session_replication_role = replica;
INSERT INTO applied_sno VALUES ((substr(sno()::bytea, 1, 6) || decode(lpad(to_hex($other), 4, '0') || '0001', 'hex'))::sno);
INSERT INTO applied_sno VALUES (sno());});
like($err, qr/shard collision: .* carries sno \w{16} of partition $shards[0], this server's own.*on a shard this server leases/s,
	'an applied row with a sno of the leased shard is a shard collision');
unlike($err, qr/of partition $other,/, 'one of another server\'s partition is not');

# A base backup of fleet1 started as a new server, same configuration: the pool is full.
$fleet[0]->backup('clone_base');
my $clone = PostgreSQL::Test::Cluster->new('clone');
$clone->init_from_backup($fleet[0], 'clone_base');
$clone->start;
$err = wait_refusing($clone);
like($err, qr/SF001: snowflake\(\) has no shard lease from etcd/, 'a clone with the pool full issues no ID (SF001)');
like($err, qr/shard pool 0-2 has no 1 free shard in a row: 3 of its 3 shards are leased/,
	'and its DETAIL says the pool is full');
is(status_of($clone, 'lease_state'), 'acquiring', 'snowflake_status() shows it acquiring');

# fleet3 stops cleanly: its shard is free at once, and the clone starts above its IDs.
my $max3 = $fleet[0]->safe_psql('postgres',
	"SELECT max(id) FROM fleet_ids WHERE snowflake_shard(id) = $shards[2]");
$fleet[2]->stop;
wait_state($clone, 'held');
is(status_of($clone, 'lease_shard'), $shards[2], 'the clone takes the shard a clean stop freed');
ok($clone->safe_psql('postgres', "SELECT snowflake() > $max3"), 'above every ID its last holder issued');

# A clean restart takes its shard back.
$fleet[0]->restart;
wait_state($fleet[0], 'held');
is(status_of($fleet[0], 'lease_shard'), $shards[0], 'a clean restart takes its previous shard back');

# ---- Cut off: a paused proxy between one server and every etcd member.
my $proxy = $etcd->proxy;
# A waiting call would take reservation_timeout, 60 s here: unmistakable. The issue's settings
# (ttl 6 s, fail_after 3 s, renew 2 s, so a 2 s request timeout): a renewal sent before the
# deadline still hangs when it passes.
my $cut = lease_node('cut', $proxy->endpoints, '7-7',
	"snowflake.reservation_timeout = 60s\nsnowflake.lease_renew = 2s\n");
$cut->start;
$cut->safe_psql('postgres', q{CREATE EXTENSION snowflake; CREATE TABLE cut_ids (id bigint);
-- Calls snowflake() until it raises SF001, then $n times more: the server's time of the first
-- refusal, how long it took, and how long the longest refused call after it took, by the
-- server's clock. A
-- refused call that waited over 5 s ends the loop (it waited for a lease).
CREATE FUNCTION refusals(n int, OUT first_at float8, OUT first_ms float8, OUT longest_ms float8) LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
  t0 timestamptz;
  took float8;
  refused int := 0;
BEGIN
  longest_ms := 0;
  LOOP
    t0 := clock_timestamp();
    BEGIN
      PERFORM snowflake();
      PERFORM pg_sleep(0.01);
    EXCEPTION WHEN SQLSTATE 'SF001' THEN
      took := extract(epoch FROM clock_timestamp() - t0) * 1000;
      IF refused = 0 THEN
        first_at := extract(epoch FROM clock_timestamp());
        first_ms := took;
      ELSE
        longest_ms := greatest(longest_ms, took);
      END IF;
      refused := refused + 1;
      EXIT WHEN refused > n OR took > 5000;
    END;
    IF clock_timestamp() - started > interval '150 s' THEN
      RAISE EXCEPTION 'snowflake() was not refused';
    END IF;
  END LOOP;
END $$;});
wait_state($cut, 'held');
# The next holder has its clock 10 minutes behind (when libfaketime is here).
my $behind = lease_node('behind', $etcd->endpoints, '7-7');
if ($faketime) { start_with_clock($behind, '-10m'); }
else { $behind->start; diag("the next holder's clock is not behind: $no_faketime"); }
$behind->safe_psql('postgres', 'CREATE EXTENSION snowflake; CREATE TABLE behind_ids (id bigint)');
$cut->safe_psql('postgres', 'INSERT INTO cut_ids SELECT snowflake() FROM generate_series(1, 100000)');

$proxy->pause;
my $cut_at = time;
my ($first_at, $first_ms, $longest_ms) = split /\|/, $cut->safe_psql('postgres', 'SELECT * FROM refusals(20)');
my $refused_after = $first_at - $cut_at;
# The deadline is lease_fail_after after the last renewal sent before the cut; a call then
# refuses at once, never waiting for a lease that cannot come.
cmp_ok($refused_after, '<=', 3 + 1, 'cut off from etcd, snowflake() raises SF001 within lease_fail_after + 1 s of the cut');
# Measured inside the server (clock_timestamp() around each call), so no wall-clock race.
# The first one too: no call waits for the renewal that the worker still waits for (up to its
# 2 s timeout), nor for a mark that the unanswered request holds up (a call waits for a
# request 100 ms at most, LeaseSlot::worth_waiting): well under the 1 s between renewals,
# however busy the machine. (It waited up to the deadline before, 1,013.7 ms once.)
cmp_ok($first_ms, '<', 500, 'the first refused call is refused at once, well under lease_renew (1 s)');
cmp_ok($longest_ms, '<', 100, 'and every call from then on is refused at once, under 100 ms (reservation_timeout is 60 s)');
diag(sprintf('the cut-off server refused %.2f s after the cut (lease_fail_after 3 s) in %.1f ms; the longest of 20 refused calls after it took %.1f ms',
	$refused_after, $first_ms, $longest_ms));
like(generate_error($cut), qr/SF001: snowflake\(\) has no shard lease from etcd/, 'with SF001 and its message');
# Refused since the renewals fail (a call that needs the mark raised), lost once the deadline passed.
wait_state($cut, 'lost');
# The renewal in flight at the deadline fails up to its 2 s timeout later: then its error.
$cut->poll_query_until('postgres', 'SELECT etcd_error IS NOT NULL FROM snowflake_status()')
  or die 'no etcd error after the cut';
like(generate_error($cut), qr/DETAIL:  lease_state is lost: .*Last etcd error: http:\/\/127\.0\.0\.1:\d+: /s,
	'with the last etcd error in its DETAIL');
is($cut->safe_psql('postgres', 'SELECT count(*) FROM cut_ids'), '100000',
	'everything but generation goes on');
my $cut_max = $cut->safe_psql('postgres', 'SELECT max(id) FROM cut_ids');

wait_state($behind, 'held');
# The shard was free for the next holder only once etcd expired the cut-off server's lease;
# by then, the cut-off server must refuse (it stopped lease_fail_after after its last
# renewal, before the expiry).
like(generate_error($cut), qr/SF001/, 'the cut-off server refuses while another holds its shard');
$behind->safe_psql('postgres',
	'INSERT INTO behind_ids SELECT snowflake() FROM generate_series(1, 100000)');
is( $behind->safe_psql('postgres',
		"SELECT min(id) > $cut_max, count(DISTINCT snowflake_shard(id)) FROM behind_ids"),
	't|1', 'the next holder, its clock 10 minutes behind, issues only above the cut-off server\'s IDs');

# Healed, the cut-off server finds its lease gone; once the shard is free, it leases again.
$proxy->resume;
$cut->poll_query_until('postgres',
	q{SELECT etcd_error LIKE '%shard pool 7-7 has no 1 free shard%' FROM snowflake_status()})
  or die 'the healed server did not find the pool full: ' . status_of($cut, 'lease_state, etcd_error');
like(generate_error($cut), qr/SF001/, 'healed, it refuses while the shard is held elsewhere');
my $behind_max = $behind->safe_psql('postgres', 'SELECT snowflake()');
$behind->stop;
wait_state($cut, 'held');
ok($cut->safe_psql('postgres', "SELECT snowflake() > $behind_max"),
	'then it leases again by itself, above the last holder\'s IDs');
like(slurp_file($cut->logfile),
	qr/WARNING:  snowflake lost its shard lease: http:.*WARNING:  snowflake lost its shard lease: the lease expired in etcd.*WARNING:  snowflake leased shard 7 from etcd/s,
	'the log says when generation stopped, that the lease was gone, and when a lease was taken again');

# ---- etcd unreachable at start.
my $late_proxy = $etcd->proxy;
$late_proxy->pause;
my $late = lease_node('late', $late_proxy->endpoints, '9-10', "snowflake.shard_count = 2\n");
$late->start;
$late->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is($late->safe_psql('postgres', "SELECT ulid() IS NOT NULL, snowflake_uuidv7() IS NOT NULL"), 't|t',
	'with etcd unreachable at start, the server runs, and the 128-bit kinds generate');
like(generate_error($late), qr/SF001: .*lease_state is acquiring/s,
	'snowflake() says no lease is held yet');
# Once an attempt to lease has failed, a call has nothing to wait for: refused at once, not
# after reservation_timeout (5 s), timed inside the server.
$late->poll_query_until('postgres', 'SELECT etcd_error IS NOT NULL FROM snowflake_status()')
  or die 'no failed attempt seen';
create_refused_ms($late);
my $late_took = $late->safe_psql('postgres', 'SELECT refused_ms()');
cmp_ok($late_took || 1e9, '<', 100,
	'with etcd unreachable at start, snowflake() refuses at once once an attempt failed');
diag(sprintf('etcd unreachable at start: a call refused in %.1f ms', $late_took || -1));
$late_proxy->resume;
wait_state($late, 'held');
is($late->safe_psql('postgres', 'SELECT lease_shard, lease_shard_count FROM snowflake_status()'), '9|2',
	'the first lease, later, needs no restart: a range of snowflake.shard_count shards');
is( $late->safe_psql('postgres',
		'SELECT min(snowflake_shard(x)), max(snowflake_shard(x)) <= 10 FROM (SELECT snowflake() AS x FROM generate_series(1, 300000)) s'),
	'9|t', 'snowflake() issues within the leased range');
is($late->safe_psql('postgres', 'SELECT d.partition FROM sno_decode(sno(5)) d'), '9',
	'sno() is on the leased range\'s first shard');
is($late->safe_psql('postgres', 'SELECT snowflake_shard(snowflake(10))'), '10', 'snowflake(shard) on its second shard');

# ---- A standby holds no lease; promoted while its primary runs, it leases another shard.
my $primary = lease_node('primary', $etcd->endpoints, '20-21');
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake');
wait_state($primary, 'held');
$primary->backup('for_standby');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'for_standby', has_streaming => 1);
$standby->start;
is(status_of($standby, 'in_recovery, shard_source, lease_state, lease_shard IS NULL'), 't|etcd|none|t',
	'a standby shows its lease status, and holds none');
my $primary_shard = status_of($primary, 'lease_shard');
$standby->promote;
wait_state($standby, 'held');
isnt(status_of($standby, 'lease_shard'), $primary_shard,
	'promoted while its primary still runs, it leases another shard');
is($primary->safe_psql('postgres', 'SELECT snowflake_shard(snowflake())'), $primary_shard,
	'and the old primary still issues on its own');

# ---- Quorum loss: 2 of 3 members stopped.
$etcd->stop_member(1);
$etcd->stop_member(2);
$err = wait_refusing($primary);
like($err, qr/SF001/, 'without quorum, generation stops');
like(($primary->psql('postgres', 'SELECT sno()'))[2], qr/SF001|no shard lease/, 'sno() too');
$etcd->start_member(1);
$etcd->start_member(2);
$etcd->wait_healthy;
wait_state($primary, 'held');
is($primary->safe_psql('postgres', 'SELECT snowflake_shard(snowflake())'), $primary_shard,
	'and resumes on the same lease when quorum returns');

# ---- Settings that cannot work together: the server runs, says so at start, and refuses.
my $bad = lease_node('bad', $etcd->endpoints, '30-30', "snowflake.lease_fail_after = 7s\n");
$bad->start;
$bad->safe_psql('postgres', 'CREATE EXTENSION snowflake');
like(generate_error($bad),
	qr/22023: snowflake.shard_source is etcd, but snowflake.lease_fail_after \(7000 ms\) must be at least 1 s below snowflake.lease_ttl \(6000 ms\)/,
	'lease_fail_after at or above lease_ttl: snowflake() refuses (22023), naming both');
like(slurp_file($bad->logfile), qr/WARNING:  snowflake.shard_source is etcd, but snowflake.lease_fail_after/,
	'and a WARNING at start said it');
like(status_of($bad, 'generation_refused'), qr/snowflake.lease_fail_after/, 'so does snowflake_status()');
$bad->stop;
my $typed = lease_node('typed', $etcd->endpoints, '31-31', "snowflake.shard_id = 4\n");
$typed->start;
$typed->safe_psql('postgres', 'CREATE EXTENSION snowflake');
like(generate_error($typed), qr/snowflake.shard_id is set in the configuration file, but snowflake.shard_source is etcd/,
	'a shard id in the configuration file is refused in lease mode');
$typed->stop;

# ---- A lease worker that ends, however it ends, gives its lease back. One shard in the pool and
# lease_ttl 60 s: a lease left to expire would stop generation for a minute.
my $once;
my $once_clock;
{
	# A test-only hook: an ERROR in the lease worker's reload path.
	local $ENV{SNOWFLAKE_TEST_ERROR_AT_RELOAD} = '1';
	$once = lease_node('once', $etcd->endpoints, '40-40',
		"snowflake.lease_ttl = 60s\nrestart_after_crash = on\n");
	if ($faketime)
	{
		# Its clock from a file, to be stepped at the end.
		$once_clock = $once->basedir . '/faketime';
		set_clock_file($once_clock, '+0');
		start_with_clock_file($once, $once_clock);
	}
	else { $once->start; }
}
$once->safe_psql('postgres', 'CREATE EXTENSION snowflake');
wait_state($once, 'held');
my $owner_lease = sub {
	my $kv = $etcd->keys_under('/snowflake/owner/0040');
	return $kv->{'/snowflake/owner/0040'} ? $kv->{'/snowflake/owner/0040'}[1] : 0;
};
my $works = sub { my ($r) = eval { $once->psql('postgres', 'SELECT snowflake()') }; return defined $r && $r == 0; };
my $first_lease = $owner_lease->();
ok($first_lease, 'the owner key of the one shard carries the lease');
my $log_at = -s $once->logfile;
$once->reload;
ok(defined within(40, sub { $owner_lease->() ne $first_lease }),
	'an ERROR in the lease worker at a reload ends it with a clean stop: its lease is revoked, not left for lease_ttl');
# The LOG line comes as the worker exits, after its stop revoked the lease: waited for.
ok(defined within(40, sub { log_since($once, $log_at) =~ /snowflake lease worker stopped on an ERROR at a reload: error injected/ }),
	'the log says why the worker stopped');
ok(defined within(40, $works), 'the restarted worker leases the shard again');

# A worker that ends without its stop and with no crash-restart (the test hook's exit at a
# reload): the lease stays in shared memory, and the next worker takes it back.
{
	my $lease_before = $owner_lease->();
	my $before = $once->safe_psql('postgres', 'SELECT snowflake()');
	my $flag = $once->data_dir . '/snowflake_test_exit_at_reload';
	open(my $fh, '>', $flag) or die "$flag: $!";
	close $fh;
	$log_at = -s $once->logfile;
	$once->reload;
	ok( defined within(15, sub {
				log_since($once, $log_at) =~ /snowflake takes back the lease \d+ it held before the restart of its lease worker/;
			}),
		'a lease worker that exits without its stop is started again, and takes its lease back');
	unlink $flag or die "$flag: $!";
	ok(defined within(15, $works), 'and snowflake() works again');
	is($owner_lease->(), $lease_before, 'on the same lease, renewed');
	unlike(log_since($once, $log_at), qr/terminating any other active server processes/, 'with no crash-restart');
	ok($once->safe_psql('postgres', "SELECT snowflake() > $before"), 'IDs go on above the ones before');
}

foreach my $victim ('the lease worker', 'a backend')
{
	my $before = $once->safe_psql('postgres', 'SELECT snowflake()');
	my $lease_before = $owner_lease->();
	my $pid;
	my $sleeper;
	if ($victim eq 'a backend')
	{
		$sleeper = IPC::Run::start(
			[ 'psql', '-XAtq', '-d', $once->connstr('postgres'), '-c', 'SELECT pg_sleep(600)' ],
			'>', \my $sleep_out, '2>', \my $sleep_err);
		$once->poll_query_until('postgres',
			q{SELECT count(*) = 1 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'})
		  or die 'no sleeping backend';
		$pid = $once->safe_psql('postgres',
			q{SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'});
	}
	else
	{
		# A worker with no database connection is not in pg_stat_activity: by its title.
		my $title = 'postgres: ' . $once->name . ': snowflake lease worker';
		poll_until(sub {
			foreach my $cmdline (glob('/proc/[0-9]*/cmdline'))
			{
				my $args = eval { slurp_file($cmdline) } // next;
				($pid) = $cmdline =~ m{/proc/(\d+)/} if index($args, $title) == 0;
			}
			return $pid;
		}) or die 'no lease worker';
	}
	$log_at = -s $once->logfile;
	kill 'KILL', $pid;
	$sleeper->finish if $sleeper;
	# A crash-restart of the server, then the lease held before it is taken back: long before
	# etcd could expire it (60 s).
	# eval: psql refused during the restart can exit before IPC::Run writes its query (EPIPE).
	my $took = within(15, sub { eval { $once->psql('postgres', 'SELECT 1') == 0 && $works->() } });
	ok(defined $took, "after a SIGKILL of $victim, snowflake() works again before the old lease could expire");
	diag(sprintf("after a SIGKILL of $victim, snowflake() worked again in %.1f s (lease_ttl 60 s)", $took // -1));
	like(log_since($once, $log_at), qr/snowflake takes back the lease \d+ it held before the crash-restart/,
		'the log says the lease held before is taken back');
	is($owner_lease->(), $lease_before, 'the owner key still carries that lease: the same lease, renewed');
	ok($once->safe_psql('postgres', "SELECT snowflake() > $before"), 'and IDs go on above the ones before');
}

# A step of the clock in lease mode: reported (before the reading that the lease's deadline is
# checked against, so a client that does not read cannot hold a backend past it), and followed.
SKIP:
{
	skip "the clock cannot be stepped: $no_faketime", 2 unless $once_clock;
	set_clock_file($once_clock, '+1h');
	my $warning;
	poll_until(sub {
		my ($r, $o, $e) = $once->psql('postgres', 'SELECT snowflake()');
		$warning = $e if $e =~ /system clock stepped forward/;
		return defined $warning;
	}) or die 'no clock step seen';
	like($warning, qr/WARNING:  system clock stepped forward by 3\d{3}\.\d+ s/, 'a clock step in lease mode is reported');
	# now() is the stepped clock too: against the test's own.
	ok($once->safe_psql('postgres', 'SELECT snowflake_timestamp(snowflake()) > to_timestamp(' . time . ") + interval '59 min'"),
		'and the leased IDs follow it');
}
# Its snos carry the leased shard as their partition, made after its last snowflake() ID (the
# last millisecond of their last 4 ms unit): the final mark of its clean stop, where the next
# holder starts, must be above them too, or a next holder with its clock a little behind would
# make the same snos again.
my $sno_ms = $once->safe_psql('postgres',
	'SELECT (extract(epoch FROM sno_timestamp(s)) * 1000)::bigint + 3 FROM (SELECT sno() AS s FROM generate_series(1, 1000)) x ORDER BY s DESC LIMIT 1');
# So do its rsxids and ksuids (the shard in the xid's machine id and the KSUID's payload), whose
# time for the mark is their second's first millisecond: made over 3 s after the snos (and after
# the mark read when the lease was last taken, at most 2 lease_renew ahead), they are the latest
# values of the range, and a mark that left them out would be below them.
$once->poll_query_until('postgres',
	"SELECT clock_timestamp() > to_timestamp(($sno_ms + 3000) / 1000.0)")
  or die 'the clock did not move on';
my ($rsxid_ms, $ksuid_ms) = split /\|/, $once->safe_psql('postgres', q{
SELECT (extract(epoch FROM rsxid_timestamp(max(x))) * 1000)::bigint, (extract(epoch FROM ksuid_timestamp(max(k))) * 1000)::bigint
  FROM (SELECT rsxid() AS x, ksuid() AS k FROM generate_series(1, 1000)) s});
$once->stop;
my $mark = $etcd->keys_under('/snowflake/mark/')->{'/snowflake/mark/0040'};
my $mark_ms = $mark ? decode_json($mark->[0])->{unix_ms} : 0;
cmp_ok($mark_ms, '>', $sno_ms, 'the final mark of a clean stop is above the snos issued on the leased shard');
cmp_ok($mark_ms, '>', $rsxid_ms, 'and above the second of the rsxids');
cmp_ok($mark_ms, '>', $ksuid_ms, 'and of the ksuids');

done_testing();
