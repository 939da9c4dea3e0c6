# Causal order across servers with snowflake_observe(): two servers whose clocks are 5 s
# apart (libfaketime on the slow one). A message written on the fast server and answered on
# the slow one: without observing, the reply's ID is below the message's; with it, never,
# over many round trips, for every kind. An ID beyond snowflake.max_clock_offset is refused;
# 8 clients observing and generating at once make no duplicate and no inversion; and an
# observation survives a restart.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $faketime = faketime_library();
plan skip_all => $no_faketime unless $faketime;

sub server
{
	my ($name, $shard) = @_;
	return snowflake_node($name, qq{
snowflake.shard_id = $shard
snowflake.max_clock_offset = '10s'
});
}

my $fast = server('fast', 1);
my $slow = server('slow', 2);
$fast->start;
start_with_clock($slow, '-5s');
$_->safe_psql('postgres', 'CREATE EXTENSION snowflake') for ($fast, $slow);

# The slow server's IDs are about 5 s behind the fast one's.
my $gap = sprintf('%.1f', ids_ahead_s($fast, $slow));
diag("the fast server's IDs are $gap s ahead of the slow one's");
if ($gap < 4)
{
	plan skip_all => "libfaketime does not move this server's clock here ($gap s apart)";
}

# One round trip: a message on the fast server, read and answered on the slow one (which
# observes it first when asked), the reply read back on the fast one, which answers it in
# turn. Returns 1 when each answer's ID is above what it answers. Each server is talked to
# through one session that stays open, as an application's connection would.
my $fast_session = $fast->background_psql('postgres');
my $slow_session = $slow->background_psql('postgres');
my %generator = (
	bigint => 'snowflake()',
	uuid => 'snowflake_uuidv7()',
	ulid => 'ulid()');
my %literal = (bigint => '%s', uuid => "'%s'::uuid", ulid => "'%s'::ulid");

sub round_trip
{
	my ($kind, $observe) = @_;
	my $gen = $generator{$kind};
	my $message = $fast_session->query_safe("SELECT $gen");
	my $m = sprintf($literal{$kind}, $message);
	my $reply = $slow_session->query_safe(
		($observe ? "SELECT snowflake_observe($m);" : '') . "SELECT $gen");
	$reply = (split /\n/, $reply)[-1];
	my $r = sprintf($literal{$kind}, $reply);
	my $answer = $fast_session->query_safe(
		($observe ? "SELECT snowflake_observe($r);" : '') . "SELECT $gen");
	$answer = (split /\n/, $answer)[-1];
	my $a2 = sprintf($literal{$kind}, $answer);
	return $fast_session->query_safe("SELECT ($r > $m AND $a2 > $r)::int");
}

# Every kind without observing first: an observation carries the slow server's IDs to the
# fast one's time, and that lead takes a while to fade.
for my $kind (qw(bigint uuid ulid))
{
	my $inverted = 0;
	$inverted += 1 - round_trip($kind, 0) for 1 .. 20;
	diag("$kind without observing: $inverted of 20 replies are below their message");
	ok($inverted > 0, "$kind: without observing, a reply on the slow server can be below its message");
}
for my $kind (qw(bigint uuid ulid))
{
	my $ordered = 0;
	$ordered += round_trip($kind, 1) for 1 .. 100;
	is($ordered, 100, "$kind: with observing, 100 of 100 round trips keep the causal order");
}
$_->quit for ($fast_session, $slow_session);

# The observations that moved the slow server's clock are counted.
ok(status_of($slow, 'observed_moves') >= 100,
	'snowflake_status() counts observations that moved the clock');

# An ID further ahead than snowflake.max_clock_offset is refused, and moves nothing.
set_and_reload($slow, 'snowflake.max_clock_offset' => '2s');
# (the slow server's IDs are at the fast one's time now, after the last observation: wait
# until that lead has faded and its IDs are at its own clock, 5 s behind the fast one's)
poll_until(sub { status_of($slow, 'clock_gap_ms') <= 0 })
  or die 'the slow server\'s IDs did not come back to its clock';
my $ahead = $fast->safe_psql('postgres', 'SELECT snowflake()');
my ($ret, $stdout, $stderr) =
  $slow->psql('postgres', "SELECT snowflake_observe(${ahead}::bigint)");
isnt($ret, 0, 'an ID 5 s ahead is refused when the bound is 2 s');
like($stderr, qr/ERROR:  observed snowflake ID is \d+ ms ahead of this server's clock/,
	'with an ERROR that says how far ahead');
ok($slow->safe_psql('postgres', "SELECT (snowflake() < $ahead)::int"),
	'and the slow server did not move');
$slow->safe_psql('postgres', 'ALTER SYSTEM RESET snowflake.max_clock_offset');
set_and_reload($slow, 'snowflake.max_clock_offset' => '10s');

# 8 clients on the slow server, each observing IDs up to 4.9 s ahead of its clock (as the
# fast server's would be) and generating every kind right after: no duplicate, no inversion.
$slow->safe_psql('postgres', q{
CREATE UNLOGGED TABLE seen (observed bigint, id bigint, u uuid, l ulid)});
$slow->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=500',
	0,
	[qr{number of transactions actually processed: 4000/4000}],
	[qr{^$}],
	'8 clients observe and generate at once',
	{
		'012_observe' => q{
SELECT snowflake_at(clock_timestamp() + random() * interval '4.9 s') | 1023 AS o \gset
SELECT snowflake_observe(:o);
INSERT INTO seen VALUES (:o, snowflake(), snowflake_uuidv7(), ulid());
}
	});
is( $slow->safe_psql('postgres', q{
SELECT count(*), count(DISTINCT id), count(DISTINCT u), count(DISTINCT l),
       count(*) FILTER (WHERE id <= observed),
       count(*) FILTER (WHERE uuidv7_timestamp(u) <= snowflake_timestamp(observed)),
       count(*) FILTER (WHERE ulid_timestamp(l) <= snowflake_timestamp(observed))
  FROM seen}),
	'4000|4000|4000|4000|0|0|0',
	'4000 rows: no duplicate of any kind, and every ID above the one observed before it');

# An observation survives a restart: the observed time reaches the durable reservation, and
# the IDs after the restart (with the slow clock) are above it. (First the slow server's clock
# passes everything observed so far, so that only this observation is ahead of it.)
$slow->poll_query_until('postgres',
	'SELECT clock_timestamp() > (SELECT snowflake_timestamp(max(observed)) FROM seen)')
  or die 'the slow server\'s clock did not pass what it observed';
my $last = $fast->safe_psql('postgres', 'SELECT snowflake()');
$slow->safe_psql('postgres', "SELECT snowflake_observe(${last}::bigint)");
$slow->stop('immediate');
start_with_clock($slow, '-5s');
ok($slow->safe_psql('postgres', "SELECT (snowflake() > $last)::int"),
	'after a crash and restart, the slow server still issues IDs above the observed one');
$slow->stop;
start_with_clock($slow, '-5s');
my $after = $fast->safe_psql('postgres', 'SELECT snowflake()');
$slow->safe_psql('postgres', "SELECT snowflake_observe(${after}::bigint)");
$slow->restart;
ok($slow->safe_psql('postgres', "SELECT (snowflake() > $after)::int"),
	'after a clean restart too');

done_testing();
