/* SPDX-License-Identifier: MIT */
/* mm.h: the Main Monitor's state, shared by its modules. */
#ifndef GRM_MM_H
#define GRM_MM_H

#include <stdint.h>

#include "mm_sync.h"
#include "net/mmid.h"
#include "net/wire.h"
#include "plan/plan.h"
#include "rec/dense.h"
#include "rec/rec.h"
#include "tape.h"
#include "util/hmap.h"
#include "util/tsc.h"

struct event_base;
struct evconnlistener;
struct loop_ev;
struct peer;
struct wire_rd;
struct wire_hello;
struct mm_auth;
struct mm_admit;

/* Event types known, by eid (int32_t): struct tape_def values, each with
 * its format and description allocated (mm_out.c). */
struct mm_defs {
	struct hmap	map;
};

/*
 * A traced process as mainmon knows it: its parent (from its PROC start),
 * the definitions it made, and what its records are decoded with: `own`
 * first, then its ancestors' (a fork child inherits its parent's types),
 * then the node's.  `resolved` caches the answer once the file's reader is
 * known to resolve the same (a scoped #DEF line is written if the global
 * one differs), so a record costs one lookup.  Freed once it ended and is
 * done with (mm_out.c, procs_sweep); one whose scoped #DEF lines differ
 * from the global ones keeps those only (a reader applies them to any
 * later process of its pid).
 */
struct mm_proc {
	uint32_t	pid;
	uint32_t	ppid;
	uint32_t	session;	/* the current image's LM session */
	uint32_t	old_session;	/* the image before the last exec */
	uint32_t	started;	/* session whose start line is written */
	/* For a new trace file (mm_rotate.c): what its start line said,
	 * and whether an end line came since. */
	int		ended;
	uint64_t	start_ts;	/* MM clock */
	char		name[64];
	struct mm_defs	own;
	struct mm_defs	old_own;	/* the old image's, for its last records */
	struct mm_defs	resolved;	/* current image */
	struct mm_defs	scoped;		/* scoped #DEF lines written for pid:
					   what a reader now applies */
	struct mm_proc	*next;
	/* Its end (exit, killed, gone; not exec) and freeing (mm_out.c). */
	uint8_t		gone;		/* MM_GONE_* */
	uint8_t		busy;		/* a sweep's: records still held */
	uint32_t	nchild;		/* a sweep's: processes it is the
					   parent of */
	uint64_t	gone_ns;	/* when its end came, mainmon's clock */
};

/* How far a process's end has gone: its end line came; then the end of
 * the collection it came in (which holds its last records). */
enum { MM_GONE_NO = 0, MM_GONE_ENDED = 1, MM_GONE_IN = 2 };

#define MM_PROC_BUCKETS	256

/*
 * A host's standing in the time order (doc/formats.md, #GIVENUP): live
 * while an LM of it answers; given up when its LM went silent, closed
 * without its BYE, or left an order pull unanswered for --order-wait.
 * From then on its records no longer hold the others back, and those
 * that come older than what is written are written late, counted.
 */
enum mm_node_state {
	MM_NODE_LIVE = 0,
	MM_NODE_GIVENUP
};

struct mm_node {
	uint32_t	id;		/* 1, 2, ...: the node column */
	char		host[256];
	/* Liveness and the order (mm_live.c). */
	enum mm_node_state state;
	uint64_t	gone_at;	/* MM ns: given up (0: never) */
	char		gone_why[48];	/* "silent for 5 s", ... */
	uint32_t	lm_pid;		/* its latest LM */
	char		addr[64];	/* that LM's address */
	uint64_t	late;		/* records written late */
	struct wire_status st;		/* the latest status of an LM of
					   it (what it held, if it goes) */
	int		has_st;
	char		st_cpus[WIRE_CPUS_MAX];	/* and the CPUs it ran on */
	struct mm_defs	defs;		/* every definition seen on the node */
	struct mm_proc	*procs[MM_PROC_BUCKETS];
	uint32_t	ngone;		/* of which gone, not freed yet */
	/* Its clock models (mm_peer.c): the number of the latest #SYNC,
	 * and the latest time written for one of its records (a new
	 * model converts from after it). */
	uint32_t	sync_num;
	uint64_t	sync_high;
	struct mm_node	*next;
};

struct mm_ack;

/*
 * A received piece of one thread's records, kept until its batch ends,
 * then (its timestamps on mainmon's clock) in its thread's stream until
 * written in time order (mm_order.c).
 */
#define MM_BRK_MAX	6
/* A run whose conversion moves by more steps is decoded.  A model's rate
 * steps the shift by a ns every 1/drift: at the start of a connection
 * the first models' drifts (up to hundreds of ppm) step a 64 KiB
 * chunk's run 5 to 16 times; 4 sent 13 % of a live run's pieces through
 * the decoding (doc/PERFORMANCE.md). */
