# SPDX-License-Identifier: GPL-2.0-only
# Perl's ithreads as ordinary Perl code uses them, for run-real.sh's perl-threads:
#
#   pl_threads.pl [ITEMS]
#
# The main thread queues ITEMS numbers on a Thread::Queue; two worker threads
# take them, hash each, and store the digest in a shared hash under lock();
# the queue is ended and the workers joined.  Each thread is an interpreter
# of its own, cloned from main's; what they share goes through threads::shared
# (a mutex and condition variables).  The output is the same in every run.
use strict;
use warnings;
use threads;
use threads::shared;
use Thread::Queue;
use Digest::MD5 qw(md5_hex);

my $n = shift // 20000;
my $q = Thread::Queue->new();
my %digest :shared;
my $count :shared = 0;

sub work {
	while (defined(my $i = $q->dequeue())) {
		my $d = md5_hex($i);
		lock(%digest);
		$digest{$i} = substr($d, 0, 8);
		$count++;
	}
}

my @workers = map { threads->create(\&work) } 1 .. 2;
$q->enqueue($_) for 0 .. $n - 1;
$q->end();
$_->join() for @workers;
print "$count\n", md5_hex(join('', map { $digest{$_} } 0 .. $n - 1)), "\n";
