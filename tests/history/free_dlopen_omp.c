// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a plugin built with OpenMP, loaded with dlopen() by a program
 * that does not link libgomp itself: libgomp is mapped only when the
 * plugin is.  The plugin (free_dlopen_omp_lib.c) sums a table in a
 * parallel loop with a critical section, then the program reads the
 * result.  Its synchronization is libgomp's, which kcsand must probe when
 * the plugin brings it in; the test asserts it did (-v names libgomp).
 *
 * Expected: race-free
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <unistd.h>
#include "suite.h"

#define ROUNDS	500

int main(int argc, char **argv)
{
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	long (*plugin_run)(long round);
	long sum = 0, want = 0;
	void *lib;

	if (n <= 0)
		return 2;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/%s_lib.so", dirname(exe), basename(argv[0]));
	spin_us(10000);
	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	plugin_run = (long (*)(long))dlsym(lib, "plugin_run");
	if (!plugin_run)
		return 2;
	for (long r = 0; r < ROUNDS; r++) {
		sum += plugin_run(r);
		want += 1024 * r + 1024 * 1023 / 2;
	}
	return sum != want;
}