#define MM_LAZY_STEPS	16
struct mm_piece {
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	session;
	uint32_t	len;
	uint64_t	seq;		/* its chunk's; 0: a table or the LM's */
	uint64_t	seg_id;		/* the segment it came from */
	uint32_t	off;		/* where it starts in its chunk */
	uint32_t	pos;		/* written up to (in a stream) */
	struct mm_node	*node;
	struct mm_ack	*ack;		/* what waits for it to be written */
	struct mm_piece	*next;
	/* The dense run it came in (binary files: D frames are copied from
	 * it, mm_out.c put_run), at data[0] (mm_piece_place): the records
	 * from rec[dmark] on are at dense[dpos].  NULL: none
	 * (mainmon's own, trimmed by mm_dedup, or given up). */
	const unsigned char	*dense;
	uint32_t	dlen;
	uint32_t	dpos;
	uint32_t	dmark;
	/* What rec_dense_decode_canon said of dense (REC_DENSE_CANON: as
	 * the encoder writes it; REC_DENSE_ONE: its records all of one
	 * header); the records whose time the conversion moved otherwise
	 * than the one before's (admit), in order, MM_BRK_MAX at most (nbrk
	 * above it: more, not known). */
	uint8_t		canon;
	uint8_t		nbrk;
	uint32_t	brk[MM_BRK_MAX];
	/* Not decoded yet (undec): rec[0..len) is to be decoded from the
	 * run at data[0..rlen), which admit (mm_out.c) does, with
	 * the clock conversion where it is a shift for the whole run; what
	 * rec_dense_scan said of it on arrival. */
	uint8_t		undec;
	uint32_t	rlen;
	struct rec_dense_info	info;
	/* Where its stretches of records of one header begin (but the
	 * first), info.nseg of them, decoded offsets in order (mm_out_piece
	 * finds which records come before a time by bisecting them); NULL:
	 * not known (too many, the piece mainmon's own or trimmed). */
	uint32_t	*seg;
	/* What it counts against -m while in the merge (mm_order_add):
	 * its records, the run kept beside them, the stretches' offsets. */
	/* Never decoded (lazy; a binary file, the run canonical and taken
	 * whole by admit): data[0..len) is not written, mm_out_piece
	 * writes the records from the run (tape_piece_dense); the record
	 * at decoded offset pos is at dense[dpos], lz_prev the time in the
	 * run of the one before it; times move by the lz_n steps (struct
	 * rec_dense_shift). */
	uint8_t		lazy;
	uint8_t		lz_n;
	uint64_t	lz_prev;
	uint64_t	lz_upto[MM_LAZY_STEPS];
	uint64_t	lz_by[MM_LAZY_STEPS];
	/* The type its last record written was checked against (out_lazy;
	 * NULL: none yet): the next call takes a first record of that type
	 * as the call before took the rest (two threads interleaved cut a
	 * piece into many calls of a few records), without resolving it
	 * again if no definition changed since (lz_gen). */
	const struct tape_def	*lz_def;
	uint64_t	lz_gen;		/* mm_out.c's defs_gen then */
	/* Its stretches (st) that begin at or before dense[dpos]: those
	 * the next call and its frames need not look at. */
	uint32_t	lz_si;
	/* Where its run's stretches begin (rec_dense_scan_st on arrival,
	 * as seg is; NULL: not known): a lazy piece's are taken whole. */
	const struct rec_dense_seg	*st;
	/* Its records (len bytes): data (mainmon's own pieces), or
	 * data + roff after the run and its stretches (a DATA's, laid out
	 * by mm_piece_place, so that a lazy piece's allocation is cut back
	 * to its run: rec NULL). */
	unsigned char	*rec;
	uint32_t	roff;
	uint64_t	held;
	unsigned char	data[];
};

/*
 * A collection (DONE) received and not yet acknowledged: the ACK goes once
 * every piece of it is written.  Owned by its connection, in DONE order;
 * if the connection goes first, by the pieces (c NULL) until written.
 */
struct mm_ack {
	struct mm_conn	*c;
	uint32_t	round;
	uint32_t	pending;	/* pieces not yet written */
	uint64_t	upto;		/* ... given to the file up to this
					   (mm_out_done) */
	int		whole;		/* acknowledged in this pass */
	struct mm_ack	*next;
};

/* A piece of a chunk written before the rest of its collection: the LM is
 * told (WIRE_WRITTEN), and frees the chunk without waiting for the ACK. */
struct mm_written {
	struct mm_ack	*ack;
	uint32_t	pid;
	uint32_t	session;
	uint64_t	seq;
	uint32_t	end;
	uint64_t	upto;		/* in the file once mm_out_done is
					   there */
};

/* One thread's records waiting to be written, oldest first. */
struct mm_stream {
	uint32_t		node;
	uint32_t		pid;
	uint32_t		tid;
	uint32_t		heap_ix;	/* in mm_order.heap, or NONE */
	uint64_t		last_ts;	/* latest admitted, MM ns */
	uint64_t		head_ts;	/* the next to write */
	struct mm_piece		*head, **tail;
};

/*
 * Global time order (doc/ARCHITECTURE.md, "Global order"): records wait in
 * their thread's stream until no LM can still send an earlier one (the
 * watermark: the oldest of the LMs' "sent below" times), then are merged
 * by a heap of streams.  Bounded: past max_bytes the oldest are written
 * anyway, and what then comes older is written late, counted.
 */
struct mm_order {
	struct hmap		streams;	/* (node, pid, tid): a
						   struct mm_stream * */
	struct mm_stream	**heap;
	uint32_t		nheap;
	uint32_t		capheap;
	uint64_t		bytes;		/* held */
	uint64_t		bytes_max;	/* largest held */
	uint64_t		max_bytes;	/* the bound (-m) */
	uint64_t		out_ts;		/* latest written */
	uint64_t		late;		/* written after a later one */
	uint64_t		clamped;	/* moved up to keep a thread's
						   order across a clock refit */
	int			may_hold;	/* the records may wait for
						   the file's thread */
	uint64_t		forced;		/* written before the watermark,
						   for room */
	uint64_t		paired;		/* of two streams taking turns,
						   merged record by record */
};

/* Message sends waiting for their receive, and the reverse, by (sender
 * rank, receiver rank, tag): the causality check (mm_causal.c). */
struct mm_causal {
	struct hmap		queues;		/* struct mm_causal_q */
	uint64_t		waiting;	/* sends and receives held */
	uint64_t		checked;	/* pairs matched */
	uint64_t		violations;	/* received before sent */
	uint64_t		worst;		/* ns, the largest */
	uint64_t		unchecked;	/* beyond the bound, or no rank */
	struct hmap		ranks;		/* (node, pid): int64_t */
	/* Violations beyond the two records' clock bounds (a bound was
	 * wrong): the bounds are those of the models each node published,
	 * looked up by time as a reader does; a warning per pair of hosts,
	 * at most every MM_CAUSAL_LOG_NS. */
	uint64_t		beyond;
	struct hmap		clocks;		/* node: struct mm_causal_clk */
	struct hmap		warned;		/* (node, node): struct
						   mm_causal_warn */
};
#define MM_CAUSAL_MAX		(1u << 20)	/* messages held, at most */
#define MM_CAUSAL_LOG_NS	10000000000ull

/*
 * A connection's state: authenticating (mm_auth.c), then a control
 * client, or an LM whose clock is being measured and then ready (taking
 * data and rounds).  What each may send in each is the rule table
 * (common/net/wire.c), checked before dispatch; each role has its own
 * dispatcher (mm_peer.c).  An LM that goes silent is closed at once
 * (its host is then given up: enum mm_node_state).
 */
enum mm_conn_state {
	MM_CONN_NEW = 0,
	MM_CONN_CTL,
	MM_CONN_FIRE,		/* an LM's fire link: FIREs and CONTROL_ACKs
				   from it, actions to it (mm_plan.c) */
	MM_CONN_SYNC,
	MM_CONN_READY
};
#define MM_IS_LM(c)	((c)->state >= MM_CONN_SYNC)

