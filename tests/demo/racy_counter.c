// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two threads deposit into one bank account without a lock.
 *
 *   build/kcsanctl run -- build/tests/demo/racy_counter
 *
 * "balance += amount" reads the balance, adds and writes it back; when
 * both threads do that at once, one deposit is lost.  kcsand reports the
 * race between the two deposit() calls.
 */
#include <pthread.h>
#include <stdio.h>

#define DEPOSITS 50000

long balance;

__attribute__((noinline)) void deposit(long amount)
{
	balance += amount;	/* the data race: no lock */
}

static void *customer(void *arg)
{
	for (int i = 0; i < DEPOSITS; i++)
		deposit(1);
	return NULL;
}

int main(void)
{
	pthread_t alice, bob;

	pthread_create(&alice, NULL, customer, NULL);
	pthread_create(&bob, NULL, customer, NULL);
	pthread_join(alice, NULL);
	pthread_join(bob, NULL);

	printf("balance: %ld (expected %d)\n", balance, 2 * DEPOSITS);
	return 0;
}

/* kcsand-test: name=demo_racy_counter expect=report title="data-race in deposit / deposit" access="^read-write to 0x[0-9a-f]+ of 8 bytes by task [0-9]+ on cpu [0-9]+:$" access="^read-write to 0x[0-9a-f]+ of 8 bytes by task [0-9]+ on cpu [0-9]+:$" access="^(value changed: 0x[0-9a-f]+ -> 0x[0-9a-f]+|previous access [0-9.]+ ms earlier, not ordered by any synchronization kcsand saw)$" */
