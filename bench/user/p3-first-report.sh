#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P3: time to the first report of each test scenario (tests/scenarios, the
# demo) at the default parameters, overhead budget included, from the
# scenario runner's own timing (kcsanctl start to the first "BUG: KCSAN:").
# Usage: bench/user/p3-first-report.sh [BUILD_DIR]   (root; make bench-programs builds what it needs)
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p3 "${1:-}" root
echo "P3: time to the first report of each scenario, default parameters"
printf '  %-32s %s\n' scenario "first report"
tests/run-scenarios.sh "$B" 2>&1 | awk '
	/^ok .*first report after/ {
		match($0, /first report after [0-9.]+ s/)
		t = substr($0, RSTART + 19, RLENGTH - 21)
		printf "  %-32s %6.2f s\n", $2, t; n++; sum += t; if (t > max) max = t; next
	}
	/^ok .*no report/ { printf "  %-32s %s\n", $2, "race-free: no report (expected)"; next }
	/^FAIL/ { sub(/:.*/, "", $2); printf "  %-32s %s\n", $2, "FAILED (see tests/run-scenarios.sh)"; f++ }
	END { if (n) printf "  %d racy scenarios: mean %.2f s, max %.2f s; %d failed\n", n, sum / n, max, f }'
