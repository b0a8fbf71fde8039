// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a plugin loaded with dlopen() while the program runs, as
 * programs load their modules.  The plugin (free_dlopen_mutex_lib.c) keeps
 * a table of its own, guarded by a mutex it takes in its functions; two
 * threads of the program call it.  kcsand probes the plugin's accesses
 * with --object, from the moment the plugin is mapped.
 *
 * Expected: race-free
 */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>
#include "suite.h"

#define ROUNDS	20000

static void (*plugin_put)(long key, long value);
static long (*plugin_sum)(void);

static void *caller(void *arg)
{
	for (long r = 0; r < ROUNDS; r++)
		plugin_put(r, (long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	void *lib;

	spin_us(10000);
	lib = load_plugin(argv[0]);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	plugin_put = (void (*)(long, long))dlsym(lib, "plugin_put");
	plugin_sum = (long (*)(void))dlsym(lib, "plugin_sum");
	if (!plugin_put || !plugin_sum)
		return 2;
	run_pair(caller, (void *)1, caller, (void *)2);
	return plugin_sum() != 3L * ROUNDS;
}
