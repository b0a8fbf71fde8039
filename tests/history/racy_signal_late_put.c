// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: as free_signal_handoff.c, but the main thread puts the value after
 * pthread_kill(): nothing orders that put with the handler's take, which
 * may run before or after it.  The signal's release must not cover what
 * the sender does after sending it.
 *
 * Expected: "data-race in put / take"
 */
#include "signal_handoff.h"

int main(void)
{
	return signal_handoff_run(2000, 1);
}
