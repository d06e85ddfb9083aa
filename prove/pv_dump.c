/* SPDX-License-Identifier: MIT */
/* pv_dump.c: prove dump, every record of a trace one a line; %p fields in
 * hexadecimal. */
#include <inttypes.h>
#include <stdio.h>

#include "pv.h"

void
pv_dump_line(const struct grmtrace_ev *ev)
{
	unsigned i;

	printf("%" PRIu64 " %" PRIu32 " %" PRIu32 " %" PRIu32
	    " %" PRId32, ev->ts, ev->node, ev->pid, ev->tid, ev->eid);
	for (i = 0; i < ev->n; i++) {
		putchar(' ');
		if (ev->def->conv[i] == 'p' &&
		    ev->f[i].type == GRMTRACE_UINT)
			printf("0x%" PRIx64, ev->f[i].v.u);
		else
			grmtrace_fput_field(stdout, &ev->f[i]);
	}
	putchar('\n');
}

int
pv_dump(const char *path)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	int rc;

	if ((r = pv_open(path)) == NULL)
		return 1;
	while ((rc = grmtrace_next(r, &ev)) == 1)
		pv_dump_line(ev);
	if (rc < 0)
		return pv_fail(path, r);
	pv_close(path, r);
	return pv_flush();
}
