# SPDX-License-Identifier: GPL-2.0-only
# Test programs and the `make check` entry point; included from the top Makefile.

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/unit/%,$(UNIT_SRCS))

$(OUT)/tests/unit/%: tests/unit/%.c tests/unit/test.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $< $(LIB) $(LDLIBS) -o $@

unit: $(UNIT_BINS)
	@fail=0; for t in $(UNIT_BINS); do $$t || fail=1; done; exit $$fail

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

$(OUT)/tests/scenarios/%: tests/scenarios/%.c tests/scenarios/scenario.h
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(SCENARIO_CFLAGS) $< -o $@

$(OUT)/tests/scenarios/%: tests/scenarios/%.cc tests/scenarios/scenario.h
	@mkdir -p $(@D)
	$(SCENARIO_CXX) $(SCENARIO_CFLAGS) $< -o $@

$(OUT)/tests/demo/%: tests/demo/%.c
	@mkdir -p $(@D)
	$(SCENARIO_CC) $(SCENARIO_CFLAGS) $< -o $@

scenario-programs: $(SCENARIO_BINS) $(DEMO_BINS)

# Runs every case of every scenario under kcsanctl (needs root).
scenario-tests: scenario-programs $(OUT)/kcsanctl
	tests/run-scenarios.sh $(OUT)

.PHONY: scenario-programs

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
	   $(OUT)/tests/cli/exit_with
	tests/run-cli-tests.sh $(OUT)

.PHONY: cli-tests
