# What the TAP tests (test/t/) share.
package SnowflakeTest;

use strict;
use warnings FATAL => 'all';
use Exporter 'import';

our @EXPORT = qw(faketime_library $no_faketime);

# Why a test of a clock fault skips.
our $no_faketime =
  'libfaketime is not installed (no /usr/lib/*/faketime/libfaketime.so.1), or does not move the clock here';

# libfaketime's preload library, wherever this platform keeps it, if it moves the clock of a
# process here (undef otherwise).
sub faketime_library
{
	foreach my $lib (glob('/usr/lib/*/faketime/libfaketime.so.1'))
	{
		local $ENV{LD_PRELOAD} = $lib;
		local $ENV{FAKETIME} = '-1h';
		my $faked = `date +%s 2>/dev/null`;
		return $lib if $faked =~ /^(\d+)$/ && abs($1 - (time - 3600)) < 60;
	}
	return undef;
}

1;
