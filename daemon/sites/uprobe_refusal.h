/* SPDX-License-Identifier: GPL-2.0-only */
/* Which instructions x86 uprobes refuse (uprobe_refusal.c). */
#ifndef KCSAND_SITES_UPROBE_REFUSAL_H
#define KCSAND_SITES_UPROBE_REFUSAL_H

#include <stdbool.h>
#include <stdint.h>

/* What the kernel's check looks at: which table the opcode byte goes to. */
enum uprobe_insn_kind {
	UPROBE_INSN_ONE_BYTE,	/* legacy, one opcode byte */
	UPROBE_INSN_TWO_BYTE,	/* legacy 0f xx */
	UPROBE_INSN_THREE_BYTE,	/* legacy 0f 38 xx, 0f 3a xx: taken */
	UPROBE_INSN_VEX,	/* VEX, EVEX, XOP: the opcode byte against the 1-byte table */
};

/* Whether a uprobe on an instruction of this kind and opcode byte is refused. */
bool uprobe_refusal__refuses(enum uprobe_insn_kind kind, uint8_t opcode);

#endif
