// SPDX-License-Identifier: GPL-2.0-only
/*
 * Print levels (util/print.h): what each -v count shows on stderr, and the
 * service's reason for a failed call, which only a warning gives.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "test.h"
#include "util/print.h"
#include "service/service_int.h"

/* What one warning, one info and one debug line put on stderr at verbose v. */
static void stderr_at(int v, char *out, size_t len)
{
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	kcsand__set_verbose(v);
	pr_warn("a warning\n");
	pr_info("an info line\n");
	pr_debug("a debug line\n");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
}

/* The service's print function writes to stderr too: not into the test's output. */
static int quiet(int saved)
{
	fflush(stderr);
	if (saved < 0) {
		saved = dup(STDERR_FILENO);
		freopen("/dev/null", "w", stderr);
		return saved;
	}
	dup2(saved, STDERR_FILENO);
	close(saved);
	return -1;
}

int main(void)
{
	char got[512], err[256];
	int q;

	TEST(default_shows_warnings_only) {
		stderr_at(0, got, sizeof(got));
		ASSERT_STREQ(got, "kcsand: a warning\n", "stderr without -v");
	}
	TEST(one_v_shows_info) {
		stderr_at(1, got, sizeof(got));
		ASSERT_STREQ(got, "kcsand: a warning\nkcsand: an info line\n", "stderr with -v");
	}
	TEST(two_v_show_debug) {
		stderr_at(2, got, sizeof(got));
		ASSERT_STREQ(got, "kcsand: a warning\nkcsand: an info line\nkcsand: a debug line\n",
			     "stderr with -vv");
	}
	TEST(service_reason_is_the_last_warning) {
		/* -vv: the info and debug lines after the warning are printed, and no reason. */
		kcsand__set_print(service_print);
		stderr_at(2, got, sizeof(got));
		ASSERT_TRUE(strstr(got, "a debug line") != NULL, "the -vv lines printed");
		q = quiet(-1);
		service_why_begin();
		pr_warn("cannot attach %s: ", "x");
		pr_cont("Invalid argument\n");
		pr_info("decoded 3 sites\n");
		pr_debug("sampler: 3/3 sites armed\n");
		quiet(q);
		ASSERT_EQ(service_why(-EINVAL, err, sizeof(err)), -EINVAL, "service_why's return");
		ASSERT_STREQ(err, "cannot attach x: Invalid argument", "the reason");
		kcsand__set_print(NULL);
	}
	TEST(service_reason_without_a_warning_is_strerror) {
		kcsand__set_print(service_print);
		kcsand__set_verbose(1);
		q = quiet(-1);
		service_why_begin();
		pr_info("decoded 3 sites\n");
		quiet(q);
		service_why(-ENOENT, err, sizeof(err));
		ASSERT_STREQ(err, strerror(ENOENT), "the reason");
		kcsand__set_print(NULL);
	}
	return test_summary();
}
