/* SPDX-License-Identifier: MIT */
/* tape.h: the trace file writer (mainmon's): text (Tape/PVM-style), binary
 * frames, or BEE Ascii.  Programs read traces with <grm/trace.h>. */
#ifndef GRM_TAPE_H
#define GRM_TAPE_H

#include <stdint.h>
#include <stdio.h>

#include "rec/rec.h"

/* An event type's definition, as the reader keeps it (and mainmon). */
struct tape_def {
	int32_t		eid;
	uint8_t		cls;
	uint8_t		attr;
	uint32_t	node;		/* scope: 0 for every process */
	uint32_t	pid;
	char		*format;
	char		*dsc;
	struct rec_fmt	fmt;
};

/*
 * The format is specified in doc/formats.md.  In short, one record per
 * line; lines starting with '#' are header and meta lines:
 *
 *	#GRM-TRACE 2
 *	#MM <id>
 *	#CLOCK <realtime_ns> <monotonic_ns>
 *	#HOST <node> <offset_ns> <lm_pid> <hostname>
 *	#SYNC <node> <at_ns> <offset_ns> <drift_ppb> <error_ns> <rtt_ns>
 *	      <samples> <model> <from_ns> <lo_ns> <hi_ns> <allow_ppb>
 *	#TSC <node> <tick0> <ns0> <mult> <error_ns> <span_ns> <rate_ppb>
 *	#ORDER <late> <clamped> <forced> <held_max>
 *	#CAUSAL <matched> <violations> <worst_ns> <unchecked> [<beyond>]
 *	#CLOCKSTEP <node> <ts> <step_ns> <host_lo_ns> <host_hi_ns>
 *	#GIVENUP <node> <ts> <why>
 *	#LATE <node> <count>
 *	#MISSING <node> <ts> <held_bytes> <spilled_bytes> <known>
 *	#DEF <eid> <class> <attr> "<format>" "<description>" [<node> <pid>]
 *	#PROC <node> <pid> <ppid> start|exit|killed|exec|gone <ts> <status>
 *	      "<name>"
 *	#LOSS <node> <pid> <tid> <count> <ts>
 *	#STATS <node> <pid> count <eid> <n>
 *	#STATS <node> <pid> range <eid> <key> <n> <total> <min> <max> <mean> <m2>
 *	#CONTROL <ts> "<command>"
 *	#PLAN add <n> <ts> "<rule>"
 *	#PLAN del <n> <ts>
 *	#PLAN fire <n> <ts> <k> <node> <pid> <tid> <eid> <missed> <acted>
 *	      "<text>"
 *	#COLLECT <n> <ts> <records so far>
 *	#END <records>
 *	<ts> <node> <pid> <tid> <eid> <field>...
 *
 * Every meta line's fields are in one table, trace/tr_schema.c, that the
 * writers and the readers of every format use.
 * A #DEF line comes before the first record of its eid.  Fields: integers
 * in decimal, doubles as %.17g, strings in double quotes with \" \\ \n \t
 * \r and \xHH escapes.  <id> and <hostname> are tokens: the writer turns
 * blanks and bytes that are not printable ASCII into '_'.  Readers ignore
 * unknown # lines.
 *
 * Writer calls return 0, or -1 with errno set: EINVAL for a bad argument (a
 * format rec_parse_format rejects, a NUL in a #DEF string, more than
 * REC_ARGS_MAX fields, a NULL string with a length), EMSGSIZE for a line
 * longer than TAPE_LINE_MAX (the line is not written), ENOMEM, or the
 * error of write(2) or fdatasync(2).
 *
 * A failed write (ENOSPC, EDQUOT, EIO...) loses nothing and writes
 * nothing twice: the file is cut back to its last whole line or frame,
 * and what was not written stays in the writer's memory, written again,
 * in order, by the next call that writes out (tape_write_out, tape_flush,
 * or a full buffer).  Meanwhile the calls that add lines succeed (the
 * buffer grows): the caller looks at tape_error and holds back what it
 * can (the records) until a write works again.
 */

