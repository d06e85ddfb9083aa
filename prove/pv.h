/* SPDX-License-Identifier: MIT */
/* pv.h: the prove trace analyser's commands and shared helpers. */
#ifndef GRM_PV_H
#define GRM_PV_H

#include <stddef.h>
#include <stdint.h>

#include <grm/trace.h>

#include "util/hmap.h"

/* Opens a trace; on error prints why and returns NULL. */
struct grmtrace *pv_open(const char *path);
/* grmtrace_open, with the times prove --raw-times asks for: every
 * command opens its traces with these two. */
struct grmtrace *pv_topen(const char *path, char *err, size_t errlen);
extern int pv_raw_times;
/* pv_clock.c: prints each host's clock model and the causality check
 * and correction of r, read to its end (prove stats).  Returns 0. */
int pv_clock_print(struct grmtrace *r);
/* Prints the reader's error for path, closes r and returns exit status 1. */
int pv_fail(const char *path, struct grmtrace *r);
/* Closes r, read to its end; says on stderr, once for all the passes of
 * a command, that the trace's last line or frame is cut (grmtrace_warning:
 * the records before it were read). */
void pv_close(const char *path, struct grmtrace *r);
/* Flushes stdout; returns 0, or 1 after printing a write error. */
int pv_flush(void);

/* Prints a name: printable ASCII as is, other bytes and '\' as \xHH. */
void pv_put_name(const char *s, size_t n);
/* ns as seconds with 9 decimals, in buf. */
const char *pv_secs(char *buf, size_t n, uint64_t ns);

/* pv_main.c: getopt_long for command cmd ("" for prove's own options),
 * which must start with ':' (and opterr be 0): 1 with the option in *c,
 * 0 at the end of the options, -1 after saying on stderr what is wrong. */
struct option;
int pv_getopt(int argc, char **argv, const char *cmd, const char *shortopts,
	      const struct option *longopts, int *c);

/*
 * A duration: a decimal number (a fraction allowed) with an optional unit,
 * ns, us, ms or s (s if none), as nanoseconds in *ns.  Returns 0, or -1
 * if s is not one or is over 2^63 ns.
 */
int pv_dur_parse(const char *s, uint64_t *ns);

/* Commands; each returns the exit status. */
int pv_dump(const char *path);
/* Prints record ev as prove dump does, one line. */
void pv_dump_line(const struct grmtrace_ev *ev);
/* prove trace FILE [filters], prove load FILE [-i INTERVAL] [--csv],
 * prove replay FILE --to ID [--speed X]: argv[0] is the command. */
int pv_trace(int argc, char **argv);
int pv_load_cmd(int argc, char **argv);
int pv_replay(int argc, char **argv);
/* prove stats FILE: every record; sel (NULL: all) keeps those of a time
 * range and rows only, as if the file held no other. */
struct pv_sel;
int pv_stats(const char *path, const struct pv_sel *sel);
/* The files of one trace: path[0..n) in order, a trace that went on in
 * a new file (prove serve ID after grmctl file) in more than one; the
 * last read up to limit bytes (0: to its end), what a live follower has
 * read of it. */
struct pv_files {
	const char *const	*path;
	size_t			n;
	uint64_t		limit;
};
/* The numbers of prove stats on sel of the files fs (as one trace), as
 * JSON appended to out (the BEE views of prove serve and prove report:
 * counts, profile, message pairs, latency histogram, load); load_n
 * buckets of the load meter.  Returns 0, or -1 with the reason in err
 * (unreadable file, out of memory). */
struct evbuffer;
int pv_stats_json(const struct pv_files *fs, const struct pv_sel *sel,
		  unsigned load_n, struct evbuffer *out, char *err,
		  size_t errlen);
/* prove report FILE -o OUT [--force] (pv_report.c). */
int pv_report(int argc, char **argv);
/* prove svg FILE [-o OUT] [-w WIDTH]: argv[0] is "svg" (for getopt). */
int pv_svg(int argc, char **argv);
/* prove serve FILE... [-p PORT] [-b ADDR] (pv_serve.c). */
int pv_serve(int argc, char **argv);

/* ---- pv_map.c ---- */

