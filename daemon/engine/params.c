// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "params.h"
#include "engine.h"

static const struct param_desc params_table[] = {
#define P(n, lo, hi, h) { #n, PARAM_BPF, offsetof(struct kcsand_params, n), lo, hi, h }
	P(skip_watch, 0, 1000000000, "plain accesses per CPU to skip before a watchpoint"),
	P(skip_watch_randomize, 0, 1, "randomize skip_watch (KCSAN_SKIP_WATCH_RANDOMIZE)"),
	P(udelay_task, 0, 100000, "µs a task stalls with a watchpoint armed"),
	P(udelay_interrupt, 0, 100000, "µs an interrupt stalls with a watchpoint armed"),
	P(delay_randomize, 0, 1, "randomize the delays (KCSAN_DELAY_RANDOMIZE)"),
	P(assume_plain_writes_atomic, 0, 1, "aligned plain writes up to 8 bytes are atomic"),
	/*
	 * KCSAN's interrupt_watcher=1 lets a watcher's stall be interrupted, so
	 * that an interrupt can race with the task it interrupted.  A kprobe
	 * handler runs in int3 context with interrupts off: kcsand's watchers
	 * are never interruptible, which is KCSAN's default; 1 is refused.
	 */
	P(interrupt_watcher, 0, 0, "stalls interruptible (not possible in probe handlers)"),
	P(consumer_wait_us, 0, 100000, "µs a watcher waits for its consumer's side"),
	P(enabled, 0, 1, "on/off"),
	P(stall_budget_us, 0, 1000000, "µs a CPU may stall per second (0: unlimited)"),
#undef P
#define O(n, lo, hi, h) { #n, PARAM_OPTS, offsetof(struct engine_opts, n), lo, hi, h }
	O(report_value_change_only, 0, 1, "report a race only when the watched value changed"),
	O(report_once_in_ms, 0, 3600000, "print one report per pair of functions per interval"),
	O(overhead_budget, 1, 100, "site sampler: % of native time probes may add (100: arm all)"),
	O(sampler_warmup_cpu_ms, 0, 3600000,
	  "site sampler: CPU ms the targets (kernel: the machine) run with all sites armed"),
	O(sampler_period_ms, 50, 60000, "site sampler: ms between two readjustments"),
	O(sampler_turn_ms, 5, 60000, "site sampler: ms a hot site stays armed in its turn"),
	O(sampler_backoff_hits, 1, 1000000000,
	  "site sampler: hits a site takes armed before it backs off a level (100/10/1/0.1%)"),
	O(sampler_level0_cpu_ms, 1, 3600000,
	  "site sampler: targets' CPU ms after its first hit that a site stays armed at most"),
#undef O
};

const struct param_desc *params_all(size_t *n)
{
	*n = sizeof(params_table) / sizeof(params_table[0]);
	return params_table;
}

const struct param_desc *param_find(const char *name)
{
	for (size_t i = 0; i < sizeof(params_table) / sizeof(params_table[0]); i++)
		if (!strcmp(params_table[i].name, name))
			return &params_table[i];
	return NULL;
}

int parse_uint(const char *w, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (*w < '0' || *w > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(w, &end, 0);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int param_parse(const struct param_desc *p, const char *value, unsigned int *out)
{
	unsigned long v;

	if (parse_uint(value, p->min, p->max, &v)) {
		fprintf(stderr, "kcsand: %s: bad value '%s' (expected %u..%u)\n", p->name, value,
			p->min, p->max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

void params_print(FILE *out)
{
	fprintf(out, "Parameters (NAME=VALUE):\n");
	for (size_t i = 0; i < sizeof(params_table) / sizeof(params_table[0]); i++)
		fprintf(out, "  %-28s %u..%u  %s\n", params_table[i].name, params_table[i].min,
			params_table[i].max, params_table[i].help);
}

static const char *const counter_names[KCSAND_CTR_COUNT] = {
	[KCSAND_CTR_USED_WATCHPOINTS] = "used_watchpoints",
	[KCSAND_CTR_SETUP_WATCHPOINTS] = "setup_watchpoints",
	[KCSAND_CTR_DATA_RACES] = "data_races",
	[KCSAND_CTR_ASSERT_FAILURES] = "assert_failures",
	[KCSAND_CTR_NO_CAPACITY] = "no_capacity",
	[KCSAND_CTR_REPORT_RACES] = "report_races",
	[KCSAND_CTR_RACES_UNKNOWN_ORIGIN] = "races_unknown_origin",
	[KCSAND_CTR_UNENCODABLE_ACCESSES] = "unencodable_accesses",
	[KCSAND_CTR_ENCODING_FALSE_POSITIVES] = "encoding_false_positives",
	[KCSAND_CTR_RECORDS_DROPPED] = "records_dropped",
	[KCSAND_CTR_READ_FAULTS] = "read_faults",
	[KCSAND_CTR_LOST_OTHER] = "lost_other",
	[KCSAND_CTR_STALL_BUDGET] = "stall_budget_exhausted",
};

_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) == KCSAND_CTR_COUNT,
	       "a name for every counter");

const char *counter_name(enum kcsand_counter c)
{
	return (unsigned int)c < KCSAND_CTR_COUNT ? counter_names[c] : "?";
}
