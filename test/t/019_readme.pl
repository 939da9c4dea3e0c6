# Every ```sql block of README.md, then of every page of docs/ in the order its index
# (docs/README.md) links them, runs as written, in that order, in one database of a server with the library preloaded and snowflake.shard_id set: the
# examples cannot drift from the extension. A block that cannot run on one server is marked with an HTML
# comment on the line before its fence (<!-- not run: why -->); at most $max_not_run may be,
# so the escape hatch cannot grow unnoticed.
#
# A result shown in a block is compared with what psql prints: the lines psql prints for a
# statement (aligned, with its header, its rule and its "(N rows)"), each behind "-- ",
# directly under the statement's last line. Trailing spaces aren't compared. Any other line
# that looks like a result ("--  " or a rule "-- ---") is an error, unless the block is marked
# <!-- results not compared: why --> (at most $max_not_compared are), for a result that depends
# on the time or is shortened. A trailing comment on a statement's line is a remark, never
# compared.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;

my $max_not_run = 2;
my $max_not_compared = 2;

# The pages: the README, then docs/ in the order of its index, which must link every page of
# docs/ (a page left out of it would be left out here too).
my $root = "$FindBin::Bin/../..";
my @docs;
foreach my $link (slurp_file("$root/docs/README.md") =~ /\]\(([\w-]+\.md)(?:#[^)]*)?\)/g)
{
	push @docs, "docs/$link" unless grep { $_ eq "docs/$link" } @docs;
}
my @on_disk = sort map { s{^.*/docs/}{docs/}r } grep { !m{/docs/README\.md$} } glob("$root/docs/*.md");
is_deeply([ sort @docs ], \@on_disk, 'docs/README.md links every page of docs/');

# The lines of every page, in order; a block's line names its page and line there.
my (@lines, @page_of, @line_of);
foreach my $page ('README.md', @docs)
{
	my @page = split /\n/, slurp_file("$root/$page");
	push @lines, @page;
	push @page_of, ($page) x @page;
	push @line_of, map { $_ + 1 } 0 .. $#page;
}

# Each ```sql block: its first line's number, its text, and why it is not run or its results
# not compared (if so).
my (@blocks, $open, $page, $text, $why, $why_not_compared);
for my $i (0 .. $#lines)
{
	my $line = $lines[$i];
	if (defined $open)
	{
		if ($line =~ /^```\s*$/)
		{
			push @blocks,
			  {
				line => $open,
				page => $page,
				sql => $text,
				not_run => $why,
				not_compared => $why_not_compared
			  };
			undef $open;
		}
		else
		{
			$text .= "$line\n";
		}
	}
	elsif ($line =~ /^```sql\s*$/)
	{
		$open = $line_of[$i] + 1;
		$page = $page_of[$i];
		$text = '';
		$why = $i > 0 && $lines[$i - 1] =~ /^<!--\s*not run:\s*(.*?)\s*-->\s*$/ ? $1 : undef;
		$why_not_compared =
		  $i > 0 && $lines[$i - 1] =~ /^<!--\s*results not compared:\s*(.*?)\s*-->\s*$/
		  ? $1
		  : undef;
	}
}
ok(!defined $open, 'every ```sql block of the README is closed');
cmp_ok(scalar @blocks, '>=', 10, 'the README has its ```sql blocks (' . scalar(@blocks) . ')');

# A postgresql.conf line belongs in an ```ini block: it would not run as SQL.
my @conf = grep { $_->{sql} =~ /^\s*(shared_preload_libraries|snowflake\.\w+)\s*=/m } @blocks;
is(scalar @conf, 0, 'no ```sql block holds postgresql.conf lines');

my @skipped = grep { defined $_->{not_run} } @blocks;
diag("$_->{page} line $_->{line}: not run: $_->{not_run}") foreach @skipped;
cmp_ok(scalar @skipped, '<=', $max_not_run,
	scalar(@skipped) . " blocks are marked not run, at most $max_not_run");

my @not_compared = grep { defined $_->{not_compared} } @blocks;
diag("$_->{page} line $_->{line}: results not compared: $_->{not_compared}")
  foreach @not_compared;
cmp_ok(scalar @not_compared, '<=', $max_not_compared,
	scalar(@not_compared)
	  . " blocks are marked results not compared, at most $max_not_compared");

# A statement ends on a line that is not a comment and ends with ";", before any remark.
sub ends_statement
{
	my ($line) = @_;
	return 0 if $line =~ /^\s*--/;
	$line =~ s/\s+--\s.*$//;
	return $line =~ /;\s*$/;
}

my $rule = qr/^-- -+(\+-+)*\s*$/;

# The results a block shows: for each, the statement's first and last line (indexes into the
# block's lines) and the lines psql must print. Lines that look like a result but are not one
# are returned as strays.
sub results_of
{
	my ($block) = @_;
	my @sql = split /\n/, $block->{sql};
	my (@results, @strays, %in_result);
	# the last lines of the latest statement and of the one before it
	my ($end, $end_before) = (-1, -1);
	for my $i (0 .. $#sql)
	{
		if (   $i > 0
			&& $i < $#sql
			&& ends_statement($sql[ $i - 1 ])
			&& $sql[$i] =~ /^--/
			&& $sql[ $i + 1 ] =~ $rule)
		{
			my @expected;
			my $j = $i;
			while ($j <= $#sql && $sql[$j] =~ /^--( |$)/)
			{
				push @expected, $sql[$j];
				$in_result{$j} = 1;
				last if $sql[$j] =~ /^-- \(\d+ rows?\)\s*$/;
				$j++;
			}
			push @results,
			  {
				first => $end_before + 1,
				last => $i - 1,
				line => $block->{line} + $i,
				page => $block->{page},
				expected => [ map { my $l = $_; $l =~ s/^-- ?//; $l =~ s/\s+$//; $l } @expected ],
				footer => $expected[-1] =~ /^-- \(\d+ rows?\)/ ? 1 : 0
			  };
		}
		($end_before, $end) = ($end, $i) if ends_statement($sql[$i]);
	}
	for my $i (0 .. $#sql)
	{
		push @strays, $block->{line} + $i
		  if !$in_result{$i} && ($sql[$i] =~ /^--  \S/ || $sql[$i] =~ $rule);
	}
	return (\@results, \@strays);
}

# Every result is in psql's format, or its block says why not.
my $results = 0;
foreach my $block (@blocks)
{
	my ($found, $strays) = results_of($block);
	$block->{results} = $found;
	$results += @$found;
	next if defined $block->{not_compared} || defined $block->{not_run};
	is_deeply($strays, [], "$block->{page} line $block->{line}: every result is in psql's format")
	  or diag("lines that look like results but are not under a statement in psql's format: @$strays");
	ok($_->{footer}, "$_->{page} line $_->{line}: the result ends with psql's (N rows)")
	  foreach @$found;
}
cmp_ok($results, '>=', 8, "the README shows results to compare ($results)");

my $node = PostgreSQL::Test::Cluster->new('readme');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'snowflake'
snowflake.shard_id = 1
snowflake.mask_key_file = 'mask.keys'
});
# The mask key the README's examples were made with (the README names this test for it), in
# a file of mode 0600 as the README makes it.
my $example_key = '1 3ce54bbfa0613cd5d0299e8eb26ea9b0ef2e0d591cdfc44f487aa062b192f7c8 active';
PostgreSQL::Test::Utils::append_to_file($node->data_dir . '/mask.keys', "$example_key\n");
chmod 0600, $node->data_dir . '/mask.keys';
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');

# Each block in a psql of its own, stopping at its first error: a block may rely on what an
# earlier one created, as a reader following the README would. psql prints as it does for a
# reader (aligned, with headers and footers), and a marker before and after each statement
# whose result the block shows.
my $run = 0;
my $compared = 0;
foreach my $block (@blocks)
{
	next if defined $block->{not_run};
	my @sql = split /\n/, $block->{sql};
	my $compare = !defined $block->{not_compared};
	my $script = "\\pset format aligned\n\\pset tuples_only off\n";
	for my $i (0 .. $#sql)
	{
		if ($compare)
		{
			$script .= "\\echo '=== begin $_->{line} ==='\n"
			  foreach grep { $_->{first} == $i } @{ $block->{results} };
		}
		$script .= "$sql[$i]\n";
		if ($compare)
		{
			$script .= "\\echo '=== end $_->{line} ==='\n"
			  foreach grep { $_->{last} == $i } @{ $block->{results} };
		}
	}
	my ($stdout, $stderr);
	my $ret = $node->psql('app', $script,
		stdout => \$stdout, stderr => \$stderr, on_error_stop => 1);
	my $first = $sql[0] // '';
	is($ret, 0, "$block->{page} line $block->{line} runs ($first)")
	  or diag("block:\n$block->{sql}\nstderr:\n$stderr");
	$run++;
	next unless $compare;
	foreach my $result (@{ $block->{results} })
	{
		my ($printed) =
		  $stdout =~ /^=== begin $result->{line} ===\n(.*?)^=== end $result->{line} ===$/ms;
		my @printed = map { s/\s+$//r } split /\n/, $printed // '';
		pop @printed while @printed && $printed[-1] eq '';
		is(join("\n", @printed), join("\n", @{ $result->{expected} }),
			"$result->{page} line $result->{line}: the result shown is what psql prints");
		$compared++;
	}
}
diag("$run blocks run, " . scalar(@skipped) . " not run, $compared results compared");

# A result not compared still shows what the extension would print: each version 7 UUID shown
# beside a time (as the README's first example shows its IDs and when they were made) decodes
# to that time.
my $pairs = 0;
foreach my $block (grep { defined $_->{not_compared} } @blocks)
{
	while ($block->{sql} =~ /^--\s+([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12})\s*\|\s*(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\+00)\s*\|/mg)
	{
		my ($uuid, $ts) = ($1, $2);
		is($node->safe_psql('app', "SELECT uuidv7_timestamp('$uuid') = '$ts'::timestamptz"),
			't', "$block->{page} line $block->{line}: $uuid decodes to $ts, the time shown beside it");
		$pairs++;
	}
}
ok($pairs >= 2, "the README's first example shows IDs with their times ($pairs checked)");

# Not one ERROR on the way (psql stops at the first, but a block could end before it).
my $log = slurp_file($node->logfile);
my @errors = $log =~ /^.*\bERROR:.*$/mg;
is(scalar @errors, 0, 'the server logged no ERROR while the README ran')
  or diag(join "\n", @errors);

$node->stop;
done_testing();
