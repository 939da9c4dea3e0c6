# The lease soak (scripts/lease_soak.sh runs it): 4 servers in lease mode on one 3-member etcd
# cluster with users on and JWT tokens (each server authenticates as a user allowed under the
# prefix alone), each behind a proxy of its own, each under pgbench load that inserts
# snowflake() IDs, SNOWFLAKE_SOAK_RATE (1,000) transactions of 50 IDs a second each
# (unthrottled, 120 s made 94 million rows on 2 cores: 600 s would be tens of GB to gather),
# for SNOWFLAKE_SOAK_SECONDS (600). Every 15 to 30 s a fault, drawn at random
# so that every kind comes once in each round of draws: a server killed (SIGKILL) and started
# again, a clean restart, a partition from etcd for 10 s, its clock stepped back 5 minutes or
# forward 2, an etcd member stopped for 15 s, a change of etcd's users and roles (a user added
# and granted a role: every token signed before it is refused), one backend of a server
# killed (SIGKILL: the server restarts every process, its lease worker among them). A probe
# per server calls snowflake() every 100 ms (statement_timeout 1 s) and records each success.
# At the end every ID committed on every server is gathered in one table: the test fails on
# any duplicate. It reports, for each fault, the longest time the server it hit went without
# an ID (a member stopped and a change of users count for every server), and how many IDs
# each server made.
use strict;
use warnings FATAL => 'all';
use List::Util qw(shuffle sum);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;
use EtcdCluster;