/* 2: #PROC ends say how (exit, killed, exec, gone); readers take 1 too. */
#define TAPE_VERSION	2
/* A binary file's version: 3 holds its records in dense pieces (D
 * frames), which a reader of 2 would skip; 4 lets a D frame hold the
 * records of several threads of its process (thread switches), which a
 * reader of 3 would reject; readers take 1 to 3 too. */
#define TAPE_BIN_VERSION	4
#define TAPE_LINE_MAX	(64 * 1024)

struct tape_w;

/*
 * Creates (truncates) path and writes the file header.  Returns NULL with
 * errno set on failure.
 */
struct tape_w *tape_open(const char *path, const char *mm_id,
			 uint64_t realtime_ns, uint64_t monotonic_ns);
/*
 * The formats (mainmon -f): Tape-style ASCII, binary frames, or BEE Ascii
 * (doc/formats.md sections 1, 3 and 4).  In BEE Ascii a record's class and
 * attribute are those of the definition its (node, pid, eid) is read with,
 * so tape_record fails with EINVAL for a type not defined yet.
 */
enum { TAPE_FMT_TAPE = 0, TAPE_FMT_BIN = 1, TAPE_FMT_BEE = 2 };
#define TAPE_BIN_MAGIC	"\x89GRMBIN\n"	/* 8 bytes: a binary trace */
struct tape_w *tape_open_fmt(const char *path, int fmt, const char *mm_id,
			     uint64_t realtime_ns, uint64_t monotonic_ns);
/* Or'ed into tape_open_fmt's fmt: path must not exist yet (EEXIST). */
#define TAPE_OPEN_NEW	0x100
/* Or'ed into fmt: no summary sidecar.  Without it a binary trace gets one,
 * path + ".idx" (doc/formats.md section 6), written by tape_write_out and
 * tape_flush when it has new records, at most once a second (a second
 * more per 4 MiB of it), and at tape_close; a sidecar that
 * cannot be written is left as it was (it is optional: readers check it
 * belongs to the trace). */
#define TAPE_OPEN_NOIDX	0x200
/*
 * Binary format only: records of thread (node, pid, tid) as they are in
 * memory (struct rec_hdr and slots; timestamps already in the file's
 * clock), whole and well-formed, written without decoding.
 */
int tape_piece(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
	       const void *recs, size_t len);
/*
 * The same, given the dense run the records came in (src[0..slen): its
 * records from the first of recs on, no base; their bytes but ts the
 * same as recs'): what can be is copied from it rather than encoded
 * again (rec_dense_recode_part), the file the same byte for byte.  With
 * TAPE_SRC_ALIKE in same, src is canonical (rec_dense_decode_canon) and
 * every record after the first moved by as much as the one before it:
 * the short records are copied without being looked at
 * (rec_dense_copy_part); with TAPE_SRC_ONE too, they are all short of
 * one length (REC_DENSE_ONE).  *sused: the bytes of src the records
 * took, or SIZE_MAX if src did not follow recs (written from recs
 * alone).
 */
#define TAPE_SRC_ALIKE	1
#define TAPE_SRC_ONE	2
int tape_piece_from(struct tape_w *w, uint32_t node, uint32_t pid,
		    uint32_t tid, const void *recs, size_t len,
		    const void *src, size_t slen, int same, size_t *sused);
/*
 * What the caller knows of recs' records, in time order (not one before
 * the one before it): where stretches of records of one header (short in
 * their dense run: one length, class, attribute and eid) begin, at[i] -
 * base bytes from recs, in order (a stretch may begin before recs: those
 * at or before base are skipped); with one, recs is all one stretch.  The
 * sidecar counts a stretch's records by bisecting their times rather
 * than walking them.
 */
