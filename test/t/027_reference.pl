# docs/reference.md holds every object of the extension: each function, type, operator class,
# setting and column of snowflake_status() and snowflake_streams() that the installed
# extension's catalog has, and each SQLSTATE its sources raise. A new object without its
# line in the reference fails here, with its name.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;

my $root = "$FindBin::Bin/../..";
my $reference = slurp_file("$root/docs/reference.md");

my $node = snowflake_node('reference');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# The names of a kind of object, one a row.
sub names
{
	my ($sql) = @_;
	return grep { $_ ne '' } split /\n/, $node->safe_psql('postgres', $sql);
}

# Whether the reference names it in code: `name`, `name(…)` or `name ` inside backquotes.
sub named
{
	my ($name) = @_;
	return $reference =~ /`\Q$name\E[`( \[]/;
}

sub check
{
	my ($what, @names) = @_;
	cmp_ok(scalar @names, '>', 0, "the catalog has ${what}s");
	my @missing = grep { !named($_) } @names;
	is_deeply(\@missing, [], "every $what is in docs/reference.md (" . scalar(@names) . ')');
}

my $of_extension = q{SELECT d.objid
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')};

check('function', names(qq{
SELECT DISTINCT p.proname FROM pg_proc p JOIN ($of_extension AND d.classid = 'pg_proc'::regclass) x
  ON x.objid = p.oid ORDER BY 1 }));
check('type', names(qq{
SELECT t.typname FROM pg_type t JOIN ($of_extension AND d.classid = 'pg_type'::regclass) x
  ON x.objid = t.oid WHERE t.typtype = 'b' AND t.typcategory <> 'A' ORDER BY 1 }));
check('operator class', names(qq{
SELECT c.opcname FROM pg_opclass c JOIN ($of_extension AND d.classid = 'pg_opclass'::regclass) x
  ON x.objid = c.oid ORDER BY 1 }));
check('setting', names(q{SELECT name FROM pg_settings WHERE name LIKE 'snowflake.%' ORDER BY 1}));
foreach my $function ('snowflake_status', 'snowflake_streams')
{
	check("column of $function()", names(qq{
SELECT a.name FROM pg_proc p, unnest(p.proargnames, p.proargmodes) AS a(name, mode)
 WHERE p.proname = '$function' AND a.mode IN ('o', 't') ORDER BY 1 }));
}

# The SQLSTATEs: every ERRCODE_ of the C++ sources (their codes from the server's errcodes.h,
# or the extension's own MAKE_SQLSTATE) and every condition name of the install script.
my %code_of;
my $errcodes = slurp_file($node->config_data('--includedir-server') . '/utils/errcodes.h');
while ($errcodes =~ /^#define (ERRCODE_\w+) MAKE_SQLSTATE\('(.)',\s*'(.)',\s*'(.)',\s*'(.)',\s*'(.)'\)/mg)
{
	$code_of{$1} = "$2$3$4$5$6";
}
my %used;
foreach my $file (glob("$root/src/glue/*.cpp"), glob("$root/src/glue/*.hpp"))
{
	my $text = slurp_file($file);
	while ($text =~ /#define (ERRCODE_\w+) MAKE_SQLSTATE\('(.)', '(.)', '(.)', '(.)', '(.)'\)/g)
	{
		$code_of{$1} = "$2$3$4$5$6";
	}
	$used{$_} = $file foreach $text =~ /\b(ERRCODE_\w+)\b/g;
}
$used{ 'ERRCODE_' . uc $_ } = 'extension/snowflake.sql'
  foreach slurp_file("$root/extension/snowflake.sql") =~ /ERRCODE = '(\w+)'/g;
my @codes;
foreach my $name (sort keys %used)
{
	next if $name eq 'ERRCODE_SNOWFLAKE_NO_LEASE' && !defined $code_of{$name};
	ok(defined $code_of{$name}, "$name ($used{$name}) is a known SQLSTATE") or next;
	push @codes, $code_of{$name};
}
cmp_ok(scalar @codes, '>=', 20, 'the sources raise SQLSTATEs (' . scalar(@codes) . ')');
my @missing = grep { $reference !~ /^\| \Q$_\E /m } @codes;
is_deeply(\@missing, [], 'every SQLSTATE raised is a row of docs/reference.md\'s table');

$node->stop;
done_testing();
