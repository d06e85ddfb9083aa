/* SPDX-License-Identifier: MIT */
/* ex_ctf_meta.c: prove export --to ctf: the trace's TSDL metadata, written
 * once every event class is known (ex_ctf.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex_ctf.h"

/* ---- metadata ---- */

/* Writes s as a TSDL string literal's contents. */
static void
tsdl_str(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
}

static int
by_id(const void *a, const void *b)
{
	const struct eclass *x = *(const struct eclass *const *)a;
	const struct eclass *y = *(const struct eclass *const *)b;

	return (x->id > y->id) - (x->id < y->id);
}

int
ctf_write_metadata(struct cx *c)
{
	static const uint16_t one = 1;
	struct eclass **v;
	char path[4200];
	size_t i, n = pv_map_n(&c->ex);
	unsigned k;
	FILE *f;
	int rc;

	if ((v = (struct eclass **)pv_map_values(&c->ex)) == NULL)
		return ctf_oom();
	qsort(v, n, sizeof *v, by_id);
	snprintf(path, sizeof path, "%s/metadata", c->dir);
	if ((f = fopen(path, "wx")) == NULL) {
		fprintf(stderr, "prove: export: ctf: %s: %s\n", path,
		    strerror(errno));
		free(v);
		return -1;
	}
	fprintf(f, "/* CTF 1.8 */\n\n"
	    "typealias integer { size = 8; align = 8; signed = false; } "
	    ":= uint8_t;\n"
	    "typealias integer { size = 32; align = 8; signed = false; } "
	    ":= uint32_t;\n"
	    "typealias integer { size = 32; align = 8; signed = true; } "
	    ":= int32_t;\n"
	    "typealias integer { size = 64; align = 8; signed = false; } "
	    ":= uint64_t;\n"
	    "typealias integer { size = 64; align = 8; signed = false; "
	    "base = 16; } := hex64_t;\n"
	    "typealias integer { size = 64; align = 8; signed = true; } "
	    ":= int64_t;\n"
	    "typealias floating_point { exp_dig = 11; mant_dig = 53; "
	    "align = 8; } := double_t;\n\n"
	    "trace {\n\tmajor = 1;\n\tminor = 8;\n\tbyte_order = %s;\n"
	    "\tpacket.header := struct {\n\t\tuint32_t magic;\n"
	    "\t\tuint32_t stream_id;\n\t};\n};\n\n",
	    *(const uint8_t *)&one ? "le" : "be");
	fprintf(f, "env {\n\tdomain = \"grm\";\n"
	    "\ttracer_name = \"grm prove export\";\n\tsource = \"");
	tsdl_str(f, c->x->in);
	fprintf(f, "\";\n\tepoch_ns = %" PRIu64 ";\n};\n\n", c->epoch);
	fprintf(f, "clock {\n\tname = \"grm\";\n"
	    "\tdescription = \"nanoseconds from the trace's first record%s\";\n"
	    "\tfreq = 1000000000;\n\tprecision = 0;\n"
	    "\toffset_s = %" PRIu64 ";\n\toffset = %" PRIu64 ";\n"
	    "\tabsolute = %s;\n};\n\n",
	    c->run.have_clock ? "; offset: its wall-clock time" :
	    " (the trace has no #CLOCK line: no wall-clock time)",
	    c->epoch / 1000000000u, c->epoch % 1000000000u,
	    c->run.have_clock ? "true" : "false");
	fprintf(f, "typealias integer { size = 64; align = 8; "
	    "signed = false; map = clock.grm.value; } := clk64_t;\n\n"
	    "stream {\n\tid = 0;\n"
	    "\tpacket.context := struct {\n"
	    "\t\tclk64_t timestamp_begin;\n\t\tclk64_t timestamp_end;\n"
	    "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
	    "\t\tuint64_t events_discarded;\n\t\tuint32_t node;\n"
	    "\t\tuint32_t pid;\n\t\tuint32_t tid;\n\t};\n"
	    "\tevent.header := struct {\n\t\tuint32_t id;\n"
	    "\t\tclk64_t timestamp;\n\t};\n};\n\n");
	fprintf(f, "event {\n\tname = \"grm_proc\";\n\tid = %d;\n"
	    "\tstream_id = 0;\n\tfields := struct {\n\t\tuint32_t node;\n"
	    "\t\tuint32_t pid;\n\t\tuint32_t ppid;\n"
	    "\t\tstring how;\n\t\tint32_t status;\n\t\tstring name;\n"
	    "\t};\n};\n\n", EV_PROC);
	fprintf(f, "event {\n\tname = \"grm_loss\";\n\tid = %d;\n"
	    "\tstream_id = 0;\n\tfields := struct {\n\t\tuint32_t node;\n"
	    "\t\tuint32_t pid;\n\t\tuint32_t tid;\n"
	    "\t\tuint64_t count;\n\t};\n};\n\n", EV_LOSS);
	for (i = 0; i < n; i++) {
		fprintf(f, "event {\n\tname = \"");
		tsdl_str(f, v[i]->name);
		fprintf(f, "\";\n\tid = %" PRIu32 ";\n\tstream_id = 0;\n"
		    "\tfields := struct {\n", v[i]->id);
		for (k = 0; k < v[i]->n; k++) {
			const char *t;

			switch (v[i]->type[k]) {
			case GRMTRACE_INT:
				t = "int64_t";
				break;
			case GRMTRACE_UINT:
				t = v[i]->conv[k] == 'p' || v[i]->conv[k] ==
				    'x' || v[i]->conv[k] == 'X' ? "hex64_t" :
				    "uint64_t";
				break;
			case GRMTRACE_DOUBLE:
				t = "double_t";
				break;
			default:
				t = "string";
			}
			fprintf(f, "\t\t%s f%u;\n", t, k + 1);
		}
		fprintf(f, "\t};\n};\n\n");
	}
	free(v);
	rc = ferror(f) ? -1 : 0;
	if (fclose(f) != 0 || rc != 0) {
		fprintf(stderr, "prove: export: ctf: %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

