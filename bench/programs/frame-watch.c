// SPDX-License-Identifier: GPL-2.0-only
/*
 * P19's guest program: a kernel data breakpoint where CPU 0's next
 * interrupt pushes its frame.
 *
 * CPU 0's idle task (init_task, on init_stack) waits in native_safe_halt:
 * the slot holding the return address of the call to it is the stack
 * pointer at the hlt, found in a copy of init_stack read from
 * /proc/kcore while this program runs on CPU 1.  An interrupt taken at the
 * hlt pushes its 40-byte frame below that stack pointer rounded down to 16
 * (x86-64, no stack switch at CPL 0).  With "frame" the breakpoint (write,
 * 8 bytes) covers the frame's first push; with "ret" it covers the
 * return-address slot itself, which only ordinary instructions write (the
 * call before each hlt): the control.  Then it sleeps SECS on CPU 1 and
 * closes the event (from CPU 1: an IPI to CPU 0).
 *
 * On hardware a data breakpoint hit by an interrupt's own pushes is a #DB
 * after the delivery, which the kernel's handler takes like any other.
 * Whether the emulator under test does the same is what this asks.
 *
 * Usage: frame-watch frame|ret SECS   (root; nokaslr is not needed)
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#define STACK_BYTES	(16 * 1024)

/* kallsyms' address of NAME, 0 when absent. */
static uint64_t ksym(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "re");
	uint64_t found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name))
			found = a;
	fclose(f);
	return found;
}

/* LEN bytes of kernel memory at ADDR from /proc/kcore; -errno. */
static int kread(uint64_t addr, void *buf, size_t len)
{
	Elf64_Ehdr eh;
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC), err = -ENOENT;

	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh)) {
		close(fd);
		return -EIO;
	}
	for (int i = 0; i < eh.e_phnum && err == -ENOENT; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) != sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr + len > ph.p_vaddr + ph.p_filesz)
			continue;
		err = pread(fd, buf, len, ph.p_offset + (addr - ph.p_vaddr)) == (ssize_t)len ? 0 : -EIO;
	}
	close(fd);
	return err;
}

/*
 * Is v the return address of a call to the halt (halt: native_safe_halt)?
 * The call before it is direct (e8 rel32, as the boot patches paravirt
 * calls) or through a pointer that holds the halt (ff 15 disp32).  Whose
 * call it is (default_idle, or amd_e400_idle as under QEMU's "max" CPU)
 * does not matter.
 */
static int calls_halt(uint64_t v, uint64_t halt)
{
	uint8_t c[6];
	int32_t rel;
	uint64_t ptr = 0;

	if (v >> 32 != 0xffffffffull || kread(v - 6, c, sizeof(c)))
		return 0;
	memcpy(&rel, c + 2, 4);
	if (c[1] == 0xe8 && v + (int64_t)rel == halt)
		return 1;
	return c[0] == 0xff && c[1] == 0x15 && !kread(v + (int64_t)rel, &ptr, 8) && ptr == halt;
}

/* The address in init_stack holding the halt's return address (the deepest); 0: none. */
static uint64_t find_slot(uint64_t stack, uint64_t halt)
{
	static uint64_t words[STACK_BYTES / 8];

	if (kread(stack, words, sizeof(words)))
		return 0;
	for (size_t i = 0; i < STACK_BYTES / 8; i++)
		if (words[i] >> 31 == 0x1ffffffffull && calls_halt(words[i], halt))
			return stack + i * 8;
	fprintf(stderr, "frame-watch: no return address of a call to the halt on init_stack\n");
	return 0;
}

static int open_watch(uint64_t addr)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = addr,
		.bp_len = HW_BREAKPOINT_LEN_8,
		.sample_period = 1,
		.exclude_user = 1,
	};

	return (int)syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
}

int main(int argc, char **argv)
{
	uint64_t stack = ksym("init_stack"), halt = ksym("native_safe_halt"), slot, at, n = 0;
	cpu_set_t one;
	int fd;

	if (argc != 3 || (strcmp(argv[1], "frame") && strcmp(argv[1], "ret"))) {
		fprintf(stderr, "usage: frame-watch frame|ret SECS\n");
		return 2;
	}
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		perror("frame-watch: CPU 1");
	if (!stack || !halt) {
		fprintf(stderr, "frame-watch: no init_stack or native_safe_halt in kallsyms\n");
		return 2;
	}
	/* CPU 0 idles meanwhile: its frame is there when the copy is taken. */
	usleep(200000);
	slot = find_slot(stack, halt);
	if (!slot)
		return 2;
	at = !strcmp(argv[1], "frame") ? (slot & ~0xfull) - 8 : slot;
	fd = open_watch(at);
	if (fd < 0) {
		perror("frame-watch: perf_event_open");
		return 2;
	}
	printf("frame-watch: %s: CPU 0's hlt at stack 0x%llx, watching 0x%llx for %s s\n",
	       argv[1], (unsigned long long)slot, (unsigned long long)at, argv[2]);
	fflush(stdout);
	sleep((unsigned int)atoi(argv[2]));
	if (read(fd, &n, sizeof(n)) != sizeof(n))
		n = 0;
	printf("frame-watch: %llu writes trapped; closing (an IPI to CPU 0)\n", (unsigned long long)n);
	fflush(stdout);
	close(fd);
	printf("frame-watch: closed\n");
	return 0;
}
