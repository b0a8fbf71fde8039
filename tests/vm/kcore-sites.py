#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""An independent count of kernel functions' memory-access sites, then the probe command.

Used as KCSAN_VM_PROBE_CMD's first words in the guest:
    kcore-sites.py FUNC[:SIZE][,FUNC[:SIZE]...] -- PROBE_CMD... [--probe SPEC... -- CMD...]
For each FUNC it reads the function's bytes from /proc/kcore, before any
probe is attached: SIZE bytes when given (the st_size of its symbol in the
vmlinux, read on the host), else over its kallsyms extent (up to the next
symbol).  It disassembles them with objdump, takes the function to end at
its last instruction that is not int3 or nop padding, and prints on stderr
the runtime address of _text (`kcore-sites: _text 0xADDR`: with the
vmlinux's own, the KASLR slide), then one line
per memory-access instruction kcsand should probe:
    kcore-sites: FUNC+0xOFF [rbp]
and how many int3s lie inside the function (`ret; int3...` patched from
`jmp __x86_return_thunk`, with code after them), saves the bytes to
$KCSAN_VM_OUT/kcore-FUNC.bin, then execs PROBE_CMD with the rest of the
arguments.  It shares nothing with
kcsand's decoder (Zydis, reachability of branch targets): the two counts
are compared by tests/vm/core-kernel.sh.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

# Instructions whose memory operand is no data access kcsand probes.
NON_ACCESS = re.compile(r'^(lea|nop|prefetch|clflush|clwb|cldemote|bnd)')
# What kcsand leaves out as unencodable: string instructions (es:[rdi], ds:[rsi]),
# bit-string instructions with a register bit offset, the x87/SSE state saves.
UNENCODABLE = re.compile(r'(es:\[rdi\]|ds:\[rsi\])|^bt[crs]?\s+\w+ PTR \[[^]]*\],[a-z]|'
                         r'^f?x(save|rstor)')
PADDING = re.compile(r'^(int3|.*nop|xchg\s+ax,ax)')


def kallsyms_extent(names):
    addrs, want = set(), {}
    with open('/proc/kallsyms') as f:
        for line in f:
            a, _, name = line.split()[:3]
            a = int(a, 16)
            if name == '_text' and len(line.split()) == 3:
                print('kcore-sites: _text 0x%x' % a, file=sys.stderr)
            addrs.add(a)
            if name in names and name not in want:
                want[name] = a
    addrs = sorted(addrs)
    out = {}
    for name, a in want.items():
        nxt = [x for x in addrs if x > a]
        out[name] = (a, (nxt[0] if nxt else a + 4096) - a)
    return out


def kcore_read(addr, size):
    with open('/proc/kcore', 'rb') as f:
        hdr = f.read(64)
        phoff, = struct.unpack_from('<Q', hdr, 32)
        phentsize, phnum = struct.unpack_from('<HH', hdr, 54)
        f.seek(phoff)
        phdrs = f.read(phentsize * phnum)
        for i in range(phnum):
            p_type, _, p_off, p_vaddr, _, p_filesz = struct.unpack_from('<IIQQQQ', phdrs,
                                                                       i * phentsize)
            if p_type == 1 and p_vaddr <= addr and addr + size <= p_vaddr + p_filesz:
                f.seek(p_off + addr - p_vaddr)
                return f.read(size)
    raise SystemExit('kcore-sites: 0x%x: not in /proc/kcore' % addr)


def sites(code):
    with tempfile.NamedTemporaryFile(suffix='.bin') as t:
        t.write(code)
        t.flush()
        dis = subprocess.run(['objdump', '-D', '-b', 'binary', '-mi386:x86-64', '-Mintel',
                              '--no-show-raw-insn', t.name],
                             capture_output=True, text=True, check=True).stdout
    insns = []
    for line in dis.splitlines():
        m = re.match(r'^\s*([0-9a-f]+):\s+(\S.*)$', line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2).strip()))
    while insns and PADDING.match(insns[-1][1]):
        insns.pop()
    # int3s inside the function: a patched `ret; int3...` with code after it.
    yield None, sum(1 for _, t in insns if t == 'int3')
    for off, text in insns:
        ops = text.split(None, 1)[1] if ' ' in text else ''
        if NON_ACCESS.match(text) or UNENCODABLE.search(text):
            continue
        if 'PTR' not in ops and '[' not in ops:
            continue
        if 'gs:' in ops or '[rsp' in ops:
            continue
        yield off, '[rbp' in ops


def main():
    if len(sys.argv) < 4 or '--' not in sys.argv:
        raise SystemExit('usage: kcore-sites.py FUNC[,FUNC...] -- PROBE_CMD...')
    cmd = sys.argv[sys.argv.index('--') + 1:]
    sizes = dict((w.split(':') + [None])[:2] for w in sys.argv[1].split(','))
    names = list(sizes)
    ext = kallsyms_extent(set(names))
    for name in names:
        if name not in ext:
            print('kcore-sites: %s: not in /proc/kallsyms' % name, file=sys.stderr)
            continue
        addr, size = ext[name]
        if sizes[name] is not None:
            # st_size from the vmlinux: never past the next symbol, or it is another build.
            if int(sizes[name], 0) > size:
                print('kcore-sites: %s: size %s is past the next symbol (0x%x)' %
                      (name, sizes[name], size), file=sys.stderr)
                continue
            size = int(sizes[name], 0)
        code = kcore_read(addr, size)
        # The bytes, for decoding them again on the host (kcsan-vm's run directory).
        if os.environ.get('KCSAN_VM_OUT'):
            with open(os.path.join(os.environ['KCSAN_VM_OUT'], 'kcore-%s.bin' % name), 'wb') as f:
                f.write(code)
        for off, rbp in sites(code):
            if off is None:
                print('kcore-sites: %s inner int3 %d' % (name, rbp), file=sys.stderr)
                continue
            print('kcore-sites: %s+0x%x%s' % (name, off, ' rbp' if rbp else ''), file=sys.stderr)
    sys.stderr.flush()
    os.execvp(cmd[0], cmd)


main()
