# Masking under keys the server holds: snowflake.mask_key_file is read at start and on
# reload; a missing, exposed or malformed file leaves the server up and the mask functions
# refusing with a clear ERROR and HINT; tokens round-trip, carry their prefix, reject every
# changed or random string, and keep working after a key rotation, also in a session opened
# before it; a lookup by token uses the primary key's index; a role that is not superuser
# obtains no key (or derived key) through settings, catalogs, files, functions, errors, logs
# or a dump.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use Digest::SHA qw(hmac_sha256 hmac_sha256_hex sha256_hex);
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

# The test's keys (test/drivers/mask_client.py gives the same tokens with them).
my %key = (
	1 => '1166d5663436ad4e63bf3eb9202c92670ecdff90dedb0772c63e189932d70154',
	2 => 'a4c2e0f8d6b4a29e8c6a4e2c0a8f6d4b2e0c8a6f4d2b0e8c6a4f2d0b8e6c4a2f');
# Every secret: the master keys and each key derived from them, in hex.
my @secrets;
foreach my $k (values %key)
{
	push @secrets, $k;
	push @secrets, hmac_sha256_hex("snowflake mask $_ v1", pack('H*', $k))
	  foreach ('bigint', 'ulid', 'uuidv47', 'sno', 'bigint prefix', 'sno prefix');
}
# Any 16 hex digits of a secret in a text: what a leak would look like.
sub leaks
{
	my ($text) = @_;
	$text = lc($text // '');
	$text =~ s/[^0-9a-f]//g;
	foreach my $s (@secrets)
	{
		for (my $i = 0; $i + 16 <= length $s; $i += 8)
		{
			return 1 if index($text, substr($s, $i, 16)) >= 0;
		}
	}
	return 0;
}

my $node = snowflake_node('mask', "snowflake.shard_id = 3\nsnowflake.mask_key_file = 'mask.keys'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $keyfile = $node->data_dir . '/mask.keys';

sub status
{
	return status_of($node,
		q{concat_ws('|', coalesce(mask_key_id::text, '-'), mask_keys, coalesce(mask_key_problem, '-'))});
}

sub psql_error
{
	my ($sql, $db, $user) = @_;
	my ($ret, $out, $err) = (undef, '', '');
	$node->psql($db // 'postgres', $sql, stdout => \$out, stderr => \$err,
		extra_params => [ '-v', 'VERBOSITY=verbose', defined $user ? ('-U', $user) : () ]);
	return $err;
}

# Reloads and waits until a new session sees the keys' state match $re.
sub reload_until
{
	my ($re) = @_;
	$node->reload;
	poll_until(sub { status() =~ $re }) or die 'not reloaded: ' . status();
	return;
}

# No file yet: the server runs, the functions refuse and say why.
my $err = psql_error('SELECT snowflake_mask(1)');
like($err, qr/ERROR:  55000: no mask key is loaded/, 'no key file: 55000');
like($err, qr/DETAIL:  could not open "mask\.keys": No such file/, 'the detail names the file');
like($err, qr/HINT:  Fix the file that snowflake\.mask_key_file names and reload/, 'and the hint the remedy');
like(psql_error(q{SELECT sno_unmask(sno_mask(sno()))}), qr/ERROR:  55000: no mask key is loaded/,
	'no key file: sno_mask is 55000 too');
like(status(), qr/^-\|0\|could not open "mask\.keys"/, 'status: no key, and why');
is($node->safe_psql('postgres', 'SELECT count(*) FROM (SELECT snowflake()) s'), '1',
	'the server generates IDs without mask keys');

# A file others may read is refused, as PostgreSQL refuses such an ssl_key_file.
append_to_file($keyfile, "1 $key{1} active\n");
chmod 0644, $keyfile;
reload_until(qr/may be read by others/);
like(psql_error('SELECT snowflake_unmask($$ord_0ph2h3775ty6t5abzjmpvh1vah$$, $$ord$$)'),
	qr/must be mode 0600/, 'a key file others may read is refused');
chmod 0600, $keyfile;
reload_until(qr/^1\|1\|-$/);
pass('mode 0600: key 1 is active, one key, no problem');
# The key file's fingerprint, which servers meant to share a key file compare: the first 8
# bytes of SHA-256 over each key (the active first, then by id) as its id byte, 1 if active,
# and HMAC-SHA256(key, "snowflake mask fingerprint v1"), none of any derived key.
is(status_of($node, 'mask_key_fingerprint'),
	substr(sha256_hex(pack('CC', 1, 1) . hmac_sha256('snowflake mask fingerprint v1', pack('H*', $key{1}))), 0, 16),
	'snowflake_status() shows the key file\'s fingerprint');

# Known answers (docs/internals.md), equal IDs giving equal tokens, round trips.
is($node->safe_psql('postgres', q{SELECT snowflake_mask(1234, 'ord'), snowflake_mask(1234)}),
	'ord_0ph2h3775ty6t5abzjmpvh1vah|2htqgmsn718kcrhc0sp7wsrn6k', 'the tokens the Python client makes');
$node->safe_psql('postgres', q{
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake(), total numeric);
INSERT INTO orders (total) SELECT g FROM generate_series(1, 10000) g;
ANALYZE orders;
});
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT t), min(length(t)), max(length(t)),
       count(*) FILTER (WHERE snowflake_unmask(t, 'ord') = id AND snowflake_unmask(upper(t), 'ord') = id
                          AND snowflake_mask(id, 'ord') = t)
  FROM (SELECT id, snowflake_mask(id, 'ord') AS t FROM orders) s}),
	'10000|10000|30|30|10000',
	'10,000 IDs: distinct 30-character tokens that unmask to their IDs, in either case');
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(snowflake_unmask(snowflake_mask(v))::text, ',' ORDER BY v)
  FROM unnest(ARRAY[0, 1, -1, 9223372036854775807, -9223372036854775808]::bigint[]) v}),
	'-9223372036854775808,-1,0,1,9223372036854775807', 'every bigint round-trips');

