// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: the main thread puts a value, then sends a worker SIGUSR1
 * (pthread_kill); the worker's handler takes it.  The signal orders the put
 * before the handler; the handler's eventfd acknowledgement orders the take
 * before the next put.  A detector that does not see a signal's sending as
 * a release and its delivery as an acquire reports put / take.
 *
 * Expected: race-free
 */
#include "signal_handoff.h"

int main(void)
{
	return signal_handoff_run(5000, 0);
}
