/* SPDX-License-Identifier: MIT */
/* fuzz_sum.c: libFuzzer target for the summary sidecar's parser
 * (trace/tr_sum.c, sum_parse: doc/formats.md section 6).  The input is a
 * whole sidecar file; a file parsed must hold what its header says:
 * buckets, rows and states in range, every cell's state one of them. */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "tr_sum.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tr_sum s;
	char err[256];
	size_t i;
	uint32_t b;

	sum_init(&s);
	if (sum_parse(&s, data, size, err, sizeof err) != 0) {
		CHECK(err[0] != '\0');
		CHECK(s.nrow == 0 && s.row == NULL && s.state == NULL);
		return 0;
	}
	CHECK(s.nb <= SUM_NB && s.shift >= SUM_SHIFT0 && s.shift <= 63);
	CHECK(s.tlast >= s.t0);
	for (i = 0; i < s.nrow; i++)
		for (b = 0; b < s.nb; b++) {
			CHECK(s.row[i].c[b].st <= s.nstate);
			sink += s.row[i].c[b].n + s.row[i].c[b].ns;
		}
	for (i = 0; i < s.nstate; i++)
		sink += (uint64_t)s.state[i];
	for (b = 0; b < s.nb; b++)
		sink += s.off[b];
	sum_free(&s);
	return 0;
}
