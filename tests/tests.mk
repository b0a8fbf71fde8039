# SPDX-License-Identifier: GPL-2.0-only
# Test programs and the `make check` entry point; included from the top Makefile.

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/unit/%,$(UNIT_SRCS))

$(OUT)/tests/unit/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $< $(LIB) $(LDLIBS) -o $@

# test_symindex reads a shared object in which names repeat (tests/unit/fixtures).
$(OUT)/tests/unit/symindex_fixture.so: tests/unit/fixtures/symindex_a.c tests/unit/fixtures/symindex_b.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fPIC -shared $^ -o $@
$(OUT)/tests/unit/test_symindex: $(OUT)/tests/unit/symindex_fixture.so
# test_ksize reads a stand-in vmlinux (linked) and NAME.ko (ld -r) in which a static name repeats.
KSIZE_FIXTURE := tests/unit/fixtures/ksize_a.c tests/unit/fixtures/ksize_b.c
$(OUT)/tests/unit/ksize_vmlinux: $(KSIZE_FIXTURE)
	@mkdir -p $(@D)
	$(CC) -O1 -fPIC -shared -nostdlib $^ -o $@
$(OUT)/tests/unit/ksize_mod.ko: $(KSIZE_FIXTURE)
	@mkdir -p $(@D)/ksize_mod
	$(CC) -O1 -c tests/unit/fixtures/ksize_a.c -o $(@D)/ksize_mod/a.o
	$(CC) -O1 -c tests/unit/fixtures/ksize_b.c -o $(@D)/ksize_mod/b.o
	$(LD) -r $(@D)/ksize_mod/a.o $(@D)/ksize_mod/b.o -o $@
$(OUT)/tests/unit/test_ksize: $(OUT)/tests/unit/ksize_vmlinux $(OUT)/tests/unit/ksize_mod.ko
# test_omp_spawn reads an OpenMP fixture, PIE and non-PIE, each as built and stripped.
$(OUT)/tests/unit/omp_spawn_fixture: tests/unit/fixtures/omp_spawn.c
	@mkdir -p $(@D)
	$(CC) -O2 -fopenmp $< -o $@ && strip -o $@.stripped $@
$(OUT)/tests/unit/omp_spawn_fixture_nopie: tests/unit/fixtures/omp_spawn.c
	@mkdir -p $(@D)
	$(CC) -O2 -fopenmp -fno-pie -no-pie $< -o $@ && strip -o $@.stripped $@
$(OUT)/tests/unit/test_omp_spawn: $(OUT)/tests/unit/omp_spawn_fixture \
	$(OUT)/tests/unit/omp_spawn_fixture_nopie
# test_ksrc reads a scenario's DWARF compile unit.
$(OUT)/tests/unit/test_ksrc: $(OUT)/tests/scenarios/plain_write_vs_read

