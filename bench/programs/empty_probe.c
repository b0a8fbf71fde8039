// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/empty_probe: attach an empty BPF program to the same sites kcsand
 * would probe in PROG (functions matching GLOB), then run PROG.  The
 * baseline against which the engine's per-hit cost is measured.
 *
 *   empty_probe GLOB -- PROG [ARGS]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "sites/decode.h"
#include "util/uprobe_multi.h"
#include "empty.skel.h"

int main(int argc, char **argv)
{
	struct target_obj *obj = NULL;
	struct empty_bpf *skel = NULL;
	__u64 *offs = NULL, *cookies = NULL;
	int fd = -1, status = 0, ret = 1;
	pid_t pid;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: empty_probe GLOB -- PROG [ARGS]\n");
		return 2;
	}
	if (target_obj__open(argv[3], &obj) || target_obj__decode(obj, argv[1], NULL) < 0)
		goto out;
	if (!obj->sites.n) {
		fprintf(stderr, "empty_probe: no site in %s matching %s\n", argv[3], argv[1]);
		goto out;
	}
	skel = empty_bpf__open();
	if (!skel)
		goto out;
	bpf_program__set_expected_attach_type(skel->progs.bench_empty, KCSAND_BPF_TRACE_UPROBE_MULTI);
	if (empty_bpf__load(skel)) {
		fprintf(stderr, "empty_probe: failed to load the BPF object\n");
		goto out;
	}
	offs = calloc(obj->sites.n, sizeof(*offs));
	cookies = calloc(obj->sites.n, sizeof(*cookies));
	if (!offs || !cookies)
		goto out;
	for (size_t i = 0; i < obj->sites.n; i++)
		offs[i] = obj->sites.v[i].file_off + obj->sites.v[i].desc.probe_delta;
	fd = uprobe_multi__attach(bpf_program__fd(skel->progs.bench_empty), obj->path, offs,
				  cookies, obj->sites.n, 0);
	if (fd < 0) {
		fprintf(stderr, "empty_probe: cannot attach: %s\n", strerror(-fd));
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		execv(argv[3], &argv[3]);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
out:
	if (fd >= 0)
		close(fd);
	empty_bpf__destroy(skel);
	target_obj__free(obj);
	free(offs);
	free(cookies);
	return ret;
}
