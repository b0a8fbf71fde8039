// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/reattach: how long the site sampler's re-attach takes.  Decodes the
 * functions of PROG matching GLOB, attaches them as one uprobe_multi link
 * with kcsand's program, then times REPS re-attaches (new link with every
 * site, old link closed) while PROG is mapped by a running process, as
 * during a real run.
 *
 *   reattach GLOB REPS -- PROG
 * prints: sites decode_ms attach_ms reattach_ms(median)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "sites/decode.h"
#include "sampler/sampler.h"
#include "util/uprobe_multi.h"
#include "kcsand.skel.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct target_obj *obj = NULL;
	struct kcsand_bpf *skel = NULL;
	struct bpf_program *bpf_prog;
	__u64 *offs, *cookies;
	double t0, decode_ms, attach_ms, *re;
	int reps, fd, prog, ret = 1;
	pid_t child;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: reattach GLOB REPS -- PROG\n");
		return 2;
	}
	reps = atoi(argv[2]);
	t0 = now_ms();
	if (target_obj__open(argv[4], &obj) || target_obj__decode(obj, argv[1], NULL) < 0 ||
	    !obj->sites.n) {
		fprintf(stderr, "reattach: nothing to probe in %s\n", argv[4]);
		return 1;
	}
	decode_ms = now_ms() - t0;
	skel = kcsand_bpf__open();
	if (!skel)
		return 1;
	bpf_program__set_expected_attach_type(skel->progs.kcsand_uprobe_multi,
					      KCSAND_BPF_TRACE_UPROBE_MULTI);
	/*
	 * Only the program re-attached here: the others cost their verification,
	 * and kernel mode's need kernel symbols a kernel may lack (__preempt_count).
	 */
	bpf_object__for_each_program(bpf_prog, skel->obj)
		bpf_program__set_autoload(bpf_prog, bpf_prog == skel->progs.kcsand_uprobe_multi);
	bpf_map__set_max_entries(skel->maps.sites, obj->sites.n);
	sampler__prepare(skel, obj->sites.n, false);
	if (kcsand_bpf__load(skel)) {
		fprintf(stderr, "reattach: failed to load the BPF object\n");
		goto out;
	}
	offs = calloc(obj->sites.n, sizeof(*offs));
	cookies = calloc(obj->sites.n, sizeof(*cookies));
	re = calloc(reps > 0 ? reps : 1, sizeof(*re));
	for (size_t i = 0; i < obj->sites.n; i++) {
		offs[i] = obj->sites.v[i].file_off + obj->sites.v[i].desc.probe_delta;
		cookies[i] = i;
	}
	/* A process that maps PROG, so that attaching writes breakpoints into it. */
	child = fork();
	if (child == 0) {
		raise(SIGSTOP);
		execl(argv[4], argv[4], "30", NULL);
		_exit(127);
	}
	waitpid(child, NULL, WUNTRACED);
	kill(child, SIGCONT);
	usleep(20000);
	prog = bpf_program__fd(skel->progs.kcsand_uprobe_multi);
	t0 = now_ms();
	fd = uprobe_multi__attach(prog, obj->path, offs, cookies, obj->sites.n, 0);
	attach_ms = now_ms() - t0;
	if (fd < 0) {
		fprintf(stderr, "reattach: cannot attach: %s\n", strerror(-fd));
		goto out;
	}
	for (int r = 0; r < reps; r++) {
		int nfd;

		t0 = now_ms();
		nfd = uprobe_multi__attach(prog, obj->path, offs, cookies, obj->sites.n, 0);
		close(fd);
		re[r] = now_ms() - t0;
		fd = nfd;
	}
	close(fd);
	qsort(re, reps, sizeof(*re), cmp);
	printf("%zu %.1f %.1f %.1f\n", obj->sites.n, decode_ms, attach_ms, reps ? re[reps / 2] : 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ret = 0;
out:
	kcsand_bpf__destroy(skel);
	target_obj__free(obj);
	return ret;
}
