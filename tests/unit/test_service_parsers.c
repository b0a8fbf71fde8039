// SPDX-License-Identifier: GPL-2.0-only
/*
 * The service's pure parts: the filter list with KCSAN's meaning, the
 * configuration parser, the control-request parser.
 */
#include <errno.h>
#include <stdlib.h>
#include "test.h"
#include "service/config.h"
#include "report/filter.h"
#include "sites/kernel_spec.h"
#include "engine/params.h"
#include "service/protocol.h"

static int parse_conf(const char *text, struct config *c, char *err, size_t len)
{
	config__init(c);
	return config__parse(text, strlen(text), "t.conf", c, err, len);
}

static int parse_req(const char *line, struct ctl_request *r, char *err)
{
	return ctl_request__parse(line, strlen(line), r, err, 256);
}

/*
 * The user-target words, PATH [--functions GLOB] [--pid PID]: one parser
 * (user_target_args__parse) for the configuration's `target user`, the
 * socket's `probe add user` and kcsanctl, so that both say the same about
 * the same words.  Before it, the configuration took --pid twice (the
 * last one won) where the socket refused it, and their reasons differed.
 */
static void test_user_target(void)
{
	static const struct {
		const char *words, *why;
	} bad[] = {
		{ "/a --pid 1 --pid 2", "--pid given twice" },
		{ "/a --functions f --functions g", "--functions given twice" },
		{ "/a --frob 1", "unknown option '--frob' (expected --functions or --pid)" },
		{ "/a --functions", "--functions needs a value" },
		{ "/a --pid 0", "bad pid '0'" },
		{ "/a --pid 2147483648", "bad pid '2147483648'" },
		{ "rel/a", "'rel/a' is not an absolute path" },
	};
	const char *words[] = { "bin/a", "--functions", "f*,g", "--pid", "12" };
	static struct ctl_request r;
	struct user_target_args a;
	char line[128], want[160], err[512];
	struct config c;

	TEST(user_target_words) {
		ASSERT_OK(user_target_args__parse(words, 5, false, &a, err, sizeof(err)), "parse");
		ASSERT_STREQ(a.binary, "bin/a", "binary");
		ASSERT_STREQ(a.functions, "f*,g", "functions");
		ASSERT_EQ(a.pid, 12, "pid");
		ASSERT_EQ(user_target_args__parse(words, 5, true, &a, err, sizeof(err)), -EINVAL,
			  "absolute wanted");
		ASSERT_OK(user_target_args__parse(words, 1, false, &a, err, sizeof(err)), "alone");
		ASSERT_TRUE(!a.functions && !a.pid, "every function, every process");
	}
	TEST(user_target_config_and_socket_agree) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(line, sizeof(line), "target user %s\n", bad[i].words);
			snprintf(want, sizeof(want), "t.conf:1: target user: %s", bad[i].why);
			ASSERT_EQ(parse_conf(line, &c, err, sizeof(err)), -EINVAL, line);
			ASSERT_STREQ(err, want, line);
			config__free(&c);
			snprintf(line, sizeof(line), "probe add user %s", bad[i].words);
			snprintf(want, sizeof(want), "probe add user: %s", bad[i].why);
			ASSERT_EQ(parse_req(line, &r, err), -EINVAL, line);
			ASSERT_STREQ(err, want, line);
		}
	}
}

