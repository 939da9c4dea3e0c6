# Lease mode against an etcd that asks for TLS with client certificates and for a user and
# password: the server leases through it; the password is read from a file of mode 0600 and
# appears in no setting, log line or ERROR; a file others may read is refused, and so is a
# wrong password, each with a clear etcd_error; a role that is not superuser can read neither
# the password file's name nor the key file's; a password is never sent over http://
# unless snowflake.etcd_allow_plaintext_password allows it, and TLS files set with http://
# endpoints are warned of.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;
use EtcdCluster;

plan skip_all => 'no etcd binary (Debian: etcd-server)' unless EtcdCluster::etcd_binary();

my $password = 'not-in-any-log-7Hq2';
my $etcd = EtcdCluster->new('secure', tls => 1);
$etcd->enable_auth('fleet', $password, '/snowflake');
my $tls = $etcd->{tls};

my $node = etcd_user_node('secure', $etcd->endpoints, 'fleet', $password, qq{
snowflake.etcd_cafile = '$tls->{ca}'
snowflake.etcd_certfile = '$tls->{cert}'
snowflake.etcd_keyfile = '$tls->{key}'
snowflake.reservation_timeout = 5s
});
my $pwfile = $node->data_dir . '/etcd.password';
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$node->poll_query_until('postgres', q{SELECT lease_state = 'held' FROM snowflake_status()})
  or die 'no lease: ' . $node->safe_psql('postgres', 'SELECT etcd_error FROM snowflake_status()');
