/* pv_dump.c: prove dump, every record of a trace one a line; %p fields in
 * hexadecimal. */
#include <inttypes.h>
#include <stdio.h>

#include "pv.h"

int
pv_dump(const char *path)
{
	struct tape_ev ev;
	struct tape_r *r;
	unsigned i;
	int rc;

	if ((r = pv_open(path)) == NULL)
		return 1;
	while ((rc = tape_next(r, &ev)) == 1) {
		printf("%" PRIu64 " %" PRIu32 " %" PRIu32 " %" PRIu32
		    " %" PRId32, ev.ts, ev.node, ev.pid, ev.tid, ev.eid);
		for (i = 0; i < ev.n; i++) {
			putchar(' ');
			if (ev.def->fmt.va[i] == REC_VA_VOIDP &&
			    ev.f[i].kind == REC_K_UINT)
				printf("0x%" PRIx64, ev.f[i].v.u);
			else
				tape_put_field(stdout, &ev.f[i]);
		}
		putchar('\n');
	}
	if (rc < 0)
		return pv_fail(path, r);
	tape_rclose(r);
	return pv_flush();
}
