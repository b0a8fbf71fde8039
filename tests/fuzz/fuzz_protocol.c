// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the control socket's request parser, fed the way
 * the daemon feeds it: the input is split into lines and each line is
 * parsed on its own.  Checks what the executor relies on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sites/kernel_spec.h"
#include "engine/params.h"
#include "service/protocol.h"
#include "hw/watch_spec.h"

static struct ctl_request req;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	struct watch_spec ws;
	char err[256];

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end;

		err[0] = '\0';
		if (ctl_request__parse(p, eol - p, &req, err, sizeof(err))) {
			if (!err[0])
				abort();	/* an error always says why */
		} else {
			if (req.argc < 0 || req.argc > CTL_MAX_ARGS)
				abort();
			for (int i = 0; i < req.argc; i++)
				if (!req.argv[i] || !*req.argv[i])
					abort();
			if (req.op == CTL_SET && (!req.param || req.value < req.param->min ||
						  req.value > req.param->max))
				abort();
			if (req.op == CTL_PROBE_ADD_USER && req.binary[0] != '/')
				abort();
			if (req.op == CTL_PROBE_ADD_KERNEL &&
			    (!req.argc || !kernel_specs__select(req.argv, req.argc)))
				abort();
			/* A watch the executor arms: a valid SPEC, one mode, a bounded duration. */
			if (req.op == CTL_WATCH_ADD &&
			    (!req.watch.spec || watch_spec__parse(req.watch.spec, &ws) ||
			     (req.watch.kernel && req.watch.pid) || req.watch.pid < 0 ||
			     req.watch.duration_s > WATCH_MAX_DURATION))
				abort();
			for (int i = 0; req.op == CTL_PROBE_ADD_KERNEL && i < req.argc; i++)
				if (kernel_spec__invalid(req.argv[i]))
					abort();
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}
