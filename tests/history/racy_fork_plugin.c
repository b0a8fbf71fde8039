// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: the race is in a library that a forked child loads with dlopen()
 * (racy_fork_plugin_lib.c), and both sides' stacks must still reach
 * start_thread and __clone3: the library has no frame pointers, so they are
 * unwound by CFI over the mappings kcsand's mmap log learned.
 *
 * What it is for: the log reads the kernel's records CPU by CPU.  The FORK is
 * recorded on the parent's CPU and the child's MMAP2 of the library on the
 * child's, so the MMAP2 can be read first; the FORK then copied the parent's
 * mappings over it, the library was lost, and the unwind stopped at its first
 * frame.  The parent runs on the last CPU and the child loads the library on
 * CPU 0, whose ring the log reads first, to make that order the likely one.
 *
 * Expected: "data-race in store_left / store_right"
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <string.h>
#include <sys/wait.h>
#include "suite.h"

/* As racy_fork_child.c: a forked process is held while its probes are set (docs/history.md). */
#define ROUNDS	2000

static void (*plugin_left)(void);
static void (*plugin_right)(void);
static long (*plugin_mode)(void);

static void *left(void *arg)
{
	plugin_left();
	return NULL;
}

static void *right(void *arg)
{
	spin_us(1000);
	plugin_right();
	return NULL;
}

/* Runs the caller on cpu alone, or (cpu < 0) on every CPU. */
static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int c = 0; c < CPU_SETSIZE && c < sysconf(_SC_NPROCESSORS_CONF); c++)
		if (cpu < 0 || c == cpu)
			CPU_SET(c, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int child_main(const char *argv0)
{
	void *lib;

	pin(0);
	lib = load_plugin(argv0);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	plugin_left = (void (*)(void))dlsym(lib, "store_left");
	plugin_right = (void (*)(void))dlsym(lib, "store_right");
	plugin_mode = (long (*)(void))dlsym(lib, "store_mode");
	if (!plugin_left || !plugin_right || !plugin_mode)
		return 2;
	pin(-1);
	for (int r = 0; r < ROUNDS; r++)
		run_pair(left, NULL, right, NULL);
	return plugin_mode() == 0;
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	int status;
	pid_t child;

	if (cpus > 1)
		pin(cpus - 1);
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0)
		_exit(child_main(argv[0]));
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 2;
	return WEXITSTATUS(status);
}