# A lookup by token goes through the primary key's index.
my $token = $node->safe_psql('postgres', q{SELECT snowflake_mask(id, 'ord') FROM orders ORDER BY id LIMIT 1 OFFSET 500});
like($node->safe_psql('postgres', "EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id = snowflake_unmask('$token', 'ord')"),
	qr/Index Scan using orders_pkey on orders/, 'a lookup by token is an index scan of the primary key');

# Every kind of bad token and argument: a clear ERROR with its SQLSTATE.
my $changed = $token;
substr($changed, 10, 1) = substr($changed, 10, 1) eq 'a' ? 'b' : 'a';
like(psql_error("SELECT snowflake_unmask('$changed', 'ord')"),
	qr/ERROR:  22P02: invalid snowflake token: "\Q$changed\E"\nDETAIL:  No key of snowflake\.mask_key_file made this token/,
	'a changed character: 22P02');
like(psql_error("SELECT snowflake_unmask('$token', 'user')"),
	qr/ERROR:  22P02: snowflake token has the prefix "ord", not "user"/, 'another prefix than asked: 22P02');
(my $as_user = $token) =~ s/^ord_/user_/;
like(psql_error("SELECT snowflake_unmask('$as_user', 'user')"), qr/22P02: invalid snowflake token/,
	'a prefix swapped on the token: 22P02');
like(psql_error("SELECT snowflake_unmask('$token')"),
	qr/ERROR:  22P02: snowflake token has the prefix "ord", and none was given\nHINT:  Give the prefix the token must carry: snowflake_unmask\(token, 'ord'\)/,
	'a token with a prefix, unmasked without one: 22P02');
my $bare = $node->safe_psql('postgres', 'SELECT snowflake_mask(1234)');
like(psql_error("SELECT snowflake_unmask('$bare', 'ord')"),
	qr/ERROR:  22P02: snowflake token has no prefix, not "ord"/, 'a token without a prefix, asked for one: 22P02');
like(psql_error("SELECT uuidv7_mask('018f2d9f-9a2a-7def-cc3f-7b1a2c4d5e6f')"),
	qr/ERROR:  22023: uuidv7_mask\(\) takes an RFC 9562 UUID, not one of variant bits 11/, 'a UUIDv7 of another variant: 22023');
