# kill9_and_wait (test/lib/SnowflakeTest.pm) returns only once every child of the killed
# postmaster is gone, also where their process titles do not show in /proc (a server under
# qemu-user, as in the arm64 suite): children forked up to the SIGKILL included, for one that
# is left attached to the shared memory makes the next start fail. No server: a stand-in
# postmaster whose children live on for a while after it dies, as backends that have not yet
# noticed, and that forks one more when its SIGKILL is sent (FakeNode::kill9), the way a
# postmaster may fork between kill9_and_wait's look at its children and the SIGKILL.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use SnowflakeTest;
use POSIX ();

my $dir = PostgreSQL::Test::Utils::tempdir();

# A child of the stand-in: its pid in $dir/$name; it lives $linger s more once its parent is
# gone (the late one longer than the early one, so that a wait for the early one alone misses
# it).
sub fork_child
{
	my ($name, $linger) = @_;
	my $child = fork() // die "fork: $!";
	if ($child == 0)
	{
		my $parent = getppid();
		select(undef, undef, undef, 0.05) while getppid() == $parent;
		select(undef, undef, undef, $linger);
		POSIX::_exit(0);
	}
	append_to_file("$dir/$name.tmp", $child);
	rename("$dir/$name.tmp", "$dir/$name") or die "rename: $!";
	return;
}

my $postmaster = fork() // die "fork: $!";
if ($postmaster == 0)
{
	$SIG{USR1} = sub { fork_child('late', 2) };
	fork_child('early', 0.2);
	sleep 1 while 1;
}
poll_until(sub { -e "$dir/early" }) or die 'the stand-in forked no child';

{

	package FakeNode;
	sub name     { 'fake' }
	sub data_dir { $dir }
	sub host     { $dir }
	sub port     { 1 }

	# SIGUSR1 (a fork) just before the SIGKILL: a running stand-in forks (waited for); a stopped
	# one cannot until it runs again, which it never does.
	sub kill9
	{
		my ($self) = @_;
		kill 'USR1', $self->{_pid};
		SnowflakeTest::poll_until(
			sub {
				my $stat = SnowflakeTest::proc_stat($self->{_pid});
				return -e "$dir/late" || ($stat && $stat->[2] eq 'T');
			});
		kill 'KILL', $self->{_pid};
		$self->{_pid} = undef;
		return;
	}
}

kill9_and_wait(bless { _pid => $postmaster }, 'FakeNode');
# (A child gone may be a zombie where the first process of the machine does not reap.)
foreach my $name ('early', 'late')
{
	my $stat = -e "$dir/$name" ? SnowflakeTest::proc_stat(slurp_file("$dir/$name")) : undef;
	ok(!$stat || $stat->[2] eq 'Z', "no $name child is left when kill9_and_wait returns");
}
waitpid($postmaster, 0);

done_testing();