/*
 * A ready LM's part in the time order (mm_order.c, mm_live.c): followed
 * (its "sent below" time holds the watermark), pulled (asked for its data
 * for the watermark's sake, no answer yet), or out (it left a pull or a
 * round unanswered for --order-wait: not waited for, until its next
 * DONE), or replaying its spill file (its DONEs say so, mm_out.c: it
 * cannot say what is older, so it is not waited for nor pulled, until
 * a DONE gives a time).
 */
enum mm_order_state {
	MM_ORD_FOLLOW = 0,
	MM_ORD_PULLED,
	MM_ORD_OUT,
	MM_ORD_REPLAY
};

/* A ready LM's part in the global scheme (mm_global.c): its processes
 * run, it asked for a round (FULL: its threshold, or data waiting past
 * its push interval) and has not been collected since, or its processes
 * are stopped for a round (paused_round; the trace has its begin). */
enum mm_glob_state {
	MM_GL_RUNS = 0,
	MM_GL_WANTS,
	MM_GL_STOPPED
};

struct mm_conn {
	struct mm		*mm;
	struct peer		*p;
	enum mm_conn_state	state;
	/* Its role's messages, installed when admitted: 0, -1 to close c
	 * as out of place, 1 when c may be gone (the handshake). */
	int			(*on_msg)(struct mm *mm, struct mm_conn *c,
					  uint16_t type, struct wire_rd *msg);
	struct mm_conn		*next;
	char			addr[64];	/* the peer's, for the log */
	struct mm_auth		*auth;		/* until authenticated */
	int			boost_fd;	/* a fire link's socket + 1,
						   watched by mm-boost; 0 */
	/* LM */
	struct mm_node		*node;
	uint32_t		lm_pid;
	uint64_t		seg_id;		/* the LM's segment */
	struct wire_status	st;		/* its latest status */
	int			has_st;		/* st holds one (a datum) */
	char			st_cpus[WIRE_CPUS_MAX];	/* st's: the CPUs
						   it may run on */
	struct mm_sync		clk;		/* its clock, modelled */
	int			burst;		/* pings left in this burst */
	int			beats;		/* lone heartbeat pings out */
	uint64_t		last_ping;	/* MM ns of the latest ping */
	uint64_t		last_data;	/* MM ns: latest DATA or DONE */
	uint64_t		last_status;	/* MM ns: STATUS last asked */
	uint64_t		ready_at;	/* MM ns: READY sent */
	int			said_bye;	/* sent BYE */
	struct mm_sync_sample	burst_best;
	/* The burst's previous exchange, whose sample the next PONG makes
	 * narrower with the LM's kernel departure time of its answer
	 * (mm_on_pong): valid, its PING's t_mm as sent, and t1 (the
	 * kernel's, if it gave one), t2, t4. */
	int			xprev;
	uint64_t		xprev_mm, xprev_t1, xprev_t2, xprev_t4;
	struct loop_ev	*sync_ev;	/* the next burst */
	uint64_t		sync_written;	/* MM ns of the last #SYNC */
	/* Clock changes (mm_peer.c): after a step, the next model converts
	 * from this MM time on (records before it, the old model). */
	uint64_t		step_from;
	/* COLLECTs (round, flags) held until the clock sample sent before
	 * them is answered (mm_send_collect). */
	uint32_t		held[8][2];
	int			nheld;
	/* A pushed batch (its DONE's round and below) held until the
	 * clock sample asked for after it is answered (mm_peer.c). */
	struct mm_piece		*hb, **hb_tail;
	uint64_t		hb_bytes, hb_below;
	uint32_t		hb_round;
	int			hb_on;
	struct mm_sync_book	book;		/* the models published,
						   which convert */
	uint64_t		wm;		/* MM ns: nothing older to come
						   (not in MM_ORD_REPLAY) */
	uint64_t		scan;		/* MM ns of its latest scan */
	uint64_t		floor;		/* its records from now on are
						   not older (the previous
						   DONE's "sent below") */
	enum mm_order_state	order;		/* its part in the order */
	uint64_t		last_done;	/* MM ns of its latest DONE */
	uint64_t		last_pull;	/* MM ns of its latest pull */
	struct mm_ack		*acks, **acks_tail;
	/* The global scheme (mm_global.c). */
	enum mm_glob_state	glob;
	uint32_t		paused_round;	/* MM_GL_STOPPED: the round */
	uint64_t		paused_at;	/* MM ns of that begin */
	struct mm_written	*written;	/* to tell, in order */
	uint32_t		nwritten;
	uint32_t		capwritten;
	struct mm_piece		*batch, **batch_tail;
	uint64_t		batch_bytes;
	uint64_t		records;
	/* A host whose clock is the TSC (WIRE_TSC): its times are ticks,
	 * put on its CLOCK_MONOTONIC by tsc_cal (mm_host_ns). */
	int			tsc;
	struct tsc_cal		tsc_cal;
};

/* Host time h of c in host CLOCK_MONOTONIC ns: the one place a TSC host's
 * ticks are converted, before its clock model (mm_sync) applies. */
static inline uint64_t
mm_host_ns(const struct mm_conn *c, uint64_t h)
{
	return c->tsc ? tsc_to_ns(&c->tsc_cal, h) : h;
}

/* What a round asks of every LM. */
enum mm_what {
	MM_SNAPSHOT,		/* collect */
	MM_STOP,		/* final collection; LMs exit */
	MM_STATS,		/* collect, then answer with the statistics */
	MM_PROBE,		/* collect with dormant sensors' values */
	MM_STATUS,		/* ask every LM its status, then answer */
	MM_CONTROL,		/* apply the control state, then answer */
	MM_PLAN			/* the plan's rows are sent: answer once
				   every LM has them (the control state,
				   sent behind them on the same link,
				   acknowledged) */
};

/* The phases of a global collection round (mm_global.c). */
enum {
	MM_PH_COLLECT = 0,	/* collecting (every other round: at once) */
	MM_PH_WAIT,		/* queued behind another global round */
	MM_PH_PAUSE		/* asking the LMs to stop their processes */
};

