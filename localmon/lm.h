/* SPDX-License-Identifier: MIT */
/* lm.h: the Local Monitor's state, shared by its modules. */
#ifndef GRM_LM_H
#define GRM_LM_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "net/auth.h"
#include "net/mmid.h"
#include "net/wire.h"
#include "shm/seg.h"
#include "util/tsc.h"

/* The LM forwards the segment's chunks and filter as the wire bounds them. */
_Static_assert(WIRE_CHUNK_MAX == SEG_CHUNK_MAX, "a chunk fits a DATA message");
_Static_assert(WIRE_FILTER_MAX == SEG_FILTER_MAX, "the filter fits CONTROL");

struct event_base;
struct evconnlistener;
struct loop_ev;
struct evbuffer;
struct peer;

/* The link to the Main Monitor. */
enum lm_link_state {
	LM_LINK_DOWN,
	LM_LINK_CONNECTING,
	LM_LINK_SYNCING,
	LM_LINK_READY
};

struct lm_client;

/* A collection sent to the MM and not yet acknowledged (oldest first):
 * its chunks stay pinned and unconsumed until the ACK. */
struct lm_flight {
	struct seg_flight	fl;
	uint64_t		lost;		/* reported in its loss record */
	uint64_t		spill_end;	/* replay: file offset sent up to */
	int			replay;		/* a block of the spill file */
	struct evbuffer		*procs;		/* PROC messages sent with it:
						   queued again if it is not
						   acknowledged */
	struct lm_flight	*next;
};

/* A process of the LM that died, seen in the segment it adopted: not
 * attached to this LM; watched until it attaches again or dies. */
struct lm_orphan {
	uint32_t		pid;
	uint32_t		session;
};

#define LM_DEFERRED_MAX	64
/* Collections the LM starts itself that may be in flight at once. */
#define LM_PUSHES_MAX	3
/* Most bytes of definitions kept per process image (for a later MM). */
#define LM_DEFS_MAX	(WIRE_MAX / 2)

struct lm_defs;

/*
 * The global collection scheme (lm_pause.c): the traced processes this LM
 * stopped for a collection round, and the guard process that lets them go
 * if the LM dies meanwhile.
 */
/* A thread stopped for a collection, and how much it had run then. */
struct lm_task {
	uint32_t		pid;
	uint32_t		tid;
	uint64_t		run;		/* ns on a CPU (0: not known) */
	uint64_t		switches;	/* context switches */
};

struct lm_pause {
	int			on;		/* processes are stopped */
	uint32_t		round;
	uint32_t		*pids;		/* stopped by us */
	uint32_t		n;
	uint32_t		cap;
	uint32_t		skipped;	/* not stopped (already were, or
						   could not be) */
	uint64_t		t_begin;	/* LM ns: all stopped */
	uint64_t		t_begin_h;	/* the same, on the segment's
						   clock (lm_now) */
	uint64_t		took;		/* ns to stop them */
	uint64_t		max_ns;		/* the round's time limit */
	/* A thread stopped between reading the clock and committing
	 * commits once let go and run again: until every thread stopped
	 * has run (or a time limit), no DONE says "nothing below" past the
	 * stop's start, less the grace (lm_pause_below); on the segment's
	 * clock. */
	uint64_t		hold_below;
	uint64_t		hold_until;	/* LM ns; 0: no hold; UINT64_MAX
						   while stopped */
	struct lm_task		*tasks;		/* the threads stopped */
	uint32_t		ntasks;
	uint32_t		captasks;
	struct loop_ev	*deadline;
};

/* The guard process beside the LM (lm_guard.c). */
struct lm_guard {
	int			fd;		/* its pipe, or -1 */
	int			pid;		/* 0: none */
};
/* What the LM tells it. */
enum {
	LM_GUARD_ADD = 1,	/* a process about to be stopped (deadline) */
	LM_GUARD_CLEAR = 2,	/* the processes were let go */
	LM_GUARD_BYE = 3	/* a clean exit: no successor */
};

struct lm {
	struct event_base	*base;
	char			mm_id[272];	/* HOST:PORT, for messages */
	struct mmid		mmid;		/* with the token */
	char			dir[96];
	char			sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char			lock_path[256];
	char			info_path[256];
	int			lock_fd;
	int			standalone;	/* started by hand: no idle exit */

