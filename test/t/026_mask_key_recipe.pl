# The README's key recipe as printed: snowflake_mask_key, which make install puts beside
# pg_config (and the Debian package in /usr/lib/postgresql/N/bin), makes the key file in the
# data directory, mode 0600, and the server reads it; the rotation recipe (the same command
# with the next id) keeps the old key for old tokens. (Run as root, the tool gives the file
# to the owner of its folder: the server's user; these tests run unprivileged.)
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $node = snowflake_node('mask_recipe', "snowflake.mask_key_file = 'mask.keys'\n");
my $tool = $node->config_data('--bindir') . '/snowflake_mask_key';
ok(-x $tool, 'make install put snowflake_mask_key beside pg_config');

my $file = $node->data_dir . '/mask.keys';
my ($out, $err);
ok(IPC::Run::run([ $tool, 'new', '1', $file ], '>', \$out, '2>', \$err), 'snowflake_mask_key new 1 FILE')
  or diag($err);
is(sprintf('%04o', (stat $file)[2] & 07777), '0600', 'the file is mode 0600');
like(slurp_file($file), qr/^1 [0-9a-f]{64} active\n\z/, 'with one active key');

$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is(status_of($node, q{concat_ws('|', mask_key_id, mask_keys, coalesce(mask_key_problem, '-'))}),
	'1|1|-', 'the server reads it: key 1 active, no problem');
my $token = $node->safe_psql('postgres', "SELECT snowflake_mask(7351848297209679873, 'inv')");

ok(IPC::Run::run([ $tool, 'new', '2', $file ], '>', \$out, '2>', \$err), 'snowflake_mask_key new 2 FILE')
  or diag($err);
like(slurp_file($file), qr/^1 [0-9a-f]{64}\n2 [0-9a-f]{64} active\n\z/,
	'key 2 is added as the active one, key 1 kept without "active"');
ok(!IPC::Run::run([ $tool, 'new', '2', $file ], '>', \$out, '2>', \$err), 'an id already in the file is refused');
like($err, qr/already has a key 2/, 'and says why');
$node->reload;
$node->poll_query_until('postgres', 'SELECT mask_key_id = 2 FROM snowflake_status()')
  or die 'key 2 never became active';
is(status_of($node, q{concat_ws('|', mask_key_id, mask_keys, coalesce(mask_key_problem, '-'))}),
	'2|2|-', 'after a reload: key 2 active, two keys');
is($node->safe_psql('postgres', "SELECT snowflake_unmask('$token', 'inv')"), '7351848297209679873',
	'a token made under key 1 still unmasks');

# The tool accepts exactly what the server accepts and writes only what it loads (its check
# is the server's own parser, snowflake_mask_key_check, installed beside it).
ok(-x $node->config_data('--bindir') . '/snowflake_mask_key_check',
	'make install put snowflake_mask_key_check beside it');
# An active line with a comment after it: the rotation leaves one active key.
my $hex = join '', map { sprintf '%02x', int(rand(256)) } 1 .. 32;
open(my $fh, '>', $file) or die "$file: $!";
print $fh "# the keys of the test\n1 $hex active  # primary\n";
close $fh;
chmod 0600, $file;
ok(IPC::Run::run([ $tool, 'new', '3', $file ], '>', \$out, '2>', \$err),
	'snowflake_mask_key new 3 on a file whose active line has a comment')
  or diag($err);
like(slurp_file($file), qr/^# the keys of the test\n1 $hex  # primary\n3 [0-9a-f]{64} active\n\z/,
	'key 1 loses its "active", its comment kept; key 3 is the one active key');
$node->reload;
$node->poll_query_until('postgres', 'SELECT mask_key_id = 3 FROM snowflake_status()')
  or die 'key 3 never became active';
is(status_of($node, q{concat_ws('|', mask_key_id, mask_keys, coalesce(mask_key_problem, '-'))}),
	'3|2|-', 'and the server loads it: key 3 active, two keys, no problem');

# Ids the server refuses are refused, and the file is left as it was.
my $before = slurp_file($file);
foreach my $id ('0007', '256', '-1', 'x')
{
	ok(!IPC::Run::run([ $tool, 'new', $id, $file ], '>', \$out, '2>', \$err),
		"snowflake_mask_key new $id is refused");
	like($err, qr/a key id is a number from 0 to 255/, 'saying what an id is');
	is(slurp_file($file), $before, 'and leaves the file as it was');
}
ok(IPC::Run::run([ $tool, 'new', '007', $file ], '>', \$out, '2>', \$err),
	'007, which the server reads as 7, is taken') or diag($err);
like(slurp_file($file), qr/\n7 [0-9a-f]{64} active\n\z/, 'and written as 7');
$before = slurp_file($file);
# A file that holds no key yet (comments alone) is a start.
my $fresh = $node->data_dir . '/fresh.keys';
open($fh, '>', $fresh) or die "$fresh: $!";
print $fh "# made by hand first\n";
close $fh;
chmod 0600, $fresh;
ok(IPC::Run::run([ $tool, 'new', '1', $fresh ], '>', \$out, '2>', \$err),
	'snowflake_mask_key new 1 on a file of comments alone') or diag($err);
like(slurp_file($fresh), qr/^# made by hand first\n1 [0-9a-f]{64} active\n\z/, 'the key added below them');
# A file the server would not load (two active lines) is not touched.
open($fh, '>>', $file) or die "$file: $!";
print $fh "9 $hex active\n";
close $fh;
$before = slurp_file($file);
ok(!IPC::Run::run([ $tool, 'new', '8', $file ], '>', \$out, '2>', \$err),
	'a file with two active keys is refused');
like($err, qr/marked active too.*not a key file the server loads/s, 'naming the server\'s reason');
is(slurp_file($file), $before, 'and left unchanged');

$node->stop;
done_testing();
