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

$node->stop;
done_testing();