	/* The segment. */
	int			shmid;
	struct seg_hdr		*seg;		/* shared: writers may scribble */
	struct seg		view;		/* its layout, kept privately */
	uint64_t		seg_id;		/* its id, kept privately */
	size_t			seg_size;
	uint64_t		bad_bytes;	/* scribbled, skipped */
	int			adopted;	/* the segment of an LM that died */
	/* The segment's clock (lm_clock.c): the TSC, calibrated. */
	int			tsc;
	struct tsc_pair		tsc_first;	/* the calibration's start */
	struct tsc_cal		tsc_cal;
	struct lm_orphan	*orphans;
	int			norphans;

	/* Traced processes. */
	struct evconnlistener	*listener;
	struct lm_client	*clients;
	int			nclients;
	int			ever_clients;
	uint64_t		dead;		/* processes ended */
	uint32_t		next_session;
	struct evbuffer		*procs;		/* WIRE_PROC messages to send */

	/* The Main Monitor.  LM_LINK_CONNECTING lasts until it proved the
	 * token. */
	struct peer		*mm;
	enum lm_link_state	mm_state;
	struct auth_client	auth;
	int			refused;	/* it refused our token, or did
						   not prove it: never again */
	struct loop_ev	*retry;
	struct loop_ev	*hs_timer;	/* the handshake's time limit */
	/* The latest PONG (its PING's t_mm, the clock read before it was
	 * sent): the next PONG says when it left by the kernel (lm_mm.c,
	 * doc/clock-sync.md). */
	uint64_t		pong_mm, pong_t3;
	int			retry_s;
	uint64_t		mm_down_since;	/* ns; 0 while connected */
	int			push_wanted;
	int			outstanding;	/* DONEs not yet acknowledged */
	struct lm_flight	*flights, **flights_tail;
	uint64_t		flights_pushed;	/* ever */
	uint64_t		flights_acked;
	struct lm_defs		*defs;		/* per process image */
	uint64_t		pushes;		/* collections it started */
	/* COLLECTs that arrived while the spill file was being replayed:
	 * answered after it, in order (round, probe). */
	uint32_t		deferred[LM_DEFERRED_MAX][2];
	int			ndeferred;

	/* The spill file: data kept while the MM is away, as framed
	 * messages, replayed to it first when it is back. */
	char			spill_path[256];
	int			spill_fd;
	uint64_t		spill_max;	/* bytes; 0: no spilling */
	uint64_t		spill_bytes;	/* in the file */
	uint64_t		spill_sent;	/* replayed up to (in flight) */
	uint64_t		spill_acked;	/* replayed and acknowledged */
	uint64_t		spilled_total;

	/* Life. */
	struct loop_ev	*tick;
	uint64_t		idle_since;	/* ns; 0 while clients live */
	uint64_t		linger_ns;
	uint64_t		mm_timeout_ns;
	int			exiting;
	int			final_sent;	/* collected since exiting began */
	int			bye_sent;	/* BYE queued: the end, once
						   written */
	int			finished;
	int			stopped;	/* the MM asked for the final
						   collection */

	/* The global scheme: the MM collects every LM at once when one
	 * reaches its threshold (WIRE_READY_GLOBAL). */
	int			global;
	uint64_t		full_sent;	/* ns of the last FULL, 0: none
						   since the last collection */
	struct lm_pause		pause;

	/* Liveness and pushes on time (lm_mm.c), and the guard (lm_guard.c):
	 * silent_s: GRM_LM_SILENT; push_ns: GRM_PUSH_INTERVAL (0: off). */
	unsigned		silent_s;
	uint64_t		push_ns;
	struct loop_ev	*push_timer;
	struct lm_guard		guard;
	/* Successors (lm_guard.c): this LM is the successor-th in a row a
	 * guard started for one that died soon after its start (0: not a
	 * successor, or one started after an LM that lived). */
	unsigned		successor;
	/* The LM's life (lm_main.c): how far it was made (enum lm_made),
	 * and its signals. */
	int			made;
	struct loop_ev	*sigterm, *sigint;
	/* The fire link (lm_fire.c): FIREs to the MM on a connection of
	 * their own, made once the data link is ready. */
	struct peer		*fire;
	int			fire_ready;	/* its handshake is complete */
	struct auth_client	fire_auth;
	uint64_t		fire_polled;	/* ns: slots last looked at */
	/* The firing thread (lm_fire.c): NULL while it is not running. */
	struct lm_firer		*firer;
	/* Actions (CONTROL, PLAN, SIGNAL) come on the data link, read by the
	 * loop, or on the fire link, read and applied by the firing
	 * thread's link thread (lm_fire.c); both apply under lm_act_lock,
	 * a state only if it is newer than the one in place: CONTROL by
	 * its round, PLAN by its number (both 0 again at each READY). */
	uint32_t		ctl_round;	/* act lock */
	uint32_t		plan_seq;	/* act lock */
	struct loop_ev		*fire_give_ev;	/* the link to the threads */
};

