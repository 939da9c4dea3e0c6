# A misspelled snowflake.* setting in the configuration: PostgreSQL only logs the name it does
# not know and drops it, so a misspelled snowflake.shard_id or snowflake.shard_source would
# leave the server on shard 0, every server's default (two servers with the same misspelling
# would issue the same IDs). On the default shard, the generators of IDs that carry a shard
# refuse (42704), naming the name and the setting nearest to it (its file and line go to the
# server's log, and to snowflake_status(), which is pg_monitor's); snowflake_status() names it
# in any case; a correction and a reload end it. A configuration file PostgreSQL cannot parse
# changes nothing of that.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $node = snowflake_node('typo', "include_if_exists = 'typo.conf'\n");
my $typo_file = $node->data_dir . '/typo.conf';
sub write_typo_conf
{
	my ($text) = @_;
	open(my $fh, '>', $typo_file) or die "$typo_file: $!";
	print $fh $text;
	close $fh;
}

# Started clean, on the default shard: IDs (with the default shard's WARNING), no name shown.
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
like($node->safe_psql('postgres', 'SELECT snowflake()'), qr/^\d+$/,
	'with no setting misspelled, the default shard generates');
is($node->safe_psql('postgres', 'SELECT unknown_settings IS NULL FROM snowflake_status()'),
	't', 'and snowflake_status() names no unknown setting');

sub refuses
{
	my ($name, $nearest, $how) = @_;
	foreach my $call ('snowflake()', 'sno(0)', 'rsxid()', 'ksuid()', '(snowflake_block(3)).first')
	{
		my ($ret, $stdout, $stderr) =
		  $node->psql('postgres', "SELECT $call", extra_params => [ '-v', 'VERBOSITY=verbose' ]);
		like($stderr,
			qr/ERROR:  42704: unrecognized configuration parameter in the configuration: \Q$name\E \(did you mean \Q$nearest\E\?\)\n.*HINT:  Correct the name/s,
			"$how: $call refuses, naming $name and $nearest");
		unlike($stderr, qr/\Q$typo_file\E/, "$how: $call shows no file of the server's");
	}
	like($node->safe_psql('postgres', 'SELECT snowflake_uuidv7()'), qr/^[0-9a-f-]{36}$/,
		"$how: snowflake_uuidv7(), which carries no shard, generates");
	is( $node->safe_psql('postgres',
			'SELECT generation_refused, unknown_settings FROM snowflake_status()'),
		"unrecognized configuration parameter in the configuration: $name (did you mean $nearest?)|$name ($typo_file line 1; did you mean $nearest?)",
		"$how: snowflake_status() says why, and names it");
}

# Added and reloaded: a new session refuses (this server issued on the default shard before).
write_typo_conf("snowflake.shardid = 1\n");
$node->reload;
refuses('snowflake.shardid', 'snowflake.shard_id', 'snowflake.shardid added and reloaded');
like(slurp_file($node->logfile),
	qr/DETAIL:  Found at: snowflake.shardid \(\Q$typo_file\E line 1; did you mean snowflake.shard_id\?\)/,
	'the server\'s log says where');

# A session that sets a shard and then RESETs it is back on the default shard: refused again.
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	'SET snowflake.shard_id = 3; SELECT snowflake_shard(snowflake()); RESET snowflake.shard_id; SELECT snowflake()');
is($stdout, '3', 'a session\'s own shard issues');
like($stderr, qr/ERROR:  unrecognized configuration parameter in the configuration: snowflake.shardid/,
	'after RESET, the session refuses again');

# A configuration file PostgreSQL cannot parse (a line that is no setting, a missing file
# included): the reload is refused, and the extension reads the files without harm.
write_typo_conf("snowflake.shardid = 1\nthis line is no setting\ninclude 'no_such_file.conf'\n");
$node->reload;
is($node->safe_psql('postgres', 'SELECT count(*) FROM snowflake_status()'), '1',
	'snowflake_status() answers beside a configuration file with errors');
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT snowflake()');
like($stderr, qr/ERROR:  unrecognized configuration parameter in the configuration: snowflake.shardid/,
	'and snowflake() still refuses for the misspelling before the broken line');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');

# At start, each misspelling of the three kinds: the shard, the shard's source, and another.
foreach my $case (
	[ "snowflake.shardid = 1\n", 'snowflake.shardid', 'snowflake.shard_id' ],
	[ "snowflake.shard_sorce = etcd\n", 'snowflake.shard_sorce', 'snowflake.shard_source' ],
	[ "snowflake.max_leed = 2000\n", 'snowflake.max_leed', 'snowflake.max_lead' ])
{
	my ($text, $name, $nearest) = @$case;
	write_typo_conf($text);
	$node->restart;
	refuses($name, $nearest, "$name at start");
	like(slurp_file($node->logfile), qr/"\Q$name\E"/, "(PostgreSQL itself only logs $name)");
}

# With the shard set, a misspelled setting that is not the shard's stops nothing, and is named.
write_typo_conf("snowflake.max_leed = 2000\nsnowflake.shard_id = 7\n");
$node->reload;
$node->poll_query_until('postgres', q{SELECT current_setting('snowflake.shard_id') = '7'})
  or die 'snowflake.shard_id was not reloaded';
is($node->safe_psql('postgres', 'SELECT snowflake_shard(snowflake()), (sno_decode(sno(0))).partition'),
	'7|7', 'with snowflake.shard_id set, the IDs are issued on it');
is( $node->safe_psql('postgres',
		'SELECT generation_refused IS NULL, unknown_settings FROM snowflake_status()'),
	"t|snowflake.max_leed ($typo_file line 1; did you mean snowflake.max_lead?)",
	'and snowflake_status() still names the misspelled setting');

# The shard removed from the file again and reloaded: back on the default shard, refused.
write_typo_conf("snowflake.max_leed = 2000\n");
$node->reload;
$node->poll_query_until('postgres',
	q{SELECT shard_id_source = 'default' FROM snowflake_status()})
  or die 'snowflake.shard_id was not reset';
refuses('snowflake.max_leed', 'snowflake.max_lead', 'the shard removed and reloaded');

# Corrected and reloaded: nothing named.
write_typo_conf("snowflake.max_lead = 2000\n");
$node->reload;
$node->poll_query_until('postgres', 'SELECT unknown_settings IS NULL FROM snowflake_status()')
  or die 'the correction was not seen';
like($node->safe_psql('postgres', 'SELECT snowflake()'), qr/^\d+$/,
	'corrected and reloaded, the default shard generates again');

$node->stop;
done_testing();
