# Every ```sql block of README.md runs as written, in README order, in one database of a
# server with the library preloaded and snowflake.shard_id set: the README's examples cannot
# drift from the extension. A block that cannot run on one server is marked with an HTML
# comment on the line before its fence (<!-- not run: why -->); at most $max_not_run may be,
# so the escape hatch cannot grow unnoticed.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;

my $max_not_run = 2;

my $readme = "$FindBin::Bin/../../README.md";
my @lines = split /\n/, slurp_file($readme);

# Each ```sql block: its first line's number, its text, and why it is not run (if it is not).
my (@blocks, $open, $text, $why);
for my $i (0 .. $#lines)
{
	my $line = $lines[$i];
	if (defined $open)
	{
		if ($line =~ /^```\s*$/)
		{
			push @blocks, { line => $open, sql => $text, not_run => $why };
			undef $open;
		}
		else
		{
			$text .= "$line\n";
		}
	}
	elsif ($line =~ /^```sql\s*$/)
	{
		$open = $i + 2;
		$text = '';
		$why = $i > 0 && $lines[$i - 1] =~ /^<!--\s*not run:\s*(.*?)\s*-->\s*$/ ? $1 : undef;
	}
}
ok(!defined $open, 'every ```sql block of the README is closed');
cmp_ok(scalar @blocks, '>=', 10, 'the README has its ```sql blocks (' . scalar(@blocks) . ')');

# A postgresql.conf line belongs in an ```ini block: it would not run as SQL.
my @conf = grep { $_->{sql} =~ /^\s*(shared_preload_libraries|snowflake\.\w+)\s*=/m } @blocks;
is(scalar @conf, 0, 'no ```sql block holds postgresql.conf lines');

my @skipped = grep { defined $_->{not_run} } @blocks;
diag("README.md line $_->{line}: not run: $_->{not_run}") foreach @skipped;
cmp_ok(scalar @skipped, '<=', $max_not_run,
	scalar(@skipped) . " blocks are marked not run, at most $max_not_run");

my $node = PostgreSQL::Test::Cluster->new('readme');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'snowflake'
snowflake.shard_id = 1
snowflake.mask_key_file = 'mask.keys'
});
# The README's example mask key, in a file of mode 0600 as the README makes it.
my ($example_key) = grep { /^`1 [0-9a-f]{64} active`/ || /`(1 [0-9a-f]{64} active)`/ } @lines;
($example_key) = $example_key =~ /(1 [0-9a-f]{64} active)/ if defined $example_key;
ok(defined $example_key, 'the README gives its example mask key');
PostgreSQL::Test::Utils::append_to_file($node->data_dir . '/mask.keys', "$example_key\n");
chmod 0600, $node->data_dir . '/mask.keys';
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');

# Each block in a psql of its own, stopping at its first error: a block may rely on what an
# earlier one created, as a reader following the README would.
my $run = 0;
foreach my $block (@blocks)
{
	next if defined $block->{not_run};
	my ($stdout, $stderr);
	my $ret = $node->psql('app', $block->{sql},
		stdout => \$stdout, stderr => \$stderr, on_error_stop => 1);
	my $first = (split /\n/, $block->{sql})[0] // '';
	is($ret, 0, "README.md line $block->{line} runs ($first)")
	  or diag("block:\n$block->{sql}\nstderr:\n$stderr");
	$run++;
}
diag("$run blocks run, " . scalar(@skipped) . ' not run');

# Not one ERROR on the way (psql stops at the first, but a block could end before it).
my $log = slurp_file($node->logfile);
my @errors = $log =~ /^.*\bERROR:.*$/mg;
is(scalar @errors, 0, 'the server logged no ERROR while the README ran')
  or diag(join "\n", @errors);

$node->stop;
done_testing();