/* The steps of an LM's life, in the order they are made; each is
 * finished, in reverse order, by lm_unmake. */
enum lm_made {
	LM_MADE_NOTHING,
	LM_MADE_LOOP,		/* event base, timers, signals */
	LM_MADE_LOCK,		/* the election lock held */
	LM_MADE_SEGMENT,	/* created or adopted; the .pid file names it */
	LM_MADE_SPILL,		/* the spill file, if no other LM holds it */
	LM_MADE_LISTEN,		/* the socket: processes may attach */
	LM_MADE_MM,		/* the link to the MM */
	LM_MADE_FIRER,		/* the firing thread (lm_fire.c) */
	LM_MADE_PAUSE,		/* the global scheme's stops and guard */
	LM_MADE_SERVE		/* the timer and the signals on */
};

/* lm_clients.c */
int lm_listen(struct lm *lm);
/* A collection starts: flushes asked so far are answered at its ACK;
 * returns how many there are. */
int lm_flushes_start(struct lm *lm);
/* Answers flushes in flight: delivered (1) or only kept (0). */
void lm_flushes_done(struct lm *lm, int delivered);
void lm_unlisten(struct lm *lm);
void lm_clients_free(struct lm *lm);
/* Reads now what processes wrote to their sockets and the loop has not
 * read yet (notes, and the end of a process that is gone), so that a
 * collection asked for after a process ended holds its end. */
void lm_clients_drain(struct lm *lm);
/* Announces every attached process again (PROC RESUME: a new MM). */
void lm_clients_resume_all(struct lm *lm);
/* Calls fn for every traced process: attached, and orphans. */
void lm_clients_each(struct lm *lm, void (*fn)(struct lm *, uint32_t));

/* lm_mm.c */
/* The CONTROL and SIGNAL messages at the head of the MM's input, applied
 * now (lm_fire_poll). */
void lm_mm_poll(struct lm *lm);
/* The LM exits with everything delivered: BYE to the MM, then
 * lm_finish once it is written (at once if the MM is not there). */
void lm_bye(struct lm *lm);
/* Timers (retry, handshake, pushes on time); lm_mm_finish frees what
 * lm_mm_init made that main does not. */
void lm_mm_init(struct lm *lm);
void lm_mm_finish(struct lm *lm);
void lm_mm_connect(struct lm *lm);
/* Copies out everything committed and sends it with a DONE for round;
 * probe: with dormant sensors' values. */
int lm_collect(struct lm *lm, uint32_t round, int probe);
/* Sends one DATA message: records of (pid, tid, session) from chunk seq
 * at off (seq 0: not a chunk's). */
int lm_send_data(struct lm *lm, uint32_t pid, uint32_t tid, uint32_t session,
		 uint64_t seq, uint64_t off, const void *data, size_t len);
/* Whether free chunks are below the push threshold now. */
int lm_below_threshold(const struct lm *lm);
/* Asks for a push as soon as the MM is ready. */
void lm_push(struct lm *lm);
/* Free chunks fell below the threshold: a push, or, in the global scheme,
 * a FULL to the MM (which collects every LM). */
void lm_threshold(struct lm *lm);
/*
 * What a collection's pieces go through (lm_mm.c, for lm_spill.c too):
 * to the MM, to a spill buffer, or only counted.
 */
struct lm_emit {
	struct lm	*lm;
	int		err;
	struct evbuffer	*spill;		/* spilling: the messages go here */
	uint64_t	room;		/* spilling: bytes the file may take */
	uint64_t	events;		/* counting only (lm_count_left) */
	int		count;
	uint64_t	now;		/* the time of the LM's own records: a
					   collection's scan (0: the clock) */
};
/* A seg_emit_fn on a struct lm_emit; 0, or -1 (ec->err if it failed). */
int lm_emit_piece(void *arg, uint32_t pid, uint32_t tid, uint32_t session,
		  uint64_t seq, uint64_t off, const void *data, size_t len,
		  int meta);
/* Every thread's table (statistics; values too if probe) as records;
 * 0 or -1. */
