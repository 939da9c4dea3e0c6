# A message that echoes a user's input cuts it at a character's boundary, never inside one:
# a token of more than 100 bytes is shown cut, and a cut inside a character made the message
# invalid in the database's encoding (22021 to a LATIN1 client instead of 22P02; invalid UTF-8
# stored from sqlerrm, and a dump of it that no longer restores). Checked in a UTF8 database
# with a LATIN1 client, and in an EUC_JP database with a character of three bytes.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $node = snowflake_node('encoding',
	"snowflake.shard_id = 3\nsnowflake.mask_key_file = 'mask.keys'\n",
	extra => [ '--encoding=UTF8', '--locale=C' ]);
my $keyfile = $node->data_dir . '/mask.keys';
append_to_file($keyfile,
	"1 1166d5663436ad4e63bf3eb9202c92670ecdff90dedb0772c63e189932d70154 active\n");
chmod 0600, $keyfile;
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE DATABASE eucjp ENCODING 'EUC_JP' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
});
$node->safe_psql('eucjp', 'CREATE EXTENSION snowflake');

sub error_of
{
	my ($db, $sql) = @_;
	my ($ret, $stdout, $stderr) =
	  $node->psql($db, $sql, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return $stderr;
}

# 99 ASCII characters, then a character of two bytes across byte 100 (U+00E9).
my $utf8_token = q{repeat('a', 99) || chr(233) || chr(233) || repeat('b', 30)};
foreach my $call ("snowflake_unmask($utf8_token, '')", "sno_unmask($utf8_token)")
{
	like(error_of('postgres', "SET client_encoding = 'LATIN1'; SELECT $call"),
		qr/ERROR:  22P02: invalid (snowflake|sno) token: "a{99}\.\.\."/,
		"UTF8 database, LATIN1 client: $call is 22P02, the token cut before the character");
}
# Caught in PL/pgSQL and stored: the message is valid text, which converts and dumps.
$node->safe_psql('postgres', qq{
CREATE TABLE caught (msg text);
DO \$\$ BEGIN PERFORM snowflake_unmask($utf8_token, '');
EXCEPTION WHEN invalid_text_representation THEN INSERT INTO caught VALUES (sqlerrm); END \$\$;
});
is($node->safe_psql('postgres', q{SELECT length(convert_to(msg, 'LATIN1')) > 100 FROM caught}),
	't', 'sqlerrm caught in PL/pgSQL is valid text (it converts to LATIN1)');
my $dump = $node->basedir . '/caught.sql';
$node->command_ok([ 'pg_dump', '-d', $node->connstr('postgres'), '-t', 'caught', '-f', $dump ],
	'the table of caught messages dumps');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('restored'), '-f', $dump ],
	'and the dump restores');

# EUC_JP: 98 ASCII characters, then a character of three bytes (JIS X 0212) across byte 100.
my $eucjp_token =
  q{repeat('a', 98) || convert_from('\x8fb0a1'::bytea, 'EUC_JP') || repeat('b', 30)};
foreach my $call ("snowflake_unmask($eucjp_token, '')", "sno_unmask($eucjp_token)")
{
	like(error_of('eucjp', "SELECT $call"),
		qr/ERROR:  22P02: invalid (snowflake|sno) token: "a{98}\.\.\."/,
		"EUC_JP database: $call is 22P02, the token cut before the character");
}

$node->stop;
done_testing();
