// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/prog_load: what the verifier costs per program of a BPF object.  Each
 * program is loaded alone (a fresh open of the object, every other program's
 * autoload off), with the verifier's statistics log, and printed as
 *
 *   NAME load_ms VERIFY_US verified_insns total_states peak_states
 *
 * load_ms is bpf_object__load()'s wall time, maps included; VERIFY_US is the
 * kernel's own "verification time".  With -m, the uprobes kcsand attaches by
 * uprobe_multi are loaded as such, as kcsand does where the kernel has it.
 *
 *   prog_load [-m] OBJECT [PROGRAM...]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define UPROBE_MULTI_ATTACH 48	/* BPF_TRACE_UPROBE_MULTI, newer than some uapi headers */
#define LOG_STATS 4		/* the verifier's statistics, without its per-insn trace */

static char log_buf[1 << 24];

static bool wanted(const char *name, int nr, char **names)
{
	if (!nr)
		return true;
	for (int i = 0; i < nr; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

static bool multi_prog(const char *name)
{
	return !strcmp(name, "kcsand_uprobe_multi") || !strcmp(name, "kcsand_hb_entry") ||
	       !strcmp(name, "kcsand_hb_return");
}

static long log_value(const char *key)
{
	const char *p = strstr(log_buf, key);

	return p ? atol(p + strlen(key)) : -1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Load PATH with only program NAME on; print its line. */
static int load_one(const char *path, const char *name, bool multi)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct bpf_program *p, *me = NULL;
	double t0;
	int err;

	if (!obj)
		return -errno;
	bpf_object__for_each_program(p, obj) {
		bool on = !strcmp(bpf_program__name(p), name);

		bpf_program__set_autoload(p, on);
		if (on)
			me = p;
	}
	if (multi && multi_prog(name))
		bpf_program__set_expected_attach_type(me, UPROBE_MULTI_ATTACH);
	log_buf[0] = 0;
	bpf_program__set_log_buf(me, log_buf, sizeof(log_buf));
	bpf_program__set_log_level(me, LOG_STATS);
	t0 = now_ms();
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "prog_load: cannot load %s: %s\n%s\n", name, strerror(-err),
			strlen(log_buf) > 2000 ? log_buf + strlen(log_buf) - 2000 : log_buf);
		goto out;
	}
	t0 = now_ms() - t0;
	bpf_obj_get_info_by_fd(bpf_program__fd(me), &info, &len);
	printf("%-24s %8.1f %9ld %8u %7ld %7ld\n", name, t0, log_value("verification time "),
	       info.verified_insns, log_value("total_states "), log_value("peak_states "));
out:
	bpf_object__close(obj);
	return err;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	bool multi = argc > 1 && !strcmp(argv[1], "-m");
	int first = multi ? 2 : 1, ret = 0;

	if (argc <= first) {
		fprintf(stderr, "usage: prog_load [-m] OBJECT [PROGRAM...]\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[first], NULL);
	if (!obj) {
		fprintf(stderr, "prog_load: cannot open %s: %s\n", argv[first], strerror(errno));
		return 2;
	}
	printf("%-24s %8s %9s %8s %7s %7s\n", "program", "load_ms", "verify_us", "insns",
	       "states", "peak");
	bpf_object__for_each_program(p, obj)
		if (wanted(bpf_program__name(p), argc - first - 1, argv + first + 1) &&
		    load_one(argv[first], bpf_program__name(p), multi))
			ret = 1;
	bpf_object__close(obj);
	return ret;
}