struct seg_flight;
int lm_emit_tables(struct lm_emit *ec, int probe, struct seg_flight *fl);
/* Writers' losses never reported, plus extra, as one loss record of
 * process 0; the events reported (0: none), or -1. */
int64_t lm_report_losses(struct lm *lm, struct lm_emit *ec, uint64_t extra);
/* Ends a collection: DONE(round) with "sent below", and f waits for its
 * ACK (owned by the flight list from now on). */
void lm_done_push(struct lm *lm, uint32_t round, struct lm_flight *f,
		  uint64_t below);
void lm_flight_free(struct lm_flight *f);

/* lm_spill.c */
/* While the MM is away: moves data from the segment to the spill file,
 * the FULL chunks only unless all. */
void lm_spill(struct lm *lm, int all);
/* Sends the next block of the spill file with a DONE; 0, or -1 (what
 * could not be read is dropped, logged). */
int lm_spill_replay(struct lm *lm);
/* The MM acknowledged the replay up to byte end; all of it: emptied. */
void lm_spill_acked(struct lm *lm, uint64_t end);
/* Takes the spill file (one LM at a time) and finds how much of it is
 * whole messages; -1 if another LM holds it or it cannot be opened. */
int lm_spill_take(struct lm *lm);
/* Releases it, removed if empty. */
void lm_spill_close(struct lm *lm);
/* Appends a loss record of n events (and of writers' unreported losses). */
void lm_spill_lost(struct lm *lm, uint64_t n);
/* What could not be kept at the end (spill file full, MM absent): the
 * events left in the segment, counted and logged; returns the count. */
uint64_t lm_count_left(struct lm *lm);

/* lm_pause.c */
void lm_pause_init(struct lm *lm);
/* The MM asked (PAUSE): stops every traced process, answers PAUSED. */
void lm_pause(struct lm *lm, uint32_t round, uint32_t max_ms);
/* Lets the stopped processes go, for why (REC_COLL_END_*); answers
 * RESUMED if the MM is there. */
void lm_resume(struct lm *lm, unsigned why);
/* The "sent below" time a collection may claim (doc/protocol.md 1.8):
 * below, or earlier around a stop. */
uint64_t lm_pause_below(struct lm *lm, uint64_t below);
/* A process attached during a stop: stopped too. */
void lm_pause_attached(struct lm *lm, uint32_t pid);
/* The global scheme: asks the MM for a round (FULL), at most once a
 * second until a collection is acknowledged; not while the processes
 * are stopped (lm_mm.c). */
void lm_full(struct lm *lm);
/* The MM says the scheme is global. */
void lm_pause_global(struct lm *lm);
/* Reaps the guard if it died; a new one watches the stopped processes. */
void lm_pause_tick(struct lm *lm);
/* Lets everything go and ends the guard (the LM exits). */
void lm_pause_end(struct lm *lm);

/* lm_guard.c */
/* Successors that die within LM_SUCCESSOR_QUICK_NS of their start, in a
 * row: the guard waits 0.5 s, doubled each time, before the next, and
 * starts no more than LM_SUCCESSOR_MAX (then the segment waits for the
 * next LM of its MM on the host, and mainmon's stop names it missing). */
#define LM_SUCCESSOR_MAX	5u
#define LM_SUCCESSOR_QUICK_NS	10000000000ull
/* Starts the guard (at the LM's start, after the segment). */
void lm_guard_init(struct lm *lm);
/* Starts it if it is not running; 0, or -1 (logged). */
int lm_guard_start(struct lm *lm);
/* Tells it op (LM_GUARD_*); -1 if it is gone. */
int lm_guard_send(struct lm *lm, uint32_t op, uint32_t pid,
		  uint64_t deadline);
/* Reaps it if it died, and starts another unless the LM is exiting;
 * returns 1 if a new one was started. */
int lm_guard_tick(struct lm *lm);
/* A clean exit: it ends without starting a successor. */
void lm_guard_end(struct lm *lm);
/* Sends SIGCONT to each of pids[n]. */
void lm_cont_all(const uint32_t *pids, uint32_t n);

/* lm_defs.c */
/* Keeps the definition records in data (whole records) of an image. */
void lm_defs_note(struct lm *lm, uint32_t pid, uint32_t session,
		  const void *data, size_t len);
/* The image of session ended: forget its definitions once delivered. */
void lm_defs_ended(struct lm *lm, uint32_t session);
/* A flight was acknowledged: drop what is no longer needed. */
void lm_defs_acked(struct lm *lm);
/* Sends every image's definitions (a new MM connection); pieces or -1. */
int lm_defs_send(struct lm *lm);
void lm_defs_free(struct lm *lm);

