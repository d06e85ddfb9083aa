/* SPDX-License-Identifier: MIT */
/* pv_export.h: prove export: a trace written in another tool's format. */
#ifndef GRM_PV_EXPORT_H
#define GRM_PV_EXPORT_H

#include <stdint.h>
#include <stdio.h>
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
int ex_otf2(const struct pv_export *x);	/* if built with OTF2 */
int ex_ctf(const struct pv_export *x);	/* CTF 1.8 */

/* prove export --to FORMAT FILE -o OUT: argv[0] is "export". */
int pv_export(int argc, char **argv);

/* ---- writing OUT safely: a file (json, paje) or a folder (otf2, ctf) ----
 * Every export writes into a new temporary file or folder beside x->out,
 * named OUT.tmp-XXXXXX, and moves it to x->out when complete: a reader
 * never sees part of an export, and nothing is left at x->out after a
 * failure.  The temporary one is removed if SIGINT, SIGTERM, SIGHUP or
 * SIGPIPE ends prove.  An existing x->out is refused unless x->force. */

/*
 * Creates the temporary file, its path (allocated) in *tmp.  Returns the
 * stream, or NULL after a message naming the file.
 */
FILE *pv_export_create(const struct pv_export *x, char **tmp);
/*
 * Closes f and, if ok, moves tmp to x->out; else, or if writing, closing
 * or moving failed (said on stderr), removes tmp.  Frees tmp.  Returns 0,
 * or -1 (nothing is then left at x->out).
 */
int pv_export_finish(const struct pv_export *x, FILE *f, char *tmp, int ok);
/* Makes the temporary folder, its path in tmp (n bytes).  0, or -1 after
 * saying why. */
int pv_export_dir_open(const struct pv_export *x, char *tmp, size_t n);
/* Moves folder tmp to x->out (with --force an existing x->out is removed,
 * once the new one is in place); on failure tmp is removed.  0, or -1
 * after saying why. */
int pv_export_dir_commit(const struct pv_export *x, const char *tmp);
/* Removes folder tmp and everything in it (after a failure). */
void pv_export_dir_abort(const char *tmp);

/* ---- passes over the trace ---- */

/* Opens x->in for a pass: pv_open, and for "-" (standard input) the
 * start of it again: standard input that is not a regular file is first
 * copied to an unnamed temporary file (in $TMPDIR, else /tmp) put in its
 * place.  NULL after saying why on stderr. */
struct grmtrace *pv_export_open(const struct pv_export *x);

/* ---- one run: its progress, and the trace's time origin ----
 * What every export's passes share: the progress line on stderr, the
 * trace's time origin (doc/formats.md 5.1) and #CLOCK line, and the count
 * of times raised to keep a thread in order.  Set up by pv_xrun_init. */
struct pv_xrun {
	const char	*name;		/* the format, for messages */
	int		quiet;		/* -q */
	int		pass;		/* 1, 2, ... (pv_xrun_pass) */
	uint64_t	done;		/* records of this pass so far */
	uint64_t	total;		/* records in the trace (pass 1) */
	struct timespec	start;		/* of the run */
	struct timespec	tick;		/* of the last line */
	int		shown;		/* a line was printed this pass */
	int		any;		/* a time was seen (pass 1): */
	uint64_t	t0;		/* the earliest: the origin */
	uint64_t	t1;		/* the latest */
	int		have_clock;	/* a #CLOCK line was read: */
	uint64_t	clk_real;	/* its realtime_ns */
	uint64_t	clk_mono;	/* and monotonic_ns */
	uint64_t	clamped;	/* times raised (pv_xrun_stamp) */
};

/* Zeroes p for an export of x to format name; the run's clock starts. */
void pv_xrun_init(struct pv_xrun *p, const struct pv_export *x,
		  const char *name);
/* Starts pass n (1 counts the records: p->total). */
void pv_xrun_pass(struct pv_xrun *p, int n);
/*
 * Counts a record read in the pass.  Unless -q, once the run has taken a
 * second, prints "prove: export: NAME: pass N: DONE of TOTAL records" at
 * most once a second (pass 1, whose total is not known yet: "pass 1: DONE
 * records"); pv_xrun_done prints the pass's last line if one was printed.
 */
void pv_xrun_record(struct pv_xrun *p);
void pv_xrun_done(struct pv_xrun *p);
/* Pass 1: takes the trace's first #CLOCK line, and the time of a record,
 * #PROC or #LOSS line into the origin t0 (the earliest) and t1. */
void pv_xrun_time(struct pv_xrun *p, const struct grmtrace_ev *ev);
/* ts relative to the origin (0 if earlier: not after pass 1). */
uint64_t pv_xrun_rel(const struct pv_xrun *p, uint64_t ts);
/* The relative time of ts written on a thread (or stream) whose last
 * written time is *last (if *any): raised to *last if earlier (counted:
 * the formats' readers want each thread in time order); updates *any and
 * *last. */
uint64_t pv_xrun_stamp(struct pv_xrun *p, int *any, uint64_t *last,
		       uint64_t ts);
/* Says on stderr how many times were raised, if any. */
void pv_xrun_say(const struct pv_xrun *p);
/* The wall-clock time (ns since the Unix epoch) of time stamp ts, or 0 if
 * the trace has no #CLOCK line. */
uint64_t pv_xrun_epoch(const struct pv_xrun *p, uint64_t ts);

#endif
