// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one table of parameters and mode defaults: what `kcsanctl run`, the
 * configuration file and the control socket's `get` start from.
 */
#include <errno.h>
#include "test.h"
#include "engine/engine.h"
#include "engine/params.h"
#include "service/config.h"
#include "service/service_int.h"

/* What the service's engine of that mode starts with, from an empty configuration. */
static unsigned int service_default(const char *name, bool kernel)
{
	struct engine_opts o;
	struct config c;

	config__init(&c);
	service_mode_opts(&c, kernel, &o);
	return engine_opts__get(&o, param__find(name));
}

/*
 * The names of docs/parameters.md's first table, each one a row of the
 * code's table, and as many: the docs and the code list the same set.
 */
static int docs_rows(const char *path, int *unknown)
{
	char *line = NULL, name[64];
	size_t cap = 0;
	bool in_table = false;
	int n = 0;
	FILE *f = fopen(path, "r");

	*unknown = 0;
	if (!f)
		return -errno;
	/* Whole lines: a row runs to a thousand characters and more. */
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "| `%63[a-z0-9_]` |", name) == 1) {
			in_table = true;
			n++;
			if (!param__find(name)) {
				printf("  %s: '%s' is not a parameter\n", path, name);
				(*unknown)++;
			}
		} else if (in_table) {
			break;
		}
	}
	free(line);
	fclose(f);
	return n;
}

int main(void)
{
	char err[256];
	unsigned int v;

	TEST(service_kernel_defaults_are_the_documented_ones) {
		/* docs/parameters.md: kernel mode warms up 2000 ms, stalls 80 µs. */
		ASSERT_EQ(service_default("sampler_warmup_cpu_ms", true), 2000, "kernel warm-up");
		ASSERT_EQ(service_default("udelay_task", true), 80, "kernel udelay_task");
		ASSERT_EQ(service_default("skip_watch", true), 100, "kernel skip_watch");
		ASSERT_EQ(service_default("sampler_warmup_cpu_ms", false), 2000, "user warm-up");
		ASSERT_EQ(service_default("udelay_task", false), 400, "user udelay_task");
		ASSERT_EQ(service_param_default(param__find("sampler_warmup_cpu_ms"), true), 2000,
			  "the default reload and get compare with");
	}

	TEST(table_is_complete) {
		size_t n;
		const struct param_desc *all = param__table(&n);

		ASSERT_EQ(n, PARAM_COUNT, "one row per id");
		for (size_t i = 0; i < n; i++) {
			ASSERT_TRUE(all[i].name && all[i].help, "a name and a help");
			ASSERT_EQ(all[i].id, i, "row at its id");
			for (int m = 0; m < PARAM_NR_MODES; m++)
				ASSERT_TRUE(all[i].def[m] >= all[i].min && all[i].def[m] <= all[i].max,
					    "default in range");
		}
	}

	TEST(parse_names_the_parameter_and_range) {
		const struct param_desc *p;

		ASSERT_OK(param__parse_kv("udelay_task=0x10", &p, &v, err, sizeof(err)), "hex");
		ASSERT_EQ(v, 16, "value");
		ASSERT_EQ(param__parse_kv("udelay_task=100001", &p, &v, err, sizeof(err)), -EINVAL,
			  "out of range");
		ASSERT_STREQ(err, "udelay_task: bad value '100001' (expected 0..100000)", "msg");
		ASSERT_EQ(param__parse_kv("trace_all=1", &p, &v, err, sizeof(err)), -EINVAL,
			  "trace_all is a mode, not a parameter");
		ASSERT_STREQ(err, "unknown parameter 'trace_all'", "msg");
		ASSERT_EQ(param__parse_kv("=1", &p, &v, err, sizeof(err)), -EINVAL, "no name");
	}

	TEST(kernel_engine_traces_every_task) {
		struct engine_opts o;

		engine_opts__init(&o, PARAM_MODE_KERNEL);
		ASSERT_TRUE(o.kernel, "kernel mode");
		ASSERT_EQ(engine_opts__get(&o, param__find("udelay_task")), 80, "kernel default");
	}
	TEST(docs_list_the_same_parameters) {
		int unknown, n = docs_rows("docs/parameters.md", &unknown);

		ASSERT_EQ(n, PARAM_COUNT, "a docs row per parameter (run from the source tree)");
		ASSERT_EQ(unknown, 0, "no docs row that is not a parameter");
	}
	return test_summary();
}