/* lm_conf.c: what localmon was asked to do, its options and environment,
 * every value checked before anything is made. */
struct lm_conf {
	struct mmid	mmid;		/* --mm, else GRM_MM, with the token */
	int		lockfd;		/* --lock-fd (the election lock), or -1 */
	int		spawned;	/* started by a traced process */
	unsigned	successor;	/* --successor (lm_guard.c) */
	int		debug;
	double		linger;		/* --linger, else GRM_LM_LINGER: s */
	double		mm_timeout;	/* GRM_LM_MM_TIMEOUT: s */
	uint64_t	segsize;	/* GRM_SEGSIZE */
	uint64_t	chunksize;	/* GRM_CHUNKSIZE */
	uint64_t	threshold;	/* GRM_THRESHOLD: % */
	uint64_t	spill_max;	/* GRM_SPILL_MAX */
	uint64_t	silent_s;	/* GRM_LM_SILENT: 0 never */
	double		push_s;		/* GRM_PUSH_INTERVAL: 0 off */
	int		policy;		/* GRM_POLICY: SEG_POLICY_* */
	int		clock;		/* GRM_CLOCK: 0 monotonic, 1 tsc */
};

/*
 * Reads localmon's options and environment into c, checking every value.
 * Returns -1 to go on, or the status to exit with: 0 after --help, 2 for a
 * usage error, 1 for a bad value (said on stderr in one line,
 * "GRM_THRESHOLD=abc: not a percentage of free space (1 to 99)").
 */
int lm_conf_read(struct lm_conf *c, int argc, char **argv);

/* lm_seg.c */
/* Adopts the segment of a dead LM (its .pid file names it) or creates one
 * of c's sizes, threshold and policy, and names it in the .pid file; the
 * election lock is held.  0, or -1 (logged, nothing left). */
int lm_segment_make(struct lm *lm, const struct lm_conf *c);
/* KiB of shared memory this process maps by 2 MiB pages (the segment's,
 * seg_attach); 0 where there are none or it cannot tell. */
unsigned long long lm_seg_huge_kib(void);
/* Removes the segment, then the .pid file if it still names this LM. */
void lm_segment_unmake(struct lm *lm);

/* lm_clock.c: the segment's clock */
/* Chooses the clock of a segment just made (GRM_CLOCK=tsc where
 * tsc_usable, else CLOCK_MONOTONIC, said in one line) or keeps an adopted
 * one's, and calibrates the TSC (20 ms).  0, or -1 if the adopted
 * segment's clock cannot be read here. */
int lm_clock_start(struct lm *lm, int want_tsc);
/* Now on the segment's clock: every host time the LM sends. */
uint64_t lm_now(const struct lm *lm);
/* A duration of ns in the segment clock's units. */
uint64_t lm_clock_dur(const struct lm *lm, uint64_t ns);
/* Right after the handshake: a TSC segment's calibration to the MM. */
void lm_clock_send(struct lm *lm);

/* lm_main.c */
void lm_begin_exit(struct lm *lm, const char *why);

/* lm_plan.c: monitoring plans (doc/plans.md 7).  Puts mainmon's PLAN
 * rows into the segment if it is newer than the one in place (the loop:
 * takes the act lock, logs): NULL, or what is wrong with msg (nothing is
 * applied).  lm_plan_put: the same with the act lock held, logging
 * nothing (the firing thread); *n: its rows, *applied 0 if it was
 * older. */
const char *lm_plan_apply(struct lm *lm, struct wire_rd *msg);
const char *lm_plan_put(struct lm *lm, struct wire_rd *msg, uint32_t *n,
			int *applied);
/* lm_mm.c: a CONTROL into the segment's control words if newer than the
 * one in place (act lock held, nothing logged); its round in *round,
 * *applied 0 if it was older.  NULL, or what is wrong with msg.
 * lm_control_apply: the loop's (takes the lock, then the CONTROL_ACK on
 * the data link). */
const char *lm_control_put(struct lm *lm, struct wire_rd *msg,
			   uint32_t *round, int *applied);
const char *lm_control_apply(struct lm *lm, struct wire_rd *msg);
/* lm_mm.c: sends CONTROL_ACK(round) on the data link, t: when applied
 * (the segment's clock). */
