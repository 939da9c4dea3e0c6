# An etcd cluster for the lease tests: members of the platform's own etcd (Debian's
# etcd-server), run as the test's user on free ports of 127.0.0.1, data in the test's
# temporary folder; a member can be stopped and started again, and a TCP proxy in front of
# every member (tcp_proxy.pl) cuts a server off when paused. With tls => 1, clients speak
# https and must show a certificate of the cluster's own CA (made here with openssl);
# enable_auth() turns on etcd's users, with jwt => 1 on JWT tokens (signed RS256 with a key
# pair made here with openssl), which carry the auth store's revision: after any change of
# users or roles etcd refuses them with "revision of auth store is old".
# The tests talk to it with curl. Everything started here is stopped when the test ends,
# whatever happens.
package EtcdCluster;

use strict;
use warnings FATAL => 'all';
use File::Basename qw(dirname);
use IO::Socket::INET;
use IPC::Run ();
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
		scheme => $opts{tls} ? 'https' : 'http',
	}, $class;
	$self->make_certificates if $opts{tls};
	$self->make_jwt_keys if $opts{jwt};
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

# A CA, a server certificate for 127.0.0.1 (also for client use: etcd's gateway dials its own
# gRPC server with it) and a client certificate, in the cluster's folder:
# {tls} = { ca, cert, key } (the client's).
sub make_certificates
{
	my ($self) = @_;
	my $d = $self->{dir};
	my $ssl = sub {
		PostgreSQL::Test::Utils::system_or_bail('openssl', @_);
	};
	$ssl->('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=snowflake test CA',
		'-keyout', "$d/ca.key", '-out', "$d/ca.crt");
	foreach my $who ('server', 'client')
	{
		# No CommonName on the client's: etcd's gateway refuses one (it could not use it).
		$ssl->('req', '-newkey', 'rsa:2048', '-nodes',
			'-subj', $who eq 'server' ? '/CN=server' : '/O=snowflake test client',
			'-keyout', "$d/$who.key", '-out', "$d/$who.csr");
		PostgreSQL::Test::Utils::append_to_file("$d/$who.ext",
			$who eq 'server'
			? "subjectAltName = IP:127.0.0.1\nextendedKeyUsage = serverAuth, clientAuth\n"
			: "extendedKeyUsage = clientAuth\n");
		$ssl->('x509', '-req', '-in', "$d/$who.csr", '-CA', "$d/ca.crt", '-CAkey', "$d/ca.key",
			'-CAcreateserial', '-days', '2', '-extfile', "$d/$who.ext", '-out', "$d/$who.crt");
		chmod 0600, "$d/$who.key";
	}
	$self->{tls} = { ca => "$d/ca.crt", cert => "$d/client.crt", key => "$d/client.key" };
	return;
}

# An RSA key pair for etcd's JWT tokens, in the cluster's folder: {jwt} = the --auth-token
# option. The tokens live 10 minutes, longer than any test: a token refused here is refused
# for the auth store's revision, never for its age.
sub make_jwt_keys
{
	my ($self) = @_;
	my $d = $self->{dir};
	PostgreSQL::Test::Utils::system_or_bail('openssl', 'genrsa', '-out', "$d/jwt.key", '2048');
	PostgreSQL::Test::Utils::system_or_bail('openssl', 'rsa', '-in', "$d/jwt.key", '-pubout',
		'-out', "$d/jwt.pub");
	chmod 0600, "$d/jwt.key";
	$self->{jwt} = "jwt,pub-key=$d/jwt.pub,priv-key=$d/jwt.key,sign-method=RS256,ttl=10m";
	return;
}

# Starts member $i (again), with its data from before.
sub start_member
{
	my ($self, $i, $state) = @_;
	my $m = $self->{members}[$i];
	my $client = "$self->{scheme}://127.0.0.1:$m->{client}";
	my @tls = !$self->{tls} ? () : (
		'--cert-file' => "$self->{dir}/server.crt",
		'--key-file' => "$self->{dir}/server.key",
		'--client-cert-auth',
		'--trusted-ca-file' => "$self->{dir}/ca.crt");
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
		'--initial-cluster-state' => $state // 'existing',
		# On a loaded machine (CI's, the matrix's) the default 100 ms heartbeat and 1 s election
		# timeout elect leaders over and over; the tests are about the servers, not that.
		'--heartbeat-interval' => 250,
		'--election-timeout' => 2500,
		($self->{jwt} ? ('--auth-token' => $self->{jwt}) : ()),
		@tls);
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
	return join ',', map { "$self->{scheme}://127.0.0.1:$_->{client}" } @{ $self->{members} };
}

