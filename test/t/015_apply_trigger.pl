# Causal order through logical replication: snowflake_observe_trigger() on a subscriber's
# tables observes each arriving ID (bigint, version 7 uuid, ulid, sno), so that the subscriber's
# own IDs are above what it received. The documented block for it (docs/many-servers.md) is
# run as it stands. A value it may not observe (too far ahead, a uuid of another version, a
# negative bigint) is skipped and counted, never an ERROR that would stop the apply worker. The functions that move the
# clock are not PUBLIC's, and snowflake.max_clock_offset is the server's.
use strict;
use warnings FATAL => 'all';
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

# The documented block for subscribers (docs/many-servers.md): the first ```sql block that
# names the trigger function.
my $readme = dirname(__FILE__) . '/../../docs/many-servers.md';
my $block;
if (-f $readme)
{
	my $text = slurp_file($readme);
	while ($text =~ /^```sql\n(.*?)^```/msg)
	{
		my $candidate = $1;
		if ($candidate =~ /snowflake_observe_trigger/)
		{
			$block = $candidate;
			last;
		}
	}
}
unless (defined $block)
{
	diag("$readme has no ```sql block with snowflake_observe_trigger: using this test's copy");
	$block = <<'SQL';
-- on each subscriber, for each replicated table with ID keys (here messages, key id)
CREATE TRIGGER messages_observe BEFORE INSERT ON messages
  FOR EACH ROW EXECUTE FUNCTION snowflake_observe_trigger('id');
ALTER TABLE messages ENABLE ALWAYS TRIGGER messages_observe;
SQL
}

# (snowflake.max_clock_offset of a minute: the values a little ahead below stay ahead of the
# subscriber's clock until they arrive, however slowly; an hour ahead is still too far.)
sub server
{
	my ($name, $shard) = @_;
	my $node = snowflake_node($name, qq{
snowflake.shard_id = $shard
snowflake.max_clock_offset = '1min'
}, allows_streaming => 'logical');
	$node->start;
	$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE messages (id bigint PRIMARY KEY, u uuid, l ulid, body text);
CREATE TABLE uuid_keyed (id uuid PRIMARY KEY, body text);
CREATE TABLE ulid_keyed (id ulid PRIMARY KEY, body text);
CREATE TABLE sno_keyed (id sno PRIMARY KEY, body text);
CREATE TABLE events (id bigint PRIMARY KEY, body text);
});
	return $node;
}
my $publisher = server('publisher', 1);
my $subscriber = server('subscriber', 2);

# On the subscriber: the README's block for messages, the same for the uuid, ulid and sno
# keyed tables, and the default (the primary key's columns) for events.
$subscriber->safe_psql('postgres', $block);
foreach my $table ('uuid_keyed', 'ulid_keyed', 'sno_keyed')
{
	(my $sql = $block) =~ s/messages/$table/g;
	$subscriber->safe_psql('postgres', $sql);
}
$subscriber->safe_psql('postgres', q{
CREATE TRIGGER events_observe BEFORE INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION snowflake_observe_trigger();
ALTER TABLE events ENABLE ALWAYS TRIGGER events_observe;
});

$publisher->safe_psql('postgres',
	'CREATE PUBLICATION pub FOR TABLE messages, uuid_keyed, ulid_keyed, sno_keyed, events');
my $log_from = -s $subscriber->logfile;
$subscriber->safe_psql('postgres',
	"CREATE SUBSCRIPTION sub CONNECTION '" . $publisher->connstr . " dbname=postgres' PUBLICATION pub");
$subscriber->wait_for_subscription_sync($publisher, 'sub');

# Rows that reach the subscriber: true once the query says so.
sub arrived
{
	my ($query) = @_;
	return $subscriber->poll_query_until('postgres', $query);
}

# --- Values of every kind, and ones the trigger may not observe: an hour ahead (beyond
# snowflake.max_clock_offset, a minute here), uuids of version 4, a negative bigint. 22 of them.
my $skipped = status_of($subscriber, 'observe_skipped');
$publisher->safe_psql('postgres', q{
INSERT INTO messages SELECT snowflake(), snowflake_uuidv7(), ulid(), 'now' FROM generate_series(1, 100);
INSERT INTO messages (id, body) SELECT snowflake_at(now() + interval '1 hour') + n, 'an hour ahead'
  FROM generate_series(1, 5) n;
INSERT INTO messages (id, body) VALUES (-42, 'negative');
INSERT INTO uuid_keyed SELECT snowflake_uuidv7(), 'now' FROM generate_series(1, 10);
INSERT INTO uuid_keyed SELECT gen_random_uuid(), 'version 4' FROM generate_series(1, 5);
INSERT INTO uuid_keyed SELECT uuidv7_from_time(now() + interval '1 hour'), 'an hour ahead'
  FROM generate_series(1, 5);
INSERT INTO ulid_keyed SELECT ulid(), 'now' FROM generate_series(1, 10);
INSERT INTO ulid_keyed SELECT ulid_from_time(now() + interval '1 hour'), 'an hour ahead' FROM generate_series(1, 5);
INSERT INTO events VALUES (snowflake(), 'now'), (snowflake_at(now() + interval '1 hour') + 1, 'an hour ahead');
});
ok( arrived(q{
SELECT (SELECT count(*) FROM messages) = 106 AND (SELECT count(*) FROM uuid_keyed) = 20
   AND (SELECT count(*) FROM ulid_keyed) = 15 AND (SELECT count(*) FROM events) = 2}),
	'every row arrives at the subscriber, those the trigger may not observe too');