# The engine's watchpoint protocol, step by step through BPF_PROG_TEST_RUN
# (tests/engine/; needs root).
ENGINE_TEST := $(OUT)/tests/engine/test_engine
$(OUT)/tests/engine/engine_test.bpf.o: tests/engine/engine_test.bpf.c tests/engine/engine_test.h $(wildcard bpf/*.h) \
				       include/kcsand.h vmlinux.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(OUT)/tests/engine/engine_test.skel.h: $(OUT)/tests/engine/engine_test.bpf.o
	$(BPFTOOL) gen skeleton $< > $@
$(ENGINE_TEST): tests/engine/test_engine.c tests/engine/engine_test.h $(OUT)/tests/engine/engine_test.skel.h tests/unit/test.h
	$(CC) $(CFLAGS) -Itests/unit -Itests/engine -I$(OUT)/tests/engine $< -lbpf -lelf -lz -o $@

unit: $(UNIT_BINS) $(ENGINE_TEST)
	@fail=0; for t in $(UNIT_BINS) $(ENGINE_TEST); do $$t || fail=1; done; exit $$fail

# End-to-end scenarios (tests/scenarios/*.c) and the README demo
# (tests/demo/*.c): small pthread programs that kcsanctl runs.  They are
# built with fixed flags, and with gcc, since the scenarios state which
# instruction each racing function compiles to.  The rules need nothing
# else from the build, so `make build/tests/scenarios/NAME` works alone.
SCENARIO_CC	:= gcc
SCENARIO_CFLAGS	:= -O1 -g -fno-omit-frame-pointer -pthread -Wall

SCENARIO_CXX	:= g++

SCENARIO_SRCS := $(wildcard tests/scenarios/*.c)
SCENARIO_BINS := $(patsubst tests/scenarios/%.c,$(OUT)/tests/scenarios/%,$(SCENARIO_SRCS))
# C++ scenarios (std::atomic), same flags.
SCENARIO_CXX_SRCS := $(wildcard tests/scenarios/*.cc)
SCENARIO_BINS += $(patsubst tests/scenarios/%.cc,$(OUT)/tests/scenarios/%,$(SCENARIO_CXX_SRCS))
DEMO_SRCS     := $(wildcard tests/demo/*.c)
DEMO_BINS     := $(patsubst tests/demo/%.c,$(OUT)/tests/demo/%,$(DEMO_SRCS))

# Built as distributions build: without frame pointers, rbp is an ordinary register.
$(OUT)/tests/scenarios/rbp_shared_pointer: SCENARIO_CFLAGS := -O2 -g -pthread -Wall
$(OUT)/tests/scenarios/omp_racy_nofp: SCENARIO_CFLAGS := -O2 -g -fopenmp -Wall
$(OUT)/tests/scenarios/nofp_thread_stacks: SCENARIO_CFLAGS := -O2 -g -fomit-frame-pointer -pthread -Wall
$(OUT)/tests/scenarios/nofp_deep_stack: SCENARIO_CFLAGS := -O2 -g -fomit-frame-pointer -pthread -Wall
# gcc's OpenMP reduction on a double: a compare-and-swap loop.
$(OUT)/tests/scenarios/omp_reduction_double: SCENARIO_CFLAGS := -O2 -g -fopenmp -Wall
# No DWARF: no _Atomic qualifier marks the load, only its cmpxchg loop does.
$(OUT)/tests/scenarios/atomic_float_add: SCENARIO_CFLAGS := -O1 -fno-omit-frame-pointer -pthread \
	-fno-trapping-math -Wall

$(OUT)/tests/scenarios/%: tests/scenarios/%.c tests/scenarios/scenario.h tests/common/trap_report.h
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(SCENARIO_CFLAGS) $< -o $@

$(OUT)/tests/scenarios/%: tests/scenarios/%.cc tests/scenarios/scenario.h tests/common/trap_report.h
	@mkdir -p $(@D)
	$(SCENARIO_CXX) $(SCENARIO_CFLAGS) $< -o $@

$(OUT)/tests/demo/%: tests/demo/%.c
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(SCENARIO_CFLAGS) $< -o $@

# Whether debug registers trap here: the runners pick needs=hwbp or needs=nohwbp cases by it.
$(OUT)/tests/tools/%: tests/tools/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

scenario-programs: $(SCENARIO_BINS) $(DEMO_BINS) $(OUT)/tests/tools/hw_traps

# Runs every case of every scenario under kcsanctl (needs root).
scenario-tests: scenario-programs $(OUT)/kcsanctl
	tests/run-scenarios.sh $(OUT)

.PHONY: scenario-programs

# The history detector on the racy and race-free programs of tests/history/ (needs root;
# the script builds them, from the two tables it reads).
history-tests: $(OUT)/kcsanctl $(OUT)/tests/tools/hw_traps
	tests/history-check.sh $(OUT)

# Not in make check: every race-free program 5 times (the issue's bar for the corpus),
# each run a fresh process and a result of its own.
history-soak: $(OUT)/kcsanctl $(OUT)/tests/tools/hw_traps
	KCSAND_HISTORY_RUNS=5 tests/history-check.sh $(OUT)

.PHONY: history-tests history-soak

# A racy shared library and its user, for `kcsanctl run --object`.
$(OUT)/tests/shlib/libracy.so: tests/shlib/racy_lib.c
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(SCENARIO_CFLAGS) -fPIC -shared $< -o $@
$(OUT)/tests/shlib/shlib_race: tests/shlib/shlib_race.c $(OUT)/tests/shlib/libracy.so
	$(SCENARIO_CC) $(SCENARIO_CFLAGS) $< -L$(OUT)/tests/shlib -lracy -Wl,-rpath,'$$ORIGIN' -o $@

$(OUT)/tests/cli/%: tests/cli/%.c
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(SCENARIO_CFLAGS) $< -o $@

# kcsanctl's own behaviour: options, errors, objects, cleanup (needs root).
cli-tests: all $(OUT)/tests/shlib/shlib_race $(OUT)/tests/scenarios/plain_write_vs_read \
	   $(OUT)/tests/cli/exit_with $(OUT)/tests/cli/vector_stores \
	   $(OUT)/tests/cli/counted $(OUT)/tests/cli/cold_and_hot
	tests/run-cli-tests.sh $(OUT)

.PHONY: cli-tests

# Stripped programs and libraries, with and without separate debug files (needs root;
# the script builds its programs).
debuginfo-tests: $(OUT)/kcsanctl
	tests/debuginfo-check.sh $(OUT)

.PHONY: debuginfo-tests

# Real programs as Debian ships them (compressors, servers, benchmarks): output and exit status
# as native, sites, overhead, reports (needs root and the packages; minutes; not in check).
real: $(OUT)/kcsanctl
	tests/real/run-real.sh $(OUT)

.PHONY: real
# libFuzzer targets for the two parsers that read untrusted text: the
# configuration file and the control socket's requests.  `make check` runs
# each briefly (FUZZ_CHECK_RUNS inputs); `make fuzz` runs them for
# FUZZ_RUNS inputs each (-1: until stopped), one after the other.
FUZZ_CC		?= clang
FUZZ_CFLAGS	:= -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		   -std=gnu11 -D_GNU_SOURCE -Iinclude -Idaemon
FUZZ_SRCS	:= daemon/service/config.c daemon/report/filter.c daemon/engine/params.c daemon/service/protocol.c \
		   daemon/hw/watch_spec.c daemon/util/file.c
FUZZ_TARGETS	:= config protocol
FUZZ_BINS	:= $(patsubst %,$(OUT)/fuzz/fuzz_%,$(FUZZ_TARGETS))
FUZZ_CHECK_RUNS	?= 200000
FUZZ_RUNS	?= 10000000

$(OUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_SRCS) $(wildcard daemon/*/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $< $(FUZZ_SRCS) -o $@

fuzz-programs: $(FUZZ_BINS)

# The corpus grows in build/fuzz/corpus-NAME, seeded from tests/fuzz/corpus/NAME.
# The targets run at once, each on a CPU of its own (each fuzzer is one thread).
fuzz-check: $(FUZZ_BINS)
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(OUT)/fuzz/corpus-$$t; \
		$(OUT)/fuzz/fuzz_$$t -runs=$(FUZZ_CHECK_RUNS) -max_len=8192 \
			$(OUT)/fuzz/corpus-$$t tests/fuzz/corpus/$$t \
			>$(OUT)/fuzz/$$t.log 2>&1 & \
		pids="$$pids $$!"; \
	done; \
	fail=0; set -- $(FUZZ_TARGETS); for p in $$pids; do \
		if wait $$p; then echo "ok   fuzz_$$1 ($(FUZZ_CHECK_RUNS) inputs)"; \
		else echo "FAIL fuzz_$$1: see $(OUT)/fuzz/$$1.log"; tail -30 $(OUT)/fuzz/$$1.log; fail=1; fi; \
		shift; \
	done; exit $$fail

fuzz: $(FUZZ_BINS)
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(OUT)/fuzz/corpus-$$t; \
		$(OUT)/fuzz/fuzz_$$t -runs=$(FUZZ_RUNS) -max_len=8192 -print_final_stats=1 \
			$(OUT)/fuzz/corpus-$$t tests/fuzz/corpus/$$t || exit 1; \
	done

.PHONY: fuzz fuzz-check fuzz-programs

# Long-running targets of the daemon tests (tests/daemon/*.c).
DAEMON_TEST_SRCS := $(wildcard tests/daemon/*.c)
DAEMON_TEST_BINS := $(patsubst tests/daemon/%.c,$(OUT)/tests/daemon/%,$(DAEMON_TEST_SRCS))

$(OUT)/tests/daemon/%: tests/daemon/%.c
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(SCENARIO_CFLAGS) $< -o $@
$(OUT)/tests/daemon/churn: tests/common/trap_report.h
$(OUT)/tests/daemon/locked_until: tests/history/suite.h
# Static: 10,000 of its processes cost little more than their execs.
$(OUT)/tests/daemon/short_lived: SCENARIO_CFLAGS += -static

# The service: kcsand and kcsanctl end to end (tests/daemon-*.sh need root;
# tests/kcsanctl-usage.sh does not).  Each prints ok/FAIL lines and a total.
DAEMON_TESTS := tests/kcsanctl-usage.sh tests/daemon-config.sh tests/daemon-control.sh \
		tests/daemon-sinks.sh tests/daemon-pid.sh tests/daemon-detach.sh \
		tests/daemon-watch.sh tests/daemon-json.sh tests/daemon-faults.sh tests/daemon-group.sh \
		tests/daemon-procs.sh tests/daemon-history.sh

# The user-mode soak, short: SOAK_CHECK_S seconds, or to its first report (user-soak.sh: 600).
SOAK_CHECK_S	?= 20
SOAK_PROGRAMS	:= $(patsubst %,$(OUT)/tests/scenarios/%,plain_write_vs_read rmw_array \
		   mutex_protected c11_acquire_release thread_private)

daemon-tests: all $(DAEMON_TEST_BINS) $(OUT)/tests/scenarios/mutex_protected $(OUT)/tests/tools/hw_traps \
	      $(OUT)/tests/scenarios/data_race \
	      $(OUT)/tests/shlib/shlib_race $(SOAK_PROGRAMS)
	tests/run-daemon-tests.sh $(OUT) $(SOAK_CHECK_S) $(DAEMON_TESTS)

.PHONY: daemon-tests

# The happens-before suite (tests/history/*.c): one idea per program, racy
# ones executing their racing pair once.  expect.tsv gives each program's
# expected title and how it is built: -pthread or -fopenmp, and "nofp"
# without frame pointers, so that unwinding without them is exercised too.
HISTORY_EXPECT	:= tests/history/expect.tsv
HISTORY_NAMES	:= $(shell awk -F'\t' '!/^\#/ && NF >= 3 { print $$1 }' $(HISTORY_EXPECT))
HISTORY_BINS	:= $(patsubst %,$(OUT)/tests/history/%,$(HISTORY_NAMES))
HISTORY_CFLAGS	:= -Wall
history_build	= $(shell awk -F'\t' -v p=$(1) '$$1 == p { print $$3 }' $(HISTORY_EXPECT))
# O2: -O2 instead of -O1; nog: no debug info; static: -static (as tests/history-check.sh).
history_flags	= $(if $(findstring O2,$(call history_build,$(1))),-O2,-O1) \
		  $(if $(findstring nog,$(call history_build,$(1))),,-g) \
		  $(if $(findstring static,$(call history_build,$(1))),-static) \
		  $(if $(findstring bundled,$(call history_build,$(1))),-Wl$(,)-rpath$(,)'$$ORIGIN/bundled-lib') \
		  $(if $(findstring openmp,$(call history_build,$(1))),-fopenmp,-pthread) \
		  $(if $(findstring nofp,$(call history_build,$(1))),-fomit-frame-pointer, \
		       -fno-omit-frame-pointer)

# nofnsym: its OpenMP outlined functions' symbols removed, as a stripped program has none.
history_strip	= $(if $(findstring nofnsym,$(call history_build,$(1))), \
		       && objcopy --wildcard --strip-symbol='*._omp_fn.*' $(2))

$(OUT)/tests/history/%: tests/history/%.c tests/history/suite.h $(HISTORY_EXPECT)
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(HISTORY_CFLAGS) $(call history_flags,$*) $< -o $@ $(call history_strip,$*,$@)

# A .cc program (C++) is built by g++, with the same flags.
$(OUT)/tests/history/%: tests/history/%.cc tests/history/suite.h $(HISTORY_EXPECT)
	@mkdir -p $(@D)
	$(SCENARIO_CXX) $(HISTORY_CFLAGS) $(call history_flags,$*) $< -o $@

# A program with its own copy of libgomp (",bundled"): the copy beside it, in its RUNPATH.
, := ,
$(OUT)/tests/history/free_omp_bundled: $(OUT)/tests/history/bundled-lib/libgomp.so.1
$(OUT)/tests/history/bundled-lib/libgomp.so.1:
	@mkdir -p $(@D)
	cp "$$($(SCENARIO_CC) -print-file-name=libgomp.so.1)" $@

# The same programs under ThreadSanitizer, for bench/user/history-vs-tsan.sh (which cannot link
# statically: a static program's TSan build is dynamic).
$(OUT)/tests/history-tsan/%: tests/history/%.c tests/history/suite.h $(HISTORY_EXPECT)
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(HISTORY_CFLAGS) -fsanitize=thread \
		$(filter-out -static,$(call history_flags,$*)) $< -o $@

# free_sync_lock_debug is free_sync_lock.c with -g.
$(OUT)/tests/history/free_sync_lock_debug $(OUT)/tests/history-tsan/free_sync_lock_debug: \
	tests/history/free_sync_lock.c

$(OUT)/tests/history-tsan/%: tests/history/%.cc tests/history/suite.h $(HISTORY_EXPECT)
	@mkdir -p $(@D)
	$(SCENARIO_CXX) $(HISTORY_CFLAGS) -fsanitize=thread \
		$(filter-out -static,$(call history_flags,$*)) $< -o $@

# The master-and-barrier variant is free_omp_single.c built another way.
$(OUT)/tests/history/free_omp_master_barrier $(OUT)/tests/history-tsan/free_omp_master_barrier: \
	tests/history/free_omp_single.c

# Every program depends on every header of the suite (suite.h, handoff.h).
$(HISTORY_BINS) $(patsubst %,$(OUT)/tests/history-tsan/%,$(HISTORY_NAMES)): $(wildcard tests/history/*.h)

# A plugin program (",plugin"; ",plugin_omp": built with -fopenmp) dlopen()s NAME_lib.so
# from beside it.
HISTORY_PLUGINS	:= $(shell awk -F'\t' '!/^\#/ && $$3 ~ /plugin/ { print $$1 "_lib.so" }' $(HISTORY_EXPECT))
history_plugin_flags = $(if $(findstring plugin_omp,$(call history_build,$(1))),-fopenmp,-pthread)
# ",nofp": the plugin too is built without frame pointers.
history_plugin_fp = $(if $(findstring nofp,$(call history_build,$(1))),-fomit-frame-pointer,-fno-omit-frame-pointer)
$(OUT)/tests/history/%_lib.so: tests/history/%_lib.c $(HISTORY_EXPECT)
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(HISTORY_CFLAGS) -O1 -g -shared -fPIC $(call history_plugin_fp,$*) \
		$(call history_plugin_flags,$*) $< -o $@
$(OUT)/tests/history-tsan/%_lib.so: tests/history/%_lib.c $(HISTORY_EXPECT)
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(HISTORY_CFLAGS) -O1 -g -shared -fPIC -fsanitize=thread \
		$(call history_plugin_flags,$*) $< -o $@

history-programs: $(HISTORY_BINS) $(patsubst %,$(OUT)/tests/history/%,$(HISTORY_PLUGINS))
history-tsan-programs: $(patsubst %,$(OUT)/tests/history-tsan/%,$(HISTORY_NAMES) $(HISTORY_PLUGINS))

.PHONY: history-programs history-tsan-programs
