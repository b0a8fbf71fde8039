/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel targets: functions chosen by spec from kallsyms, their live code
 * read from /proc/kcore (it reflects alternatives, static keys and ftrace
 * patching), decoded into sites exactly as in user mode.
 *
 * Specs:  GLOB          kernel or module functions whose names match
 *         module:NAME   every function of a loaded module
 *         FUNC+0xOFF    the one access instruction at that offset
 *         !GLOB         leave matching functions out (of the other specs)
 */
#ifndef KCSAND_KTARGET_H
#define KCSAND_KTARGET_H

#include "decode.h"
#include "ksyms.h"

/*
 * Build a target object named "[kernel]" whose funcs are the matched
 * functions and whose sites' vaddr (and file_off) are kernel addresses.
 * Functions on the kprobe blacklist are left out and counted in
 * *blacklisted.  Returns 0 or a negative errno with a message.
 */
int ktarget__build(struct ksyms *ks, const char *const *specs, size_t nr_specs,
		   const struct decode_opts *opts, struct target_obj **out, size_t *blacklisted);

#endif