/* A round in progress: a collection, or a control change. */
struct mm_coll {
	uint32_t		round;
	int			stop;
	enum mm_what		what;
	int			global;		/* stops the processes first */
	int			phase;		/* MM_PH_* */
	struct mm_conn		**paused;	/* LMs whose processes stopped */
	int			npaused;
	uint64_t		stopped;	/* processes, on all of them */
	uint64_t		t_paused;	/* MM ns: collecting began */
	char			unpaused[300];	/* LMs that did not answer */
	char			dropped[300];	/* LMs given up while asked */
	uint64_t		t0;		/* MM ns, when asked */
	uint64_t		t_asked;	/* MM ns: this phase began */
	uint64_t		t_applied;	/* MM ns, latest LM application */
	char			cmd[160];	/* control command, for the file */
	char			note[160];	/* added to the answer */
	struct mm_conn		**pending;
	int			npending;
	struct mm_conn		*ctl;		/* who asked; may go away */
	struct loop_ev	*timeout;
	struct mm_coll		*next;
	/* A stop waiting for the disk (mm_round.c, mm->stop_wait): since
	 * when; final: its collection is in, not yet all written (the LMs
	 * keep it, unacknowledged); failed: the LMs that did not answer. */
	uint64_t		t_wait;
	int			final;
	char			failed[300];
};

/* What grmctl enable/disable/filter set: sent whole to every LM. */
#define MM_CTL_WORDS	(REC_EID_BITS / 32)
struct mm_ctl {
	uint32_t	cls_off[8];
	char		filter[WIRE_FILTER_MAX];
	uint32_t	eid_off[MM_CTL_WORDS];
};

/* The latest statistics of one thread's counter or range. */
struct mm_stat {
	uint32_t		node;
	uint32_t		pid;
	uint32_t		tid;
	uint32_t		kind;		/* REC_STATS_COUNT or REC_STATS_RANGE; 0 free */
	int32_t			eid;
	int64_t			key;
	struct rec_range	r;
};

/* By (node, pid, tid, kind, eid, key): a struct mm_stat (mm_ctl.c). */
struct mm_stats {
	struct hmap	map;
};

/* Block names seen (GMI_DefineBlock), for grmctl stats. */
struct mm_bname {
	int32_t		bid;
	char		*name;
	struct mm_bname	*next;
};

/*
 * How far each thread's records have been written, per LM segment: an LM
 * that adopted a dead one's segment, or one whose MM went away before
 * acknowledging, sends again what it is not sure was written; what was is
 * dropped here (mm_dedup.c).
 */
struct mm_mark {
	uint32_t	session;
	uint64_t	seq;
	uint64_t	end;		/* written up to, in chunk seq */
};

/* By (segment, node, pid, tid): a struct mm_mark (mm_dedup.c). */
struct mm_marks {
	struct hmap	map;
};

struct mm {
	struct event_base	*base;
	struct evconnlistener	*listener;
	struct evconnlistener	*door;		/* local (net/local.h) */
	char			id[272];	/* HOST:PORT: what files and
						   messages show */
	struct mmid		mmid;		/* with the token */
	unsigned		auth_secs;	/* handshake time limit */
	int			npreauth;	/* connections in it,
						   refused ones included */
	struct mm_admit		*admit;		/* who may wait in it
						   (mm_auth.c) */
	struct tape_w		*out;
	int			fmt;		/* TAPE_FMT_* */
	int			tape_flags;	/* TAPE_OPEN_NOIDX:
						   --no-index */
	char			*out_path;
	struct mm_conn		*conns;
	struct mm_node		*nodes;
	uint32_t		next_node;
	struct mm_coll		*colls;
	uint32_t		next_round;
	int			stopping;
	int			stopped;	/* final collection written */
	struct mm_conn		*stop_ctl;	/* who is told; exit after */
	int			exit_code;
	struct mm_defs		written;	/* #DEF lines in the file */
	uint64_t		collections;
	uint64_t		losses;
	struct mm_ctl		ctl;
	struct mm_stats		stats;
	struct mm_bname		*bnames;
	unsigned		nbnames;
	struct mm_marks		marks;
	uint64_t		dup_bytes;	/* sent again, dropped */
	struct mm_order		order;
	struct mm_causal	causal;
	uint64_t		sync_ns;	/* between clock bursts (-s) */
	/* The collection scheme (--collect): global rounds stop every
	 * traced process first. */
	int			global;
	uint32_t		pause_max_ms;	/* an LM's longest stop */
	uint64_t		global_rounds;
	uint64_t		stop_ns_total;	/* processes stopped, MM ns */
	uint64_t		stop_ns_max;
	struct loop_ev	*global_ev;	/* starts the next round */
	struct loop_ev	*order_ev;	/* pulls laggards */
	/* Liveness (mm_live.c): an LM silent this long is given up (0:
	 * never); one that leaves an order pull unanswered this long no
	 * longer holds the order. */
	unsigned		silent_secs;
	uint64_t		order_wait_ns;
	struct loop_ev	*beat_ev;	/* heartbeat pings */
	uint64_t		givenup;	/* hosts given up, in all */
	/* The trace file cannot be written (a full disk, EIO): what the
	 * writer holds is tried again, with back-off (mm_out.c); nothing is
	 * acknowledged meanwhile.  For grmctl status: tape_error(out). */
	uint64_t		out_failed_ns;	/* since when; 0: writes work */
	uint64_t		out_try_ns;	/* the next try */
	uint64_t		out_ok_ns;	/* writes work again since */
	uint32_t		out_wait_ms;	/* ... after the one before */
	struct loop_ev	*out_retry;
	/* The file's writes go from a thread (tape_async), which adds to
	 * out_wake's eventfd each time it has written what it was handed:
	 * out_wake then acknowledges what is in the file.  out_base: the
	 * bytes of the files before this one (-r rotations), so that where
	 * a piece ends in the file (mm_out_end) only grows. */
	struct event		*out_wake;
	uint64_t		out_base;
	/* A stop asked while the file cannot be written waits for it, at
	 * most disk_wait_secs (--disk-wait), the LMs not told, so that
	 * nothing is lost (mm_round.c); so does one whose final collection
	 * cannot be written, the LMs not acknowledged; out of the list of
	 * rounds. */
	struct mm_coll		*stop_wait;
	struct loop_ev	*stop_wait_ev;
	unsigned		disk_wait_secs;
	/* Frees the processes that ended, once done with (mm_out.c). */
	struct loop_ev	*procs_ev;
	uint64_t		procs_freed;
	/* The monitoring plan (mm_plan.c): rules in order of number;
	 * those this version fires are armed (doc/plans.md). */
	struct mm_plan		*plans;
	unsigned		nplans;
	uint32_t		plan_next;	/* the last number given */
	int			allow_exec;	/* --allow-exec */
	uint64_t		plan_fired;	/* firings, every rule */
	char			*plan_base;	/* the file a plan first rotated */
	struct mm_plan_q	*plan_q;	/* triggers met while writing,
						   firings left for later */
	/* Processes a plan stopped, until one continues them. */
	struct mm_stopped {
		struct mm_node	*node;
		uint32_t	pid;
	}			plan_stopped[64];
	unsigned		plan_nstopped;
	/* FIREs taken from the fire links while a long piece of work runs
	 * (mm_plan_poll): when they were last looked at, and whether they
	 * are being looked at now. */
	uint64_t		plan_polled;
	int			plan_polling;
	/* Actions on the fire links (mm_plan.c, doc/protocol.md 1.13): the
	 * number of the last PLAN sent (an LM applies a newer one only);
	 * CONTROL_ACKs taken from the fire links during long work, counted
	 * at the loop's next turn (a round's end writes to the file). */
	uint32_t		plan_seq;
	struct mm_plan_ack	*plan_acks;
	/* The loop's real-time turn while it takes the fire links
	 * (mm_boost.c): mm-boost, once tried. */
	struct mm_boost		*boost;
	int			boost_tried;
};

