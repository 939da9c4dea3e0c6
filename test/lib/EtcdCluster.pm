# An etcd cluster for the lease tests: members of the platform's own etcd (Debian's
# etcd-server), run as the test's user on free ports of 127.0.0.1, data in the test's
# temporary folder; a member can be stopped and started again, and a TCP proxy in front of
# every member (tcp_proxy.pl) cuts a server off when paused. Everything started here is
# stopped when the test ends, whatever happens.
package EtcdCluster;

use strict;
use warnings FATAL => 'all';
use File::Basename qw(dirname);
use HTTP::Tiny;
use IO::Socket::INET;
use JSON::PP;
use MIME::Base64 qw(encode_base64 decode_base64);
use POSIX ();
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

my @running;    # pids of every process started here and not yet stopped

END
{
	kill 'CONT', @running;
	kill 'TERM', @running;
	usleep(200_000);
	kill 'KILL', @running;
}

# The etcd binary, or undef (the test skips, saying why).
sub etcd_binary
{
	foreach my $dir ((split /:/, ($ENV{PATH} // '')), '/usr/bin', '/usr/local/bin')
	{
		return "$dir/etcd" if -x "$dir/etcd";
	}
	return undef;
}

sub spawn
{
	my ($log, @cmd) = @_;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		open(STDIN, '<', '/dev/null');
		open(STDOUT, '>>', $log) or POSIX::_exit(127);
		open(STDERR, '>&', \*STDOUT);
		exec(@cmd) or POSIX::_exit(127);
	}
	push @running, $pid;
	return $pid;
}

sub stop_pid
{
	my ($pid) = @_;
	kill 'CONT', $pid;
	kill 'TERM', $pid;
	my $deadline = time + 30;
	while (time < $deadline)
	{
		last if waitpid($pid, POSIX::WNOHANG()) == $pid;
		usleep(50_000);
	}
	if (kill(0, $pid))
	{
		kill 'KILL', $pid;
		waitpid($pid, 0);
	}
	@running = grep { $_ != $pid } @running;
	return;
}

# A new cluster of $members (3) members, started, each healthy.
sub new
{
	my ($class, $name, %opts) = @_;
	my $members = $opts{members} // 3;
	my $self = bless {
		name => $name,
		dir => PostgreSQL::Test::Utils::tempdir("etcd_$name"),
		members => [],
		http => HTTP::Tiny->new(timeout => 5),
	}, $class;
	foreach my $i (0 .. $members - 1)
	{
		push @{ $self->{members} }, {
			name => "m$i",
			client => PostgreSQL::Test::Cluster::get_free_port(),
			peer => PostgreSQL::Test::Cluster::get_free_port(),
		};
	}
	$self->start_member($_, 'new') foreach 0 .. $members - 1;
	$self->wait_healthy;
	return $self;
}

sub initial_cluster
{
	my ($self) = @_;
	return join ',', map { "$_->{name}=http://127.0.0.1:$_->{peer}" } @{ $self->{members} };
}

# Starts member $i (again), with its data from before.
sub start_member
{
	my ($self, $i, $state) = @_;
	my $m = $self->{members}[$i];
	my $client = "http://127.0.0.1:$m->{client}";
	my $peer = "http://127.0.0.1:$m->{peer}";
	$m->{pid} = spawn(
		"$self->{dir}/$m->{name}.log", etcd_binary(),
		'--name' => $m->{name},
		'--data-dir' => "$self->{dir}/$m->{name}",
		'--listen-client-urls' => $client,
		'--advertise-client-urls' => $client,
		'--listen-peer-urls' => $peer,
		'--initial-advertise-peer-urls' => $peer,
		'--initial-cluster' => $self->initial_cluster,
		'--initial-cluster-token' => "snowflake-$self->{name}",
		'--initial-cluster-state' => $state // 'existing');
	return;
}

sub stop_member
{
	my ($self, $i) = @_;
	my $m = $self->{members}[$i];
	stop_pid($m->{pid}) if $m->{pid};
	$m->{pid} = undef;
	return;
}

# The client URLs of the members, as snowflake.etcd_endpoints takes them.
sub endpoints
{
	my ($self) = @_;
	return join ',', map { "http://127.0.0.1:$_->{client}" } @{ $self->{members} };
}

# Waits (3 minutes at most) until every running member says it is healthy (it has a leader).
sub wait_healthy
{
	my ($self) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	foreach my $m (grep { $_->{pid} } @{ $self->{members} })
	{
		while (1)
		{
			my $r = $self->{http}->get("http://127.0.0.1:$m->{client}/health");
			last if $r->{success} && $r->{content} =~ /"health"\s*:\s*"true"/;
			die "etcd member $m->{name} is not healthy: see $self->{dir}/$m->{name}.log"
			  if time > $deadline;
			usleep(100_000);
		}
	}
	return;
}

# POSTs $body to the JSON gateway of the first running member; the decoded answer.
sub call
{
	my ($self, $path, $body) = @_;
	my ($m) = grep { $_->{pid} } @{ $self->{members} };
	my $r = $self->{http}->post("http://127.0.0.1:$m->{client}$path",
		{ content => encode_json($body), headers => { 'Content-Type' => 'application/json' } });
	die "etcd $path: $r->{status} $r->{content}" unless $r->{success};
	return decode_json($r->{content});
}

# Every key under $prefix with its value and lease: { key => [value, lease] }.
sub keys_under
{
	my ($self, $prefix) = @_;
	my $end = $prefix;
	substr($end, -1, 1, chr(ord(substr($end, -1)) + 1));
	my $r = $self->call('/v3/kv/range',
		{ key => encode_base64($prefix, ''), range_end => encode_base64($end, '') });
	my %kv;
	foreach my $kv (@{ $r->{kvs} // [] })
	{
		$kv{ decode_base64($kv->{key}) } = [ decode_base64($kv->{value} // ''), $kv->{lease} // 0 ];
	}
	return \%kv;
}

# A proxy in front of every member: ->endpoints for a server, ->pause and ->resume.
sub proxy
{
	my ($self) = @_;
	my @pairs;
	my @ports;
	foreach my $m (@{ $self->{members} })
	{
		my $port = PostgreSQL::Test::Cluster::get_free_port();
		push @ports, $port;
		push @pairs, "$port:$m->{client}";
	}
	my $pid = spawn("$self->{dir}/proxy.log", $^X, dirname(__FILE__) . '/tcp_proxy.pl', @pairs);
	# Ready once every port takes a connection.
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	foreach my $port (@ports)
	{
		until (IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port))
		{
			die 'the proxy did not start: see ' . "$self->{dir}/proxy.log" if time > $deadline;
			usleep(50_000);
		}
	}
	return bless { pid => $pid, ports => \@ports }, 'EtcdCluster::Proxy';
}

package EtcdCluster::Proxy;

sub endpoints
{
	my ($self) = @_;
	return join ',', map { "http://127.0.0.1:$_" } @{ $self->{ports} };
}
sub pause { my ($self) = @_; kill 'STOP', $self->{pid}; return; }
sub resume { my ($self) = @_; kill 'CONT', $self->{pid}; return; }

1;
