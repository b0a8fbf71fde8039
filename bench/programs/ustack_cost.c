// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF cost of one stack copy (bpf/ustack.bpf.h) against the
 * frame-pointer walk each report side takes anyway (bpf_get_stack()):
 * mean ns of the call, timed in BPF around it, over many test runs.
 *
 *   build/bench/ustack_cost [ROUNDS]     (root)
 *
 * Copies of a readable 8 KiB stack, and of an unreadable one (the reserve,
 * the registers and a failed read: the floor), then the walk.  The ring
 * buffer is drained between rounds, so that every copy finds room.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kcsand.h"
#include "ustack_cost.skel.h"

#define REPEAT	200	/* runs a round: 200 copies fill 1.6 MiB of the 4 MiB ring */

static unsigned long copies, copied_bytes;

static int on_record(void *ctx, void *data, size_t len)
{
	const struct kcsand_ustack *rec = data;

	if (len >= sizeof(*rec) && rec->type == KCSAND_REC_USTACK) {
		copies++;
		copied_bytes += rec->size;
	}
	return 0;
}

/* Mean ns of the timed call of prog over rounds rounds of REPEAT runs. */
static double time_prog(struct ustack_cost_bpf *skel, struct bpf_program *prog,
			struct ring_buffer *rb, int rounds)
{
	skel->bss->total_ns = skel->bss->runs = 0;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < REPEAT; i++) {
			LIBBPF_OPTS(bpf_test_run_opts, opts);

			if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts)) {
				fprintf(stderr, "ustack_cost: test run of %s: %s\n",
					bpf_program__name(prog), strerror(errno));
				exit(1);
			}
		}
		ring_buffer__consume(rb);
	}
	return skel->bss->runs ? (double)skel->bss->total_ns / skel->bss->runs : 0;
}

int main(int argc, char **argv)
{
	static uint8_t stack[2 * KCSAND_USTACK_SIZE] __attribute__((aligned(512)));
	int rounds = argc > 1 ? atoi(argv[1]) : 50;
	struct ustack_cost_bpf *skel = ustack_cost_bpf__open();
	struct ring_buffer *rb;
	double full, none, walk;

	if (!skel || bpf_map__set_max_entries(skel->maps.events, 4 << 20) ||
	    ustack_cost_bpf__load(skel)) {
		fprintf(stderr, "ustack_cost: cannot load the BPF object (root?)\n");
		return 1;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, NULL, NULL);
	if (!rb)
		return 1;
	memset(stack, 1, sizeof(stack));	/* faulted in, as a used stack is */
	skel->bss->stack_sp = (uintptr_t)stack;
	full = time_prog(skel, skel->progs.copy_stack, rb, rounds);
	printf("copy of a readable stack: %.0f ns (%lu copies, %.1f KiB each)\n", full, copies,
	       copies ? copied_bytes / 1024.0 / copies : 0.0);
	copies = copied_bytes = 0;
	skel->bss->stack_sp = 0;
	none = time_prog(skel, skel->progs.copy_stack, rb, rounds);
	printf("copy of an unreadable stack (the floor): %.0f ns (%lu copies)\n", none, copies);
	walk = time_prog(skel, skel->progs.fp_walk, rb, rounds);
	printf("frame-pointer walk of this process's stack (bpf_get_stack): %.0f ns\n", walk);
	printf("record: %zu bytes a copy; struct kcsand_report: %zu bytes\n",
	       sizeof(struct kcsand_ustack), sizeof(struct kcsand_report));
	ring_buffer__free(rb);
	ustack_cost_bpf__destroy(skel);
	return 0;
}