struct tape_stretch {
	const uint32_t	*at;
	uint32_t	n;
	uint32_t	base;
	int		one;
};
/* tape_piece_from (src NULL: tape_piece) told st (may be NULL). */
int tape_piece_stretch(struct tape_w *w, uint32_t node, uint32_t pid,
		       uint32_t tid, const void *recs, size_t len,
		       const void *src, size_t slen, int same,
		       const struct tape_stretch *st, size_t *sused);
/*
 * Binary format only: the records of thread (node, pid, tid) that a dense
 * run holds, written from the run alone (never decoded: rec_dense_frame):
 * src[0..slen), records of a run checked by rec_dense_scan from one of
 * them on, canonical (rec_dense_decode_canon), its times not going back;
 * prev the time in the run of the record before src's first; the records
 * whose decoded bytes are the first len, their times moved by sh's steps;
 * with sg (may be NULL: struct rec_dense_segs, its base where src is in
 * the run), a stretch's records taken whole where they can be.  The file
 * and sidecar are what tape_piece writes for them decoded.  *sused: the
 * bytes of src they took; *last: the time in the run of the last.  0, or
 * -1 with errno (EINVAL: not a binary file).
 */
/*
 * Records written straight into the last D frame while it is still in
 * w's buffer (mainmon's merge of threads taking turns, record by record;
 * binary format only): where short dense records of thread (node, pid,
 * tid) go, after the switch to that thread if the frame's last record
 * is of another; *lim the frame's end (room for at least a switch and a
 * record), *prev the time of its last record, *foff the frame's offset
 * in the file (for tape_sum).  NULL if no frame is open
 * (tape_piece_dense opens one) or it has no room.  The caller writes the
 * records as the encoder would, each after the one before, and before
 * another thread's the switch to it (rec_dense_sw_put); tape_dense_put
 * then says where they end, how many, the thread and time of the last
 * (none: nothing written is kept).
 */
char *tape_dense_at(struct tape_w *w, uint32_t node, uint32_t pid,
		    uint32_t tid, char **lim, uint64_t *prev, uint64_t *foff);
void tape_dense_put(struct tape_w *w, char *end, size_t nrec, uint32_t node,
		    uint32_t pid, uint32_t tid, uint64_t last);
/* A record of the frame at file offset foff, written so, to the
 * summary sidecar (if w writes one). */
void tape_sum(struct tape_w *w, uint64_t foff, uint64_t ts, uint32_t node,
	      uint32_t pid, uint32_t tid, int32_t eid);

/* Records summed in bulk: tape_sum_bucket gives the time span of the
 * summary's bucket of the last record summed, [*lo, *lo + *wd) (*wd 0:
 * none, or no sidecar); tape_sum_count then does what k tape_sum calls
 * would for k records of thread (node, pid, tid) in that span, none a
 * block's begin or end (eid -1, -2), the latest at tlast. */
void tape_sum_bucket(const struct tape_w *w, uint64_t *lo, uint64_t *wd);
void tape_sum_count(struct tape_w *w, uint32_t node, uint32_t pid,
		    uint32_t tid, uint32_t k, uint64_t tlast);

struct rec_dense_shift;
struct rec_dense_segs;
int tape_piece_dense(struct tape_w *w, uint32_t node, uint32_t pid,
		     uint32_t tid, const void *src, size_t slen, uint64_t prev,
		     const struct rec_dense_shift *sh,
		     const struct rec_dense_segs *sg, size_t len,
		     size_t *sused, uint64_t *last);
int tape_host(struct tape_w *w, uint32_t node, int64_t offset_ns,
	      uint32_t lm_pid, const char *hostname);
/* A host's clock model number `model`, converting the node's records
 * from MM time from_ns on (doc/formats.md 1.3, #SYNC): host - MM =
 * offset_ns + drift_ppb * 1e-9 * (t - at), within err_ns over [lo_ns,
 * hi_ns], growing by allow_ppb outside.  Model 0 writes the first seven
 * fields only, as files before model numbers had them. */