like(psql_error("SELECT uuidv47_unmask('018f2d9f-9a2a-4def-0c3f-7b1a2c4d5e6f')"),
	qr/ERROR:  22023: uuidv47_unmask\(\) takes an RFC 9562 UUID, not one of variant bits 00/, 'a façade of another variant: 22023');
like(psql_error("SELECT snowflake_unmask('" . substr($token, 0, 29) . "')"),
	qr/22P02.*\nDETAIL:  A token is 26 characters/, 'a truncated token: 22P02');
like(psql_error("SELECT snowflake_unmask('ord_8" . substr($token, 5) . "')"),
	qr/22P02.*\nDETAIL:  The first character of a token, after its prefix, is at most 7/, 'an overflowing token: 22P02');
like(psql_error("SELECT snowflake_mask(1, 'Order')"),
	qr/ERROR:  22023: invalid token prefix "Order"\nDETAIL:  A prefix is at most 63 characters/, 'a bad prefix: 22023');
like(psql_error("SELECT uuidv7_mask(gen_random_uuid())"),
	qr/ERROR:  22023: uuidv7_mask\(\) takes a version 7 UUID, not version 4/, 'uuidv7_mask of a v4: 22023');
# An unknown key id, asked by a role without pg_monitor: the same ERROR for every id, naming
# neither how many keys are loaded nor the active one (snowflake_status() is pg_monitor's).
$node->safe_psql('postgres', 'CREATE ROLE nomon LOGIN');
my %unknown = map {
	my $e = psql_error("SELECT uuidv7_mask(snowflake_uuidv7(), $_), ulid_mask(ulid(), $_)", 'postgres', 'nomon');
	$e =~ s/\nLOCATION:[^\n]*//g;
	$e =~ s/^psql:<stdin>:\d+: //;
	($_ => $e)
} (9, 200, -1);
like($unknown{9},
	qr/\AERROR:  22023: no mask key has the id 9\nHINT:  snowflake_status\(\) shows the keys loaded, to roles with pg_monitor\.\z/,
	'a key id not in the file: 22023, and the hint names no count and no active id');
my $unknown_n = $unknown{9} =~ s/the id 9\b/the id N/r;
is(join('', map { $unknown{$_} =~ s/the id \Q$_\E\b/the id N/r } 200, -1), $unknown_n x 2,
	'every unknown key id gets the same ERROR');

# sno_mask/sno_unmask: the same token, under a key of their own (docs/internals.md#masking; the
# known answer computed with openssl enc -aes-256-ecb -nopad on the block 0123456789abcdef0123,
# key id 1, the first 5 bytes of HMAC-SHA256(HMAC-SHA256(key 1, "snowflake mask sno prefix v1"),
# the prefix), under HMAC-SHA256(key 1, "snowflake mask sno v1")).
is($node->safe_psql('postgres', q{SELECT sno_mask(s, 'ord'), sno_mask(s), sno_unmask('ORD_5VPJHK679JVQEVJTX2VGCMGQ1P', 'ord') = s
  FROM (SELECT '\x0123456789abcdef0123'::bytea::sno AS s) v}),
	'ord_5vpjhk679jvqevjtx2vgcmgq1p|4gh2h71dfd3tr2zmk0f3301vhe|t', 'sno_mask: the known answers, and back in either case');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT t), min(length(t)), max(length(t)),
       count(*) FILTER (WHERE sno_unmask(t, 'ord') = id AND sno_mask(id, 'ord') = t)
  FROM (SELECT id, sno_mask(id, 'ord') AS t FROM (SELECT sno(g % 256) AS id FROM generate_series(1, 2000) g) i) s}),
	'2000|2000|30|30|2000', '2,000 snos: distinct 30-character tokens that unmask to their snos');