like($node->safe_psql('postgres', 'SELECT etcd_endpoint FROM snowflake_status()'), qr{^https://127\.0\.0\.1:\d+$},
	'a lease is held over TLS, with a client certificate and a user');
is($node->safe_psql('postgres', 'SELECT snowflake_shard(snowflake()) = lease_shard FROM snowflake_status()'), 't',
	'and snowflake() issues on it');

# Nothing a role can read holds the password.
$node->safe_psql('postgres', 'CREATE ROLE plain LOGIN; CREATE ROLE monitor LOGIN; GRANT pg_monitor TO monitor');
my $settings = $node->safe_psql('postgres', q{SELECT string_agg(name || '=' || setting, ' ') FROM pg_settings WHERE name LIKE 'snowflake.%'});
unlike($settings, qr/\Q$password\E/, 'pg_settings does not hold the password');
like($settings, qr/snowflake.etcd_password_file=etcd.password/, 'only the file\'s name');
my ($ret, $out, $err) = $node->psql('postgres', 'SHOW snowflake.etcd_password_file', extra_params => [ '-U', 'plain' ]);
like($err, qr/must be superuser or have privileges of pg_read_all_settings|permission denied/,
	'a role that is not superuser cannot read the password file\'s name');
($ret, $out, $err) = $node->psql('postgres', 'SHOW snowflake.etcd_keyfile', extra_params => [ '-U', 'plain' ]);
isnt($ret, 0, 'nor the key file\'s');
is($node->safe_psql('postgres', 'SELECT count(*) FROM snowflake_status() WHERE lease_state = \'held\'', extra_params => [ '-U', 'monitor' ]),
	'1', 'pg_monitor reads the lease status');

# A wrong password: a clear error, and still no password anywhere.
open(my $fh, '>', $pwfile) or die; print $fh "wrong-password-9Xz\n"; close $fh;
chmod 0600, $pwfile;
$node->safe_psql('postgres', "ALTER SYSTEM SET snowflake.etcd_user = 'fleet'");
$node->restart;
$node->poll_query_until('postgres', q{SELECT etcd_error LIKE '%authentication as "fleet" failed%' FROM snowflake_status()})
  or die 'no authentication error: ' . $node->safe_psql('postgres', 'SELECT lease_state, etcd_error FROM snowflake_status()');
($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake()");
like($err, qr/SF001: .*authentication as "fleet" failed/s, 'a wrong password: SF001, and the DETAIL says authentication failed');
my ($pret, $pout, $perr) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake()",
	extra_params => [ '-U', 'plain' ]);
like($perr, qr/SF001: .*snowflake_status\(\)\.etcd_error \(pg_monitor\) has etcd's last error/s,
	'a role that may not read every setting gets SF001 without etcd\'s words');
unlike($perr, qr/authentication|password/, 'nothing of the password file in it');

# A password file that others may read is refused.
chmod 0644, $pwfile;
$node->reload;
$node->poll_query_until('postgres', q{SELECT etcd_error LIKE '%has group or world access%' FROM snowflake_status()})
  or die 'no mode error: ' . $node->safe_psql('postgres', 'SELECT etcd_error FROM snowflake_status()');
pass('a password file with group or world access is refused, and the status says why');

foreach my $text (slurp_file($node->logfile), $err,
	$node->safe_psql('postgres', 'SELECT etcd_error FROM snowflake_status()'))
{
	unlike($text, qr/\Q$password\E|wrong-password-9Xz/, 'no log line, ERROR or status holds a password');
}

# Without the client certificate, etcd refuses the connection: said, not hidden.
$node->safe_psql('postgres', "ALTER SYSTEM SET snowflake.etcd_certfile = ''");
open($fh, '>', $pwfile) or die; print $fh "$password\n"; close $fh;
chmod 0600, $pwfile;
$node->reload;
$node->poll_query_until('postgres', q{SELECT etcd_error IS NOT NULL AND etcd_error NOT LIKE '%authentication%' AND etcd_error NOT LIKE '%group or world%' FROM snowflake_status()})
  or die 'no TLS error: ' . $node->safe_psql('postgres', 'SELECT etcd_error FROM snowflake_status()');
pass('without a client certificate the status shows the TLS failure: '
	  . $node->safe_psql('postgres', 'SELECT etcd_error FROM snowflake_status()'));

# ---- Over http://, a password would cross the network in clear: refused unless allowed.
# Nothing need listen there: the refusal comes before any request.
my $http = 'http://127.0.0.1:' . PostgreSQL::Test::Cluster::get_free_port();
my $plain = etcd_user_node('plain', $http, 'fleet', $password, qq{
snowflake.etcd_cafile = '$tls->{ca}'
snowflake.reservation_timeout = 1s
});
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$plain->poll_query_until('postgres', q{SELECT etcd_error IS NOT NULL FROM snowflake_status()})
  or die 'no etcd error';
like($plain->safe_psql('postgres', 'SELECT etcd_error FROM snowflake_status()'),
	qr/snowflake.etcd_user is set, but snowflake.etcd_endpoints has an http:\/\/ endpoint: the password would cross the network in clear/,
	'a password over http:// is refused, and the status says why');
# No lease can come: a call is refused at once, not after reservation_timeout (1 s here),
# timed inside the server.
create_refused_ms($plain);
is($plain->safe_psql('postgres', 'SELECT refused_ms() < 100'), 't', 'snowflake() is refused at once, under 100 ms');
($ret, $out, $err) = $plain->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake()");
like($err, qr/SF001: .*etcd_allow_plaintext_password/s, 'snowflake() raises SF001, and its DETAIL names the setting that allows it');
like(slurp_file($plain->logfile), qr/WARNING:  snowflake.etcd_cafile is set, but snowflake.etcd_endpoints has an http:\/\/ endpoint/,
	'TLS files set with an http:// endpoint are warned of, not silently ignored');
is($plain->safe_psql('postgres', q{SELECT setting FROM pg_settings WHERE name = 'snowflake.etcd_allow_plaintext_password'}),
	'off', 'snowflake.etcd_allow_plaintext_password is off by default');
set_and_reload($plain, 'snowflake.etcd_allow_plaintext_password' => 'on');
$plain->poll_query_until('postgres',
	q{SELECT etcd_error NOT LIKE '%in clear%' FROM snowflake_status()})
  or die 'still refused: ' . $plain->safe_psql('postgres', 'SELECT etcd_error FROM snowflake_status()');
pass('allowed, the server tries the endpoint: ' . $plain->safe_psql('postgres', 'SELECT etcd_error FROM snowflake_status()'));
$plain->stop;

done_testing();
