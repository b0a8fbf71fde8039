# SPDX-License-Identifier: GPL-2.0-only
#
# kcsand: KCSAN-style data-race detection through uprobes/kprobes and BPF.
#
#   make            install missing Debian packages, build build/kcsand and build/kcsanctl
#   make check      unit tests, the BPF scenario tests, the daemon tests (root), brief fuzzing,
#                   and beside them the kernel-mode suites in a QEMU guest (make vm-tests)
#   make fuzz       the parsers' libFuzzer targets, FUZZ_RUNS inputs each
#   make install    kcsand, kcsanctl, man pages, completion, unit (DESTDIR, PREFIX)
#   make demo       run kcsanctl on the bundled racy demo
#   make bench      every benchmark of bench/user/ and bench/kernel/ (root; docs/PERFORMANCE.md);
#                   make bench-user, make bench-kernel: one kind
#   make vmlinux    regenerate vmlinux.h from this kernel's BTF

OUT	:= build
CLANG	?= clang
BPFTOOL	?= bpftool
CC	?= gcc
ARCH	:= x86

# Debian packages the build and the tests need; `make deps` installs what is missing.
DEB_PKGS := clang llvm libbpf-dev bpftool libzydis-dev libelf-dev libdw-dev zlib1g-dev libjson-c-dev \
	    libdebuginfod-dev debuginfod \
	    pkg-config gcc make

CFLAGS	?= -O2 -g
CFLAGS	+= -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	   -std=gnu11 -D_GNU_SOURCE -Iinclude -Idaemon -I$(OUT)
LDLIBS	:= -lbpf -lZydis -ldw -lelf -lz -ljson-c -lpthread -lstdc++

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I. -Iinclude -Ibpf \
	      -Wall -Wno-unused-function

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUT)/%.bpf.o,$(BPF_SRCS))
SKELS	 := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))