/* -1, 0 or 1 as a is less than, equal to or greater than b. */
static inline int
pv_cmp(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/*
 * An array a of *cap elements of size bytes, grown (doubled) if it has no
 * room after its first n; NULL if out of memory, a then left as it was.
 */
void *pv_grow(void *a, size_t *cap, size_t n, size_t size);

/* The key of prove's maps: two 64-bit words (no padding). */
struct pv_key {
	uint64_t	k1;
	uint64_t	k2;
};

/* Maps from a struct pv_key to an array index (a size_t value), for
 * tables kept in arrays; a zeroed map needs hmap_init with it. */
extern const struct hmap_type pv_ix_type;

/* A hash map from two 64-bit keys to zeroed, individually allocated
 * values.  A zeroed map is empty.  Its values come out (pv_map_values) in
 * an order that follows from the keys and their order of insertion only,
 * the same from one run to the next: prove's outputs list some tables in
 * it. */
struct pv_map {
	struct hmap	m;	/* struct pv_key -> void * */
};

/* How many values m holds. */
static inline size_t
pv_map_n(const struct pv_map *m)
{
	return hmap_count(&m->m);
}

/* The value of (k1, k2), created zeroed with size bytes if new; NULL if
 * out of memory. */
void *pv_map_get(struct pv_map *m, uint64_t k1, uint64_t k2, size_t size);
/* The value of (k1, k2), or NULL. */
void *pv_map_find(const struct pv_map *m, uint64_t k1, uint64_t k2);
/* Iteration: start with *it = 0; each call gives the next value, NULL at
 * the end; the order is pv_map_values'. */
void *pv_map_next(const struct pv_map *m, uint32_t *it);
/* The values, in a new array of pv_map_n pointers (and a NULL); NULL if out
 * of memory. */
void **pv_map_values(const struct pv_map *m);
/* Frees the values (after fn on each, if not NULL) and empties m. */
void pv_map_free(struct pv_map *m, void (*fn)(void *));

/* Interned byte strings: equal strings get the same id, 1, 2, ... in the
 * order first seen. */
struct pv_str {
	char		*s;	/* NUL-terminated copy (may hold NULs) */
	size_t		len;
	uint64_t	id;
};

struct pv_strs {
	struct pv_map	ix;	/* (hash, n-th of that hash) -> copy */
	struct pv_str	*v;	/* by id - 1 */
	size_t		n;
	size_t		cap;
};

/* The id of s[0..len), 0 if out of memory. */
uint64_t pv_str_id(struct pv_strs *t, const char *s, size_t len);
/* The string of id (and its length in *len if not NULL), or NULL. */
const char *pv_str(const struct pv_strs *t, uint64_t id, size_t *len);
void pv_strs_free(struct pv_strs *t);

/* ---- pv_sym.c: function addresses named from the trace's load map ---- */

/* A zeroed struct pv_sym knows no process. */
struct pv_sym {
	struct pv_map	procs;	/* (node, pid) -> its objects */
	struct pv_map	files;	/* (path id, 0) -> its symbols, read once */
	struct pv_strs	strs;	/* paths, build ids, names given */
};

/* Takes what ev says about processes' load maps: loaded and unloaded
 * object records, #PROC lines (a fork's child starts with its parent's
 * map, an exec with none).  Returns 0, or -1 if out of memory. */
int pv_sym_ev(struct pv_sym *s, const struct grmtrace_ev *ev);
/* The name of addr in process (node, pid): its function's symbol; else
 * "object+0xOFFSET" (the file cannot be read, its build id is not the
 * traced one, which is said once on stderr, or no symbol holds it); else
 * "0xADDR".  Owned by s; NULL if out of memory. */
const char *pv_sym_name(struct pv_sym *s, uint32_t node, uint32_t pid,
			uint64_t addr, size_t *len);
void pv_sym_free(struct pv_sym *s);

/* ---- pv_mark.c: what a record means to the analyses ---- */

enum pv_kind {
	PV_OTHER,	/* nothing below, or fields of the wrong kinds */
	PV_BEGIN,	/* a block or a BEE range begins */
	PV_END,		/* one ends */
	PV_BNAME,	/* a block is named: id, name */
	PV_SEND,	/* a message is sent: peer (id), tag, bytes */
	PV_RECV,	/* one is received: peer (id), tag, bytes */
	PV_PNAME,	/* the process gets a rank (id) and a name */
	PV_CBEGIN,	/* the host's processes were stopped for a global
			   collection (id: its round) */
	PV_CEND		/* and let go */
};

struct pv_mark {
	enum pv_kind	kind;
	int		range;	/* PV_BEGIN, PV_END: a BEE range, not a block */
	int64_t		id;	/* block id; range: its name's id in the
				   pv_strs given; rank or peer rank */
	int64_t		tag;
	int64_t		bytes;
	const char	*s;	/* block, range or process name */
	size_t		len;
};

/*
 * Says what ev (a record) is: the predefined types -1 .. -8 by eid, and BEE
 * range begins and ends (class PROCEDURE, attribute ACT or TERM, a
 * description) by definition, and function entries and exits as ranges
 * named by sym (which takes the load map from ev); their names are
 * interned in names.  Returns 0, or -1 if out of memory.
 */
int pv_mark(struct pv_strs *names, struct pv_sym *sym,
	    const struct grmtrace_ev *ev, struct pv_mark *m);

/* ---- pv_msg.c: processes, their ranks and names, and messages ---- */

struct pv_proc {
	uint32_t	node;
	uint32_t	pid;
	int		has_rank;
	int64_t		rank;	/* of its last process name record */
	char		*name;	/* from that record, or NULL */
	size_t		name_len;
	char		*prog;	/* from its last #PROC start line, or NULL */
	size_t		prog_len;
};

struct pv_msg {
	uint64_t	ts;
	uint64_t	seq;	/* order in the file */
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	int64_t		peer;
	int64_t		tag;
	int64_t		bytes;
	uint64_t	bound;	/* the error bound of ts (bound_ns) */
	int64_t		rank;	/* its process's, if has_rank (after
				   pv_msgs_match) */
	int		has_rank;
	size_t		match;	/* index + 1 in the other array; 0: none */
	int		out;	/* prove stats: not in its selection (kept
				   to be matched over the whole trace) */
};

struct pv_msgs {
	struct pv_map	procs;	/* (node, pid) -> struct pv_proc */
	struct pv_msg	*snd;
	size_t		nsnd;
	size_t		csnd;
	struct pv_msg	*rcv;
	size_t		nrcv;
	size_t		crcv;
	uint64_t	matched;
	uint64_t	norank;	/* messages of processes with no rank */
};

/* Takes what ev says about processes and messages: send, receive and
 * process name records (m from pv_mark), and #PROC start lines.  Returns
 * 0, or -1 if out of memory. */
int pv_msgs_ev(struct pv_msgs *g, const struct grmtrace_ev *ev,
	       const struct pv_mark *m);
/* Matches sends with receives (doc/formats.md 1.9), once every event has
 * been taken.  Returns 0, or -1 if out of memory. */
int pv_msgs_match(struct pv_msgs *g);
/* The process (node, pid), or NULL if nothing was said of it. */
const struct pv_proc *pv_proc(const struct pv_msgs *g, uint32_t node,
			      uint32_t pid);
void pv_msgs_free(struct pv_msgs *g);

/* ---- pv_stmode.c: prove stats, the #STATS and #CONTROL sections ---- */

struct pv_ctl {
	uint64_t	ts;
	char		*cmd;
	size_t		len;
};

struct pv_stmode {
	struct pv_map	procs;	/* (node, pid) -> its counts and ranges */
	struct pv_ctl	*ctl;	/* in file order */
	size_t		nctl;
	size_t		cctl;
	uint64_t	lines;	/* #STATS lines */
};

/* Adds up a #STATS line, or keeps a #CONTROL line.  Returns 0, or -1 if
 * out of memory. */
int pv_stmode_ev(struct pv_stmode *s, const struct grmtrace_ev *ev);
/* Prints the sections, if there were such lines: names of event types
 * from r, of processes from g, of blocks from block_name(arg, id, &len)
 * (NULL: none).  Returns 0, or -1 if out of memory. */
int pv_stmode_print(const struct pv_stmode *s, const struct grmtrace *r,
		    const struct pv_msgs *g,
		    const char *(*block_name)(void *, int64_t, size_t *),
		    void *arg);
void pv_stmode_free(struct pv_stmode *s);

/* ---- pv_sel.c: a selection of records: a time range and rows ---- */

/* A row filter: -1 is any node, pid or tid. */
struct pv_rowspec {
	int64_t		node;
	int64_t		pid;
	int64_t		tid;
};

/* Records with from <= ts < to, of a thread some spec matches (no spec:
 * every thread).  A zeroed selection with to = UINT64_MAX keeps all. */
struct pv_sel {
	uint64_t		from;
	uint64_t		to;
	struct pv_rowspec	*spec;
	size_t			nspec;
	size_t			cspec;
};

#define PV_SEL_ALL	{ 0, UINT64_MAX, NULL, 0, 0 }

/* -t FROM:TO (ns, as the trace has them; either may be left out).
 * Returns 0, or -1 after saying on stderr what is wrong (cmd: "svg"). */
int pv_sel_time(struct pv_sel *s, const char *cmd, const char *arg);
/* -r NODE[/PID[/TID]][,...] ('*' for any): adds row filters.  Returns 0,
 * or -1 after saying on stderr what is wrong. */
int pv_sel_rows(struct pv_sel *s, const char *cmd, const char *arg);
/* Adds one row filter; 0, or -1 if out of memory. */
int pv_sel_add(struct pv_sel *s, int64_t node, int64_t pid, int64_t tid);
/* 1 if a record of (node, pid, tid) at ts is selected, else 0. */
int pv_sel_has(const struct pv_sel *s, uint32_t node, uint32_t pid,
	       uint32_t tid, uint64_t ts);
/* 1 if (node, pid, tid) is among the rows, whatever the time. */
int pv_sel_row(const struct pv_sel *s, uint32_t node, uint32_t pid,
	       uint32_t tid);
void pv_sel_free(struct pv_sel *s);

#endif /* GRM_PV_H */
