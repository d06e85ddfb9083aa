/* SPDX-License-Identifier: MIT */
/* pv_export.h: prove export: a trace written in another tool's format. */
#ifndef GRM_PV_EXPORT_H
#define GRM_PV_EXPORT_H

#include <stdint.h>
#include <time.h>

#include <grm/trace.h>

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

/* ---- passes over the trace (otf2, ctf) ---- */

/* Opens x->in for a pass: pv_open, and for "-" (standard input) the
 * start of it again: standard input that is not a regular file is first
 * copied to an unnamed temporary file (in $TMPDIR, else /tmp) put in its
 * place.  NULL after saying why on stderr. */
struct grmtrace *pv_export_open(const struct pv_export *x);

/* ---- progress and the wall clock (otf2, ctf) ---- */

/* What an export's passes share: its progress line on stderr, and the
 * trace's #CLOCK line.  Zeroed, then name and quiet set. */
struct pv_xrun {
	const char	*name;		/* the format, for messages */
	int		quiet;		/* -q */
	uint64_t	done;		/* records written so far */
	uint64_t	total;		/* records in the trace */
	time_t		tick;		/* of the start or the last line */
	int		shown;		/* a progress line was printed */
	int		have_clock;	/* a #CLOCK line was read: */
	uint64_t	clk_real;	/* its realtime_ns */
	uint64_t	clk_mono;	/* and monotonic_ns */
	uint64_t	t0;		/* the first record's time stamp */
	uint64_t	clamped;	/* time stamps raised (pv_xrun_stamp) */
};

/* Starts timing the writing pass. */
void pv_xrun_start(struct pv_xrun *p);
/* Counts a record written; once the export has taken a second, prints
 * "prove: export: NAME: DONE of TOTAL records" at most once a second
 * (last: the final one, with a newline, if any was printed). */
void pv_xrun_record(struct pv_xrun *p);
void pv_xrun_done(struct pv_xrun *p);
/* Pass 1: counts a record of time stamp ts (total, t0). */
void pv_xrun_first(struct pv_xrun *p, uint64_t ts);
/* The time of ts written on a thread (or stream) whose last written time
 * is *last (if *any): ts - t0 (0 before t0), raised to *last if earlier
 * (counted: the formats' readers want each thread in time order);
 * updates *any and *last. */
uint64_t pv_xrun_stamp(struct pv_xrun *p, int *any, uint64_t *last,
		       uint64_t ts);
/* Says on stderr how many time stamps were raised, if any. */
void pv_xrun_say(const struct pv_xrun *p);
/* Takes ev if it is the trace's first #CLOCK line. */
void pv_xrun_clock(struct pv_xrun *p, const struct grmtrace_ev *ev);
/* The wall-clock time (ns since the Unix epoch) of time stamp ts, or 0 if
 * the trace has no #CLOCK line. */
uint64_t pv_xrun_epoch(const struct pv_xrun *p, uint64_t ts);

#endif
