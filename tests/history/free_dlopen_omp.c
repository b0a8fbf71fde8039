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
#include <unistd.h>
#include "suite.h"

#define ROUNDS	500

int main(int argc, char **argv)
{
	long (*plugin_run)(long round);
	long sum = 0, want = 0;
	void *lib;

	spin_us(10000);
	lib = load_plugin(argv[0]);
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
