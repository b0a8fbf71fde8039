# SPDX-License-Identifier: GPL-2.0-only
# Test programs and the `make check` entry point; included from the top Makefile.

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/unit/%,$(UNIT_SRCS))

$(OUT)/tests/unit/%: tests/unit/%.c tests/unit/test.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $< $(LIB) $(LDLIBS) -o $@

unit: $(UNIT_BINS)
	@fail=0; for t in $(UNIT_BINS); do $$t || fail=1; done; exit $$fail
