// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a producer fills a plain buffer and writes a token into a
 * pipe; the consumer reads the token, then reads the buffer, and writes a
 * token back through a second pipe before the producer fills it again.
 * The kernel orders each write before the read that returns its bytes.
 * The two ends of a pipe are different descriptors and different files:
 * what they share is the pipe.
 *
 * Expected: race-free
 */
#include "handoff.h"

int main(void)
{
	return handoff_run_pipes(suite_rounds(20000));
}
