// SPDX-License-Identifier: GPL-2.0-only
/*
 * Libraries as the dynamic linker finds them (history_int.h).  Reading
 * /proc/PID/maps would be the truth, but the history probes a target
 * before its first instruction, when ld.so has mapped nothing yet; so the
 * same ld.so is asked, in its list mode (what ldd does), which resolves
 * and maps every library without running any of their code.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "history_int.h"
#include "sites/elf_symbols.h"
#include "util/print.h"

/* prog's PT_INTERP into buf; -ENOENT when it has none (static). */
static int read_interp(const char *prog, char *buf, size_t len)
{
	struct elf_file ef;
	size_t nph = 0;
	int err = elf_file__open(prog, ELF_C_READ, &ef);

	if (err)
		return err;
	err = -ENOENT;
	if (!elf_getphdrnum(ef.elf, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(ef.elf, (int)i, &ph) || ph.p_type != PT_INTERP ||
			    !ph.p_filesz || ph.p_filesz >= len)
				continue;
			if (pread(ef.fd, buf, ph.p_filesz, (off_t)ph.p_offset) ==
			    (ssize_t)ph.p_filesz) {
				buf[ph.p_filesz - 1] = '\0';
				err = 0;
			}
			break;
		}
	}
	elf_file__close(&ef);
	return err;
}

/* One line of the list: "\tname => /path (0x...)", "\t/path (0x...)" or "\tname => not found". */
static void parse_line(const char *prog, char *line, char **names, char **paths, size_t max,
		       size_t *n)
{
	char *name = line + strspn(line, " \t"), *arrow = strstr(name, " => "), *path, *end;
	char *real;

	if (arrow) {
		*arrow = '\0';
		path = arrow + 4;
	} else {
		path = name;
	}
	if (arrow && !strncmp(path, "not found", 9)) {
		pr_warn("history: the dynamic linker finds no %s for %s: its sync functions are "
			"not probed\n", name, prog);
		return;
	}
	end = strstr(path, " (");
	if (end)
		*end = '\0';
	if (path[0] != '/' || *n >= max || !(real = realpath(path, NULL)))
		return;
	if (!arrow)
		name = strrchr(path, '/') + 1;
	names[*n] = strdup(name);
	paths[*n] = real;
	if (!names[*n]) {
		free(real);
		return;
	}
	(*n)++;
}

/* Run interp --list prog; its output on a pipe, read into the lists. */
static int run_list(const char *interp, const char *prog, char **names, char **paths, size_t max,
		    size_t *n)
{
	char line[PATH_MAX + 256];
	int pfd[2], status;
	pid_t pid;
	FILE *in;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (!pid) {
		dup2(pfd[1], STDOUT_FILENO);
		execl(interp, interp, "--list", prog, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	in = fdopen(pfd[0], "r");
	if (!in) {
		close(pfd[0]);
	} else {
		while (fgets(line, sizeof(line), in)) {
			line[strcspn(line, "\n")] = '\0';
			parse_line(prog, line, names, paths, max, n);
		}
		fclose(in);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) == 127)
		return -ECHILD;
	return 0;
}

int history_ldso_list(const char *prog, char **names, char **paths, size_t max, size_t *n)
{
	char interp[PATH_MAX];
	int err;

	*n = 0;
	err = read_interp(prog, interp, sizeof(interp));
	if (err)
		return err;
	err = run_list(interp, prog, names, paths, max, n);
	if (err) {
		for (size_t i = 0; i < *n; i++) {
			free(names[i]);
			free(paths[i]);
		}
		*n = 0;
		pr_warn("history: cannot run %s --list %s: libraries resolved by kcsand's own "
			"search\n", interp, prog);
	}
	return err;
}
