// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include "pid_table.h"

static struct pid_entry **bucket_of(const struct pid_table *t, pid_t pid)
{
	return (struct pid_entry **)&t->bucket[(unsigned int)pid % PID_TABLE_BUCKETS];
}

struct pid_entry *pid_table__find(const struct pid_table *t, pid_t pid)
{
	struct pid_entry *e;

	for (e = *bucket_of(t, pid); e; e = e->next)
		if (e->pid == pid)
			return e;
	return NULL;
}

struct pid_entry *pid_table__get(struct pid_table *t, pid_t pid, size_t size)
{
	struct pid_entry **head = bucket_of(t, pid), *e = pid_table__find(t, pid);

	if (e)
		return e;
	e = calloc(1, size);
	if (!e)
		return NULL;
	e->pid = pid;
	e->next = *head;
	*head = e;
	return e;
}

struct pid_entry *pid_table__take(struct pid_table *t, pid_t pid)
{
	for (struct pid_entry **pp = bucket_of(t, pid); *pp; pp = &(*pp)->next) {
		struct pid_entry *e = *pp;

		if (e->pid == pid) {
			*pp = e->next;
			return e;
		}
	}
	return NULL;
}

size_t pid_table__each(struct pid_table *t, bool (*fn)(struct pid_entry *e, void *arg), void *arg)
{
	size_t taken = 0;

	for (unsigned int b = 0; b < PID_TABLE_BUCKETS; b++) {
		struct pid_entry **pp = &t->bucket[b];

		while (*pp) {
			struct pid_entry *e = *pp, *next = e->next;

			if (fn(e, arg)) {
				*pp = next;
				taken++;
			} else {
				pp = &e->next;
			}
		}
	}
	return taken;
}