/* Processes a scoped enable/disable under a `thread` scope switches at
 * most (the triggering ones, by pid: a thread id names one process a
 * host).  Other scopes keep no list: every writer decides by the rule's
 * scope row (mm_plan.c, put_switches). */
#define MM_PLAN_SW_MAX	64
/* An enable/disable "for D" of a rule in force: the control bits it
 * changed, as they were, put back when its timer ends it. */
struct mm_plan_undo {
	struct mm		*mm;
	struct mm_plan		*p;
	unsigned		act;		/* its action's index */
	int			on;		/* a firing is in force */
	uint32_t		cls_was[8];	/* the bits of its targets */
	uint8_t			eid_was[PLAN_TARGETS_MAX];
	struct loop_ev		*ev;
	/* until a record: when it went on (MM time); an until record
	 * older than that ends nothing. */
	uint64_t		since;
	/* A rule with a scope switches its processes only (doc/plans.md
	 * 4.4), by switch rows (SEG_ROW_SWITCH) to the LMs, not the
	 * control words; under a `thread` scope, those of the processes
	 * it switched while in force (sw). */
	int			scoped;
	unsigned		nsw;
	struct mm_sw {
		struct mm_node	*node;
		uint32_t	pid;
	}			sw[MM_PLAN_SW_MAX];
};

/* A rule of the plan, in canonical form (doc/plans.md), its parsed form
 * and its state. */
struct mm_plan {
	struct mm		*mm;
	uint32_t		n;		/* from 1, never reused */
	uint64_t		ts;		/* MM time it was added */
	char			*text;
	struct plan_rule	*rule;
	const char		*unarmed;	/* why it does not fire, or NULL */
	uint64_t		fired;		/* firings so far */
	uint64_t		last_ns;	/* MM time of the last one */
	struct mm_plan_undo	undo[PLAN_ACTS_MAX];
	struct loop_ev		*snap_ev;	/* a snapshot's second round */
	struct loop_ev		*time_ev;	/* every D, at HH:MM */
	int			exec_pid;	/* its exec's command, running */
	uint64_t		exec_ns;	/* when it was started */
	struct mm_plan		*next;
};

/* mm_plan.c */
/* Loads plan file path (-P) at start, after allow_exec is set.  0; -1
 * with the error in why (FILE:LINE:COL: ..., its line and a caret); -2 if
 * the file cannot be read (why: "PATH: reason"). */
int mm_plan_load(struct mm *mm, const char *path, char *why, size_t cap);
/* grmctl plan ARG: add RULE, list, del N; answers ctl. */
void mm_plan_command(struct mm *mm, struct mm_conn *ctl, const char *arg);
/* The plan as plan list and status show it; returns what snprintf
 * would. */
size_t mm_plan_list(const struct mm *mm, char *buf, size_t cap);
/* Writes #PLAN add lines to w: rule n, or every rule (n 0).  0 or -1. */
int mm_plan_write(const struct mm *mm, struct tape_w *w, uint32_t n);
void mm_plan_free(struct mm *mm);
/* mm_ctl.c: sets (on) or clears bit b of the words w. */
void mm_set_bit(uint32_t *w, uint32_t b, int on);
/* mm_out.c: the name process pid of node n started with, or NULL. */
const char *mm_proc_name(struct mm_node *n, uint32_t pid);
/* Sends the armed rules' watched rows (PLAN) to LM c (ready), or to
 * every ready LM (c NULL). */
void mm_plan_send(struct mm *mm, struct mm_conn *c);
/* A FIRE from LM c, or from an LM's fire link c (its times converted by
 * that LM's connection): a row matched.  0, or -1 (malformed: close c). */
int mm_plan_fire(struct mm *mm, struct mm_conn *c, struct wire_rd *msg);
/*
 * The fire links (doc/protocol.md 1.13).  mm_fire_of: the peer an action
 * for LM c (its CONTROL, PLAN, SIGNAL) goes on: its fire link if it has
 * one made, for the LM's firing thread to apply at once, else c's own.
 * mm_fire_owner: the ready LM connection of fire link c (c itself if it
 * is one), NULL if that LM is not connected now.  mm_fire_gone: fire
 * link c closes (already out of the list): what may have been lost with
 * it goes again to its LM (on its data link, or a newer fire link): the
 * CONTROL of every round still waiting for that LM, and its PLAN; a
 * SIGNAL sent on it and not read is lost (no one can know).
 */
struct peer *mm_fire_of(struct mm *mm, struct mm_conn *c);
/*
 * The loop's real-time turn for the fire links (mm_boost.c, doc/plans.md
 * 4.4).  mm_boost_watch: fire link socket fd watched (on) or no longer
 * (off: before it closes; the loop is lowered too); the first starts
 * mm-boost where mainmon may use SCHED_FIFO.  mm_boost_done: the loop
 * took what the links held and wrote what it sent: mm-boost puts it back
 * to SCHED_OTHER if it was raised.  mm_boost_stop: mm-boost ended.
 */
