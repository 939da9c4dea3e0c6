# Lease mode against an etcd with JWT tokens and a user allowed under the prefix alone (over
# TLS with a client certificate, as a password should travel): a change of etcd's users and
# roles anywhere in the cluster (another user added and granted a role) makes etcd refuse
# every token signed before it, "revision of auth store is old" (HTTP 400 through the
# gateway): the mark's writes, and on etcd 3.5 the keep-alives too. The server authenticates
# again and generation never stops: every snowflake() call over several renewals after the
# change issues IDs, and the mark in etcd keeps moving. (Before, the server refused with SF001
# about 3 s after the change, its lease lost.)
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use JSON::PP;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;
use EtcdCluster;

plan skip_all => 'no etcd binary (Debian: etcd-server)' unless EtcdCluster::etcd_binary();

my $password = 'jwt-fleet-password-4Rk';
my $etcd = EtcdCluster->new('jwt', jwt => 1, tls => 1);
$etcd->enable_auth('fleet', $password, '/snowflake');
my $tls = $etcd->{tls};

my $node = etcd_user_node('jwt', $etcd->endpoints, 'fleet', $password, qq{
snowflake.etcd_cafile = '$tls->{ca}'
snowflake.etcd_certfile = '$tls->{cert}'
snowflake.etcd_keyfile = '$tls->{key}'
snowflake.shard_pool = '0-0'
snowflake.reservation_timeout = 5s
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$node->poll_query_until('postgres', q{SELECT lease_state = 'held' FROM snowflake_status()})
  or die 'no lease: ' . status_of($node, 'etcd_error');

# The mark of shard 0 in etcd (read as root): the time below which its IDs stay.
sub mark_ms
{
	my $kv = $etcd->keys_under('/snowflake/mark/')->{'/snowflake/mark/0000'};
	return $kv ? decode_json($kv->[0])->{unix_ms} : 0;
}

# 200 IDs on $node: '' when issued, else the ERROR (verbose: SQLSTATE and DETAIL).
sub generate
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT count(snowflake()) FROM generate_series(1, 200)");
	return $ret == 0 ? '' : $err;
}

# Generation moves the mark (about once per lease_renew): the path before any change.
my $mark = mark_ms();
poll_until(sub { generate() eq '' && mark_ms() > $mark })
  or die 'the mark does not move: ' . status_of($node, 'lease_state, etcd_error');
pass('with JWT tokens the server leases and its mark moves');

# The change, while the server generates: another user, a role granted to it.
$etcd->add_user_with_role('auditor', '/elsewhere/report');
my $changed = time;
$mark = mark_ms();

# Generate for 2 x lease_fail_after after the change at least (before the fix the server
# refused within about 2 x lease_renew), and until the mark moved 3 times; stop at the first
# refusal.
my ($error, $moves, $calls) = ('', 0, 0);
poll_until(
	sub {
		$error = generate();
		++$calls;
		return 1 if $error ne '';
		my $now = mark_ms();
		++$moves if $now > $mark;
		$mark = $now;
		return $moves >= 3 && time - $changed >= 6;
	});
is($error, '', "every snowflake() call after the change issued IDs ($calls calls of 200 IDs)");
cmp_ok($moves, '>=', 3, 'and the mark kept moving in etcd');
is(status_of($node, 'lease_state'), 'held', 'the lease is held throughout');
like(status_of($node, 'generation_refused IS NULL'), qr/^t$/, 'and nothing refuses generation');

done_testing();
