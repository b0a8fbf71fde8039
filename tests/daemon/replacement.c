// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stands in for a rebuilt target in tests/daemon-faults.sh: another
 * program copied or renamed over a probed one.  It sleeps for argv[1]
 * seconds (default 30) so that the test can compare its code in memory
 * with the file: a uprobe left on stale offsets would show as int3 bytes.
 */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	sleep(argc > 1 ? atoi(argv[1]) : 30);
	return 0;
}
