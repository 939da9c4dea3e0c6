# What the TAP tests (test/t/) share: a server with the library preloaded, a server started
# with its clock offset (libfaketime), a postmaster killed and gone, a setting changed and
# seen, the log since a point, how far new IDs run ahead of the clock, new IDs checked against
# the old ones in a copy of a server's data, and a condition polled for (never a fixed sleep:
# the machine may be slow).
package SnowflakeTest;

use strict;
use warnings FATAL => 'all';
use Exporter 'import';
use List::Util qw(max);
use Test::More ();
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(
  faketime_library $no_faketime
  snowflake_node etcd_user_node create_refused_ms with_clock start_with_clock start_with_clock_file set_clock_file
  start_expecting_stop kill9_and_wait set_and_reload log_since lead_ms writer_pids poll_until
  wait_for_writer ids_ahead_s new_ids_above_old status_of);

# Where libfaketime's preload library may be: Debian and Ubuntu (a folder per architecture),
# Fedora and openSUSE (lib64), a build from source (/usr/local).
my @faketime_globs = (
	'/usr/lib/*/faketime/libfaketime.so.1', '/usr/lib64/faketime/libfaketime.so.1',
	'/usr/lib/faketime/libfaketime.so.1', '/usr/local/lib/faketime/libfaketime.so.1',
	'/usr/local/lib/*/faketime/libfaketime.so.1');

# Why a test of a clock fault skips: set by faketime_library() when it finds none that works.
our $no_faketime = 'libfaketime was not looked for';

my $faketime_found;    # faketime_library()'s answer, once known: a path, or '' for none

# libfaketime's preload library, wherever this platform keeps it, if it moves the clock of a
# process here; undef otherwise, with the reason in $no_faketime.
sub faketime_library
{
	if (!defined $faketime_found)
	{
		my @found = grep { -f $_ } map { glob($_) } @faketime_globs;
		$faketime_found = '';
		$no_faketime = 'libfaketime is not installed (no ' . join(', ', @faketime_globs) . ')';
		foreach my $lib (@found)
		{
			local $ENV{LD_PRELOAD} = $lib;
			local $ENV{FAKETIME} = '-1h';
			my $faked = `date +%s 2>/dev/null`;
			if ($faked =~ /^(\d+)$/ && abs($1 - (time - 3600)) < 60)
			{
				$faketime_found = $lib;
				last;
			}
			$no_faketime = "libfaketime ($lib) does not move the clock of a process here";
		}
		# Said where prove shows it, not only in the TAP stream of the skipped tests.
		Test::More::diag("the clock-fault tests skip: $no_faketime") if $faketime_found eq '';
	}
	return $faketime_found eq '' ? undef : $faketime_found;
}

# A new server with the library preloaded and $conf added to its postgresql.conf (not yet
# started: some start under libfaketime). %init goes to init().
sub snowflake_node
{
	my ($name, $conf, %init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%init);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'snowflake'\n" . ($conf // ''));
	return $node;
}

# A new server in lease mode on $endpoints that logs in to etcd as $user, its password in a
# file of mode 0600 in its data directory, with short lease settings (ttl 6 s, renew 1 s,
# fail_after 3 s) and $conf added (not yet started).
sub etcd_user_node
{
	my ($name, $endpoints, $user, $password, $conf) = @_;
	my $node = snowflake_node($name, qq{
snowflake.shard_source = etcd
snowflake.etcd_endpoints = '$endpoints'
snowflake.etcd_user = '$user'
snowflake.etcd_password_file = 'etcd.password'
snowflake.lease_ttl = 6s
snowflake.lease_renew = 1s
snowflake.lease_fail_after = 3s
} . ($conf // ''));
	my $file = $node->data_dir . '/etcd.password';
	PostgreSQL::Test::Utils::append_to_file($file, "$password\n");
	chmod 0600, $file;
	return $node;
}

# refused_ms() on $node: the milliseconds, by the server's clock, that a snowflake() call
# took to be refused with SF001 (NULL if it was not refused).
sub create_refused_ms
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{CREATE FUNCTION refused_ms() RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  PERFORM snowflake();
  RETURN NULL;
EXCEPTION WHEN SQLSTATE 'SF001' THEN
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;});
	return;
}

# Runs $code with libfaketime preloaded and these settings of it. The monotonic clock stays
# real: the IDs' clock runs at real rate from the wall clock it starts at, and a change of
# the offset is a step of the wall clock alone. (DONT_FAKE_MONOTONIC for libfaketime before
# 0.9.10, FAKETIME_DONT_FAKE_MONOTONIC after.)
sub under_faketime
{
	my ($code, %settings) = @_;
	my $lib = faketime_library() or die "no libfaketime: $no_faketime";
	local $ENV{LD_PRELOAD} = $lib;
	local $ENV{DONT_FAKE_MONOTONIC} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	local @ENV{ keys %settings } = values %settings;
	return $code->();
}

