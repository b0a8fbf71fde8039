// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/hashtable: the P2 workload.  Threads insert, look up and delete
 * random keys in a chained hash table whose buckets each have a mutex:
 * CPU-bound, a few hundred nanoseconds an operation, with one real race.
 *
 * The race: table_peek() reads a bucket's count without its lock, as a
 * "cheap emptiness test" before lookup() takes the lock, while insert() and
 * delete() change the count under the lock.  The read and the locked
 * read-modify-write are not ordered by anything: a data race on
 * bucket.count (KCSAN reports it as "data-race in bucket_add / table_peek"
 * or bucket_del; TSan and Helgrind as a race on count).
 *
 *   hashtable [OPS_PER_THREAD [THREADS]]      (defaults 20,000,000 and 2)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NR_BUCKETS	16
#define KEY_SPACE	128
#define POOL		KEY_SPACE

struct node {
	struct node *next;
	uint32_t key;
	uint32_t value;
};

struct bucket {
	pthread_mutex_t lock;
	struct node *head;
	int count;
} __attribute__((aligned(64)));

static struct bucket table[NR_BUCKETS];
static long ops_per_thread = 20000000;

#define NOINLINE __attribute__((noinline))

static uint32_t hash(uint32_t k)
{
	k ^= k >> 16;
	k *= 0x45d9f3b;
	k ^= k >> 16;
	return k % NR_BUCKETS;
}

/* The unlocked path: a racy read of count. */
NOINLINE int table_peek(struct bucket *b)
{
	return b->count;
}

NOINLINE void bucket_add(struct bucket *b, struct node *n)
{
	n->next = b->head;
	b->head = n;
	b->count++;
}

NOINLINE struct node *bucket_del(struct bucket *b, uint32_t key)
{
	struct node **pp, *n;

	for (pp = &b->head; (n = *pp); pp = &n->next) {
		if (n->key == key) {
			*pp = n->next;
			b->count--;
			return n;
		}
	}
	return NULL;
}

NOINLINE int bucket_find(struct bucket *b, uint32_t key, uint32_t *value)
{
	for (struct node *n = b->head; n; n = n->next) {
		if (n->key == key) {
			*value = n->value;
			return 1;
		}
	}
	return 0;
}

struct worker {
	pthread_t tid;
	uint64_t rng;
	struct node *free;	/* this thread's spare nodes */
	long found;
};

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *work(void *arg)
{
	struct worker *w = arg;

	for (long i = 0; i < ops_per_thread; i++) {
		uint64_t r = next_rand(&w->rng);
		uint32_t key = r % KEY_SPACE, value;
		struct bucket *b = &table[hash(key)];
		struct node *n;

		switch ((r >> 32) % 4) {
		case 0:
			if (!w->free)
				break;
			n = w->free;
			w->free = n->next;
			n->key = key;
			n->value = (uint32_t)i;
			pthread_mutex_lock(&b->lock);
			bucket_add(b, n);
			pthread_mutex_unlock(&b->lock);
			break;
		case 1:
			pthread_mutex_lock(&b->lock);
			n = bucket_del(b, key);
			pthread_mutex_unlock(&b->lock);
			if (n) {
				n->next = w->free;
				w->free = n;
			}
			break;
		default:
			if (!table_peek(b))
				break;
			pthread_mutex_lock(&b->lock);
			w->found += bucket_find(b, key, &value);
			pthread_mutex_unlock(&b->lock);
			break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nr = argc > 2 ? atoi(argv[2]) : 2;
	struct worker *w;
	long found = 0;

	if (argc > 1)
		ops_per_thread = atol(argv[1]);
	if (nr < 1 || nr > 64 || ops_per_thread < 1) {
		fprintf(stderr, "usage: hashtable [OPS_PER_THREAD [THREADS]]\n");
		return 2;
	}
	for (int i = 0; i < NR_BUCKETS; i++)
		pthread_mutex_init(&table[i].lock, NULL);
	w = calloc(nr, sizeof(*w));
	for (int t = 0; t < nr; t++) {
		w[t].rng = 0x9e3779b97f4a7c15ull * (t + 1);
		for (int k = 0; k < POOL / nr; k++) {
			struct node *n = malloc(sizeof(*n));

			n->next = w[t].free;
			w[t].free = n;
		}
	}
	for (int t = 0; t < nr; t++)
		pthread_create(&w[t].tid, NULL, work, &w[t]);
	for (int t = 0; t < nr; t++) {
		pthread_join(w[t].tid, NULL);
		found += w[t].found;
	}
	printf("%ld lookups found their key\n", found);
	return 0;
}
