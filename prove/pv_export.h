/* SPDX-License-Identifier: MIT */
/* pv_export.h: prove export: a trace written in another tool's format. */
#ifndef GRM_PV_EXPORT_H
#define GRM_PV_EXPORT_H

/*
 * One export run.  Each format is a function in a file of its own
 * (prove/ex_FORMAT.c) listed in pv_export.c's table.  It reads the trace
 * at in through the public reader API only (pv_open, as many passes as it
 * needs), streams (its memory grows with definitions, hosts, processes,
 * threads and messages in flight, never with the number of records),
 * writes out (a file or a folder, as the format is) and returns prove's
 * exit status: 0, or 1 after saying on stderr what went wrong, with
 * nothing left at out.
 */
struct pv_export {
	const char	*in;		/* the trace; "-" is standard input */
	const char	*out;		/* where to write */
	int		force;		/* --force: out may be replaced */
	int		quiet;		/* -q: no progress on stderr */
};

struct pv_exporter {
	const char	*name;		/* the --to word */
	const char	*what;		/* a line for prove export --help */
	int		(*run)(const struct pv_export *x);
};

/* The formats (prove/ex_FORMAT.c). */
int ex_json(const struct pv_export *x);	/* Trace Event JSON */
int ex_paje(const struct pv_export *x);	/* Paje */

/* prove export --to FORMAT FILE -o OUT: argv[0] is "export". */
int pv_export(int argc, char **argv);

/* ---- writing OUT safely (a file), and progress ---- */

/*
 * Creates a new temporary file beside x->out to write the export to, its
 * path (allocated) in *tmp.  Refuses if x->out exists and x->force is not
 * set.  Returns the stream, or NULL after a message naming the file.
 */
FILE *pv_export_create(const struct pv_export *x, char **tmp);
/*
 * Closes f and, if ok, renames tmp to x->out; else, or if writing,
 * closing or renaming failed (said on stderr), removes tmp.  Frees tmp.
 * Returns 0, or -1 (nothing is then left at x->out).
 */
int pv_export_finish(const struct pv_export *x, FILE *f, char *tmp, int ok);
/*
 * Unless x->quiet, a progress line on stderr at most once a second
 * ("prove: export: json: pass 2: 1200000 of 5000000 records"; total 0:
 * not known, "pass 1: 1200000 records"), and a last one when done ==
 * total if a line was written.
 */
void pv_export_progress(const struct pv_export *x, const char *fmt,
			int pass, uint64_t done, uint64_t total);

#endif
