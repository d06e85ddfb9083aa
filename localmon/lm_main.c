/* SPDX-License-Identifier: MIT */
/* lm_main.c: localmon, the Local Monitor: start-up, election, the shared
 * segment's life, and exit when the job is over. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "lm.h"
#include "net/peer.h"
#include "net/wire.h"
#include "shm/rundir.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/log.h"
#include "util/num.h"
#include "util/sha256.h"

/* GRM_POLICY's choices (util/env.c) are the segment's policies. */
_Static_assert(SEG_POLICY_BLOCK == 0 && SEG_POLICY_DISCARD == 1 &&
    SEG_POLICY_OVERWRITE == 2, "GRM_POLICY's choices");

static void
usage(FILE *f)
{
	fprintf(f, "usage: localmon [-d] [--linger SECONDS] "
	    "[--mm HOST:PORT:TOKEN|@IDFILE]\n"
	    "(without --mm, the identifier is taken from GRM_MM)\n");
}

/* What localmon was asked to do: its options and environment, every value
 * checked by lm_conf_read before anything is made. */
struct lm_conf {
	struct mmid	mmid;		/* --mm, else GRM_MM, with the token */
	int		lockfd;		/* --lock-fd (the election lock), or -1 */
	int		spawned;	/* started by a traced process */
	int		debug;
	double		linger;		/* --linger, else GRM_LM_LINGER: s */
	double		mm_timeout;	/* GRM_LM_MM_TIMEOUT: s */
	uint64_t	segsize;	/* GRM_SEGSIZE */
	uint64_t	chunksize;	/* GRM_CHUNKSIZE */
	uint64_t	threshold;	/* GRM_THRESHOLD: % */
	uint64_t	spill_max;	/* GRM_SPILL_MAX */
	int		policy;		/* GRM_POLICY: SEG_POLICY_* */
};

/* Logs msg, a bad value's message; returns 1, localmon's exit status. */
static int
lm_conf_bad(const char *msg)
{
	log_msg(GRM_LOG_FATAL, "%s", msg);
	return 1;
}

/* The checks the table cannot make: a chunk a multiple of 8, a segment
 * that holds two chunks and that this host's memory holds.  0 or 1. */
static int
lm_conf_sizes(const struct lm_conf *c)
{
	char msg[NUM_MSG_MAX], what[96];
	const char *s;
	uint64_t mem;
	long pages = sysconf(_SC_PHYS_PAGES), pg = sysconf(_SC_PAGESIZE);

	if (c->chunksize % REC_ALIGN != 0)
		return lm_conf_bad(env_msg(ENV_CHUNKSIZE, msg, sizeof msg));
	s = env_get(ENV_SEGSIZE) != NULL ? env_get(ENV_SEGSIZE) :
	    env_vars[ENV_SEGSIZE].def;
	if (c->segsize < seg_size_for(2, (uint32_t)c->chunksize)) {
		snprintf(what, sizeof what, "a size that holds two chunks "
		    "(%zu bytes or more)", seg_size_for(2,
		    (uint32_t)c->chunksize));
		return lm_conf_bad(num_msg(msg, sizeof msg, "GRM_SEGSIZE", s,
		    what));
	}
	mem = pages > 0 && pg > 0 ? (uint64_t)pages * (uint64_t)pg : 0;
	if (mem > 0 && c->segsize > mem) {
		snprintf(what, sizeof what, "a size this host's memory holds "
		    "(%lluM or less)", (unsigned long long)(mem >> 20));
		return lm_conf_bad(num_msg(msg, sizeof msg, "GRM_SEGSIZE", s,
		    what));
	}
	return 0;
}

/*
 * Reads localmon's options and environment into c, checking every value,
 * before anything is made.  Returns -1 to go on, or the status to exit
 * with: 0 after --help, 2 for a usage error, 1 for a bad value (said on
 * stderr in one line, "GRM_THRESHOLD=abc: not a percentage ...").
 */