LIB_SRCS := $(wildcard daemon/*/*.c)
LIB_OBJS := $(patsubst daemon/%.c,$(OUT)/daemon/%.o,$(LIB_SRCS))
LIB	 := $(OUT)/libkcsand.a

DEPS_STAMP := $(OUT)/.deps-ok

# Keep the BPF objects and skeletons: make would delete them as intermediates.
.SECONDARY: $(BPF_OBJS) $(SKELS)

.PHONY: all deps check host-tests unit scenario-tests vm-tests demo bench bench-user bench-kernel bench-programs vmlinux clean format \
	lint install uninstall

all: $(DEPS_STAMP) $(OUT)/kcsand $(OUT)/kcsanctl

# Installs any missing Debian package (apt-get update first, once).
deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "kcsand: missing Debian packages:$$missing (run 'make deps' as root)" >&2; exit 2; \
		fi; \
		echo "kcsand: installing$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

$(DEPS_STAMP): Makefile
	@mkdir -p $(OUT)
	@$(MAKE) --no-print-directory deps
	@touch $@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(wildcard include/*.h) vmlinux.h | $(DEPS_STAMP)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

$(OUT)/daemon/%.o: daemon/%.c $(wildcard daemon/*/*.h) $(wildcard include/*.h) $(SKELS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(AR) rcs $@ $^

$(OUT)/kcsand: $(OUT)/daemon/main.o $(LIB)
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(OUT)/kcsanctl: $(wildcard cli/*.c) $(LIB) $(wildcard cli/*.h) | $(DEPS_STAMP)
	$(CC) $(CFLAGS) -Icli $(filter %.c,$^) $(LIB) $(LDLIBS) -o $@

# The README's first command: build, then show a report on the bundled racy demo.
demo: all $(OUT)/tests/demo/racy_counter
	@echo "kcsand: running the racy demo under kcsanctl (tests/demo/racy_counter.c)"
	@$(OUT)/kcsanctl run -- $(OUT)/tests/demo/racy_counter; rc=$$?; \
	if [ $$rc -eq 66 ]; then echo "kcsand: the demo's race was reported (exit status 66)"; \
	else echo "kcsand: expected a report and exit status 66, got $$rc" >&2; exit 1; fi

# The README's second command, and CI's: the host suites (host-tests) and the guest suites
# (vm-tests, root) at once, each half's log printed whole at the end (tests/vm/check-both.sh
# says why).  What both halves run is built first, so that no two makes build one file.
# `make host-tests vm-tests` runs them one after the other.
VM_TEST_PROGS := $(OUT)/tests/daemon/watch_level $(OUT)/tests/daemon/churn $(OUT)/tests/shlib/shlib_race
# The guest half's second queue (tests/vm/run-suites.sh) starts when one of these appears: once
# the host half's CPU-bound suites are over (host-tests writes the first after the history
# suite, the host's heaviest: the suites after it, mostly the daemon's, use about half a
# core), or at its end, failed or not; `make check VM_SECOND_AFTER=` starts it at once.
VM_SECOND_AFTER ?= $(OUT)/check-host.heavy.done:$(OUT)/check-host.done
# The benchmarks whose BPF side includes bpf/ headers: built by make check, so a change of
# the product's BPF internals that breaks them fails here, not at the next make bench.
BENCH_BPF_PROGS := $(OUT)/bench/empty_probe $(OUT)/bench/kdisarm $(OUT)/bench/ustack_cost
check: all scenario-programs $(VM_TEST_PROGS) $(BENCH_BPF_PROGS)
	@tests/vm/check-both.sh $(OUT) "tests/timed.sh $(MAKE) --no-print-directory host-tests" \
		"KCSAN_VM_SECOND_AFTER=$(VM_SECOND_AFTER) tests/timed.sh $(MAKE) --no-print-directory vm-tests"

# Unit tests, then the BPF tests on this machine (root).
host-tests: all
	@tests/timed.sh $(MAKE) --no-print-directory lint
	@tests/timed.sh $(MAKE) --no-print-directory unit
	@tests/timed.sh $(MAKE) --no-print-directory scenario-tests
	@tests/timed.sh $(MAKE) --no-print-directory history-tests
	@: > $(OUT)/check-host.heavy.done
	@tests/timed.sh $(MAKE) --no-print-directory cli-tests
	@tests/timed.sh $(MAKE) --no-print-directory debuginfo-tests
	@tests/timed.sh $(MAKE) --no-print-directory daemon-tests
	@tests/timed.sh $(MAKE) --no-print-directory fuzz-check

# Kernel mode, in a QEMU guest booting Debian's stock kernel (tests/vm/kcsan-vm
# installs qemu, the kernel and its headers when missing): the suites of tests/vm/, in two
# queues side by side (tests/vm/run-suites.sh; KCSAN_VM_QUEUES=1 for one), longest first.
VM_SUITES := user-hwbp.sh core-kernel.sh kernel-scenarios.sh kernel-safety.sh kernel-sampler.sh \
	daemon-kernel.sh kernel-scale.sh kernel-hwbp.sh 'kernel-wedge.sh 30' kernel-pairs.sh \
	run-vm-tests.sh
vm-tests: all scenario-programs $(VM_TEST_PROGS)
	@tests/vm/run-suites.sh $(OUT) $(VM_SUITES)

# Benchmarks: one script per question, bench/user/ on this machine and bench/kernel/ (most in
# the QEMU guest), each printing ratios measured in one run; their programs are in
# bench/programs/ (docs/PERFORMANCE.md).
$(OUT)/bench/%.bpf.o: bench/programs/%.bpf.c vmlinux.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(OUT)/bench/%.skel.h: $(OUT)/bench/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@
$(OUT)/bench/hotloop: bench/programs/hotloop.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fno-omit-frame-pointer $< -o $@
$(OUT)/bench/empty_probe: bench/programs/empty_probe.c $(OUT)/bench/empty.skel.h $(LIB)
	$(CC) $(CFLAGS) -I$(OUT)/bench $< $(LIB) $(LDLIBS) -o $@

$(OUT)/bench/kloop: bench/programs/kloop.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall $< -o $@
$(OUT)/bench/kdisarm: bench/programs/kdisarm.c $(OUT)/bench/kdisarm.skel.h
	$(CC) $(CFLAGS) -I$(OUT)/bench $< -lbpf -lelf -lz -o $@
$(OUT)/bench/reattach: bench/programs/reattach.c $(SKELS) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

$(OUT)/bench/ustack_cost: bench/programs/ustack_cost.c $(OUT)/bench/ustack_cost.skel.h
	$(CC) $(CFLAGS) -I$(OUT)/bench $< -lbpf -lelf -lz -o $@
$(OUT)/bench/prog_load: bench/programs/prog_load.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -lbpf -lelf -lz -o $@

$(OUT)/bench/hashtable: bench/programs/hashtable.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fno-omit-frame-pointer -pthread $< -o $@
$(OUT)/bench/hashtable-tsan: bench/programs/hashtable.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fno-omit-frame-pointer -pthread -fsanitize=thread $< -o $@

$(OUT)/bench/func_line: bench/programs/func_line.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@
$(OUT)/bench/kmark_cost: bench/programs/kmark_cost.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@
$(OUT)/bench/malloc_heavy: bench/programs/malloc_heavy.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -pthread $< -o $@
$(OUT)/bench/yield_storm: bench/programs/yield_storm.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -pthread $< -o $@

BENCH_PROGS := $(OUT)/bench/hotloop $(OUT)/bench/empty_probe $(OUT)/bench/reattach $(OUT)/bench/kdisarm \
	       $(OUT)/bench/kloop \
	       $(OUT)/bench/hashtable $(OUT)/bench/hashtable-tsan $(OUT)/bench/func_line \
	       $(OUT)/bench/ustack_cost $(OUT)/bench/malloc_heavy $(OUT)/bench/yield_storm $(OUT)/bench/kmark_cost \
	       $(OUT)/bench/prog_load
bench-programs: all scenario-programs history-programs history-tsan-programs $(BENCH_PROGS)

# Every benchmark of the kinds named, each printing its own table (docs/PERFORMANCE.md), in the
# order of their numbers; a failed one is named at the end and does not stop the others.  The
# guest sides (names ending in -steps) are run by their host scripts.
BENCH_RUN = failed=; for k in $(1); do \
		for s in $$(ls bench/$$k/*.sh | grep -v -- '-steps\.sh$$' | sort -V); do \
			echo "== $$s"; $$s $(OUT) || failed="$$failed $$s"; \
		done; \
	    done; [ -z "$$failed" ] || { echo "failed:$$failed" >&2; exit 1; }
bench: bench-programs
	@$(call BENCH_RUN,user kernel)
bench-user: bench-programs
	@$(call BENCH_RUN,user)
bench-kernel: bench-programs
	@$(call BENCH_RUN,kernel)

# Style: clang-format (.clang-format) and cppcheck over the user-space sources.
C_SOURCES = $(wildcard daemon/*.c daemon/*/*.c daemon/*/*.h cli/*.c cli/*.h include/*.h tests/unit/*.c \
		       tests/unit/*.h bench/programs/*.c)
format:
	clang-format -i $(C_SOURCES)

# Also the dependency rule (docs/DESIGN.md): no include cycle between daemon/'s subsystems.
# lint-bpf-stack: every call chain of the BPF programs within the 512 bytes that
# Debian 12's 6.1 verifier allows (newer kernels, such as this host's, count less).
# Its self-test: chains it must find over the bound, and within it (tests/lint/).
LINT_BPF_CASES := $(OUT)/tests/lint/bpf_stack_cases.bpf.o
$(LINT_BPF_CASES): tests/lint/bpf_stack_cases.bpf.c vmlinux.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
lint: $(OUT)/kcsand.bpf.o $(LINT_BPF_CASES)
	tests/lint-deps.py .
	tests/lint-length.py .
	tests/lint-paths.py .
	tests/lint-results.py .
	tests/lint-bpf-stack.py --self-test $(LINT_BPF_CASES)
	tests/lint-bpf-stack.py $(OUT)/kcsand.bpf.o
	cppcheck --quiet --std=c11 --max-configs=1 --enable=warning,performance,portability \
		-D__x86_64__ -Iinclude -Idaemon --suppress=missingIncludeSystem \
		--suppress=missingInclude --suppress=unknownMacro --inline-suppr \
		--error-exitcode=1 daemon cli

# make install [DESTDIR=/staging] [PREFIX=/usr/local]: the programs in sbin (they need
# root), man pages, bash completion, the systemd unit and the example configuration.
PREFIX	?= /usr/local
SBINDIR	:= $(PREFIX)/sbin
MANDIR	:= $(PREFIX)/share/man
COMPDIR	:= $(PREFIX)/share/bash-completion/completions
UNITDIR	:= $(PREFIX)/lib/systemd/system
DOCDIR	:= $(PREFIX)/share/doc/kcsand

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(COMPDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR)
	install -m 0755 $(OUT)/kcsand $(OUT)/kcsanctl $(DESTDIR)$(SBINDIR)/
	install -m 0644 docs/kcsand.8 docs/kcsanctl.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 docs/completion/kcsanctl $(DESTDIR)$(COMPDIR)/kcsanctl
	ln -sf kcsanctl $(DESTDIR)$(COMPDIR)/kcsand
	sed 's|@SBINDIR@|$(SBINDIR)|g' docs/kcsand.service > $(DESTDIR)$(UNITDIR)/kcsand.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/kcsand.service
	install -m 0644 docs/kcsand.conf README.md $(DESTDIR)$(DOCDIR)/
	@echo "kcsand: installed under $(DESTDIR)$(PREFIX); example configuration in $(DOCDIR)"

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/kcsand $(DESTDIR)$(SBINDIR)/kcsanctl \
		$(DESTDIR)$(MANDIR)/man8/kcsand.8 $(DESTDIR)$(MANDIR)/man8/kcsanctl.8 \
		$(DESTDIR)$(COMPDIR)/kcsanctl $(DESTDIR)$(COMPDIR)/kcsand \
		$(DESTDIR)$(UNITDIR)/kcsand.service
	rm -rf $(DESTDIR)$(DOCDIR)

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h

clean:
	rm -rf $(OUT)

include tests/tests.mk