# curl on a member: the HTTP status and the body (a status of 0 when nothing answered).
sub curl
{
	my ($self, $m, $path, $body) = @_;
	my @cmd = ('curl', '-sS', '--max-time', '5', '-o', '-', '-w', '\n%{http_code}');
	push @cmd, '--cacert', $self->{tls}{ca}, '--cert', $self->{tls}{cert}, '--key',
	  $self->{tls}{key}
	  if $self->{tls};
	push @cmd, '-H', "Authorization: $self->{token}" if $self->{token};
	push @cmd, '-H', 'Content-Type: application/json', '-d', encode_json($body) if $body;
	push @cmd, "$self->{scheme}://127.0.0.1:$m->{client}$path";
	my $out = '';
	IPC::Run::run(\@cmd, '>', \$out, '2>', \my $err);
	my ($content, $status) = $out =~ /\A(.*)\n(\d+)\z/s ? ($1, $2) : ('', 0);
	return ($status, $content);
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
			my ($status, $content) = $self->curl($m, '/health');
			last if $status == 200 && $content =~ /"health"\s*:\s*"true"/;
			die "etcd member $m->{name} is not healthy: see $self->{dir}/$m->{name}.log"
			  if time > $deadline;
			usleep(100_000);
		}
	}
	return;
}

# POSTs $body to the JSON gateway of the first running member; the decoded answer. Root's
# token refused as too old (JWT, after a change of users or roles) or expired: root
# authenticates again, once, as etcd's own client does.
sub call
{
	my ($self, $path, $body) = @_;
	my ($m) = grep { $_->{pid} } @{ $self->{members} };
	my ($status, $content) = $self->curl($m, $path, $body);
	if ($self->{token} && $content =~ /invalid auth token|revision of auth store is old/)
	{
		$self->{token} = undef;
		my ($s, $c) = $self->curl($m, '/v3/auth/authenticate',
			{ name => 'root', password => 'root-of-the-test' });
		die "etcd /v3/auth/authenticate: $s $c" unless $s == 200;
		$self->{token} = decode_json($c)->{token};
		($status, $content) = $self->curl($m, $path, $body);
	}
	die "etcd $path: $status $content" unless $status == 200;
	return decode_json($content);
}

# etcd's users on: root (whose token the test keeps), and $user with $password, allowed to
# read and write under $prefix alone.
sub enable_auth
{
	my ($self, $user, $password, $prefix) = @_;
	my $end = $prefix;
	substr($end, -1, 1, chr(ord(substr($end, -1)) + 1));
	$self->call('/v3/auth/user/add', { name => 'root', password => 'root-of-the-test' });
	$self->call('/v3/auth/role/add', { name => 'root' });
	$self->call('/v3/auth/user/grant', { user => 'root', role => 'root' });
	$self->call('/v3/auth/user/add', { name => $user, password => $password });
	$self->call('/v3/auth/role/add', { name => 'fleet' });
	$self->call('/v3/auth/role/grant',
		{ name => 'fleet',
		  perm => { permType => 'READWRITE', key => encode_base64($prefix, ''), range_end => encode_base64($end, '') } });
	$self->call('/v3/auth/user/grant', { user => $user, role => 'fleet' });
	$self->call('/v3/auth/enable', {});
	$self->{token} = $self->call('/v3/auth/authenticate',
		{ name => 'root', password => 'root-of-the-test' })->{token};
	return;
}

# A change of etcd's users and roles, as root: user $name added, with a new role of its own
# that may read $key, granted to it: four changes of the auth store's revision.
sub add_user_with_role
{
	my ($self, $name, $key) = @_;
	$self->call('/v3/auth/user/add', { name => $name, password => "$name-password" });
	$self->call('/v3/auth/role/add', { name => "$name-role" });
	$self->call('/v3/auth/role/grant',
		{ name => "$name-role", perm => { permType => 'READ', key => encode_base64($key, '') } });
	$self->call('/v3/auth/user/grant', { user => $name, role => "$name-role" });
	return;
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
