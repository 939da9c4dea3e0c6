# Load: 16 clients insert rows whose snowflake(), snowflake_uuidv7() and ulid() keys come from column
# defaults, for SNOWFLAKE_LOAD_SECONDS seconds (10 by default; 60 for the documented run):
# zero duplicates, zero errors, and no warning or error in the server log.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $seconds = $ENV{SNOWFLAKE_LOAD_SECONDS} || 10;

my $node = snowflake_node('load', qq{
snowflake.shard_id = 21
max_connections = 40
shared_buffers = 256MB
synchronous_commit = off
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE load (
  sf bigint PRIMARY KEY DEFAULT snowflake(),
  v7 uuid UNIQUE DEFAULT snowflake_uuidv7(),
  ul ulid UNIQUE DEFAULT ulid(),
  client int NOT NULL
);
});
my $log_offset = -s $node->logfile;

$node->pgbench(
	"--no-vacuum --client=16 --jobs=2 --time=$seconds",
	0,
	[qr{number of failed transactions: 0 \(0\.000%\)}],
	[qr{^$}],
	"16 clients for $seconds s",
	{
		'007_load' => q{
INSERT INTO load (client) SELECT :client_id FROM generate_series(1, 100);
}
	});

my ($rows, $sf, $v7, $ul) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT count(*), count(DISTINCT sf), count(DISTINCT v7), count(DISTINCT ul) FROM load');
ok($rows > 0, "$rows rows inserted");
is("$sf|$v7|$ul", "$rows|$rows|$rows", 'no duplicate of any kind');
my $log = substr(slurp_file($node->logfile), $log_offset);
my @bad = grep { /\b(WARNING|ERROR|FATAL|PANIC):/ } split /\n/, $log;
is(scalar(@bad), 0, 'no warning or error in the server log') or diag(join("\n", @bad[0 .. 4]));

$node->stop;
done_testing();
