#!/usr/bin/perl
# A TCP proxy on loopback for the lease tests: tcp_proxy.pl LISTEN:TARGET [LISTEN:TARGET ...]
# forwards each 127.0.0.1:LISTEN to 127.0.0.1:TARGET. The tests cut a server off from etcd by
# stopping this process (SIGSTOP): the kernel still completes connections to its ports, but
# nothing goes through, as in a network partition; SIGCONT heals it. SIGTERM ends it.
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;

my %target_of;    # listening socket -> target port
my %peer;         # socket -> the socket on the other side
my $select = IO::Select->new;
foreach my $pair (@ARGV)
{
	my ($listen, $target) = $pair =~ /^(\d+):(\d+)$/ or die "usage: $0 LISTEN:TARGET ...\n";
	my $server = IO::Socket::INET->new(
		LocalAddr => '127.0.0.1',
		LocalPort => $listen,
		Listen => 64,
		ReuseAddr => 1) or die "cannot listen on 127.0.0.1:$listen: $!\n";
	$target_of{$server} = $target;
	$select->add($server);
}
$SIG{TERM} = sub { exit 0 };

sub close_pair
{
	my ($sock) = @_;
	my $other = delete $peer{$sock};
	$select->remove($sock);
	close $sock;
	if ($other)
	{
		delete $peer{$other};
		$select->remove($other);
		close $other;
	}
}

while (1)
{
	foreach my $sock ($select->can_read(1))
	{
		if (exists $target_of{$sock})
		{
			my $client = $sock->accept or next;
			my $upstream = IO::Socket::INET->new(
				PeerAddr => '127.0.0.1',
				PeerPort => $target_of{$sock},
				Timeout => 2);
			if (!$upstream)
			{
				close $client;
				next;
			}
			$peer{$client} = $upstream;
			$peer{$upstream} = $client;
			$select->add($client, $upstream);
			next;
		}
		next unless exists $peer{$sock};
		my $n = sysread($sock, my $buf, 65536);
		if (!$n)
		{
			close_pair($sock);
			next;
		}
		my $other = $peer{$sock};
		my $off = 0;
		while ($off < $n)
		{
			my $w = syswrite($other, $buf, $n - $off, $off);
			if (!defined $w)
			{
				close_pair($sock);
				last;
			}
			$off += $w;
		}
	}
}
