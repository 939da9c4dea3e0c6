# What differs on an arm64 server beyond the generators (scripts/arm64.sh runs this with its
# bin folder first in PATH, so that every server here is Debian's arm64 PostgreSQL under
# qemu-user): the server is aarch64; it leases a shard from a 3-member etcd on loopback (the
# lease worker with libcurl), issues IDs of that shard alone, and gives it back at a clean
# stop; it masks under a key file (AES through OpenSSL's arm64 code: the ARMv8 crypto
# extensions, which qemu emulates) with the tokens of the x86-64 code for the same key and
# ID: the known answers of docs/internals.md, and those of this machine's own x86-64 server
# when its PostgreSQL has the extension installed (SNOWFLAKE_HOST_PG, its installation).
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

my $etcd = EtcdCluster->new('arm64');

# docs/internals.md's keys: 000102…1f with id 7 (active) and with id 0.
my $keys = "0 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
  . "7 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f active\n";
sub with_keys
{
	my ($node) = @_;
	my $file = $node->data_dir . '/mask.keys';
	append_to_file($file, $keys);
	chmod 0600, $file;
	return $node;
}

my $node = with_keys(snowflake_node('arm64', qq{
snowflake.shard_source = etcd
snowflake.etcd_endpoints = '@{[ $etcd->endpoints ]}'
snowflake.shard_pool = '40-42'
snowflake.lease_ttl = 6s
snowflake.lease_renew = 1s
snowflake.lease_fail_after = 3s
snowflake.mask_key_file = 'mask.keys'
}));
$node->start;
like($node->safe_psql('postgres', 'SELECT version()'), qr/ on aarch64-/, 'the server is an aarch64 one');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# ---- Lease mode.
$node->poll_query_until('postgres', q{SELECT lease_state = 'held' FROM snowflake_status()})
  or die 'no lease: ' . status_of($node, q{concat_ws(' ', lease_state, etcd_error)});
my $shard = status_of($node, 'lease_shard');
like($shard, qr/^4[0-2]$/, 'it leases a shard of its pool from etcd');
my $owner = sprintf('/snowflake/owner/%04d', $shard);
ok($etcd->keys_under($owner)->{$owner}[1], 'etcd holds the shard\'s owner key under a lease');
is( $node->safe_psql(
		'postgres',
		qq{SELECT count(*), count(DISTINCT id), bool_and(snowflake_shard(id) = $shard)
		     FROM (SELECT snowflake() AS id FROM generate_series(1, 100000)) s}),
	'100000|100000|t',
	'100,000 distinct IDs, all of the leased shard');
is(status_of($node, q{concat_ws('|', shard_source, etcd_error IS NULL)}), 'etcd|t',
	'snowflake_status(): the source is etcd, and no error');

# ---- The IDs' clock reads the generic timer (CNTVCT_EL0) as on arm64 hardware, where the
# kernel keeps time by it (arch_sys_counter: scripts/arm64.sh puts that clocksource file in the
# root). A break of the counter's read or of its detection falls back to clock_gettime()
# without an error: snowflake_status() says at DEBUG1 which clock the backend reads, and what
# it says must be the counter, calibrated against the clock, after IDs (a backend calibrates on
# its own, over at least 1 ms; a bounded retry in a new backend where a busy machine delayed it).
my $counter = qr/IDs read the CPU's counter \(CNTVCT_EL0 at [1-9][0-9]+ Hz\), calibrated/;
my $clock = '';
poll_until(
	sub {
		$node->psql(
			'postgres', q{SELECT count(snowflake()) FROM generate_series(1, 20000);
			  SET client_min_messages = debug1; SELECT 1 FROM snowflake_status();},
			stderr => \$clock);
		return $clock =~ $counter;
	});
note($clock);
like($clock, $counter, 'the IDs\' clock reads the counter CNTVCT_EL0, calibrated');

# ---- Masking: the known answers (the unit tests' on both architectures).
is( $node->safe_psql(
		'postgres', q{SELECT snowflake_mask(1234), snowflake_mask(1234, 'ord'), snowflake_unmask(snowflake_mask(1234))}),
	'2nyycqrb8qy0c3y64bpxpfwaj8|ord_7672ppc9b813scngte31j6w6er|1234',
	'snowflake_mask(): the known tokens of key 7 for ID 1234, and back');
is( $node->safe_psql(
		'postgres',
		q{SELECT replace(ulid_mask('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4051'::uuid::ulid, 0)::uuid::text, '-', '')}),
	'49f49c0412d685a5437db77348deff05',
	'ulid_mask(): the known answer of key 0');

# Many IDs and every kind, against this machine's x86-64 server with the same keys.
my $sample = q{
SELECT string_agg(concat_ws(' ', snowflake_mask(id, 'ord'),
         uuidv7_mask(('0190a1b2-c3d4-7e5f-8a9b-' || lpad(to_hex(g), 12, '0'))::uuid),
         uuidv47_mask(('0190a1b2-c3d4-7e5f-8a9b-' || lpad(to_hex(g), 12, '0'))::uuid),
         ulid_mask(('0190a1b2-c3d4-7e5f-8a9b-' || lpad(to_hex(g), 12, '0'))::uuid::ulid, 0)), E'\n' ORDER BY g)
  FROM (SELECT g, (g * 7919)::bigint << 22 | g AS id FROM generate_series(1, 1000) g) s};
my $arm64_tokens = $node->safe_psql('postgres', $sample);
is(scalar(split /\n/, $arm64_tokens), 1000, '1,000 IDs masked in every kind');
SKIP:
{
	my $install = $ENV{SNOWFLAKE_HOST_PG} // '';
	skip 'no installation of this machine to compare with (SNOWFLAKE_HOST_PG is not set)', 2
	  if $install eq '';
	# Named but without the library: a failure, not a skip (scripts/test.sh installed it).
	BAIL_OUT("SNOWFLAKE_HOST_PG=$install has no lib/snowflake.so")
	  unless -f "$install/lib/snowflake.so";
	my $x86 = PostgreSQL::Test::Cluster->new('x86_64', install_path => $install);
	$x86->init;
	$x86->append_conf('postgresql.conf',
		"shared_preload_libraries = 'snowflake'\nsnowflake.mask_key_file = 'mask.keys'\n");
	with_keys($x86)->start;
	unlike($x86->safe_psql('postgres', 'SELECT version()'), qr/ on aarch64-/, 'the other server is this machine\'s');
	$x86->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	is($x86->safe_psql('postgres', $sample), $arm64_tokens, 'the x86-64 server gives the same tokens');
	$x86->stop;
}

# ---- A clean stop gives the shard back at once (not after lease_ttl).
$node->stop;
ok(!exists $etcd->keys_under($owner)->{$owner}, 'a clean stop deletes the owner key');

done_testing();