my $sno_token = $node->safe_psql('postgres', q{SELECT sno_mask(sno(7), 'ord')});
# Every single-character change of a sno token is refused with 22P02.
is( $node->safe_psql(
		'postgres', qq{
DO \$\$
DECLARE
  alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  t constant text := '$sno_token';
  c text;
  accepted int := 0;
  tried int := 0;
BEGIN
  FOR i IN 5 .. 30 LOOP
    FOR j IN 1 .. 32 LOOP
      CONTINUE WHEN substr(alphabet, j, 1) = substr(t, i, 1);
      c := overlay(t placing substr(alphabet, j, 1) from i for 1);
      tried := tried + 1;
      BEGIN
        PERFORM sno_unmask(c, 'ord');
        accepted := accepted + 1;
      EXCEPTION WHEN invalid_text_representation THEN NULL;
      END;
    END LOOP;
  END LOOP;
  RAISE NOTICE 'tried %, accepted %', tried, accepted;
  IF accepted > 0 OR tried <> 26 * 31 THEN
    RAISE EXCEPTION '% of % changed sno tokens accepted', accepted, tried;
  END IF;
END \$\$;
SELECT 'none accepted'}),
	'none accepted', 'every single-character change of a sno token: refused with 22P02');
my $big_token = $node->safe_psql('postgres', q{SELECT snowflake_mask(1234, 'ord')});
like(psql_error("SELECT sno_unmask('$big_token', 'ord')"),
	qr/ERROR:  22P02: invalid sno token: "\Q$big_token\E"\nDETAIL:  No key of snowflake\.mask_key_file made this token/,
	'a bigint token to sno_unmask: 22P02');
like(psql_error("SELECT snowflake_unmask('$sno_token', 'ord')"),
	qr/ERROR:  22P02: invalid snowflake token: "\Q$sno_token\E"/, 'a sno token to snowflake_unmask: 22P02');
like(psql_error("SELECT sno_unmask('$sno_token')"),
	qr/ERROR:  22P02: sno token has the prefix "ord", and none was given\nHINT:  Give the prefix the token must carry: sno_unmask\(token, 'ord'\)/,
	'a sno token with a prefix, unmasked without one: 22P02');
like(psql_error("SELECT sno_unmask('" . substr($sno_token, 0, 29) . "', 'ord')"),
	qr/22P02: invalid sno token.*\nDETAIL:  A token is 26 characters/, 'a truncated sno token: 22P02');
like(psql_error("SELECT sno_mask(sno(), 'Order')"),
	qr/ERROR:  22023: invalid token prefix "Order"/, 'a bad prefix to sno_mask: 22023');
# SHA-256 of "xbxgqz" and of "xchvbg" share their first 5 bytes: while a sno token's prefix
# check was that digest, its token moved to the other prefix by editing the text. Keyed, the
# moved token is refused (and so are bigint tokens moved so).
is(substr(sha256_hex('xbxgqz'), 0, 10), substr(sha256_hex('xchvbg'), 0, 10), 'the pair collides in plain SHA-256');
foreach my $kind ('sno', 'snowflake')
{
	my $value = $kind eq 'sno' ? 'sno(7)' : '1234::bigint';
	my $moved = $node->safe_psql('postgres',
		"SELECT replace(${kind}_mask($value, 'xbxgqz'), 'xbxgqz', 'xchvbg')");
	like(psql_error("SELECT ${kind}_unmask('$moved', 'xchvbg')"),
		qr/ERROR:  22P02: invalid $kind token: "\Q$moved\E"\nDETAIL:  No key of snowflake\.mask_key_file made this token with this prefix/,
		"a $kind token moved between prefixes whose SHA-256 share 5 bytes: 22P02");
}

# 10,000 random strings of a token's length and alphabet: every one refused, with 22P02.
is( $node->safe_psql(
		'postgres', q{
DO $$
DECLARE
  alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  t text;
  accepted int := 0;
BEGIN
  PERFORM setseed(0.25);
  FOR i IN 1 .. 10000 LOOP
    t := substr(alphabet, 1 + floor(random() * 8)::int, 1);
    FOR j IN 2 .. 26 LOOP
      t := t || substr(alphabet, 1 + floor(random() * 32)::int, 1);
    END LOOP;
    BEGIN
      PERFORM snowflake_unmask('ord_' || t);
      accepted := accepted + 1;
    EXCEPTION WHEN invalid_text_representation THEN NULL;
    END;
  END LOOP;
  IF accepted > 0 THEN
    RAISE EXCEPTION '% of 10,000 random tokens accepted', accepted;
  END IF;
END $$;
SELECT 'none accepted'}),
	'none accepted', '10,000 random tokens: every one refused with 22P02');