# Runs $code with the wall clock $offset away from the real one ('-10m', '+1h') for every
# process it starts. A test calls it only once faketime_library() found the library.
sub with_clock
{
	my ($offset, $code) = @_;
	return under_faketime($code, FAKETIME => $offset);
}

# Starts $node with its wall clock $offset away from the real one, it and every process it
# starts.
sub start_with_clock
{
	my ($node, $offset, %start) = @_;
	return with_clock($offset, sub { $node->start(%start) });
}

# Starts $node with its clock offset by what $file says: libfaketime rereads it (at most a
# second or two after it changes), so the clock of the running server can be stepped.
sub start_with_clock_file
{
	my ($node, $file, %start) = @_;
	return under_faketime(sub { $node->start(%start) },
		FAKETIME_TIMESTAMP_FILE => $file, FAKETIME_CACHE_DURATION => '1');
}

# Sets the offset ('+0', '-1h') in $file, the clock file of start_with_clock_file. The file is
# replaced by a rename, never rewritten in place: libfaketime 0.9.12 and trixie's 0.9.10+2024
# end the process that reads an empty file.
sub set_clock_file
{
	my ($file, $offset) = @_;
	open my $fh, '>', "$file.tmp" or die "open $file.tmp: $!";
	print $fh $offset;
	close $fh;
	rename("$file.tmp", $file) or die "rename $file.tmp: $!";
	return;
}

# Starts $node, which is expected to stop by itself, and waits until it has: its log matches
# $pattern and its postmaster.pid is gone. True when it stopped so. pg_ctl does not wait for
# the server here: a waiting start (Cluster's start) reads postmaster.pid after pg_ctl saw the
# server ready, and bails out the whole run when the server stopped in between. A server that
# is still running at the end is left known to the node, so that teardown stops it.
sub start_expecting_stop
{
	my ($node, $pattern) = @_;
	PostgreSQL::Test::Utils::system_log('pg_ctl', '-W', '-D', $node->data_dir,
		'-l', $node->logfile, '-o', '--cluster-name=' . $node->name, 'start') == 0
	  or die 'pg_ctl start failed for ' . $node->name;
	my $pidfile = $node->data_dir . '/postmaster.pid';
	return 1
	  if poll_until(
		sub { !-e $pidfile && -e $node->logfile && slurp_file($node->logfile) =~ $pattern });
	$node->_update_pid(-1);
	return 0;
}

# SIGKILL of the postmaster, then a wait (poll_until) until its children have noticed and
# exited. Where nothing reaps the postmaster (a container whose first process does not), its
# zombie keeps the lock files looking alive: then they are stale, and go.
sub kill9_and_wait
{
	my ($node) = @_;
	my $postmaster = $node->{_pid};
	my $title = 'postgres: ' . $node->name . ': ';
	# Its children, by parent pid too: a server under qemu-user (the arm64 suite) sets its
	# process titles in the emulated memory, so they never show in /proc. It is stopped first,
	# so that it forks none between this look and the SIGKILL (test/arm64/kill9_wait.pl).
	kill 'STOP', $postmaster if $postmaster;    # (never pid 0: the test's own process group)
	my @children = grep { my $stat = proc_stat($_); $stat && $stat->[3] == $postmaster }
	  map { m{^/proc/(\d+)/stat$} ? $1 : () } glob('/proc/[0-9]*/stat');
	$node->kill9;
	my $gone = sub {
		foreach my $pid ($postmaster, @children)
		{
			my $stat = proc_stat($pid);
			return 0 if defined($stat) && $stat->[2] ne 'Z';
		}
		foreach my $cmdline (glob('/proc/[0-9]*/cmdline'))
		{
			my $args = eval { slurp_file($cmdline) } // next;
			return 0 if index($args, $title) == 0;
		}
		return 1;
	};
	poll_until($gone);
	if (-e "/proc/$postmaster")
	{
		unlink($node->data_dir . '/postmaster.pid');
		unlink($node->host . '/.s.PGSQL.' . $node->port . '.lock');
	}
	return;
}

# The fields of /proc/$pid/stat (pid, comm, state, ppid, ...), or undef when it is gone. (comm
# may hold spaces: the fields after it are split from its closing parenthesis on.)
sub proc_stat
{
	my ($pid) = @_;
	my $stat = eval { slurp_file("/proc/$pid/stat") } // return undef;
	my ($head, $comm, $rest) = $stat =~ /^(\d+) \((.*)\) (.*)$/s or return undef;
	return [ $head, $comm, split(/ /, $rest) ];
}

