// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "params.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The defaults and why they are what they are: docs/parameters.md.  In
 * short: a uprobe hit costs tens of µs, so user mode stalls longer than
 * KCSAN (400 µs) to catch the other thread; kernel mode keeps KCSAN's
 * 80 µs, since a kprobe handler stalls with interrupts off.  Kernel mode's
 * sampler warm-up counts the machine's busy time, not a target's, and is
 * shorter (daemon/sampler/ksampler.c).
 */
static const struct param_desc params_table[PARAM_COUNT] = {
#define P(n, ID, lo, hi, user, kernel, help) \
	[PARAM_##ID] = { #n, PARAM_##ID, lo, hi, { user, kernel }, help }
	P(skip_watch, SKIP_WATCH, 0, 1000000000, 100, 100,
	  "plain accesses per CPU to skip before a watchpoint"),
	P(skip_watch_randomize, SKIP_WATCH_RANDOMIZE, 0, 1, 1, 1,
	  "randomize skip_watch (KCSAN_SKIP_WATCH_RANDOMIZE)"),
	P(udelay_task, UDELAY_TASK, 0, 100000, 400, 80, "µs a task stalls with a watchpoint armed"),
	P(udelay_interrupt, UDELAY_INTERRUPT, 0, 100000, 20, 20,
	  "µs an interrupt stalls with a watchpoint armed"),
	P(delay_randomize, DELAY_RANDOMIZE, 0, 1, 1, 1, "randomize the delays (KCSAN_DELAY_RANDOMIZE)"),
	P(assume_plain_writes_atomic, ASSUME_PLAIN_WRITES_ATOMIC, 0, 1, 1, 1,
	  "aligned plain writes up to 8 bytes are atomic"),
	/*
	 * KCSAN's interrupt_watcher=1 lets an interrupt that arrives during a
	 * watcher's stall set watchpoints of its own, so that it can race with
	 * the task it interrupted.  A kprobe handler stalls in int3 context
	 * with interrupts off; a uprobe program stalls in the task with
	 * interrupts on, but no interrupt handler runs a uprobed instruction.
	 * Either way nothing can watch from inside the stall: only 0.
	 */
	P(interrupt_watcher, INTERRUPT_WATCHER, 0, 0, 0, 0,
	  "stalls interruptible by probed code (never, in probe handlers)"),
	P(consumer_wait_us, CONSUMER_WAIT_US, 0, 100000, 200, 200,
	  "µs a watcher waits for its consumer's side"),
	P(enabled, ENABLED, 0, 1, 1, 1, "on/off"),
	/* At most half of each CPU-second stalled: nothing starves the watchdogs, RCU or the target. */
	P(stall_budget_us, STALL_BUDGET_US, 0, 1000000, 500000, 500000,
	  "µs a CPU may stall per second (0: unlimited)"),
	P(report_value_change_only, REPORT_VALUE_CHANGE_ONLY, 0, 1, 1, 1,
	  "report a race only when the watched value changed"),
	P(report_once_in_ms, REPORT_ONCE_IN_MS, 0, 3600000, 3000, 3000,
	  "print one report per pair of functions per interval"),
	P(overhead_budget, OVERHEAD_BUDGET, 1, 100, 10, 10,
	  "site sampler: % of native time probes may add (100: arm all)"),
	/*
	 * The soft watchpoints need the two racing accesses to overlap, so a
	 * short test program is only caught while its racing sites trap
	 * (docs/PERFORMANCE.md, "Figures behind the code": the warm-up).
	 */
	P(sampler_warmup_cpu_ms, SAMPLER_WARMUP_CPU_MS, 0, 3600000, 2000, 2000,
	  "site sampler: CPU ms the targets (kernel: the machine) run with all sites armed"),
	P(sampler_period_ms, SAMPLER_PERIOD_MS, 50, 60000, 100, 100,
	  "site sampler: ms between two readjustments"),
	/* A hot turn: long enough for a few watchpoints of each armed hot site (bench/p2). */
	P(sampler_turn_ms, SAMPLER_TURN_MS, 5, 60000, 20, 20,
	  "site sampler: ms a hot site stays armed in its turn"),
	/*
	 * Per-site backoff (daemon/sampler/sampler.h): a site stays armed for its
	 * first sampler_backoff_hits hits, or sampler_level0_cpu_ms of the
	 * targets' CPU time after its first hit, whichever comes first, so that
	 * code first run after the warm-up (tests/scenarios/serial_init_then_race)
	 * gets what the warm-up gave the code before it.  docs/PERFORMANCE.md,
	 * "Per-site backoff", has how both were chosen.
	 */
	P(sampler_backoff_hits, SAMPLER_BACKOFF_HITS, 1, 1000000000, 30000, 30000,
	  "site sampler: hits a site takes armed before it backs off a level (100/10/1/0.1%)"),
	P(sampler_level0_cpu_ms, SAMPLER_LEVEL0_CPU_MS, 1, 3600000, 2000, 2000,
	  "site sampler: targets' CPU ms after its first hit that a site stays armed at most"),
	/*
	 * User mode: the cold start (warm-up and level 0) spends a credit of
	 * this much CPU time, an advance on the budget: a program of a few
	 * seconds pays about the larger of it and the budget, not 2 CPU-seconds
	 * of traps (docs/PERFORMANCE.md, "The cold start's credit, one budget,
	 * and start-up").  300 ms covers about 10,000 traps at the 22-35 us
	 * of this project's VMs: the whole run of a test program of a few ms
	 * natively.  tests/history/racy_omp_nowait takes 8,191 hits, up to
	 * 300 CPU-ms of them; at 200 its last iteration, the racy read, came
	 * after the advance ran out (4 runs of 4 missed it).  400 made P2 at
	 * 2 s slower in 5 pairs of 5; 300 did not, within the noise ("The cold
	 * start's credit, sized for a test program").  Kernel mode keeps its
	 * warm-up unbounded (0), as its guest suites were measured with it.
	 */
	P(sampler_start_credit_ms, SAMPLER_START_CREDIT_MS, 0, 3600000, 300, 0,
	  "site sampler (user mode): CPU ms of probe time the cold start may spend "
	  "ahead of the budget (0: unbounded)"),
	/*
	 * The reports' ring buffer.  A report takes 768 bytes of it, so 1 MiB
	 * holds about 1,360 reports the daemon has not read yet; a full ring drops
	 * records and counts them (records_dropped).  Small values are for
	 * tests that fill it (tests/daemon-faults.sh).
	 */
	[PARAM_RING_BUFFER_KB] = { "ring_buffer_kb", PARAM_RING_BUFFER_KB, 4, 262144, { 1024, 1024 },
				   "KiB of the reports' ring buffer (rounded up to a power of two; "
				   "at start only)", true },
#undef P
};

const struct param_desc *param__table(size_t *n)
{
	*n = N_ELEMS(params_table);
	return params_table;
}

const struct param_desc *param__find(const char *name)
{
	for (size_t i = 0; i < N_ELEMS(params_table); i++)
		if (!strcmp(params_table[i].name, name))
			return &params_table[i];
	return NULL;
}

void param_values__init(struct param_values *pv, enum param_mode mode)
{
	for (size_t i = 0; i < N_ELEMS(params_table); i++)
		pv->v[i] = params_table[i].def[mode];
}

int uint__parse(const char *w, unsigned long min, unsigned long max, unsigned long *out)
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

int param__parse(const struct param_desc *p, const char *text, unsigned int *out, char *err,
		size_t errlen)
{
	unsigned long v;

	if (uint__parse(text, p->min, p->max, &v)) {
		snprintf(err, errlen, "%s: bad value '%.64s' (expected %u..%u)", p->name, text,
			 p->min, p->max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int param__parse_kv(const char *kv, const struct param_desc **pp, unsigned int *out, char *err,
		   size_t errlen)
{
	const char *eq = strchr(kv, '=');
	char name[64];

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(name)) {
		snprintf(err, errlen, "parameter wants NAME=VALUE, got '%.64s'", kv);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - kv), kv);
	*pp = param__find(name);
	if (!*pp) {
		snprintf(err, errlen, "unknown parameter '%s'", name);
		return -EINVAL;
	}
	return param__parse(*pp, eq + 1, out, err, errlen);
}

void param__print_all(FILE *out)
{
	fprintf(out, "Parameters (NAME=VALUE), with their defaults in user and kernel mode:\n");
	for (size_t i = 0; i < N_ELEMS(params_table); i++) {
		const struct param_desc *p = &params_table[i];
		char def[40];

		if (p->def[PARAM_MODE_USER] == p->def[PARAM_MODE_KERNEL])
			snprintf(def, sizeof(def), "%u", p->def[PARAM_MODE_USER]);
		else
			snprintf(def, sizeof(def), "%u, kernel %u", p->def[PARAM_MODE_USER],
				 p->def[PARAM_MODE_KERNEL]);
		fprintf(out, "  %-28s %u..%u  default %s: %s\n", p->name, p->min, p->max, def,
			p->help);
	}
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

const char *counter__name(enum kcsand_counter c)
{
	return (unsigned int)c < KCSAND_CTR_COUNT ? counter_names[c] : "?";
}