void mm_boost_watch(struct mm *mm, int fd, int on);
void mm_boost_done(struct mm *mm);
/* Whether mm-boost raised the loop for a fire link (not yet lowered). */
int mm_boost_raised(const struct mm *mm);
void mm_boost_stop(struct mm *mm);
/* The CONTROL_ACKs mm_plan_poll kept for the loop's turn counted now (in
 * the loop, before a newer one: a round's #CONTROL line is not written
 * after a later round's). */
void mm_plan_acks(struct mm *mm);
/* mm_peer.c: LM c applied the CONTROL of round at t (its clock): c is
 * done with that round. */
void mm_control_ack(struct mm *mm, struct mm_conn *c, uint32_t round,
		    uint64_t t);
struct mm_conn *mm_fire_owner(struct mm *mm, struct mm_conn *c);
void mm_fire_gone(struct mm *mm, struct mm_conn *c);
/*
 * Called often from long pieces of work (a batch taken, records written,
 * DATA decoded): at most every MM_PLAN_POLL_NS, the FIREs waiting on the
 * fire links are taken and fired now, not after the work (doc/plans.md
 * 4.4); a rule that snapshots or rotates fires at the loop's next turn.
 */
#define MM_PLAN_POLL_NS	1000000u
void mm_plan_poll(struct mm *mm);
/* What is queued for the LMs and their fire links written now, as far as
 * their sockets take it (an action's CONTROL, PLAN, SIGNAL). */
void mm_plan_flush(struct mm *mm);
/* Process pid of node ended (#PROC written at ts, MM time): killed by a
 * signal, or exited with status; name: the #PROC line's. */
void mm_plan_proc_end(struct mm *mm, struct mm_node *node, uint32_t pid,
		      int killed, int32_t status, uint64_t ts,
		      const char *name);
/* A #LOSS line was written for (node, pid, tid) at ts. */
void mm_plan_loss(struct mm *mm, struct mm_node *node, uint32_t pid,
		  uint32_t tid, uint64_t ts);

/* mm_peer.c */
/* A new connection from addr (shown in the log). */
void mm_accept(struct mm *mm, int fd, const char *addr);
/* The handshake is complete: c becomes an LM or a ctl as h says, and is
 * welcomed with the MM's proof.  0, or -1 to close it. */
int mm_welcome(struct mm *mm, struct mm_conn *c, const struct wire_hello *h,
	       const unsigned char proof[WIRE_PROOF]);
void mm_conn_free(struct mm_conn *c);
void mm_ctl_reply(struct mm_conn *ctl, int status, const char *text);
/* Sends c a PING (a burst's, or a lone heartbeat: mm_live.c). */
void mm_send_ping(struct mm_conn *c);
/*
 * mm_peer.c: sends c a COLLECT of round with flags, after a clock
 * exchange: the COLLECT leaves when its answer has come back, so that the
 * model that converts the records collected has a sample after them
 * instead of extrapolating to them, and neither end's receive time of
 * the exchange is that of the data (doc/clock-sync.md).
 */
void mm_send_collect(struct mm_conn *c, uint32_t round, uint32_t flags);
/* Sends c a message of one or two u32 (n). */
void mm_send_u32s(struct mm_conn *c, uint16_t type, uint32_t a, uint32_t b,
		  int n);

/* mm_round.c */
/* Starts a round for ctl (may be NULL). cmd: the control command; for
 * MM_PLAN, the answer. */
void mm_round(struct mm *mm, struct mm_conn *ctl, enum mm_what what,
	      const char *cmd);
void mm_status(struct mm *mm, struct mm_conn *ctl);
void mm_status_text(struct mm *mm, char *text, size_t cap);
/* Sends the control state to one LM (round 0: nobody waits). */
void mm_send_control(struct mm *mm, struct mm_conn *c, uint32_t round);
/* LM c just became ready: it is sent every round it is pending in, and
 * added to the final one if a stop is under way. */
void mm_round_ready(struct mm *mm, struct mm_conn *c);
/* LM c will not answer (given up): every round that waits for it is
 * told (its answer names c's host) and goes on without it. */
void mm_coll_give_up(struct mm *mm, struct mm_conn *c);
/* c answered its part of round co (0: all did: co goes on or ends). */
void mm_coll_drop(struct mm *mm, struct mm_coll *co, struct mm_conn *c);
/* Global round co goes to its next phase: from queued to asking the LMs
 * to stop their processes; from that (every LM answered, or the time
 * limit passed) to collecting. */
void mm_round_next(struct mm *mm, struct mm_coll *co);
/* The file can be written again: a stop that waited for it goes on. */
void mm_round_disk_ok(struct mm *mm);
/* Frees a stop still waiting for the disk (mainmon ends). */
void mm_round_finish(struct mm *mm);

/* mm_live.c */
/* Starts the heartbeat: every ready LM is sent something at least every
 * second (doc/protocol.md), a PING if nothing else.  0 or -1. */
int mm_live_init(struct mm *mm);
void mm_live_finish(struct mm *mm);
/* Whether LM c's connection ended as an LM ends its life: with a BYE,
 * or while mainmon stops, not silent nor broken, everything it sent
 * acknowledged. */
int mm_live_clean_end(const struct mm *mm, const struct mm_conn *c);
/* LM c went otherwise (why: "silent for 5 s", "closed"): its host
 * is given up (a #GIVENUP line) and no longer holds the order. */
void mm_live_gone(struct mm *mm, struct mm_conn *c, const char *why);
/* LM c is ready: its host answers again (logged if it was given up). */
void mm_live_returned(struct mm *mm, struct mm_conn *c);
/* On the order's tick: an LM that left a pull unanswered (and sent no
 * data) for --order-wait no longer holds the order (its host given up)
 * until it answers. */
void mm_live_order_check(struct mm *mm, uint64_t now);

/* Each host's lines of grmctl status: its state and its LM's latest
 * status; the bytes written to text[cap]. */
size_t mm_live_status(struct mm *mm, char *text, size_t cap);
/* At stop: each host given up and not back, with what its LM's last
 * status held, as text for the answer (empty if none), and a #GIVENUP
 * line "missing" per host in the trace. */
void mm_live_missing(struct mm *mm, char *text, size_t cap);
/* The #LATE lines, at the end. */
int mm_live_late(struct mm *mm);

/* mm_global.c */
/* Messages of the global scheme from LM c (WIRE_FULL, WIRE_PAUSED,
 * WIRE_RESUMED); 0, or -1 to close c. */
int mm_global_msg(struct mm *mm, struct mm_conn *c, uint16_t type,
		  struct wire_rd *msg);
