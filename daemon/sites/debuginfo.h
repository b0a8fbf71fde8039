/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Separate debug files and functions without symbols, shared by decoding
 * (target_obj.c), marking (mark/) and symbolization (report/) so that the
 * three agree on which file describes an object and on what a function
 * with no symbol is called.
 *
 * Debug files are found by libdwfl's own search, where the toolchain
 * looks: the build-id tree (ROOT/.build-id/xx/yyyy.debug), .gnu_debuglink
 * beside the file, in its .debug/ and under ROOT, then debuginfod when
 * DEBUGINFOD_URLS is set.  ROOT is /usr/lib/debug, or $KCSAND_DEBUG_ROOT:
 * tests install debug files in a directory of their own.
 */
#ifndef KCSAND_DEBUGINFO_H
#define KCSAND_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

/* Callbacks for an offline libdwfl session that look for debug files as above. */
const Dwfl_Callbacks *debuginfo__offline_callbacks(void);

/*
 * The name of the function at link-time address vaddr of the object at
 * path when no symbol names it: "BASE@0xVADDR", BASE the file name of the
 * path with symlinks resolved (as /proc/PID/maps shows it), so the name is
 * the same in every run and in both the sites and the reports.
 */
int debuginfo__anon_name(const char *path, uint64_t vaddr, char *buf, size_t len);

/*
 * Read the DWARF sections of the ELF file at path (.debug_*) into the page
 * cache, in large sequential reads, once per file in a process.  Over a
 * network file system (the test guest's 9p) libdw's page faults on the
 * mapped file fetch a page or a readahead window at a time: marking a
 * subsystem cold from a vmlinux's DWARF spent most of its time there
 * (bench/kernel/p15-kmark-cost.sh).  The bytes read; 0 when the file cannot
 * be read (then nothing is lost but the hint).
 */
uint64_t debuginfo__prefetch(const char *path);

#endif
