/* SPDX-License-Identifier: MIT */
/* ex_ctf.c: prove export --to ctf: the trace as a CTF 1.8 trace. */
#include <stdio.h>

#include "pv.h"
#include "pv_export.h"

int
ex_ctf(const struct pv_export *x)
{
	(void)x;
	fprintf(stderr, "prove: export: ctf: not yet\n");
	return 1;
}