/* Global round co is over: every LM that stopped its processes is told
 * to let them go; then (from the event loop) the next global round
 * starts: the first queued, or a new one if an LM reached its threshold
 * meanwhile. */
void mm_global_done(struct mm *mm, struct mm_coll *co);
/* LM c goes: its stop ends (marked in the trace), it is no longer in
 * any round's list. */
void mm_global_conn_gone(struct mm *mm, struct mm_conn *c);
/* One line for grmctl status. */
void mm_global_status(struct mm *mm, char *buf, size_t cap);
/* Whether a global round is under way (not queued). */
int mm_global_busy(const struct mm *mm);

/* mm_auth.c */
/* Admission's state (mm->admit), on mm->base.  0 or -1 (out of memory). */
int mm_auth_init(struct mm *mm);
void mm_auth_finish(struct mm *mm);
/* Whether one more connection may be taken into the handshake at all
 * (-1: refused, counted in the log; closed at once, not told why). */
int mm_auth_admit(struct mm *mm, const char *addr);
/* Starts c's handshake and its time limit, counted against its source
 * address: over a bound, an older waiting one, or c itself, is turned
 * away with DENIED.  0, or -1 (out of memory) to free c. */
int mm_auth_start(struct mm_conn *c);
/* Who a MM_CONN_NEW connection says it is: WIRE_BY_LM or WIRE_BY_CTL once
 * its HELLO came, both before; 0 once it was refused (what it sends then
 * is not read). */
unsigned mm_auth_peer(const struct mm_conn *c);
/* Takes a HELLO or AUTH of a MM_CONN_NEW connection, its length checked
 * (wire_check); may free c. */
void mm_auth_msg(struct mm *mm, struct mm_conn *c, uint16_t type,
		 struct wire_rd *msg);
/* Logs that a MM_CONN_NEW connection sent a message its rule refuses
 * (why: wire_check's reason), before it is freed. */
void mm_auth_bad(struct mm_conn *c, const char *why);
/* Logs why a MM_CONN_NEW connection ended (before mm_conn_free). */
void mm_auth_closed(struct mm_conn *c, const char *why);
void mm_auth_free(struct mm_conn *c);

/* mm_ctl.c */
/* Runs a grmctl command line; answers ctl now or when its round ends. */
void mm_command(struct mm *mm, struct mm_conn *ctl, const char *cmd);
/* Keeps a statistics record of (node, pid, tid). */
void mm_stats_put(struct mm *mm, uint32_t node, uint32_t pid, uint32_t tid,
		  const struct rec_stats *st);
/* The statistics, per process, as text (for grmctl stats). */
size_t mm_stats_text(struct mm *mm, char *buf, size_t cap);
/* Writes them to the trace file (at stop). */
int mm_stats_write(struct mm *mm);
void mm_stats_free(struct mm *mm);
/* Remembers block bid's name (len bytes, not NUL-terminated). */
void mm_block_name(struct mm *mm, int32_t bid, const char *name, size_t len);

/* mm_rotate.c */
/* grmctl file NAME: the trace goes on in a new file; answers ctl. */
void mm_rotate(struct mm *mm, struct mm_conn *ctl, const char *name);
/* Notes what a #PROC line of p says (TAPE_PROC_*), for mm_rotate. */
void mm_rotate_note(struct mm_proc *p, int how, uint64_t ts,
		    const char *name);

/* mm_dedup.c */
/* Drops from pc what was already written (trimming it); returns 1 if
 * nothing of it is left, 0 to write it, -1 if it does not fit. */
int mm_dedup(struct mm *mm, struct mm_conn *c, struct mm_piece *pc);
/* Decodes pc's run into its records, their times moved by sh (NULL:
 * not moved), if it is not decoded yet (checked on arrival by
 * rec_dense_scan: cannot fail). */
static inline void
mm_piece_decode(struct mm_piece *pc, struct rec_dense_shift *sh)
{
	static const uint64_t all = UINT64_MAX, none = 0;
	struct rec_dense_shift no = { 1, &all, &none, NULL, 0, 0, NULL };

	if (!pc->undec)
		return;
	if (sh == NULL)
		sh = &no;
	sh->seg = pc->seg;
	(void)rec_dense_decode_shift(pc->data, pc->rlen, pc->rec, pc->len,
	    sh);
	pc->undec = 0;
}
/*
 * A DATA's piece: the run at data[0..rlen), then (with seg or st not
 * NULL) the places of its info.nseg stretches' beginnings (4 bytes
 * each, from the next multiple of 4) and their rec_dense_seg (from the
 * next multiple of 8), then its records (from the next multiple of 8:
 * roff).  Sets the pointers from data (after a realloc); returns roff.
 */
static inline uint32_t
mm_piece_place(struct mm_piece *pc, int seg, int st, int bin)
{
	size_t o = ((size_t)pc->rlen + 3) & ~(size_t)3;

	pc->seg = seg ? (uint32_t *)(void *)(pc->data + o) : NULL;
	o = (o + (seg ? 4 * (size_t)pc->info.nseg : 0) + 7) & ~(size_t)7;
	pc->st = st ? (const struct rec_dense_seg *)(const void *)(pc->data +
	    o) : NULL;
	o = (o + (st ? sizeof *pc->st * pc->info.nseg : 0) + 7) &
	    ~(size_t)7;
	pc->dense = bin ? pc->data : NULL;
	pc->roff = (uint32_t)o;
	pc->rec = pc->lazy ? NULL : pc->data + o;
	return pc->roff;
}
/* Forgets the marks of segment seg_id (its LM ended cleanly). */
void mm_dedup_forget(struct mm *mm, uint64_t seg_id);
void mm_dedup_free(struct mm *mm);

/* mm_order.c */
/* The stream of pc's thread, with room in the heap for it; NULL if out of
 * memory. */
struct mm_stream *mm_order_stream(struct mm *mm, const struct mm_piece *pc);
/* Puts a piece in its stream s: its records checked, on mainmon's clock,
 * none before s->last_ts (mm_out.c).  This cannot fail. */
void mm_order_add(struct mm *mm, struct mm_stream *s, struct mm_piece *pc);
/* Writes what waits, in time order, up to (not including) time w; all of
 * it with UINT64_MAX.  Then acknowledges the collections fully written.
 * Returns 0, or -1 if the file cannot be written (nothing acknowledged). */