# The 128-bit kinds: exact inverses, the façade a version 4 UUID.
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE uuidv7_unmask(m) = u AND substr(m::text, 15, 1) = '4' AND m <> u),
       count(*) FILTER (WHERE ulid_unmask(ulid_mask(l)) = l AND ulid_mask(l) <> l)
  FROM (SELECT u, uuidv7_mask(u) AS m, ulid() AS l
          FROM (SELECT snowflake_uuidv7() AS u FROM generate_series(1, 2000)) s) s}),
	'2000|2000', 'uuidv7_mask and ulid_mask invert exactly');

# A burst of UUIDv7s in one millisecond counts up in rand_a: uuidv7_mask() hides it (about 1
# in 4,096 neighbours count up by chance), uuidv47_mask() shows it, as documented.
is( $node->safe_psql(
		'postgres', q{
WITH b AS (SELECT g, snowflake_uuidv7() AS u FROM generate_series(1, 1000) g),
     r AS (SELECT g, f.v, ('x' || substr(replace(f.m::text, '-', ''), 14, 3))::bit(12)::int AS a,
                  ('x' || substr(replace(u::text, '-', ''), 14, 3))::bit(12)::int AS c
             FROM b, LATERAL (VALUES ('v7', uuidv7_mask(u)), ('47', uuidv47_mask(u))) f(v, m)),
     d AS (SELECT v, a - lag(a) OVER w = c - lag(c) OVER w AS same_step,
                  uuidv47_unmask(uuidv47_mask(u)) = u AND uuidv7_unmask(uuidv7_mask(u)) = u AS back
             FROM r JOIN b USING (g) WINDOW w AS (PARTITION BY v ORDER BY g))
SELECT v, count(*) FILTER (WHERE same_step) < 20, count(*) FILTER (WHERE same_step) > 990, bool_and(back)
  FROM d GROUP BY v ORDER BY v}),
	"47|f|t|t\nv7|t|f|t", 'uuidv7_mask hides the per-millisecond counter; uuidv47_mask shows it');

# Parallel query forced: every token and façade is the leader's, also once the file is broken
# and not reloaded (a worker that read the file again would have no key, or other keys).
$node->safe_psql('postgres', q{
CREATE TABLE par AS SELECT snowflake() AS id, snowflake_uuidv7() AS u FROM generate_series(1, 200000);
ANALYZE par;
CREATE TABLE lead AS SELECT id, snowflake_mask(id, 'ord') AS t, uuidv7_mask(u) AS f FROM par;
});
my $force = $node->pg_version >= 16 ? 'debug_parallel_query' : 'force_parallel_mode';
my $parallel = qq{
SET $force = on; SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SELECT count(*) FILTER (WHERE snowflake_mask(p.id, 'ord') = l.t AND uuidv7_mask(p.u) = l.f
                          AND snowflake_unmask(l.t, 'ord') = p.id)
  FROM par p JOIN lead l USING (id)};
# The query, then the same under EXPLAIN ANALYZE: its result, and that workers ran it.
my $explained = "$parallel; EXPLAIN (ANALYZE, COSTS OFF) " . ($parallel =~ s/.*(SELECT count)/$1/rs);
like($node->safe_psql('postgres', $explained), qr/\A200000\n(?s:.*)Workers Launched: [1-9]/,
	'parallel query, run by workers: the leader\'s tokens and façades');
is($node->safe_psql('postgres', "SET $force = on; SELECT concat_ws('|', mask_key_id, mask_keys, coalesce(mask_key_problem, '-')) FROM snowflake_status()"),
	'1|1|-', 'snowflake_status() with parallel query forced: the keys loaded, no problem');
my $good_keys = slurp_file($keyfile);
open(my $broken, '>', $keyfile) or die $!;
print $broken "1 being edited\n";
close $broken;
my ($par_ret, $par_out, $par_err) = $node->psql('postgres', $explained);
like("$par_out|$par_err", qr/\A200000\n(?s:.*)Workers Launched: [1-9](?s:.*)\|\z/,
	'the file broken, not reloaded: the same, run by workers, and no error');
