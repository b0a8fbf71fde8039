// SPDX-License-Identifier: GPL-2.0-only
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/debuginfod.h>
#include <gelf.h>
#include <sys/stat.h>

#include "debuginfo.h"
#include "util/print.h"

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  GElf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name);

static char *debuginfo_path;
static Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};
static pthread_once_t path_once = PTHREAD_ONCE_INIT;

/*
 * libdwfl's path: "" is the file's own directory, ".debug" a folder of it,
 * an absolute entry a root searched by build-id and by the file's path.
 * This is elfutils' default with the root replaced.
 */
static void path_init(void)
{
	const char *root = getenv("KCSAND_DEBUG_ROOT");
	static char buf[PATH_MAX + 16];

	if (!root || !*root)
		root = "/usr/lib/debug";
	snprintf(buf, sizeof(buf), ":.debug:%s", root);
	debuginfo_path = buf;
}

/*
 * libdebuginfod, opened on the first lookup with DEBUGINFOD_URLS set, as
 * libdw opens it: a run that never asks a server needs no libdebuginfod1
 * installed (Debian's libdw1 does not depend on it either), and one that
 * asks without it gets the local files and a warning.
 */
static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *client, const unsigned char *build_id,
			      int build_id_len, char **path);
	void (*end)(debuginfod_client *client);
} debuginfod;
static pthread_once_t debuginfod_once = PTHREAD_ONCE_INIT;

static void debuginfod_open(void)
{
	void *lib = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (!lib) {
		pr_warn("DEBUGINFOD_URLS is set but libdebuginfod cannot be loaded: %s "
			"(install libdebuginfod1)\n", dlerror());
		return;
	}
	debuginfod.begin = dlsym(lib, "debuginfod_begin");
	debuginfod.find_debuginfo = dlsym(lib, "debuginfod_find_debuginfo");
	debuginfod.end = dlsym(lib, "debuginfod_end");
	if (!debuginfod.begin || !debuginfod.find_debuginfo || !debuginfod.end) {
		pr_warn("libdebuginfod.so.1 lacks debuginfod_find_debuginfo()\n");
		debuginfod.begin = NULL;
	}
}

/*
 * The path of mod's debug file in debuginfod's cache, fetched if it is not
 * there yet, as a malloc'd string, or NULL.  A client per lookup: the
 * engine and the service's threads may look up at once, and a client is
 * not to be shared between threads.  A server that is down fails the
 * lookup at once; one that does not answer, after DEBUGINFOD_TIMEOUT.
 */
static char *debuginfod_path(Dwfl_Module *mod)
{
	const unsigned char *id;
	debuginfod_client *client;
	char *path = NULL;
	GElf_Addr vaddr;
	int len, fd;

	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (len <= 0)
		return NULL;
	pthread_once(&debuginfod_once, debuginfod_open);
	if (!debuginfod.begin)
		return NULL;
	client = debuginfod.begin();
	if (!client)
		return NULL;
	fd = debuginfod.find_debuginfo(client, id, len, &path);
	debuginfod.end(client);
	if (fd < 0)
		return NULL;
	close(fd);
	return path;
}

/*
 * libdwfl's own search, then debuginfod by our hand.  libdwfl asks
 * debuginfod itself when DEBUGINFOD_URLS is set, but elfutils 0.188 gives
 * back only the descriptor of what it fetched, not its path: the sites'
 * functions (target_obj.c) read the debug file's .symtab by that path,
 * and without it fell back to .eh_frame while the reports had the names.
 * A second lookup of the same build-id is a hit in debuginfod's cache
 * (a miss is cached too), so asking again costs no second transfer.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  GElf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink_file, debuglink_crc,
					      debuginfo_file_name);
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path;

	if (*debuginfo_file_name || !urls || !*urls)
		return fd;
	path = debuginfod_path(mod);
	if (!path)
		return fd;
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(path);
		return -1;
	}
	*debuginfo_file_name = path;
	return fd;
}

const Dwfl_Callbacks *debuginfo__offline_callbacks(void)
{
	pthread_once(&path_once, path_init);
	return &offline_callbacks;
}

int debuginfo__anon_name(const char *path, uint64_t vaddr, char *buf, size_t len)
{
	char *real = realpath(path, NULL);
	const char *use = real ? real : path, *base = strrchr(use, '/');
	int n = snprintf(buf, len, "%s@0x%" PRIx64, base ? base + 1 : use, vaddr);

	free(real);
	return n;
}

/* Read [off, off + len) of fd with buf (size bytes) as scratch; the bytes read. */
static uint64_t read_range(int fd, uint64_t off, uint64_t len, char *buf, size_t size)
{
	uint64_t done = 0;

	while (done < len) {
		size_t want = len - done < size ? len - done : size;
		ssize_t n = pread(fd, buf, want, off + done);

		if (n <= 0)
			break;
		done += n;
	}
	return done;
}

uint64_t debuginfo__prefetch(const char *path)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static dev_t last_dev;
	static ino_t last_ino;
	const size_t size = 4 << 20;
	uint64_t total = 0;
	Elf_Scn *scn = NULL;
	struct stat st;
	size_t shstrndx;
	char *buf = NULL;
	Elf *elf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st))
		goto out;
	pthread_mutex_lock(&lock);
	if (st.st_dev == last_dev && st.st_ino == last_ino) {
		pthread_mutex_unlock(&lock);
		goto out;
	}
	last_dev = st.st_dev;
	last_ino = st.st_ino;
	pthread_mutex_unlock(&lock);
	buf = malloc(size);
	elf = buf && elf_version(EV_CURRENT) != EV_NONE ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strncmp(name, ".debug_", 7))
			total += read_range(fd, sh.sh_offset, sh.sh_size, buf, size);
	}
	pr_debug("%s: %" PRIu64 " bytes of DWARF read ahead\n", path, total);
out:
	elf_end(elf);
	free(buf);
	if (fd >= 0)
		close(fd);
	return total;
}
