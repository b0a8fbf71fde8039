/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A whole text file read into memory, one way: the configuration, the
 * marks file and the source files the marking reads.  The caller opens
 * it, each by its own rule: a FIFO from a shell's <(...) is a fine marks
 * or configuration file, while one in a source tree would block the
 * marking.
 */
#ifndef KCSAND_FILE_H
#define KCSAND_FILE_H

#include <stddef.h>

/*
 * Reads fd to its end into *out (malloc'd, NUL-terminated), its length in
 * *len.  0; -EFBIG past max bytes, -EINVAL when it holds a NUL byte (no
 * text), -ENOMEM, or read's -errno; *out is untouched then.
 */
int file__read_text(int fd, size_t max, char **out, size_t *len);

/*
 * Where kcsand keeps what it can learn again but slowly (the kernel's site
 * sets, marking verdicts): $KCSAND_CACHE_DIR, or /var/cache/kcsand.
 */
const char *file__cache_dir(void);

#endif