open($broken, '>', $keyfile) or die $!;
print $broken $good_keys;
close $broken;
# A function that calls them but claims PARALLEL SAFE runs in a worker, which holds no key:
# the ERROR says what to change.
$node->safe_psql('postgres', q{
CREATE FUNCTION wrapped(bigint) RETURNS text LANGUAGE plpgsql PARALLEL SAFE
  AS $$BEGIN RETURN snowflake_mask($1); END$$});
like(psql_error($parallel =~ s/SELECT count.*/SELECT count(wrapped(id)) FROM par/sr),
	qr/ERROR:  55000: no mask key is loaded\nDETAIL:  a parallel worker holds no mask key\nHINT:  The mask functions are PARALLEL RESTRICTED: a function that calls them must be too\.\n(?s:.*)^CONTEXT: (?s:.*)^parallel worker$/m,
	'a PARALLEL SAFE function that masks, run by a worker: 55000, and the hint says why');

# Rotation: key 2 becomes active; a session opened before the reload takes it at its next
# statement; tokens made under key 1 still unmask; the façades take a key id.
my $script = $node->basedir . '/rotate.sh';
my $connstr = $node->connstr('postgres');
append_to_file($script, qq{#!/bin/sh
set -e
printf '1 %s\\n2 %s active\\n' '$key{1}' '$key{2}' > '$keyfile'
psql -XAtq -d "$connstr" -c 'SELECT pg_reload_conf()' >/dev/null
until [ "\$(psql -XAtq -d "$connstr" -c 'SELECT mask_key_id FROM snowflake_status()')" = 2 ]; do sleep 0.1; done
});
chmod 0700, $script;
my $u = $node->safe_psql('postgres', 'SELECT snowflake_uuidv7()');
my $old_facade = $node->safe_psql('postgres', "SELECT uuidv7_mask('$u')");
my ($out, $stderr);
my $ret = $node->psql('postgres', qq{
SELECT snowflake_mask(1234, 'ord');
\\! $script
SELECT 1;
SELECT snowflake_mask(1234, 'ord');
SELECT snowflake_unmask('ord_0ph2h3775ty6t5abzjmpvh1vah', 'ord');
SELECT uuidv7_unmask('$old_facade', 1) = '$u', uuidv7_unmask('$old_facade') = '$u';
SELECT uuidv7_unmask(uuidv7_mask('$u')) = '$u', uuidv7_mask('$u') <> '$old_facade';
}, stdout => \$out, stderr => \$stderr, on_error_stop => 1);
is($ret, 0, 'the rotation script ran') or diag($stderr);
is( $out,
	"ord_0ph2h3775ty6t5abzjmpvh1vah\n1\nord_5cps8fgh41fsg5q2xxh8ac4hcw\n1234\nt|f\nt|t",
	'one session across the rotation: new tokens under key 2, old ones unmask, façades by key id');
like(status(), qr/^2\|2\|-$/, 'status: key 2 active, two keys');
is($node->safe_psql('postgres', "SELECT count(*) FROM orders WHERE snowflake_unmask(snowflake_mask(id, 'ord'), 'ord') = id"),
	'10000', 'every ID round-trips under the new key');

# A reload that cannot read the file keeps the keys in use and says why, once, in the log.
my $log_at = -s $node->logfile;
append_to_file($keyfile, "3 not-a-key\n");
reload_until(qr/the keys loaded before stay in use/);
is($node->safe_psql('postgres', q{SELECT snowflake_unmask('ord_0ph2h3775ty6t5abzjmpvh1vah', 'ord')}), '1234',
	'a broken file on reload: the keys loaded before keep working');
like(log_since($node, $log_at),
	qr/WARNING:  snowflake\.mask_key_file: "mask\.keys", line 3: the key is not 64 hex digits \(256 bits\); the keys loaded before stay in use/,
	'the log says what is wrong with the file');
ok(!leaks(slurp_file($node->logfile)), 'the log holds no key');
# Retiring key 1: its tokens are refused from then on.
open(my $fh, '>', $keyfile) or die $!;
print $fh "2 $key{2} active\n";
close $fh;
reload_until(qr/^2\|1\|-$/);
like(psql_error(q{SELECT snowflake_unmask('ord_0ph2h3775ty6t5abzjmpvh1vah', 'ord')}), qr/22P02: invalid snowflake token/,
	'a retired key\'s tokens are refused');