my $skipped_now = status_of($subscriber, 'observe_skipped') - $skipped;
diag("observe_skipped grew by $skipped_now");
is($skipped_now, 22, 'each value it could not observe is skipped and counted (the primary key by default)');
is( $subscriber->safe_psql('postgres', q{
SELECT snowflake_timestamp(snowflake()) < clock_timestamp() + interval '1 minute',
       uuidv7_timestamp(snowflake_uuidv7()) < clock_timestamp() + interval '1 minute',
       ulid_timestamp(ulid()) < clock_timestamp() + interval '1 minute'}),
	't|t|t', 'and what was skipped moved nothing');

# --- A value a little ahead is observed: the subscriber's next ID of its kind is above it.
# (Each further ahead than the one before, so that each observation is what lifts the IDs.)
foreach my $case (
	[ 'messages', 'bigint key 20 s ahead', 'snowflake_at(clock_timestamp() + interval \'20 s\') + 7',
	  'snowflake()', '%s', 'snowflake_timestamp' ],
	[ 'uuid_keyed', 'uuid key 30 s ahead', 'uuidv7_from_time(clock_timestamp() + interval \'30 s\')',
	  'snowflake_uuidv7()', "'%s'::uuid", 'uuidv7_timestamp' ],
	[ 'ulid_keyed', 'ulid key 40 s ahead', 'ulid_from_time(clock_timestamp() + interval \'40 s\')',
	  'ulid()', "'%s'::ulid", 'ulid_timestamp' ],
	# sno: the subscriber's next sno in a later 4 ms unit (a later unit is what makes it sort
	# above whatever the partition and metabyte).
	[ 'sno_keyed', 'sno key 50 s ahead', 'sno_at(clock_timestamp() + interval \'50 s\')',
	  'sno_timestamp(sno(0))', "sno_timestamp('%s'::sno)", 'sno_timestamp', "'%s'::sno" ])
{
	my ($table, $what, $value, $generator, $literal, $decode, $key) = @$case;
	my $id = $publisher->safe_psql('postgres',
		"INSERT INTO $table (id, body) VALUES ($value, 'ahead') RETURNING id");
	my $lit = sprintf($literal, $id);
	my $key_lit = sprintf($key // $literal, $id);
	ok(arrived("SELECT count(*) = 1 FROM $table WHERE id = $key_lit"), "a $what arrives");
	is( $subscriber->safe_psql('postgres', qq{
SELECT $generator > $lit, (SELECT observed_until >= $decode($key_lit) FROM snowflake_status())}),
		't|t', "a $what is observed: the subscriber's next ID is above it");
}

unlike(substr(slurp_file($subscriber->logfile), $log_from), qr/ERROR:/,
	'the apply worker met no ERROR');

# --- Who may move the clock: not PUBLIC; the extension's owner, who can grant it.
is( $subscriber->safe_psql('postgres', q{
SELECT string_agg(p.oid::regprocedure::text || ' ' ||
         (EXISTS (SELECT 1 FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                   WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))::text || ' ' ||
         (EXISTS (SELECT 1 FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                   WHERE a.grantee = e.extowner AND a.privilege_type = 'EXECUTE' AND a.is_grantable))::text,
         ', ' ORDER BY p.oid::regprocedure::text COLLATE "C")
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE p.proname IN ('snowflake_observe', 'snowflake_observe_trigger')}),
	'snowflake_observe(bigint) false true, snowflake_observe(sno) false true, '
	  . 'snowflake_observe(ulid) false true, snowflake_observe(uuid) false true, '
	  . 'snowflake_observe_trigger() false true',
	'snowflake_observe() and snowflake_observe_trigger(): not executable by PUBLIC; '
	  . 'the extension\'s owner holds EXECUTE WITH GRANT OPTION');

$subscriber->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
my $as_plain = $subscriber->connstr('postgres') . ' user=plain';
my ($ret, $stdout, $stderr) = $subscriber->psql('postgres', 'SELECT snowflake_observe(1::bigint)',
	connstr => $as_plain, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($stderr, qr/ERROR:  42501: permission denied for function snowflake_observe/,
	'an ordinary role may not call snowflake_observe()');
($ret, $stdout, $stderr) = $subscriber->psql('postgres',
	"ALTER ROLE plain SET snowflake.max_clock_offset = '1h'");
like($stderr, qr/ERROR:/, 'nor be given its own snowflake.max_clock_offset');
is( $subscriber->safe_psql('postgres',
		q{SELECT context FROM pg_settings WHERE name = 'snowflake.max_clock_offset'}),
	'sighup', 'snowflake.max_clock_offset is the server\'s (configuration file, reload)');
$subscriber->safe_psql('postgres', 'GRANT EXECUTE ON FUNCTION snowflake_observe(bigint) TO plain');
is($subscriber->psql('postgres', 'SELECT snowflake_observe(1::bigint)', connstr => $as_plain),
	0, 'a grant from the extension\'s owner lets it');

$subscriber->stop;
$publisher->stop;
done_testing();
