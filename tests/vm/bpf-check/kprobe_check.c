// SPDX-License-Identifier: GPL-2.0-only
/*
 * kprobe-check OBJ [FUNCTION]: loads kprobe_check.bpf.o, attaches it as a
 * kprobe on FUNCTION (default vfs_read), reads /proc/version a few times,
 * detaches, and checks that the probe was hit and that the kernel's kprobe
 * list no longer holds it.  Run by tests/vm/guest.sh (kcsan-vm --check-bpf)
 * with the host's libbpf: it also proves host binaries run in the guest.
 * Exit status 0 when all of that held, 1 otherwise.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int kprobes_listed(const char *func)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/sys/kernel/debug/kprobes/list", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, func))
			n++;
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	const char *func = argc > 2 ? argv[2] : "vfs_read";
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_link *link;
	__u64 hits = 0;
	__u32 zero = 0;
	int i, fd, during, after;
	char buf[256];

	if (argc < 2) {
		fprintf(stderr, "usage: kprobe-check OBJ [FUNCTION]\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "bpf-kprobe-check: cannot load %s\n", argv[1]);
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "kprobe_check");
	link = prog ? bpf_program__attach_kprobe(prog, false, func) : NULL;
	if (!link) {
		fprintf(stderr, "bpf-kprobe-check: cannot attach a kprobe on %s\n", func);
		return 1;
	}
	for (i = 0; i < 10; i++) {
		fd = open("/proc/version", O_RDONLY);
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				perror("read");
			close(fd);
		}
	}
	during = kprobes_listed(func);
	bpf_map_lookup_elem(bpf_map__fd(bpf_object__find_map_by_name(obj, "hits")), &zero, &hits);
	bpf_link__destroy(link);
	after = kprobes_listed(func);
	bpf_object__close(obj);
	printf("bpf-kprobe-check: kprobe on %s: hits %llu, listed while attached %d, after detach %d: %s\n",
	       func, (unsigned long long)hits, during, after,
	       hits > 0 && during > 0 && after == 0 ? "ok" : "FAILED");
	return hits > 0 && during > 0 && after == 0 ? 0 : 1;
}