# One key under two ids loads, with a WARNING; a key of all zeros is refused.
$log_at = -s $node->logfile;
open($fh, '>', $keyfile) or die $!;
print $fh "2 $key{2} active\n5 $key{2}\n";
close $fh;
reload_until(qr/^2\|2\|-$/);
ok( poll_until(
		sub {
			log_since($node, $log_at) =~
			  /WARNING:  snowflake\.mask_key_file: line 2: key id 5 holds the same key as key id 2/;
		}),
	'one key under two ids: a WARNING in the log');
open($fh, '>', $keyfile) or die $!;
print $fh "2 $key{2} active\n0 " . ('0' x 64) . "\n";
close $fh;
reload_until(qr/line 2: this key is all zeros or the README's example/);
pass('a key of all zeros is refused');
open($fh, '>', $keyfile) or die $!;
print $fh "2 $key{2} active\n";
close $fh;
reload_until(qr/^2\|1\|-$/);

# A role that is not superuser, with pg_monitor (which reads every setting): no key by any
# SQL it can run.
$node->safe_psql('postgres', q{
CREATE ROLE app LOGIN;
GRANT pg_monitor TO app;
GRANT SELECT ON orders TO app;
});
my @attempts = (
	q{SELECT name, setting, reset_val, boot_val, sourcefile FROM pg_settings WHERE name LIKE 'snowflake.%'},
	q{SELECT current_setting('snowflake.mask_key_file')},
	q{SHOW ALL},
	q{SELECT * FROM pg_file_settings},
	q{SELECT pg_read_file('mask.keys')},
	q{SELECT pg_read_binary_file('mask.keys')},
	q{SELECT pg_read_file('} . $keyfile . q{')},
	q{SELECT * FROM pg_stat_file('mask.keys')},
	q{SELECT pg_ls_dir('.')},
	q{CREATE TEMP TABLE k (line text); COPY k FROM '} . $keyfile . q{'; SELECT * FROM k},
	q{SELECT lo_import('} . $keyfile . q{')},
	q{SET snowflake.mask_key_file = '/dev/stdin'},
	q{ALTER SYSTEM SET snowflake.mask_key_file = '/tmp/other'},
	q{SELECT * FROM snowflake_status()},
	q{SELECT snowflake_unmask(repeat('z', 200))},
	q{SELECT snowflake_unmask('ord_zzzzzzzzzzzzzzzzzzzzzzzzzz')},
	q{SELECT snowflake_mask(1, repeat('a', 64))},
	q{SELECT uuidv7_unmask('00000000-0000-7000-8000-000000000000')},
	q{SELECT ulid_mask('00000000000000000000000000'::ulid, 1)},
	q{SELECT proname, prosrc, probin FROM pg_proc WHERE proname LIKE '%mask%'},
	q{SELECT * FROM pg_stat_activity},
	q{SELECT snowflake_mask(id, 'ord') FROM orders LIMIT 3});
my $refused = 0;
foreach my $sql (@attempts)
{
	my ($r, $o, $e) = $node->psql('postgres', $sql, stdout => \my $so, stderr => \my $se,
		extra_params => [ '-U', 'app', '-v', 'VERBOSITY=verbose' ]);
	ok(!leaks($so) && !leaks($se), "no key in what app gets from: $sql");
	$refused++ if $sql =~ /pg_read|pg_stat_file|pg_ls_dir|COPY|lo_import|pg_file_settings/ && $se =~ /permission denied|must be superuser/;
}
is($refused, 8, 'every file and file-settings function refuses app');
like(psql_error(q{SET snowflake.mask_key_file = '/dev/stdin'}, 'postgres', 'app'),
	qr/cannot be changed now/, 'no session can point the server at another key file');
is($node->safe_psql('postgres', q{SELECT snowflake_unmask(snowflake_mask(42))}), '42',
	'app\'s attempts changed nothing');
my $dump = `pg_dump -d '$connstr' 2>&1`;
like($dump, qr/CREATE TABLE public\.orders/, 'pg_dump ran');
ok(!leaks($dump), 'a dump holds no key');
ok(!leaks(slurp_file($node->logfile)), 'nor does the server log');

$node->stop;
done_testing();