# ALTER SYSTEM SET each name to its value, reload, and wait until the server has them.
sub set_and_reload
{
	my ($node, %settings) = @_;
	foreach my $name (sort keys %settings)
	{
		$node->safe_psql('postgres', "ALTER SYSTEM SET $name = '$settings{$name}'");
	}
	$node->reload;
	my $check = join(' AND ',
		map { "current_setting('$_') = '$settings{$_}'" } sort keys %settings);
	$node->poll_query_until('postgres', "SELECT $check")
	  or die 'not reloaded: ' . join(', ', map { "$_ = '$settings{$_}'" } sort keys %settings);
	return;
}

# The server's log from byte $from on (a position taken with -s $node->logfile).
sub log_since
{
	my ($node, $from) = @_;
	return substr(slurp_file($node->logfile), $from);
}

# Calls $code every 100 ms until it returns true, for $PostgreSQL::Test::Utils::timeout_default
# seconds at most (a condition, never a fixed sleep, on a machine of any speed); returns what
# it last returned.
sub poll_until
{
	my ($code) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	my $result;
	until (($result = $code->()) || time > $deadline) { usleep(100_000); }
	return $result;
}

# Waits until $node runs its reservation writer; dies if it does not.
sub wait_for_writer
{
	my ($node) = @_;
	poll_until(sub { scalar writer_pids($node) })
	  or die 'no reservation writer on ' . $node->name;
	return;
}

# How far $ahead's IDs are ahead of $behind's, in s: an ID of $behind, then one of $ahead, so
# that the time between the two calls (longer on a slow machine) adds to the gap, never hides it.
sub ids_ahead_s
{
	my ($ahead, $behind) = @_;
	my $id = $behind->safe_psql('postgres', 'SELECT snowflake()');
	return $ahead->safe_psql('postgres',
		"SELECT extract(epoch FROM snowflake_timestamp(snowflake()) - snowflake_timestamp($id))");
}

# $expr over $node's snowflake_status() (one row, on a primary and a standby).
sub status_of
{
	my ($node, $expr) = @_;
	return $node->safe_psql('postgres', "SELECT $expr FROM snowflake_status()");
}

# How far a new value of each kind is ahead of the clock, in ms (the largest of the three).
sub lead_ms
{
	my ($node) = @_;
	my $out = $node->safe_psql('postgres', q{
SELECT round(extract(epoch FROM snowflake_timestamp(snowflake()) - clock_timestamp()) * 1000),
       round(extract(epoch FROM uuidv7_timestamp(snowflake_uuidv7()) - clock_timestamp()) * 1000),
       round(extract(epoch FROM ulid_timestamp(ulid()) - clock_timestamp()) * 1000)});
	return max(split /\|/, $out);
}

# One test: on $node, whose table ids (sf bigint, v7 uuid, ul ulid, x rsxid, k ksuid) holds IDs issued before
# (by it or the server it was copied from), 10,000 new IDs of every kind, and 10,000 of shard
# $shard, are each above every old one of their kind and shard (snowflake IDs on the server's
# own snowflake.shard_id and on $shard).
sub new_ids_above_old
{
	my ($node, $shard, $name) = @_;
	return Test::More::is(
		$node->safe_psql(
			'postgres', qq{
CREATE TABLE new_ids AS SELECT snowflake() AS sf, snowflake_uuidv7() AS v7, ulid() AS ul,
    rsxid() AS x, ksuid() AS k
  FROM generate_series(1, 10000);
INSERT INTO new_ids (sf) SELECT snowflake($shard) FROM generate_series(1, 10000);
SELECT (SELECT min(sf) FROM new_ids WHERE snowflake_shard(sf) = s.own) > (SELECT max(sf) FROM ids WHERE snowflake_shard(sf) = s.own),
       (SELECT min(sf) FROM new_ids WHERE snowflake_shard(sf) = $shard) > (SELECT max(sf) FROM ids WHERE snowflake_shard(sf) = $shard),
       (SELECT v7 FROM new_ids WHERE v7 IS NOT NULL ORDER BY v7 LIMIT 1)
         > (SELECT v7 FROM ids WHERE v7 IS NOT NULL ORDER BY v7 DESC LIMIT 1),
       (SELECT min(ul) FROM new_ids) > (SELECT max(ul) FROM ids),
       (SELECT min(x) FROM new_ids) > (SELECT max(x) FROM ids),
       (SELECT min(k) FROM new_ids) > (SELECT max(k) FROM ids),
       (SELECT count(*) FROM ids) > 0
  FROM (SELECT current_setting('snowflake.shard_id')::integer AS own) s}),
		't|t|t|t|t|t|t', $name);
}

# The pids of $node's reservation writers. The writer needs no database connection, so it
# shows among the postmaster's children in ps, not in pg_stat_activity.
sub writer_pids
{
	my ($node) = @_;
	my $postmaster = $node->{_pid};
	return map { /^\s*(\d+)\s/ ? $1 : () }
	  grep { /snowflake reservation writer/ } split /\n/, `ps -o pid=,args= --ppid $postmaster`;
}

1;