static int
lm_conf_read(struct lm_conf *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mm", required_argument, NULL, 'm' },
		{ "lock-fd", required_argument, NULL, 'L' },
		{ "spawned", no_argument, NULL, 'S' },
		{ "linger", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *why, *idarg = NULL, *linger = NULL;
	char idline[MMID_MAX], msg[NUM_MSG_MAX];
	uint64_t u;
	int o;

	memset(c, 0, sizeof *c);
	c->lockfd = -1;
	while ((o = getopt_long(argc, argv, "dm:l:h", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			c->debug = 1;
			break;
		case 'm':
			idarg = optarg;
			break;
		case 'L':
			if (num_parse_u64(optarg, 0, INT_MAX, &u) != 0)
				return lm_conf_bad(num_msg(msg, sizeof msg,
				    "--lock-fd", optarg, "a descriptor"));
			c->lockfd = (int)u;
			break;
		case 'S':
			c->spawned = 1;
			break;
		case 'l':
			linger = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (idarg == NULL)
		idarg = env_get(ENV_MM);
	if (idarg == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (linger != NULL && num_parse_double(linger, 0, 86400,
	    &c->linger) != 0)
		return lm_conf_bad(num_msg(msg, sizeof msg, "--linger",
		    linger, "a number of seconds (0 to 86400)"));
	/* Every variable of the table, not only ours: a bad setting of the
	 * job is refused here as in the traced processes. */
	if (env_check(NULL, 0, msg, sizeof msg) != 0)
		return lm_conf_bad(msg);
	if (linger == NULL)
		(void)env_seconds(ENV_LM_LINGER, &c->linger);
	(void)env_seconds(ENV_LM_MM_TIMEOUT, &c->mm_timeout);
	(void)env_u64(ENV_SEGSIZE, &c->segsize);
	(void)env_u64(ENV_CHUNKSIZE, &c->chunksize);
	(void)env_u64(ENV_THRESHOLD, &c->threshold);
	(void)env_u64(ENV_SPILL_MAX, &c->spill_max);
	(void)env_choice(ENV_POLICY, &c->policy);
	if (lm_conf_sizes(c) != 0)
		return 1;
	/* The token is never written anywhere: messages show HOST:PORT. */
	if (mmid_read(idarg, idline, sizeof idline, &why) != 0) {
		log_msg(GRM_LOG_FATAL, "%s: %s", idarg, why);
		return 1;
	}
	o = mmid_parse(idline, &c->mmid, &why);
	hmac_wipe(idline, sizeof idline);
	if (o != 0) {
		log_msg(GRM_LOG_FATAL, "main monitor identifier: %s", why);
		return 1;
	}
	return -1;
}

void
lm_queue_proc(struct lm *lm, uint32_t pid, uint32_t ppid, uint32_t session,
	      uint32_t what, int32_t status, const char *name)
{
	unsigned char buf[WIRE_HDR + 128];
	struct wire_wr w;

	wire_wr_init(&w, buf + WIRE_HDR, sizeof buf - WIRE_HDR);
	wire_put_u32(&w, pid);
	wire_put_u32(&w, ppid);
	wire_put_u32(&w, what);
	wire_put_u32(&w, (uint32_t)status);
	wire_put_u64(&w, clk_mono_ns());
	wire_put_str(&w, name);
	wire_put_u32(&w, session);
	if (w.err)
		return;
	wire_header(buf, WIRE_PROC, (uint32_t)w.len);
	evbuffer_add(lm->procs, buf, WIRE_HDR + w.len);
}

/* The share of free chunks below which the LM pushes (GRM_THRESHOLD, a
 * percentage, default 50). */
static uint32_t
threshold_for(uint32_t nchunks, uint64_t percent)
{
	uint64_t t;

	t = (uint64_t)nchunks * percent / 100;
	return t < 1 ? 1 : (uint32_t)t;
}

/* The LM's private bookkeeping of the segment, once it is attached. */
static int
lm_seg_own(struct lm *lm, void *mem, size_t size)
{
	lm->seg = mem;
	seg_view(&lm->view, mem, size);
	lm->view.sent = calloc(lm->view.nchunks, sizeof *lm->view.sent);
	if (lm->view.sent == NULL)
		return -1;
	lm->seg_size = size;
	return 0;
}

/* A new segment, of c's sizes, threshold and policy; 0, or -1 (logged,
 * nothing left). */
static int
lm_seg_create(struct lm *lm, const struct lm_conf *c)
{
	size_t size = (size_t)c->segsize;
	size_t chunk = (size_t)c->chunksize;
	void *mem;
	uint64_t id;

	lm->shmid = shmget(IPC_PRIVATE, size, IPC_CREAT | IPC_EXCL | 0600);
	if (lm->shmid == -1) {
		log_warn("cannot create a %zu-byte segment: %s", size,
		    strerror(errno));
		return -1;
	}
	mem = shmat(lm->shmid, NULL, 0);
	if (mem == (void *)-1 || seg_init(mem, size, (uint32_t)chunk) != 0 ||
	    lm_seg_own(lm, mem, size) != 0) {
		log_warn("cannot set up segment (size %zu, chunk %zu)", size,
		    chunk);
		if (mem != (void *)-1)
			shmdt(mem);
		shmctl(lm->shmid, IPC_RMID, NULL);
		lm->seg = NULL;
		return -1;
	}
	lm->seg->threshold = threshold_for(lm->seg->nchunks, c->threshold);
	lm->view.threshold = lm->seg->threshold;
	if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id)
		id = clk_mono_ns() ^ ((uint64_t)getpid() << 32);
	lm->seg->seg_id = id;
	lm->seg_id = id;
	/* Allocate every page now: writers then never wait for the kernel
	 * to zero one. */
	if (seg_populate(mem, size) != 0)
		log_debug("cannot populate the segment: %s", strerror(errno));
	lm->seg->lm_pid = (uint32_t)getpid();
	/* The job's buffer-full policy: processes without GRM_POLICY of
	 * their own follow it. */
	atomic_store(&lm->seg->policy, (uint32_t)c->policy);
	return 0;
}

/* Whether process pid is a live local monitor (not a reused pid, not a
 * zombie nobody reaped yet). */
static int
is_live_lm(int pid)
{
	struct lm_pstat ps;

	return lm_proc_stat((uint32_t)pid, &ps) == 0 &&
	    strcmp(ps.comm, "localmon") == 0 && ps.state != 'Z' &&
	    ps.state != 'X';
}

static void
add_orphan(struct lm *lm, uint32_t pid, uint32_t session)
{
	struct lm_orphan *o;
	int i;

	for (i = 0; i < lm->norphans; i++)
		if (lm->orphans[i].session == session &&
		    lm->orphans[i].pid == pid)
			return;
	o = realloc(lm->orphans, sizeof *o * (size_t)(lm->norphans + 1));
	if (o == NULL)
		return;
	lm->orphans = o;
	o[lm->norphans].pid = pid;
	o[lm->norphans++].session = session;
}

/*
 * The LM named in the .pid file died (killed, crashed) and left its
 * segment: adopt it, with every record committed in it.  What that LM
 * had sent and not had acknowledged is sent again, from `consumed`; the
 * MM drops what it already wrote.  Returns 0, or -1 (create a new one).
 */
static int
lm_seg_adopt_dead(struct lm *lm)
{
	struct shmid_ds ds;
	struct seg_chunk *c;
	int pid, shmid;
	uint32_t i, st;
	void *mem;
	FILE *f;

	f = fopen(lm->info_path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%d %d", &pid, &shmid) != 2) {
		fclose(f);
		return -1;
	}
	fclose(f);
	if (pid <= 0 || pid == getpid() || is_live_lm(pid) ||
	    shmctl(shmid, IPC_STAT, &ds) != 0)
		return -1;
	if (ds.shm_perm.uid != getuid() || ds.shm_perm.cuid != getuid() ||
	    (ds.shm_perm.mode & 0777) != 0600) {
		log_warn("segment %d of the dead local monitor %d is not "
		    "owner-only: not adopted", shmid, pid);
		return -1;
	}
	mem = shmat(shmid, NULL, 0);
	if (mem == (void *)-1)
		return -1;
	if (seg_check(mem, ds.shm_segsz) != 0 ||
	    ((struct seg_hdr *)mem)->lm_pid != (uint32_t)pid ||
	    lm_seg_own(lm, mem, ds.shm_segsz) != 0) {
		/* Not one we can take (scribbled, or not grm's at all):
		 * left alone, never removed. */
		log_warn("segment %d named by %s is not a segment of the dead "
		    "local monitor %d: not adopted, left as it is", shmid,
		    lm->info_path, pid);
		shmdt(mem);
		lm->seg = NULL;
		return -1;
	}
	lm->shmid = shmid;
	lm->seg_id = lm->seg->seg_id;
	seg_adopt(&lm->view);
	lm->next_session = atomic_load(&lm->seg->sessions);
	lm->seg->lm_pid = (uint32_t)getpid();
	lm->adopted = 1;
	/* Processes of the dead LM still writing: watched until they
	 * attach to us or die. */
	for (i = 0; i < lm->view.nchunks; i++) {
		c = seg_chunk(&lm->view, i);
		st = atomic_load(&c->state);
		if (st == SEG_OWNED && c->session != 0 &&
		    c->session <= lm->next_session)
			add_orphan(lm, c->pid, c->session);
		else if (SEG_STATE(st) == SEG_CLAIMED && st >> 2 != 0)
			add_orphan(lm, st >> 2, 0);
	}
	log_warn("adopted segment %d of the dead local monitor %d "
	    "(%u chunks in use, %d processes to watch)", shmid, pid,
	    seg_used(&lm->view), lm->norphans);
	return 0;
}

/* Records pid and segment id for operators and tests; removed at exit. */
static void
write_info(struct lm *lm)
{
	char tmp[300];
	FILE *f;
	int fd;

	snprintf(tmp, sizeof tmp, "%s.tmp", lm->info_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1 || (f = fdopen(fd, "w")) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	fprintf(f, "%d %d\n", (int)getpid(), lm->shmid);
	if (fclose(f) == 0)
		rename(tmp, lm->info_path);
}

/* Removes the .pid file, under the election lock (taken here unless it
 * is held already: a start that failed), if it still names us (a
 * successor may have written its own). */
static void
remove_info(struct lm *lm)
{
	FILE *f;
	int fd = -1, pid = 0;

	if (lm->lock_fd == -1)
		fd = open(lm->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd != -1)
		while (flock(fd, LOCK_EX) == -1 && errno == EINTR)
			;
	if ((f = fopen(lm->info_path, "r")) != NULL) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	if (pid == getpid())
		unlink(lm->info_path);
	if (fd != -1)
		close(fd);
}

void
lm_finish(struct lm *lm)
{
	if (lm->finished)
		return;
	lm->finished = 1;
	lm_unmake(lm, LM_MADE_LOOP);	/* the loop's objects: after it */
	event_base_loopexit(lm->base, NULL);
}

void
lm_begin_exit(struct lm *lm, const char *why)
{
	if (lm->exiting)
		return;
	log_debug("exiting: %s", why);
	lm->exiting = 1;
	lm_unlisten(lm);
	if (lm->mm_state == LM_LINK_READY && !lm->stopped &&
	    lm->outstanding == 0)
		lm_collect(lm, WIRE_ROUND_PUSH, 0);
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lm *lm = arg;
	uint64_t now = clk_mono_ns(), left;

	(void)fd;
	(void)what;
	if (lm->seg == NULL)
		return;
	if (lm->norphans > 0)
		lm_orphans_check(lm);
	if (lm->spill_fd == -1 && lm->spill_max > 0)
		lm_spill_take(lm);
	/* Below the threshold: push to the MM, or spill while it is away. */
	if (lm_below_threshold(lm))
		lm_threshold(lm);
	else if (lm->exiting && lm->mm_state != LM_LINK_READY)
		lm_push(lm);
	lm_pause_tick(lm);
	/* Spawned LMs live while the job does: exit once the last process
	 * is gone (or, if the first never came, after a while). */
	if (!lm->standalone && !lm->exiting && lm->nclients == 0 &&
	    lm->norphans == 0 && lm->idle_since != 0 &&
	    now - lm->idle_since >=
	    (lm->ever_clients ? lm->linger_ns : 10ull * 1000000000u))
		lm_begin_exit(lm, "no traced process left");
	/* No MM for too long, or one that refused us: what is left is
	 * kept in the spill file, or counted. */
	if (lm->exiting && lm->mm_state != LM_LINK_READY &&
	    lm->mm_down_since != 0 && (lm->refused ||
	    now - lm->mm_down_since >= lm->mm_timeout_ns)) {
		if (lm->refused)	/* no time was given to spill */
			lm_spill(lm, 1);
		left = lm_count_left(lm);
		lm_spill_lost(lm, left);
		if (left > 0)
			log_warn("main monitor %s unreachable: %llu events "
			    "lost (%s)", lm->mm_id, (unsigned long long)left,
			    lm->spill_fd == -1 ? "no spill file" :
			    "spill file full; the loss is recorded in it");
		if (lm->spill_bytes > 0)
			log_warn("main monitor %s unreachable: %llu bytes kept "
			    "in %s, for the next local monitor of %s to "
			    "deliver", lm->mm_id,
			    (unsigned long long)lm->spill_bytes,
			    lm->spill_path, lm->mm_id);
		lm_finish(lm);
	}
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	lm_begin_exit(arg, sig == SIGTERM ? "SIGTERM" : "SIGINT");
}

/* Whether a live LM answers on our socket path. */
static int
lm_alive(const char *path)
{
	struct sockaddr_un sa;
	int fd, ok;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	close(fd);
	return ok;
}

/* ---- the life of an LM: each step made, and finished in reverse ---- */

/* The event loop, its timer and its signals (added when serving). */
static int
loop_make(struct lm *lm)
{
	lm->base = event_base_new();
	if (lm->base == NULL || (lm->procs = evbuffer_new()) == NULL ||
	    (lm->tick = event_new(lm->base, -1, EV_PERSIST, tick_cb,
	    lm)) == NULL ||
	    (lm->sigterm = evsignal_new(lm->base, SIGTERM, signal_cb,
	    lm)) == NULL ||
	    (lm->sigint = evsignal_new(lm->base, SIGINT, signal_cb,
	    lm)) == NULL) {
		log_warn("cannot create the event loop");
		return -1;
	}
	return 0;
}

/* Frees the loop's objects, and the MM link's timers (lm_mm_init), which
 * may be the running callback's when lm_finish is called. */
static void
loop_unmake(struct lm *lm)
{
	struct event **evs[] = { &lm->sigterm, &lm->sigint, &lm->tick,
	    &lm->retry, &lm->hs_timer };
	size_t i;

	for (i = 0; i < sizeof evs / sizeof evs[0]; i++)
		if (*evs[i] != NULL) {
			event_free(*evs[i]);
			*evs[i] = NULL;
		}
	if (lm->procs != NULL)
		evbuffer_free(lm->procs);
	lm->procs = NULL;
	if (lm->base != NULL)
		event_base_free(lm->base);
	lm->base = NULL;
}

/*
 * Takes the election lock (inherited from the process that started us, or
 * taken here).  Returns 0, 1 if another LM answers on our socket (it won
 * the election), or -1.
 */
static int
lock_make(struct lm *lm, int inherited)
{
	if (inherited >= 0) {
		lm->lock_fd = inherited;
		fcntl(lm->lock_fd, F_SETFD, FD_CLOEXEC);
	} else {
		lm->lock_fd = open(lm->lock_path, O_RDWR | O_CREAT | O_CLOEXEC,
		    0600);
		if (lm->lock_fd == -1) {
			log_warn("%s: %s", lm->lock_path, strerror(errno));
			return -1;
		}
		while (flock(lm->lock_fd, LOCK_EX) == -1)
			if (errno != EINTR) {
				log_warn("%s: %s", lm->lock_path,
				    strerror(errno));
				return -1;
			}
	}
	if (lm_alive(lm->sock_path)) {
		log_warn("a local monitor for %s is already running",
		    lm->mm_id);
		return 1;
	}
	return 0;
}

static void
lock_unmake(struct lm *lm)
{
	if (lm->lock_fd != -1)
		close(lm->lock_fd);
	lm->lock_fd = -1;
}

/* The segment of a dead LM, adopted, or a new one; the .pid file names it
 * for operators, tests and successors. */
static int
segment_make(struct lm *lm, const struct lm_conf *c)
{
	if (lm_seg_adopt_dead(lm) != 0 && lm_seg_create(lm, c) != 0)
		return -1;
	write_info(lm);
	return 0;
}

/* The .pid file goes after the segment: an LM killed in between leaves
 * the segment to the next one, never a segment no file names. */
static void
segment_unmake(struct lm *lm)
{
	if (lm->seg != NULL) {
		shmdt(lm->seg);
		lm->seg = NULL;
		shmctl(lm->shmid, IPC_RMID, NULL);
	}
	free(lm->view.sent);
	lm->view.sent = NULL;
	lm_defs_free(lm);
	remove_info(lm);
}

/* Stops taking processes; those attached record nothing more. */
static void
listen_unmake(struct lm *lm)
{
	lm_unlisten(lm);
	if (lm->seg != NULL)
		atomic_fetch_and(&lm->seg->ctl, ~SEG_CTL_ON);
	lm_clients_free(lm);
}

static void
mm_unmake(struct lm *lm)
{
	if (lm->retry != NULL)
		event_del(lm->retry);
	if (lm->hs_timer != NULL)
		event_del(lm->hs_timer);
	if (lm->mm != NULL) {
		peer_free(lm->mm);
		lm->mm = NULL;
	}
}

/* Serving: the timer and the signals on, the MM called. */
static void
serve_make(struct lm *lm)
{
	event_add(lm->tick,
	    &(struct timeval){ .tv_sec = 0, .tv_usec = 100000 });
	event_add(lm->sigterm, NULL);
	event_add(lm->sigint, NULL);
	lm->idle_since = clk_mono_ns();
	lm->mm_down_since = lm->idle_since;
	lm_mm_connect(lm);
}

/*
 * Makes the LM's steps in order (enum lm_made), under the election lock,
 * which it lets go at the end.  Returns 0; 1 if another LM serves the
 * same MM; -1 if a step failed (logged).  Either way lm->made says how
 * far it went, for lm_unmake.
 */
static int
lm_make(struct lm *lm, const struct lm_conf *c)
{
	int r;

	if (loop_make(lm) != 0)
		return -1;
	lm->made = LM_MADE_LOOP;
	if ((r = lock_make(lm, c->lockfd)) != 0) {
		lm->made = r < 0 ? LM_MADE_LOOP : LM_MADE_LOCK;
		return r;
	}
	lm->made = LM_MADE_LOCK;
	if (segment_make(lm, c) != 0)
		return -1;
	lm->made = LM_MADE_SEGMENT;
	(void)lm_spill_take(lm);	/* else taken later, when free */
	lm->made = LM_MADE_SPILL;
	if (lm_listen(lm) != 0)
		return -1;
	lm->made = LM_MADE_LISTEN;
	lm_mm_init(lm);
	lm->made = LM_MADE_MM;
	lm_pause_init(lm);
	lm->made = LM_MADE_PAUSE;
	lock_unmake(lm);
	log_debug("serving %s on %s, segment %d (%zu bytes)", lm->mm_id,
	    lm->sock_path, lm->shmid, lm->seg_size);
	serve_make(lm);
	lm->made = LM_MADE_SERVE;
	return 0;
}

void
lm_unmake(struct lm *lm, int to)
{
	for (; lm->made > to; lm->made--)
		switch (lm->made) {
		case LM_MADE_SERVE:
			event_del(lm->tick);
			break;
		case LM_MADE_PAUSE:
			lm_pause_end(lm);
			break;
		case LM_MADE_MM:
			mm_unmake(lm);
			break;
		case LM_MADE_LISTEN:
			listen_unmake(lm);
			break;
		case LM_MADE_SPILL:
			lm_spill_close(lm);
			break;
		case LM_MADE_SEGMENT:
			segment_unmake(lm);
			break;
		case LM_MADE_LOCK:
			lock_unmake(lm);
			break;
		case LM_MADE_LOOP:
			loop_unmake(lm);
			break;
		}
}

/* The run folder and the paths in it of this MM's LM. */
static int
lm_paths(struct lm *lm)
{
	char name[200];

	if (rundir_get(lm->dir, sizeof lm->dir) != 0) {
		log_warn("run folder: %s", strerror(errno));
		return -1;
	}
	if (mmid_lm_name(&lm->mmid, lm->dir, name, sizeof name) != 0 ||
	    rundir_path(lm->sock_path, sizeof lm->sock_path, lm->dir, name,
	    ".sock") != 0 ||
	    rundir_path(lm->lock_path, sizeof lm->lock_path, lm->dir, name,
	    ".lock") != 0 ||
	    rundir_path(lm->info_path, sizeof lm->info_path, lm->dir, name,
	    ".pid") != 0 ||
	    rundir_path(lm->spill_path, sizeof lm->spill_path, lm->dir, name,
	    ".spill") != 0) {
		log_warn("run folder path too long for %s", lm->mm_id);
		return -1;
	}
	return 0;
}

/*
 * Started by a traced process: leave its session and its children.  The
 * first child stays until the LM is serving (a byte on a pipe) or gave up
 * (the pipe closed without one), and exits 0 or 1 accordingly: the process
 * that started localmon learns of a refusal from that status, at once
 * (gmi_attach.c).  Returns the pipe's write end, in the LM; -1 on error.
 */
static int
lm_detach(void)
{
	int p[2];
	pid_t pid;
	ssize_t n;
	char b;

	if (pipe2(p, O_CLOEXEC) != 0) {
		log_warn("pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == -1) {
		log_warn("fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid > 0) {
		close(p[1]);
		while ((n = read(p[0], &b, 1)) == -1 && errno == EINTR)
			;
		_exit(n == 1 ? 0 : 1);
	}
	close(p[0]);
	return p[1];
}

/* Tells the first child (lm_detach) whether the LM serves. */
static void
lm_tell(int fd, int serving)
{
	if (fd == -1)
		return;
	if (serving)
		(void)write(fd, "", 1);
	close(fd);
}

int
main(int argc, char **argv)
{
	struct lm_conf conf;
	struct lm lm;
	int rc, told = -1;

	log_init("localmon", GRM_LOG_WARN);
	if ((rc = lm_conf_read(&conf, argc, argv)) >= 0)
		return rc;
	if (conf.debug)
		log_level = GRM_LOG_DEBUG;
	peer_keep_memory();
	signal(SIGPIPE, SIG_IGN);
	memset(&lm, 0, sizeof lm);
	lm.mmid = conf.mmid;
	hmac_wipe(&conf.mmid, sizeof conf.mmid);
	snprintf(lm.mm_id, sizeof lm.mm_id, "%s", lm.mmid.hostport);
	lm.standalone = !conf.spawned;
	lm.linger_ns = (uint64_t)(conf.linger * 1e9);
	lm.mm_timeout_ns = (uint64_t)(conf.mm_timeout * 1e9);
	lm.spill_max = conf.spill_max;
	lm.spill_fd = -1;
	lm.lock_fd = -1;
	lm.shmid = -1;
	if (lm_paths(&lm) != 0)
		return 1;
	if (conf.spawned && (told = lm_detach()) == -1)
		return 1;

	rc = lm_make(&lm, &conf);
	if (rc != 0) {
		/* Nothing of ours is left: no segment, socket, spill or .pid
		 * file.  Losing the election is no failure for a spawned LM
		 * (its process attaches to the winner). */
		lm_unmake(&lm, LM_MADE_NOTHING);
		lm_tell(told, rc > 0);
		return rc > 0 && conf.spawned ? 0 : 1;
	}
	lm_tell(told, 1);
	event_base_dispatch(lm.base);
	lm_unmake(&lm, LM_MADE_NOTHING);
	return 0;
}