struct tape_sync {
	uint32_t	node;
	uint64_t	at;
	int64_t		offset_ns;
	int64_t		drift_ppb;
	uint64_t	err_ns;
	uint64_t	rtt_ns;
	uint32_t	used;
	uint32_t	model;
	uint64_t	from_ns;
	uint64_t	lo_ns;
	uint64_t	hi_ns;
	uint64_t	allow_ppb;
};
int tape_sync(struct tape_w *w, const struct tape_sync *s);
/* A host's clock is the TSC (doc/formats.md 1.3, #TSC): its times were
 * put on its CLOCK_MONOTONIC as ns0 + (ticks - tick0) * mult / 2^32
 * before its #SYNC models applied. */
struct tape_tsc {
	uint32_t	node;
	uint64_t	tick0;
	uint64_t	ns0;
	uint64_t	mult;
	uint64_t	err_ns;
	uint64_t	span_ns;
	uint64_t	rate_ppb;
};
int tape_tsc(struct tape_w *w, const struct tape_tsc *t);
/* At the end: how the global order went, and the causality check. */
int tape_order(struct tape_w *w, uint64_t late, uint64_t clamped,
	       uint64_t forced, uint64_t held_max);
/* beyond: violations beyond the two records' clock bounds. */
int tape_causal(struct tape_w *w, uint64_t matched, uint64_t violations,
		uint64_t worst_ns, uint64_t unchecked, uint64_t beyond);
/* Host node was given up at MM time ts (why: a token, "silent"...): its
 * records from then on may come after later ones of other hosts.  At the
 * end, per host that had any: how many of its records were late. */
int tape_givenup(struct tape_w *w, uint32_t node, uint64_t ts,
		 const char *why);
int tape_late(struct tape_w *w, uint32_t node, uint64_t count);
/* Host node's clock stepped by step ns (its offset's change: negative for
 * a clock that stopped), found at MM time ts, somewhere between its own
 * times host_lo and host_hi (doc/formats.md). */
int tape_clockstep(struct tape_w *w, uint32_t node, uint64_t ts,
		   int64_t step, uint64_t host_lo, uint64_t host_hi);
/* At stop: host node, given up, did not come back; its LM's last status
 * (if known) held so many bytes in its segment and spill file. */
int tape_missing(struct tape_w *w, uint32_t node, uint64_t ts,
		 uint64_t held, uint64_t spilled, int known);
int tape_def(struct tape_w *w, int32_t eid, uint8_t cls, uint8_t attr,
	     const char *format, size_t format_len, const char *dsc,
	     size_t dsc_len);
/*
 * A definition for one process only (node >= 1): its records of eid are
 * read with it, other processes' with the global one.  Written when a
 * process's definition differs from the global one.
 */
int tape_def_scoped(struct tape_w *w, uint32_t node, uint32_t pid,
		    int32_t eid, uint8_t cls, uint8_t attr, const char *format,
		    size_t format_len, const char *dsc, size_t dsc_len);
/* How a #PROC line's process changed: is_exit below. */
enum {
	TAPE_PROC_START = 0,
	TAPE_PROC_EXIT = 1,	/* status: its exit code */
	TAPE_PROC_KILLED = 2,	/* status: the signal's number */
	TAPE_PROC_EXEC = 3,	/* the image was replaced */
	TAPE_PROC_GONE = 4	/* ended, cause unknown */
};
int tape_proc(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t ppid,
	      int is_exit, uint64_t ts, int32_t status, const char *name);
int tape_loss(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
	      uint64_t count, uint64_t ts);
int tape_record(struct tape_w *w, uint64_t ts, uint32_t node, uint32_t pid,
		uint32_t tid, int32_t eid, const struct rec_field *f,
		unsigned n);
int tape_collect(struct tape_w *w, uint32_t n, uint64_t ts);
/*
 * Statistics mode: n events of type eid recorded by process (node, pid)
 * since its previous #STATS count line for eid.
 */
int tape_stats_count(struct tape_w *w, uint32_t node, uint32_t pid,
		     int32_t eid, uint64_t n);