plan skip_all => 'no etcd binary (Debian: etcd-server)' unless EtcdCluster::etcd_binary();
my $faketime = faketime_library();
my $seconds = $ENV{SNOWFLAKE_SOAK_SECONDS} // 600;
my $rate = $ENV{SNOWFLAKE_SOAK_RATE} // 1000;
srand($ENV{SNOWFLAKE_SOAK_SEED} // time);
my @kinds = ('kill', 'restart', 'partition', 'clock back', 'clock forward', 'member', 'users',
	'backend kill');
@kinds = grep { !/clock/ } @kinds unless $faketime;
# SNOWFLAKE_SOAK_FAULTS='users,backend kill' draws from these kinds alone.
if (my $only = $ENV{SNOWFLAKE_SOAK_FAULTS})
{
	my @only = split /\s*,\s*/, $only;
	my %known = map { $_ => 1 } @kinds;
	foreach (@only)
	{
		die "SNOWFLAKE_SOAK_FAULTS: no fault \"$_\" here; the kinds: " . join(', ', @kinds)
		  unless $known{$_};
	}
	@kinds = @only;
}

my $password = 'soak-fleet-password';
my $etcd = EtcdCluster->new('soak', jwt => 1);
$etcd->enable_auth('fleet', $password, '/snowflake');
my (@nodes, @proxies, @clock_files);
foreach my $i (0 .. 3)
{
	my $proxy = $etcd->proxy;
	my $node = snowflake_node("s$i", qq{
snowflake.shard_source = etcd
snowflake.etcd_endpoints = '@{[ $proxy->endpoints ]}'
snowflake.etcd_user = 'fleet'
snowflake.etcd_password_file = 'etcd.password'
# Plain http on loopback: TLS certificates would not be valid yet for a clock stepped back.
snowflake.etcd_allow_plaintext_password = on
snowflake.shard_pool = '0-5'
snowflake.lease_ttl = 6s
snowflake.lease_renew = 1s
snowflake.lease_fail_after = 3s
max_connections = 30
# A backend killed makes the server restart every process (the test library turns it off).
restart_after_crash = on
});
	my $pwfile = $node->data_dir . '/etcd.password';
	PostgreSQL::Test::Utils::append_to_file($pwfile, "$password\n");
	chmod 0600, $pwfile;
	my $clock = $node->basedir . '/clock';
	PostgreSQL::Test::Utils::append_to_file($clock, "+0\n");
	push @nodes, $node;
	push @proxies, $proxy;
	push @clock_files, $clock;
}

sub start_node
{
	my ($i) = @_;
	if ($faketime) { start_with_clock_file($nodes[$i], $clock_files[$i]); }
	else { $nodes[$i]->start; }
	return;
}
start_node($_) foreach 0 .. 3;
foreach my $node (@nodes)
{
	$node->safe_psql('postgres', 'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint)');
	$node->poll_query_until('postgres', q{SELECT lease_state = 'held' FROM snowflake_status()})
	  or die 'no lease';
}

# Load and probes: loops in the background until $end, each started again whenever its
# server goes away under it.
my $end = int(time) + $seconds;
my $script = PostgreSQL::Test::Utils::tempdir() . '/load.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"INSERT INTO ids SELECT snowflake() FROM generate_series(1, 50);\n");
my @jobs;
foreach my $i (0 .. 3)
{
	my $conn = $nodes[$i]->connstr('postgres');
	my $dir = $nodes[$i]->basedir;
	push @jobs, IPC::Run::start([ 'bash', '-c', qq{
while [ "\$(date +%s)" -lt $end ]; do
  pgbench --no-vacuum --client=2 --jobs=1 --time=10 --rate=$rate --file='$script' '$conn' >>'$dir/load.log' 2>&1
  sleep 0.2
done} ]);
	push @jobs, IPC::Run::start([ 'bash', '-c', qq{
while [ "\$(date +%s)" -lt $end ]; do
  if psql -XAtq -d '$conn' -c "SET statement_timeout = '1s'" -c 'SELECT snowflake()' >/dev/null 2>&1; then s=ok; else s=fail; fi
  echo "\$s \$(date +%s.%N)" >>'$dir/probe.log'
  sleep 0.1
done} ]);
}

# Waits $s seconds whatever signals come: sleep returns early when a child process ends.
sub pause_for
{
	my $until = time + shift;
	while ((my $left = $until - time) > 0) { Time::HiRes::sleep($left); }
	return;
}

# Kills one backend of server $i (SIGKILL): the postmaster ends every other process, the load's
# and the lease worker among them, and starts again by itself. The backend is a session of its
# own, there whatever the load does (its pgbench may be between runs). Waits until the server
# takes connections again.
sub kill_backend
{
	my ($i) = @_;
	my $node = $nodes[$i];
	my $victim = IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c', 'SELECT pg_sleep(600) -- victim' ],
		'>', \my $out, '2>', \my $err);
	my $pid;
	poll_until(
		sub {
			$pid = $node->safe_psql('postgres',
				q{SELECT pid FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600) -- victim' AND pid <> pg_backend_pid()});
			return $pid ne '';
		}) or die "the session to kill did not start on s$i";
	kill 'KILL', $pid;
	# The restart is under way once the postmaster has reaped the backend.
	poll_until(sub { !kill(0, $pid) }) or die "backend $pid of s$i did not end";
	$victim->finish;
	$node->poll_query_until('postgres', 'SELECT true') or die "s$i did not come back";
	return;
}

my $rbac_changes = 0;

# The faults.
my @faults;    # [time, server (or -1: all), what]
my @bag;
while (time < $end - 40)
{
	pause_for(15 + int(rand(15)));
	last if time >= $end - 25;
	@bag = shuffle(@kinds) unless @bag;
	my $kind = shift @bag;
	my $i = int(rand(4));
	my $at = time;
	if ($kind eq 'kill')
	{
		kill9_and_wait($nodes[$i]);
		start_node($i);
	}
	elsif ($kind eq 'backend kill')
	{
		kill_backend($i);
	}
	elsif ($kind eq 'users')
	{
		$i = -1;
		++$rbac_changes;
		$etcd->add_user_with_role("auditor$rbac_changes", "/elsewhere/$rbac_changes");
		$kind = 'users and roles changed';
	}
	elsif ($kind eq 'restart')
	{
		$nodes[$i]->stop('fast');
		start_node($i);
	}
	elsif ($kind eq 'partition')
	{
		$proxies[$i]->pause;
		pause_for(10);
		$proxies[$i]->resume;
	}
	elsif ($kind =~ /^clock (back|forward)/)
	{
		open(my $fh, '>', $clock_files[$i]) or die;
		print $fh($1 eq 'back' ? "-5m\n" : "+2m\n");
		close $fh;
	}
	else
	{
		$i = -1;
		my $m = int(rand(3));
		$kind = "etcd member m$m stopped";
		$etcd->stop_member($m);
		pause_for(15);
		$etcd->start_member($m);
	}
	$kind .= sprintf(' %.0f s', time - $at) if $kind =~ /^partition|^etcd member/;
	push @faults, [ $at, $i, $kind ];
	note(sprintf('%4.0f s: %s on %s', $at - ($end - $seconds), $kind, $i < 0 ? 'etcd' : "s$i"));
}
$_->finish foreach @jobs;

# Every ID, in one table.
my @files;
foreach my $i (0 .. 3)
{
	$nodes[$i]->poll_query_until('postgres', 'SELECT true') or die;
	my $file = $nodes[$i]->basedir . '/ids.copy';
	$nodes[$i]->safe_psql('postgres', "COPY ids TO '$file'");
	push @files, $file;
}
$nodes[0]->safe_psql('postgres', 'CREATE TABLE every_id (server int, id bigint)');
foreach my $i (0 .. 3)
{
	$nodes[0]->safe_psql('postgres',
		"CREATE TEMP TABLE t (id bigint); COPY t FROM '$files[$i]'; INSERT INTO every_id SELECT $i, id FROM t");
}
my ($total, $distinct) = split /\|/,
  $nodes[0]->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM every_id');
my $per_server = $nodes[0]->safe_psql('postgres',
	q{SELECT string_agg(format('s%s: %s IDs on shards %s', server, n, shards), '; ' ORDER BY server)
	    FROM (SELECT server, count(*) AS n, string_agg(DISTINCT snowflake_shard(id)::text, ',') AS shards
	            FROM every_id GROUP BY server) x});

# The seconds each fault's server could not generate: the longest time between two successful
# probes from the fault to the next fault (of any kind); about 0.15 s when nothing stopped it.
my @probes;
foreach my $i (0 .. 3)
{
	push @probes, [ map { $_->[1] } grep { $_->[0] eq 'ok' } map { [ split / / ] } split /\n/,
		  slurp_file($nodes[$i]->basedir . '/probe.log') ];
}
sub outage
{
	my ($i, $from, $to) = @_;
	my ($prev, $gap) = ($from, 0);
	foreach my $t (@{ $probes[$i] })
	{
		if ($t <= $from) { $prev = $t; next; }
		last if $t > $to;
		$gap = $t - $prev if $t - $prev > $gap;
		$prev = $t;
	}
	$gap = $to - $prev if $to - $prev > $gap;
	return $gap;
}
my @report;
foreach my $f (0 .. $#faults)
{
	my ($at, $i, $kind) = @{ $faults[$f] };
	my $to = $f < $#faults ? $faults[ $f + 1 ][0] : $end;
	my @servers = $i < 0 ? (0 .. 3) : ($i);
	push @report, sprintf('%-26s %-4s %s', $kind, $i < 0 ? 'all' : "s$i",
		join(', ', map { sprintf('s%d %.1f s', $_, outage($_, $at, $to)) } @servers));
}
my $report = join("\n",
	"lease soak: $seconds s, 4 servers (load: $rate x 50 IDs a second each), 3 etcd members "
	  . '(JWT tokens), ' . scalar(@faults) . ' faults',
	"IDs: $total, distinct: $distinct, duplicates: " . ($total - $distinct),
	$per_server,
	'fault                      on   longest time without an ID (from the fault to the next)',
	@report) . "\n";
diag($report);
PostgreSQL::Test::Utils::append_to_file($ENV{SNOWFLAKE_SOAK_REPORT}, $report)
  if $ENV{SNOWFLAKE_SOAK_REPORT};

ok($total > 0, 'the load committed IDs');
is($total - $distinct, 0, 'no ID repeats, over every ID of every server');
ok(@faults >= 1, 'faults were made');
done_testing();