int mm_order_write(struct mm *mm, uint64_t w);
/* Acknowledges what is in the file (mm_out_done) of the collections and
 * pieces written. */
void mm_order_acks(struct mm *mm);
/* The watermark: the oldest time an LM may still send, MM ns. */
uint64_t mm_order_watermark(const struct mm *mm);
/* The time up to which every ready LM's segment was scanned, MM ns: what
 * a completed collection round writes. */
uint64_t mm_order_scanned(const struct mm *mm);
/* Writes what the watermark allows; asks laggard LMs for their data (on
 * a tick, also those idle a while). */
int mm_order_advance(struct mm *mm, int tick);
/* Forgets the threads' streams of node's processes pid[0..n) (freed:
 * ended, with every record written), those with nothing waiting; sorts
 * pid.  A thread's stream otherwise stays for mainmon's life. */
void mm_order_forget(struct mm *mm, uint32_t node, uint32_t *pid, size_t n);
void mm_order_free(struct mm *mm);
/* The connection goes: its acknowledgements are no longer sent. */
void mm_order_conn_gone(struct mm_conn *c);

/* mm_peer.c: writes c's clock model (#SYNC) if it changed since written,
 * at most every few seconds unless forced. */
void mm_write_sync(struct mm *mm, struct mm_conn *c, int force);
/* mm_peer.c: writes model u of c as a #SYNC line of w; 0, -1 (errno). */
int mm_sync_line(struct tape_w *w, const struct mm_conn *c,
		 const struct mm_sync_used *u);
/* mm_peer.c: c's TSC calibration as a #TSC line of w (nothing if its
 * clock is CLOCK_MONOTONIC); 0, -1 (errno). */
int mm_tsc_line(struct tape_w *w, const struct mm_conn *c);
/* mm_peer.c: host time h of c on mainmon's clock, by the published model
 * whose range it falls in (mm_sync_conv). */
uint64_t mm_conv(struct mm_conn *c, uint64_t h);
/* mm_order.c: the #ORDER and #CAUSAL lines, at the end. */
int mm_order_summary(struct mm *mm);

/* mm_causal.c */
/* Sees a record as it is written (in time order). */
void mm_causal_record(struct mm *mm, uint32_t node, uint32_t pid,
		      uint64_t ts, int32_t eid, const struct rec_field *f,
		      unsigned n);
void mm_causal_free(struct mm *mm);
/* Node's clock stepped (a #CLOCKSTEP line's fields): the bound of its
 * records where those stamped around the step can lie includes the step
 * (clk_step_window), as the reader's does.  The latest MM_CAUSAL_STEPS
 * steps of a node are kept. */
void mm_causal_step(struct mm *mm, uint32_t node, uint64_t ts, int64_t step,
		    uint64_t host_lo, uint64_t host_hi);
/* Node's model u is published: it gives the bound of the node's records
 * from u->from on.  Older models no record still to come needs are
 * dropped.  -1 (ENOMEM): the node's records are then not classified. */
int mm_causal_model(struct mm *mm, uint32_t node,
		    const struct mm_sync_used *u);
/* The rank process (node, pid) gave itself (a -6 record written): 0 and
 * *rank, or -1 if it gave none. */
int mm_causal_rank(struct mm *mm, uint32_t node, uint32_t pid, int64_t *rank);

/* mm_out.c */
/* Creates the trace file path, which must not exist (O_EXCL: a link is
 * not followed), and writes its header.  0, or -1 with errno. */
int mm_out_open(struct mm *mm, const char *path);
/* Takes the conn's pending batch (DONE of round; below: the LM's "sent
 * below" time, 0 if none) into the streams, and writes what may be. */
int mm_out_batch(struct mm *mm, struct mm_conn *c, uint32_t round,
		 uint64_t below);
/* Writes one piece's records from pc->pos up to time w (exclusive), at
 * most MM_PIECE_STEPS of them (or stretches of one type: binary); 0 or
 * -1 (cannot write).  pc->pos says how far it went. */
#define MM_PIECE_STEPS	2048
int mm_out_piece(struct mm *mm, struct mm_piece *pc, uint64_t w);
/* The time of a lazy piece's record at pc->pos (on mainmon's clock). */
uint64_t mm_out_lazy_ts(const struct mm_piece *pc);
/* The records of lazy pieces a and b before w (and in time order) that
 * need no look, merged into the binary file record by record (two
 * threads taking turns); returns how many, 0 if none can go so.  Never a
 * piece's last record. */
uint64_t mm_out_pair(struct mm *mm, struct mm_piece *a, struct mm_piece *b,
		     uint64_t w);
/*
 * Whether the file's writes fail (a full disk): 1 while they do, and the
 * merge then writes no more records (they stay with it and their LMs,
 * unacknowledged); tried again at most every out_wait_ms here and by a
 * timer, which then advances the merge.  Logged once when it starts and
 * once when it ends.
 */
int mm_out_stalled(struct mm *mm);
/* Hands what is written to the system: 0, 1 if it cannot be now (stalled:
 * tried again later, nothing lost), -1 on another error. */
int mm_out_write_out(struct mm *mm);
/* Frees the timers, at exit. */
void mm_out_finish(struct mm *mm);
/* The file's writes from its thread (tape_async), their end watched by
 * the loop; the writer's own if that cannot be.  After each open. */
void mm_out_async(struct mm *mm);
/* Where what was given to the file so far ends, and how much of it is
 * written (in the file, the thread done with it), counted over all files
 * of a rotation; with no file open, UINT64_MAX for both. */
uint64_t mm_out_end(const struct mm *mm);
/* 1 if the file's thread has much in hand and more (tape_full): the merge
 * holds its records back while it may (mm_order_advance). */
int mm_out_full(const struct mm *mm);
uint64_t mm_out_done(const struct mm *mm);
/* For grmctl status: "" while the file's writes work, else "cannot
 * write since 12.3 s: No space left on device" (in buf, of n bytes). */
const char *mm_out_status(const struct mm *mm, char *buf, size_t n);
int mm_out_proc(struct mm *mm, struct mm_conn *c, struct wire_rd *msg);
int mm_out_control(struct mm *mm, uint64_t ts, const char *cmd);
void mm_defs_free(struct mm_defs *d);
void mm_node_free(struct mm_node *n);
/* A new node's definitions start with the predefined ones. */
void mm_node_init_defs(struct mm *mm, struct mm_node *n);

#endif /* GRM_MM_H */
