/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reports in the kernel log: each report written to /dev/kmsg line by
 * line, in KCSAN's layout, so that `dmesg | grep "BUG: KCSAN:"`, syzkaller's
 * console parser and log scrapers see them as they see KCSAN's own.
 *
 * Never blocks (O_NONBLOCK), and is rate-limited: at most burst reports
 * per interval; the others are counted as dropped, as are lines the
 * kernel refused.
 */
#ifndef KCSAND_KMSG_H
#define KCSAND_KMSG_H

#include <stdint.h>

/* /dev/kmsg refuses a record longer than this (the kernel's LOG_LINE_MAX is 992). */
#define KMSG_LINE_MAX	976
/* The kernel limits each opener of /dev/kmsg to 10 lines per 5 s (printk_devkmsg=ratelimit). */
#define KMSG_KERNEL_BURST 10
#define KMSG_BURST	10u
#define KMSG_INTERVAL_MS 60000u

struct kmsg_stats {
	uint64_t reports;	/* written whole */
	uint64_t dropped;	/* not written: kcsand's rate limit */
	uint64_t lines_lost;	/* lines the kernel refused */
};

struct kmsg_sink;

/* Check that /dev/kmsg (or $KCSAND_KMSG, for tests) opens for writing; -errno with a message. */
int kmsg_sink__open(struct kmsg_sink **out);
/* Write one report's text; now_ms is a monotonic clock, for the rate limit. */
void kmsg_sink__write(struct kmsg_sink *k, const char *text, uint64_t now_ms);
void kmsg_sink__stats(const struct kmsg_sink *k, struct kmsg_stats *st);
void kmsg_sink__free(struct kmsg_sink *k);

#endif