int main(void)
{
	static struct ctl_request r;
	struct filter f;
	struct config c;
	char err[512];

	TEST(filter_kcsan_meaning) {
		filter__init(&f);
		ASSERT_FALSE(filter__drops(&f, "a", "b"), "empty blacklist drops nothing");
		f.whitelist = true;
		ASSERT_FALSE(filter__drops(&f, "a", "b"), "empty whitelist drops nothing");
		f.whitelist = false;
		ASSERT_OK(filter__add(&f, "reader"), "add");
		ASSERT_OK(filter__add(&f, "reader"), "add twice");
		ASSERT_EQ(f.n, 1, "listed once");
		ASSERT_TRUE(filter__drops(&f, "reader", "writer"), "blacklist: first frame");
		ASSERT_TRUE(filter__drops(&f, "writer", "reader"), "blacklist: second frame");
		ASSERT_FALSE(filter__drops(&f, "x", "y"), "blacklist: unlisted");
		ASSERT_TRUE(filter__drops(&f, "reader", NULL), "blacklist: unknown origin");
		f.whitelist = true;
		ASSERT_FALSE(filter__drops(&f, "writer", "reader"), "whitelist: either frame");
		ASSERT_TRUE(filter__drops(&f, "x", "y"), "whitelist: unlisted");
		ASSERT_EQ(filter__remove(&f, "nope"), -ENOENT, "remove unlisted");
		ASSERT_EQ(filter__add(&f, "two words"), -EINVAL, "a name has no blank");
		filter__free(&f);
	}

	TEST(filter_sorted_like_kcsan) {
		filter__init(&f);
		filter__add(&f, "c");
		filter__add(&f, "a");
		filter__add(&f, "b");
		ASSERT_STREQ(f.funcs[0], "a", "first");
		ASSERT_STREQ(f.funcs[2], "c", "last");
		filter__free(&f);
	}

	TEST(filter_file) {
		const char *t = "# comment\n\n  alpha  # why\nbeta\r\n";

		filter__init(&f);
		ASSERT_OK(filter__load_text(&f, t, strlen(t), "s", err, sizeof(err)), "load");
		ASSERT_EQ(f.n, 2, "two functions");
		ASSERT_EQ(filter__load_text(&f, "a b\n", 4, "s", err, sizeof(err)), -EINVAL, "two");
		ASSERT_STREQ(err, "s:1: one function per line", "message");
		filter__free(&f);
	}

	TEST(config_all_keys) {
		const char *t = "target user /bin/a --functions f*,g --pid 12\n"
				"target user /bin/b\n"
				"skip_watch 7 # comment\n"
				"filter x y\nfilter_mode whitelist\n"
				"log /tmp/l\njson yes\nsyslog no\nkmsg yes\nstderr on\n"
				"socket /run/s\nsocket_group adm\nmax_sites 100\n";
		const struct param_desc *all;
		size_t n;

		ASSERT_OK(parse_conf(t, &c, err, sizeof(err)), err);
		ASSERT_EQ(c.nr_targets, 2, "targets");
		ASSERT_STREQ(c.targets[0].functions, "f*,g", "globs");
		ASSERT_EQ(c.targets[0].pid, 12, "pid");
		ASSERT_TRUE(c.targets[1].functions == NULL, "no globs");
		all = param__table(&n);
		ASSERT_TRUE(c.set[param__find("skip_watch") - all], "skip_watch set");
		ASSERT_EQ(c.values[param__find("skip_watch") - all], 7, "skip_watch");
		ASSERT_TRUE(c.filter.whitelist, "mode");
		ASSERT_EQ(c.filter.n, 2, "filter");
		ASSERT_EQ(c.json, CONFIG_YES, "json");
		ASSERT_EQ(c.to_syslog, CONFIG_NO, "syslog");
		ASSERT_EQ(c.to_kmsg, CONFIG_YES, "kmsg");
		ASSERT_STREQ(c.socket_group, "adm", "group");
		ASSERT_EQ(c.max_sites, 100, "max_sites");
		config__free(&c);
	}

	TEST(config_kernel_targets) {
		const char *t = "target kernel module:m  !m_debug_*\n"
				"target kernel vfs_read+0x1c\n"
				"target user /bin/a\n"
				"kernel_debug /boot/vmlinux\nkernel_debug /lib/m.ko\n";
		const char *specs[CONFIG_MAX_SPECS];
		char buf[64];

		ASSERT_OK(parse_conf(t, &c, err, sizeof(err)), err);
		ASSERT_EQ(c.nr_targets, 3, "targets");
		ASSERT_TRUE(c.targets[0].kernel && !c.targets[0].binary, "a kernel target");
		ASSERT_STREQ(c.targets[0].specs, "module:m !m_debug_*", "specs, one space apart");
		ASSERT_FALSE(c.targets[2].kernel, "a user target");
		ASSERT_FALSE(config__target_eq(&c.targets[0], &c.targets[1]), "different specs");
		ASSERT_EQ(c.nr_kernel_debug, 2, "kernel_debug files");
		ASSERT_STREQ(c.kernel_debug[1], "/lib/m.ko", "second file");
		ASSERT_EQ(config__split_specs(c.targets[0].specs, buf, sizeof(buf), specs,
					      CONFIG_MAX_SPECS), 2, "two specs");
		ASSERT_STREQ(specs[1], "!m_debug_*", "second spec");
		ASSERT_EQ(config__split_specs(c.targets[0].specs, buf, sizeof(buf), specs, 1),
			  -E2BIG, "more specs than room");
		config__free(&c);
	}

	TEST(kernel_spec_syntax) {
		ASSERT_TRUE(kernel_spec__invalid("vfs_*") == NULL, "glob");
		ASSERT_TRUE(kernel_spec__invalid("module:ext4") == NULL, "module");
		ASSERT_TRUE(kernel_spec__invalid("vfs_read+0x1c") == NULL, "offset");
		ASSERT_TRUE(kernel_spec__invalid("vfs_read+28") == NULL, "decimal offset");
		ASSERT_TRUE(kernel_spec__invalid("!vfs_*") == NULL, "exclusion");
		ASSERT_TRUE(kernel_spec__invalid("src:fs/ext4/") == NULL, "source path");
		ASSERT_STREQ(kernel_spec__invalid("src:"), "src: needs a source PATH after it", "empty source path");
		ASSERT_STREQ(kernel_spec__invalid("!"), "'!' needs a GLOB after it", "! alone");
		ASSERT_STREQ(kernel_spec__invalid("+0x1"), "FUNC+0xOFF needs a FUNC", "no func");
		ASSERT_STREQ(kernel_spec__invalid("f+"), "FUNC+0xOFF needs a number after '+'", "no off");
		ASSERT_STREQ(kernel_spec__invalid("f+-1"), "FUNC+0xOFF needs a number after '+'", "sign");
		ASSERT_STREQ(kernel_spec__invalid(""), "empty", "empty");
	}

	TEST(config_errors_name_line) {
		static const struct {
			const char *text, *err;
		} bad[] = {
			{ "\n\nnope 1\n", "t.conf:3: unknown key 'nope'" },
			{ "skip_watch -1\n", "t.conf:1: skip_watch: bad value '-1' (expected "
					     "0..1000000000)" },
			{ "skip_watch\n", "t.conf:1: skip_watch: expected one value, got 0" },
			{ "target user /a\ntarget user /a\n", "t.conf:2: target user: /a given "
							      "twice" },
			{ "target user /a --pid 0\n", "t.conf:1: target user: bad pid '0'" },
			{ "target user /a --functions\n", "t.conf:1: target user: --functions "
							  "needs a value" },
			{ "log relative\n", "t.conf:1: log: 'relative' is not an absolute path" },
			{ "filter_file s\n", "t.conf:1: filter_file: 's' is not an absolute "
					      "path" },
			{ "target kernel\n", "t.conf:1: target kernel: expected one or more SPECs "
					      "(GLOB, module:NAME, FUNC+0xOFF, !GLOB)" },
			{ "target kernel !a !b\n", "t.conf:1: target kernel: only exclusions "
						    "('!GLOB'): nothing to probe" },
			{ "target kernel f+x\n", "t.conf:1: target kernel: bad spec 'f+x': "
						  "FUNC+0xOFF needs a number after '+'" },
			{ "target kernel a\ntarget kernel  a\n", "t.conf:2: target kernel: a "
								"given twice" },
			{ "target frob /a\n", "t.conf:1: target: unknown kind 'frob' (expected "
					       "user or kernel)" },
			{ "kernel_debug rel.ko\n", "t.conf:1: kernel_debug: 'rel.ko' is not an "
						    "absolute path" },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			ASSERT_EQ(parse_conf(bad[i].text, &c, err, sizeof(err)), -EINVAL,
				  bad[i].text);
			ASSERT_STREQ(err, bad[i].err, bad[i].text);
			config__free(&c);
		}
	}

	TEST(request_words) {
		ASSERT_OK(parse_req("!reader", &r, err), "!FUNC");
		ASSERT_EQ(r.op, CTL_FILTER_ADD, "!FUNC adds");
		ASSERT_STREQ(r.argv[0], "reader", "!FUNC name");
		ASSERT_OK(parse_req("-j  stats\r", &r, err), "-j stats");
		ASSERT_TRUE(r.json && r.op == CTL_STATS, "json stats");
		ASSERT_OK(parse_req("set udelay_task 100", &r, err), "set");
		ASSERT_EQ(r.value, 100, "value");
		ASSERT_OK(parse_req("probe add user /b --pid 3 --functions x*", &r, err), "probe");
		ASSERT_TRUE(r.pid == 3 && !strcmp(r.functions, "x*"), "probe options");
		ASSERT_OK(parse_req("reports follow", &r, err), "reports follow");
		ASSERT_TRUE(r.follow, "follow");
		ASSERT_OK(parse_req("filter remove a b c", &r, err), "filter remove");
		ASSERT_EQ(r.argc, 3, "three functions");
		ASSERT_OK(parse_req("probe add kernel module:m !m_dbg vfs_read+0x4", &r, err),
			  "probe add kernel");
		ASSERT_EQ(r.op, CTL_PROBE_ADD_KERNEL, "kernel probe");
		ASSERT_EQ(r.argc, 3, "three specs");
		ASSERT_STREQ(r.argv[1], "!m_dbg", "an exclusion");
	}

	TEST(request_errors) {
		ASSERT_EQ(parse_req("set udelay_task 100001", &r, err), -EINVAL, "range");
		ASSERT_STREQ(err, "udelay_task: bad value '100001' (expected 0..100000)", "msg");
		ASSERT_EQ(parse_req("", &r, err), -EINVAL, "empty");
		ASSERT_EQ(parse_req("on off", &r, err), -EINVAL, "extra word");
		ASSERT_EQ(parse_req("probe add user rel", &r, err), -EINVAL, "relative");
		ASSERT_EQ(parse_req("stats\x01", &r, err), -EINVAL, "control");
		ASSERT_EQ(parse_req("!", &r, err), -EINVAL, "! alone");
		ASSERT_EQ(parse_req("probe add kernel", &r, err), -EINVAL, "no spec");
		ASSERT_STREQ(err, "expected 'probe add kernel SPEC...'", "no spec: msg");
		ASSERT_EQ(parse_req("probe add kernel !a", &r, err), -EINVAL, "exclusions only");
		ASSERT_EQ(parse_req("probe add kernel module:", &r, err), -EINVAL, "module:");
		ASSERT_STREQ(err, "probe add kernel: bad spec 'module:': module: needs a module's "
				  "NAME after it", "module: msg");
	}

	TEST(request_watch) {
		ASSERT_OK(parse_req("watch add level:4 --pid 12 --duration 30", &r, err), "add");
		ASSERT_EQ(r.op, CTL_WATCH_ADD, "watch add");
		ASSERT_STREQ(r.watch.spec, "level:4", "spec");
		ASSERT_TRUE(r.watch.pid == 12 && !r.watch.kernel && r.watch.duration_s == 30,
			    "options");
		ASSERT_OK(parse_req("watch add 0xffffffff81000000:8 --kernel", &r, err), "kernel");
		ASSERT_TRUE(r.watch.kernel && !r.watch.pid, "kernel, no pid");
		ASSERT_OK(parse_req("watch add level", &r, err), "no pid: chosen by the service");
		ASSERT_EQ(r.watch.pid, 0, "pid 0");
		ASSERT_OK(parse_req("watch remove 3", &r, err), "remove");
		ASSERT_TRUE(r.op == CTL_WATCH_REMOVE && r.id == 3, "remove id");
		ASSERT_OK(parse_req("-j watch list", &r, err), "list");
		ASSERT_TRUE(r.op == CTL_WATCH_LIST && r.json, "json list");
	}

	TEST(request_watch_errors) {
		static const struct {
			const char *line, *err;
		} bad[] = {
			{ "watch", "expected 'watch add|remove|list'" },
			{ "watch add", "watch add: expected SYMBOL[:LEN] or ADDRESS[:LEN]" },
			{ "watch add level:3", "watch add: bad 'level:3': LEN must be 1, 2, 4 or 8 "
					       "(bytes a debug register covers)" },
			{ "watch add 0x0", "watch add: bad '0x0': not an ADDRESS (a non-zero number, "
					   "0x for hex)" },
			{ "watch add a-b", "watch add: bad 'a-b': not a SYMBOL (letters, digits, '_', "
					   "'.', '$')" },
			{ "watch add x --pid 0", "watch add: bad pid '0'" },
			{ "watch add x --pid 1 --kernel", "watch add: unexpected '--kernel' (--pid PID "
							  "or --kernel, once; --duration S)" },
			{ "watch add x --duration 0", "watch add: bad duration '0' (1..604800 seconds)" },
			{ "watch remove x", "expected 'watch remove ID'" },
			{ "watch list x", "watch list takes no argument" },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			ASSERT_EQ(parse_req(bad[i].line, &r, err), -EINVAL, bad[i].line);
			ASSERT_STREQ(err, bad[i].err, bad[i].line);
		}
	}

	TEST(config_watch) {
		ASSERT_OK(parse_conf("watch level --pid 3\nwatch jiffies --kernel\nwatch ctr:8\n", &c,
				     err, sizeof(err)), "three watches");
		ASSERT_EQ(c.nr_watches, 3, "watches");
		ASSERT_TRUE(c.watches[0].pid == 3 && !c.watches[0].kernel, "user, pid");
		ASSERT_TRUE(c.watches[1].kernel && !c.watches[1].pid, "kernel");
		ASSERT_STREQ(c.watches[2].spec, "ctr:8", "spec");
		config__free(&c);
		ASSERT_EQ(parse_conf("\nwatch v --duration 3\n", &c, err, sizeof(err)), -EINVAL,
			  "no --duration in the file");
		ASSERT_STREQ(err, "t.conf:2: watch: unexpected '--duration' (--pid PID or --kernel, "
				  "once)", "duration msg");
		config__free(&c);
		ASSERT_EQ(parse_conf("watch v\nwatch v\n", &c, err, sizeof(err)), -EINVAL, "twice");
		ASSERT_STREQ(err, "t.conf:2: watch: v given twice", "twice msg");
		config__free(&c);
	}

	test_user_target();
	return test_summary();
}
