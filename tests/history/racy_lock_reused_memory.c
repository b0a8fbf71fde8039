// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a mutex in memory that is unmapped and mapped again.  The first
 * thread writes the data under a mutex in a page of its own, then unmaps
 * the page.  The second thread maps a page at the same address, puts a new
 * mutex there, and reads the data under it.  The two mutexes are different
 * objects that happen to share an address: nothing orders the write and the
 * read (TSan forgets a sync object when its memory is freed, and reports
 * it).  A history that kept the first mutex's clock under that address
 * would hand the write's epoch to the second thread and miss the race.
 *
 * Expected: data-race in read_data / write_data
 */
#include <sys/mman.h>
#include "suite.h"

SUITE_SHARED(long, data, write_data, read_data)

/* Both threads map their page here: far from the heap, stacks and libraries. */
#define PAGE_AT ((void *)0x5e0000000000UL)

static pthread_mutex_t *map_lock(void)
{
	void *p;

	/* Retried until the first thread has unmapped its page. */
	while ((p = mmap(PAGE_AT, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)) != PAGE_AT) {
		if (p != MAP_FAILED)
			munmap(p, 4096);
		spin_us(1000);
	}
	pthread_mutex_init(p, NULL);
	return p;
}

static void *writer(void *arg)
{
	pthread_mutex_t *m = map_lock();

	pthread_mutex_lock(m);
	write_data(42);
	pthread_mutex_unlock(m);
	pthread_mutex_destroy(m);
	munmap(m, 4096);
	return NULL;
}

static void *reader(void *arg)
{
	pthread_mutex_t *m;
	long v;

	spin_us(20000);
	m = map_lock();
	pthread_mutex_lock(m);
	v = read_data();
	pthread_mutex_unlock(m);
	munmap(m, 4096);
	return (void *)v;
}

int main(void)
{
	run_pair(writer, NULL, reader, NULL);
	return 0;
}
