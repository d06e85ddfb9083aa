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

/* prove export --to FORMAT FILE -o OUT: argv[0] is "export". */
int pv_export(int argc, char **argv);

/* The formats (prove/ex_*.c). */
int ex_otf2(const struct pv_export *x);	/* if built with OTF2 */
int ex_ctf(const struct pv_export *x);

/* ---- folder-shaped outputs (otf2, ctf) ----
 * An export writes into a new folder next to x->out (tmp, of n bytes, gets
 * its name: OUT.tmp-XXXXXX), then moves it to x->out.  Each returns 0, or
 * -1 after saying on stderr why. */
/* Makes the temporary folder; refused if x->out exists and not --force. */
int pv_export_dir_open(const struct pv_export *x, char *tmp, size_t n);
/* Moves tmp to x->out (with --force an existing x->out is removed, once
 * the new one is in place); on failure tmp is removed. */
int pv_export_dir_commit(const struct pv_export *x, const char *tmp);
/* Removes tmp and everything in it (after a failure). */
void pv_export_dir_abort(const char *tmp);

#endif