/*
 * Statistics mode: n ranges (eid -1: GMI blocks with block id key; else a
 * BEE range whose begin event is eid, and key is eid) closed by process
 * (node, pid) since its previous line for (eid, key), with their exclusive
 * durations in ns: sum, min, max, mean, and m2 (the sum of squared
 * deviations from the mean: m2 / n is the variance).
 */
int tape_stats_range(struct tape_w *w, uint32_t node, uint32_t pid,
		     int32_t eid, int64_t key, uint64_t n, uint64_t total,
		     uint64_t min, uint64_t max, double mean, double m2);
/* A runtime control command took effect everywhere at ts. */
int tape_control(struct tape_w *w, uint64_t ts, const char *command,
		 size_t command_len);
/* A monitoring plan's rule n (doc/plans.md), in force from ts (MM
 * time; the file's start for the rules it starts with), and its
 * removal. */
int tape_plan_add(struct tape_w *w, uint32_t n, uint64_t ts, const char *rule,
		  size_t rule_len);
int tape_plan_del(struct tape_w *w, uint32_t n, uint64_t ts);
/* Rule n's k-th firing (doc/formats.md #PLAN fire): the triggering
 * record (node, pid, tid, eid, its time ts), the matches on its host not
 * fired while that firing was pending (missed), when mainmon acted
 * (acted, MM time), the mark's text (may be empty). */
struct tape_fire {
	uint32_t	n;
	uint64_t	ts;
	uint64_t	k;
	uint32_t	node, pid, tid;
	int32_t		eid;
	uint64_t	missed;
	uint64_t	acted;
	const char	*text;
	size_t		text_len;
};
int tape_plan_fire(struct tape_w *w, const struct tape_fire *f);
/* Pushes everything written so far to the file and to disk. */
int tape_flush(struct tape_w *w);
/* Pushes everything written so far to the file (the kernel), not to
 * disk: it survives the writer, not the machine.  After tape_async, it
 * hands it to the writer's thread and returns (tape_written says when
 * it is in the file). */
int tape_write_out(struct tape_w *w);
/* From now on the writes go to the file from a thread of w's own
 * (tape-w), not from the caller: a full buffer and tape_write_out hand
 * the buffer over and return at once (one in hand at a time; meanwhile
 * the next grows, to 32 MiB, then waits).  Each time the thread has
 * written what it was handed, it adds 1 to the eventfd note_fd (if not
 * -1).  tape_flush and tape_close still return once all is written.
 * Called again: only note_fd changes.  0, or -1 (the thread cannot be
 * started: writes stay the caller's). */
int tape_async(struct tape_w *w, int note_fd);
/* The errno of the last write if it failed and none has worked since (the
 * file then ends before what the writer holds), else 0. */
int tape_error(const struct tape_w *w);
/* Bytes the writer holds that are not in the file yet (all it holds
 * while writes fail). */
size_t tape_unwritten(const struct tape_w *w);
/* Writes #END, flushes and closes; frees w whatever happens. */
int tape_close(struct tape_w *w);
uint64_t tape_records(const struct tape_w *w);
/* Bytes of the file written out so far (after tape_flush: the whole
 * file, ending with a whole line or frame). */
uint64_t tape_written(const struct tape_w *w);
/* The file's size once all given so far is written: tape_written
 * reaches it after tape_flush, or (tape_async) once the thread is done
 * with it. */
uint64_t tape_end(const struct tape_w *w);
/* tape_async: how long (ns) the thread has been writing what it holds,
 * at CLOCK_MONOTONIC now; 0 if it holds nothing. */
uint64_t tape_waiting(const struct tape_w *w, uint64_t now);
/* tape_async: 1 if the thread is busy and the next buffer holds half of
 * what it may before a call that adds to it waits for the thread (16 of
 * 32 MiB): a caller that can hold its records back does, until the
 * thread is done. */
int tape_full(const struct tape_w *w);

#endif /* GRM_TAPE_H */
