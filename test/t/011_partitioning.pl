# Partitioning by the time inside the key. For each kind (snowflake bigint with a custom epoch,
# through the setting and through the epoch argument; UUIDv7; ULID), a table partitioned by
# RANGE on the key into days whose bounds are the kind's *_at() of midnights: rows of several
# days land in the partition of their day, and WHERE id >= *_at(now() - 1 day) scans only the
# partitions from yesterday on. Then pg_partman where it is installed: 5.x makes daily
# partitions ahead (UUIDv7 through its time encoder and decoder, snowflake IDs by key ranges
# one day wide), run_maintenance() adds more, rows are routed and queries pruned; 4.x has no
# encoders, and there only the snowflake kind is partitioned (by key ranges).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

# The epoch is a UTC midnight, so every day starts at a multiple of 86400000 << 23.
my $epoch = "timestamptz '2024-01-01 00:00:00+00'";
my $day_ids = 86400000 * (1 << 23);

my $node = snowflake_node('partitioning', qq{
snowflake.epoch = '1704067200000'
timezone = 'UTC'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

sub sql { return $node->safe_psql('postgres', $_[0]); }

# The partitions an EXPLAIN of the query names, sorted.
sub scanned {
	my ($query, $analyze) = @_;
	my $opts = $analyze ? 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF' : 'COSTS OFF';
	my $plan = sql("EXPLAIN ($opts) $query");
	my %seen = map { $_ => 1 } ($plan =~ /\bon (\w+)/g);
	return (join(' ', sort keys %seen), $plan);
}

# The immutable forms are what partitioning needs; the one-argument snowflake forms read the
# setting and are STABLE, so a partition key cannot use them.
is( sql(q{SELECT string_agg(f || '=' || provolatile::text, ' ' ORDER BY n)
            FROM unnest(ARRAY['snowflake_at(timestamptz)', 'snowflake_at(timestamptz, timestamptz)',
                              'snowflake_timestamp(bigint)', 'snowflake_timestamp(bigint, timestamptz)',
                              'ulid_at(timestamptz)', 'ulid_timestamp(ulid)',
                              'uuidv7_at(timestamptz)', 'uuidv7_timestamp(uuid)'])
                 WITH ORDINALITY AS u(f, n)
            JOIN pg_proc p ON p.oid = f::regprocedure}),
	'snowflake_at(timestamptz)=s snowflake_at(timestamptz, timestamptz)=i '
	  . 'snowflake_timestamp(bigint)=s snowflake_timestamp(bigint, timestamptz)=i '
	  . 'ulid_at(timestamptz)=i ulid_timestamp(ulid)=i '
	  . 'uuidv7_at(timestamptz)=i uuidv7_timestamp(uuid)=i',
	'decoders and bounds: IMMUTABLE, except the snowflake forms that read snowflake.epoch');
is( sql("SELECT bool_and(snowflake_at(t) = snowflake_at(t, epoch => $epoch)
                     AND snowflake_timestamp(snowflake_at(t) + 1023, $epoch) = date_trunc('milliseconds', t))
           FROM (VALUES (now()), (timestamptz '2024-01-01 00:00:00.0009+00'),
                        (timestamptz '2026-11-20 13:14:15.678901+00')) v(t)"),
	't', 'the epoch argument and the setting agree');

# Six days up to today and tomorrow, in UTC.
my @days = split /\n/, sql(
	"SELECT to_char(d, 'YYYYMMDD') FROM generate_series(current_date - 5, current_date + 1,
	   interval '1 day') d");
is(scalar @days, 7, 'seven days');

# kind: table suffix, key type, bound of a timestamptz (SQL), backfilled key of ts and row
# number n, key made now, decoded time of id.
my @kinds = (
	{ name => 'snowflake (epoch from the setting)', t => 'ev_sf_setting', type => 'bigint',
	  at => sub { "snowflake_at($_[0])" },
	  fill => "snowflake_at(ts) + n % 1024", now => 'snowflake()',
	  decode => 'snowflake_timestamp(id)' },
	{ name => 'snowflake (epoch argument)', t => 'ev_sf_epoch', type => 'bigint',
	  at => sub { "snowflake_at($_[0], epoch => $epoch)" },
	  fill => "snowflake_at(ts, epoch => $epoch) + n % 1024", now => 'snowflake()',
	  decode => "snowflake_timestamp(id, $epoch)" },
	{ name => 'UUIDv7', t => 'ev_uuid', type => 'uuid',
	  at => sub { "uuidv7_at($_[0])" },
	  fill => 'uuidv7_from_time(ts)', now => 'snowflake_uuidv7()',
	  decode => 'uuidv7_timestamp(id)' },
	{ name => 'ULID', t => 'ev_ulid', type => 'ulid',
	  at => sub { "ulid_at($_[0])" },
	  fill => 'ulid_from_time(ts)', now => 'ulid()',
	  decode => 'ulid_timestamp(id)' },
);

for my $k (@kinds) {
	my ($t, $name) = ($k->{t}, $k->{name});
	sql("CREATE TABLE $t (id $k->{type} NOT NULL, at timestamptz NOT NULL, live boolean NOT NULL DEFAULT false)
	     PARTITION BY RANGE (id)");
	for my $d (@days) {
		my ($from, $to) = ($k->{at}->("timestamptz '$d'"), $k->{at}->("timestamptz '$d' + interval '1 day'"));
		sql("CREATE TABLE ${t}_$d PARTITION OF $t FOR VALUES FROM ($from) TO ($to)");
	}
	# every 5 h 7 min over six days, both sides of two midnights, and the present
	sql("INSERT INTO $t (id, at)
	     SELECT $k->{fill}, ts FROM (
	       SELECT row_number() OVER () AS n, ts FROM (
	         SELECT generate_series(current_date - 5, now(), interval '5 hours 7 minutes') AS ts
	         UNION ALL VALUES (current_date - 3), (current_date - 3 - interval '1 millisecond'),
	                          (current_date - 1), (current_date - interval '1 microsecond')) s) r");
	sql("INSERT INTO $t SELECT $k->{now}, now(), true FROM generate_series(1, 10)");

	is( sql("SELECT count(*) FROM $t
	          WHERE tableoid::regclass::text <> '${t}_' || to_char($k->{decode}, 'YYYYMMDD')
	             OR ($k->{decode} <> date_trunc('milliseconds', at) AND NOT live)"),
		'0', "$name: every row in the partition of its day");
	is( sql("SELECT count(DISTINCT tableoid) FROM $t"), '6', "$name: rows in six days' partitions");

	# Pruning at execution (now() is STABLE): yesterday, today and tomorrow only.
	my $query = "SELECT * FROM $t WHERE id >= " . $k->{at}->("now() - interval '1 day'");
	my ($parts, $plan) = scanned($query, 1);
	is($parts, join(' ', map { "${t}_$_" } @days[4 .. 6]), "$name: id >= at(now() - 1 day) scans from yesterday on")
	  or diag($plan);
	is( sql("SELECT (SELECT count(*) FROM ($query) q)
	              = (SELECT count(*) FROM $t WHERE at >= date_trunc('milliseconds', now() - interval '1 day'))"),
		't', "$name: and finds every row of the last day");
}

# A constant bound through the IMMUTABLE forms prunes when the query is planned; through the
# STABLE setting form, when it starts.
my $noon = "timestamptz '" . sql("SELECT (current_date - 1 + interval '12 hours')::timestamptz") . "'";
my ($parts, $plan) = scanned("SELECT * FROM ev_sf_epoch WHERE id >= snowflake_at($noon, epoch => $epoch)");
is($parts, join(' ', map { "ev_sf_epoch_$_" } @days[4 .. 6]), 'epoch argument: pruned at planning');
unlike($plan, qr/Subplans Removed/, 'epoch argument: nothing left to prune at run time');
($parts, $plan) = scanned("SELECT * FROM ev_sf_setting WHERE id >= snowflake_at($noon)");
like($plan, qr/Subplans Removed: 4/, 'setting: pruned when the query starts');

# A partition key can be the time itself with the epoch argument, never with the setting.
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	'CREATE TABLE ev_key_stable (id bigint) PARTITION BY RANGE (snowflake_timestamp(id))');
like($stderr, qr/functions in partition key expression must be marked IMMUTABLE/,
	'the setting form cannot be a partition key');
sql("CREATE TABLE ev_key (id bigint) PARTITION BY RANGE (snowflake_timestamp(id, $epoch))");
sql("CREATE TABLE ev_key_$_ PARTITION OF ev_key FOR VALUES FROM ('$_') TO (timestamptz '$_' + interval '1 day')")
  for @days;
sql("INSERT INTO ev_key SELECT id FROM ev_sf_epoch");
is( sql("SELECT count(*) FROM ev_key
          WHERE tableoid::regclass::text <> 'ev_key_' || to_char(snowflake_timestamp(id, $epoch), 'YYYYMMDD')"),
	'0', 'the time as partition key: every row in the partition of its day');

SKIP:
{
	skip 'pg_partman is not installed (postgresql-NN-partman, where the Debian suite has it)', 1
	  unless sql("SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_partman'") eq '1';
	sql('CREATE SCHEMA partman');
	sql('CREATE EXTENSION pg_partman SCHEMA partman');
	my $version = sql("SELECT extversion FROM pg_extension WHERE extname = 'pg_partman'");
	my $encoders = sql(q{SELECT pg_get_function_arguments('partman.create_parent'::regproc)
	                       LIKE '%p_time_encoder%'}) eq 't';
	note("pg_partman $version, time encoders: " . ($encoders ? 'yes' : 'no'));

	# Snowflake IDs, on every version: bigint is an integer control column to pg_partman (it
	# takes encoders only for text and uuid), so the partitions are key ranges one day wide,
	# which begin at midnights since the epoch does.
	sql('CREATE TABLE pm_sf (id bigint NOT NULL, at timestamptz NOT NULL) PARTITION BY RANGE (id)');
	my $start = "snowflake_at(current_date - 5, epoch => $epoch)";
	if ($encoders)
	{
		sql("SELECT partman.create_parent(p_parent_table => 'public.pm_sf', p_control => 'id',
		       p_interval => '$day_ids', p_premake => 6, p_start_partition => ($start)::text)");
	}
	else
	{
		# pg_partman 4.x: declarative partitioning is p_type 'native'.
		sql("SELECT partman.create_parent(p_parent_table => 'public.pm_sf', p_control => 'id',
		       p_type => 'native', p_interval => '$day_ids', p_premake => 6,
		       p_start_partition => ($start)::text)");
	}
	# Six days premade from five days ago: partitions up to tomorrow.
	sql("INSERT INTO pm_sf SELECT id, at FROM ev_sf_epoch");
	is( sql("SELECT count(*) FROM pm_sf
	          WHERE tableoid::regclass::text <> 'pm_sf_p' || (id - id % $day_ids)
	             OR snowflake_timestamp(id - id % $day_ids, $epoch) <> date_trunc('day', at)"),
		'0', "pg_partman $version, snowflake: every row in the partition of its day");
	my $last = "SELECT max(c.relname COLLATE \"C\") FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	             WHERE i.inhparent = 'pm_sf'::regclass AND c.relname ~ '^pm_sf_p[0-9]+\$'";
	my $before = sql("SELECT count(*) FROM pg_inherits WHERE inhparent = 'pm_sf'::regclass");
	sql("INSERT INTO pm_sf VALUES (snowflake_at(current_date + 1, epoch => $epoch), current_date + 1)");
	sql("SELECT partman.run_maintenance('public.pm_sf')");
	my $after = sql("SELECT count(*) FROM pg_inherits WHERE inhparent = 'pm_sf'::regclass");
	cmp_ok($after, '>', $before, "pg_partman $version, snowflake: run_maintenance() adds partitions ($before to $after)");
	is( sql("SELECT snowflake_timestamp(substr(($last), 8)::bigint, $epoch) >= current_date + 1 + 6"),
		't', "pg_partman $version, snowflake: premade six days past the newest row");
	is(sql('SELECT count(*) FROM pm_sf_default'), '0', "pg_partman $version, snowflake: nothing in the default partition");
	($parts, $plan) = scanned("SELECT * FROM pm_sf WHERE id >= snowflake_at(now() - interval '1 day', epoch => $epoch)", 1);
	my $expected = sql("SELECT string_agg('pm_sf_p' || p, ' ' ORDER BY ('pm_sf_p' || p) COLLATE \"C\")
	                      FROM (SELECT DISTINCT substr(c.relname, 8)::bigint AS p
	                              FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	                             WHERE i.inhparent = 'pm_sf'::regclass AND c.relname ~ '^pm_sf_p[0-9]+\$') s
	                     WHERE p + $day_ids > snowflake_at(now() - interval '1 day', epoch => $epoch)")
	  . ' pm_sf_default';
	is($parts, join(' ', sort split / /, $expected), "pg_partman $version, snowflake: pruned to the days from yesterday on")
	  or diag($plan);

	SKIP:
	{
		skip "pg_partman $version has no time encoders (5.0 and later): UUIDv7 and ULID keys "
		  . 'cannot be partitioned by time there', 1
		  unless $encoders;
		# UUIDv7: pg_partman runs our uuidv7_at() for the bounds (schema-qualified: it runs it
		# under a search_path of its own). Its decoders take the key as text, which
		# uuidv7_timestamp(uuid) does not, so its own uuid7_time_decoder(text) reads the time.
		sql('CREATE TABLE pm_uuid (id uuid NOT NULL, at timestamptz NOT NULL) PARTITION BY RANGE (id)');
		sql(q{SELECT partman.create_parent(p_parent_table => 'public.pm_uuid', p_control => 'id',
		        p_interval => '1 day', p_premake => 4,
		        p_start_partition => (current_date - 5)::timestamptz::text,
		        p_time_encoder => 'public.uuidv7_at', p_time_decoder => 'partman.uuid7_time_decoder')});
		sql('INSERT INTO pm_uuid SELECT id, at FROM ev_uuid');
		is( sql("SELECT count(*) FROM pm_uuid
		          WHERE tableoid::regclass::text <> 'pm_uuid_p' || to_char(uuidv7_timestamp(id), 'YYYYMMDD')"),
			'0', "pg_partman $version, UUIDv7: every row in the partition of its day");
		is(sql('SELECT count(*) FROM pm_uuid_default'), '0', "pg_partman $version, UUIDv7: nothing in the default partition");
		my $newest = "SELECT max(c.relname COLLATE \"C\") FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		               WHERE i.inhparent = 'pm_uuid'::regclass AND c.relname ~ '^pm_uuid_p[0-9]{8}\$'";
		is( sql("SELECT ($newest) = 'pm_uuid_p' || to_char(current_date + 4, 'YYYYMMDD')"), 't',
			"pg_partman $version, UUIDv7: four days premade");
		sql("INSERT INTO pm_uuid VALUES (uuidv7_from_time(current_date + 3), current_date + 3)");
		sql("SELECT partman.run_maintenance('public.pm_uuid')");
		is( sql("SELECT ($newest) = 'pm_uuid_p' || to_char(current_date + 7, 'YYYYMMDD')"), 't',
			"pg_partman $version, UUIDv7: run_maintenance() premakes four days past the newest row");
		($parts, $plan) = scanned("SELECT * FROM pm_uuid WHERE id >= uuidv7_at(now() - interval '1 day')", 1);
		my @recent = split /\n/, sql("SELECT 'pm_uuid_p' || to_char(d, 'YYYYMMDD')
		  FROM generate_series(current_date - 1, current_date + 7, interval '1 day') d");
		is($parts, join(' ', sort('pm_uuid_default', @recent)),
			"pg_partman $version, UUIDv7: pruned to the days from yesterday on")
		  or diag($plan);
		# ULID: pg_partman takes a column of its own type only for text and uuid controls.
		($ret, $stdout, $stderr) = $node->psql('postgres', q{
		  CREATE TABLE pm_ulid (id ulid NOT NULL) PARTITION BY RANGE (id);
		  SELECT partman.create_parent(p_parent_table => 'public.pm_ulid', p_control => 'id',
		    p_interval => '1 day', p_time_encoder => 'public.ulid_at',
		    p_time_decoder => 'public.ulid_timestamp')});
		isnt($ret, 0, "pg_partman $version refuses a ulid control column (declarative partitioning above takes it)");
	}
}

$node->stop;
done_testing();
