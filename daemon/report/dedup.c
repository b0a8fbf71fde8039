// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>
#include "dedup.h"
#include "util/array.h"

/*
 * A flat table: reports are rare (they are rate-limited), so a linear scan
 * over the distinct pairs seen is cheaper than keeping a hash up to date.
 */
struct pair {
	char *a, *b;		/* a <= b; b is "" for an unknown origin */
	uint64_t last_ms;
};

struct dedup {
	struct pair *v;
	size_t n, cap;
};

struct dedup *dedup__new(void)
{
	return calloc(1, sizeof(struct dedup));
}

void dedup__free(struct dedup *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].a);
		free(d->v[i].b);
	}
	free(d->v);
	free(d);
}

bool dedup__seen(struct dedup *d, const char *a, const char *b, uint64_t now_ms,
		 unsigned int interval_ms)
{
	struct pair *p;

	if (!interval_ms)
		return false;
	if (!b)
		b = "";
	if (*b && strcmp(a, b) > 0) {
		const char *t = a;

		a = b;
		b = t;
	}
	/*
	 * A probe runs before its instruction, so a writer that checked the
	 * slots just before a watcher armed one lands its write inside the
	 * stall unseen: the same race then also shows as "unknown origin".
	 * Once the pair is known, that report says nothing new.
	 */
	if (!*b) {
		for (size_t i = 0; i < d->n; i++) {
			p = &d->v[i];
			if (*p->b && now_ms - p->last_ms < interval_ms &&
			    (!strcmp(p->a, a) || !strcmp(p->b, a)))
				return true;
		}
	}
	for (size_t i = 0; i < d->n; i++) {
		p = &d->v[i];
		if (strcmp(p->a, a) || strcmp(p->b, b))
			continue;
		if (now_ms - p->last_ms < interval_ms)
			return true;
		p->last_ms = now_ms;
		return false;
	}
	if (ARRAY_RESERVE(d->v, d->cap, d->n, 16))
		return false;
	p = &d->v[d->n];
	p->a = strdup(a);
	p->b = strdup(b);
	p->last_ms = now_ms;
	if (p->a && p->b) {
		d->n++;
	} else {
		free(p->a);
		free(p->b);
	}
	return false;
}