void lm_control_ack(struct lm *lm, uint32_t round, uint64_t t);
/* lm_fire.c: the lock the loop and the firing thread apply actions
 * under (nothing while there is no thread); the traced processes the
 * thread may signal (the loop's attach and end, on 1 and 0). */
void lm_act_lock(struct lm *lm);
void lm_act_unlock(struct lm *lm);
void lm_firer_pid(struct lm *lm, uint32_t pid, int on);
/* Frees the slots process pid claimed and never filled (it died). */
void lm_plan_forget(struct lm *lm, uint32_t pid);
/* SIGNAL: stops or continues a process attached to this LM (no other).
 * NULL, or what is wrong with msg. */
const char *lm_plan_signal(struct lm *lm, struct wire_rd *msg);
/* lm_fire.c: the fire link and the firing thread.  Makes the link (the
 * data link is ready; once at a time); drops it (the data link is gone,
 * or it failed): the thread lets go of its socket first. */
void lm_fire_connect(struct lm *lm);
void lm_fire_drop(struct lm *lm);
/* The fire link's local port (0: none), for the log and tests. */
int lm_fire_port(struct lm *lm);
/* Starts the firing thread (the segment is made); 0, or -1 (logged:
 * the LM cannot serve).  Stops and joins it (before the segment goes);
 * nothing if it is not running. */
int lm_firer_start(struct lm *lm);
void lm_firer_stop(struct lm *lm);
/* Every READY firing slot to mainmon (FIRE), the slot freed: woken, the
 * thread sends them on the fire link; without the link, the loop sends
 * them here, with the data; with no mainmon ready, they are left (sent
 * when one is). */
void lm_plan_scan(struct lm *lm);
/* From a long piece of work (a collection): at most every
 * LM_FIRE_POLL_NS, the firing slots sent with the data if there is no
 * fire link (with one, the thread does not wait for this), and the MM's
 * CONTROL and SIGNAL waiting at the head of the data link applied
 * (lm_mm_poll). */
#define LM_FIRE_POLL_NS	1000000u
void lm_fire_poll(struct lm *lm);
/* lm_clients.c: 1 if process pid is attached to this LM now. */
int lm_client_attached(const struct lm *lm, uint32_t pid);
/* Finishes every step made and exits the loop (once). */
void lm_finish(struct lm *lm);
/* Finishes the steps made, down to step `to` (enum lm_made), in reverse
 * order: nothing of them is left (segment, socket, spill or .pid file). */
void lm_unmake(struct lm *lm, int to);
void lm_queue_proc(struct lm *lm, uint32_t pid, uint32_t ppid,
		   uint32_t session, uint32_t what, int32_t status,
		   const char *name);

/* lm_clients.c */
/* What the kernel shows of a process (/proc/PID/stat). */
struct lm_pstat {
	char		comm[32];
	char		state;		/* R, S, Z... */
	unsigned long	flags;		/* PF_* */
	long		code;		/* exit code (wait status), or -1 */
};
/* Reads the start of a small file (/proc) into buf[cap], NUL-terminated;
 * returns the bytes read, or -1. */
ssize_t lm_read_small(const char *path, char *buf, size_t cap);
/* Fills ps; -1 if there is no such process. */
int lm_proc_stat(uint32_t pid, struct lm_pstat *ps);
/* How process pid ended (WIRE_PROC_*), and its status, from what it
 * told us or what the kernel still shows. */
uint32_t lm_death_cause(uint32_t pid, int32_t *status);
/* A session of the adopted segment is attached again (by its process). */
void lm_orphan_resumed(struct lm *lm, uint32_t session);
/* Reaps orphans that died: their chunks are collected, their end sent. */
void lm_orphans_check(struct lm *lm);

/* lm_cpus.c: the LM's CPUs */
/*
 * Moves the LM (before it forks anything, so that its guard and successors
 * follow) to the CPUs GRM_LM_CPUS names; without it, an LM started by a
 * traced process (c->spawned, not a successor) moves off the CPUs it
 * inherited from that process if they are not all the host allows
 * (util/cpus.h's cpus_host), onto the others (all of them if none is
 * left).  0; -1 if GRM_LM_CPUS names CPUs the host does not allow or
 * cannot be applied (said on stderr: the LM must not start).  Any other
 * failure is logged and the LM stays where it is.
 */
int lm_cpus_place(const struct lm_conf *c);
/* The CPUs the LM may run on now, as a CPU list in buf ("" if unknown). */
char *lm_cpus_now(char *buf, size_t cap);

#endif /* GRM_LM_H */
