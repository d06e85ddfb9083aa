/* SPDX-License-Identifier: MIT */
/* lm_main.c: localmon, the Local Monitor: its life in steps (made in
 * order, finished in reverse), the election, the tick, and exit when the
 * job is over. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <event2/buffer.h>

#include "lm.h"
#include "net/loop.h"
#include "net/peer.h"
#include "net/wire.h"
#include "shm/rundir.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/sha256.h"

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
	wire_put_u64(&w, lm_now(lm));
	wire_put_str(&w, name);
	wire_put_u32(&w, session);
	if (w.err)
		return;
	wire_header(buf, WIRE_PROC, (uint32_t)w.len);
	evbuffer_add(lm->procs, buf, WIRE_HDR + w.len);
}

void
lm_finish(struct lm *lm)
{
	if (lm->finished)
		return;
	lm->finished = 1;
	lm_unmake(lm, LM_MADE_LOOP);	/* the loop's objects: after it */
	loop_exit(lm->base);
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
tick_cb(void *arg)
{
	struct lm *lm = arg;
	uint64_t now = clk_mono_ns(), left;

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
	/* The global scheme, exiting: the last push waits for what is in
	 * flight, whose tail mainmon may hold for the next round's scan;
	 * a round is asked for (at most once a second). */
	if (lm->exiting && lm->global && lm->mm_state == LM_LINK_READY &&
	    !lm->stopped && lm->outstanding > 0)
		lm_full(lm);
	lm_pause_tick(lm);
	/* Spawned LMs live while the job does: exit once the last process
	 * is gone (or, if the first never came, after a while). */
	if (!lm->standalone && !lm->exiting && lm->nclients == 0 &&
	    lm->norphans == 0 && lm->idle_since != 0 &&
	    now - lm->idle_since >=
	    (lm->ever_clients || lm->adopted ? lm->linger_ns : 10ull * 1000000000u))
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
signal_cb(int sig, void *arg)
{
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
lm_loop_make(struct lm *lm)
{
	lm->base = loop_new();
	if (lm->base == NULL || (lm->procs = evbuffer_new()) == NULL ||
	    (lm->tick = loop_every(lm->base, tick_cb, lm)) == NULL ||
	    (lm->sigterm = loop_signal(lm->base, SIGTERM, signal_cb,
	    lm)) == NULL ||
	    (lm->sigint = loop_signal(lm->base, SIGINT, signal_cb,
	    lm)) == NULL) {
		log_warn("cannot create the event loop");
		return -1;
	}
	return 0;
}

/* Frees the loop's objects, and the MM link's timers (lm_mm_init), which
 * may be the running callback's when lm_finish is called. */
static void
lm_loop_unmake(struct lm *lm)
{
	struct loop_ev **evs[] = { &lm->sigterm, &lm->sigint, &lm->tick,
	    &lm->retry, &lm->hs_timer };
	size_t i;

	for (i = 0; i < sizeof evs / sizeof evs[0]; i++) {
		loop_ev_free(*evs[i]);
		*evs[i] = NULL;
	}
	if (lm->procs != NULL)
		evbuffer_free(lm->procs);
	lm->procs = NULL;
	loop_free(lm->base);
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
	lm_mm_finish(lm);
	if (lm->retry != NULL)
		loop_disarm(lm->retry);
	if (lm->hs_timer != NULL)
		loop_disarm(lm->hs_timer);
	lm_fire_drop(lm);	/* the fire link goes with the data link */
	if (lm->mm != NULL) {
		peer_free(lm->mm);
		lm->mm = NULL;
	}
}

/* Serving: the timer and the signals on, the MM called. */
static void
serve_make(struct lm *lm)
{
	(void)loop_arm(lm->tick, 100000000ull);
	(void)loop_arm(lm->sigterm, 0);
	(void)loop_arm(lm->sigint, 0);
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

	if (lm_loop_make(lm) != 0)
		return -1;
	lm->made = LM_MADE_LOOP;
	r = lock_make(lm, c->lockfd);
	lm->made = LM_MADE_LOCK;	/* lock_unmake closes what is open */
	if (r != 0)
		return r;
	if (lm_segment_make(lm, c) != 0)
		return -1;
	lm->made = LM_MADE_SEGMENT;
	(void)lm_spill_take(lm);	/* else taken later, when free */
	lm->made = LM_MADE_SPILL;
	if (lm_listen(lm) != 0)
		return -1;
	lm->made = LM_MADE_LISTEN;
	lm_mm_init(lm);
	lm->made = LM_MADE_MM;
	if (lm_firer_start(lm) != 0)
		return -1;
	lm->made = LM_MADE_FIRER;
	lm_pause_init(lm);
	lm_guard_init(lm);
	lm->made = LM_MADE_PAUSE;
	lock_unmake(lm);
	log_debug("serving %s on %s, segment %d (%zu bytes, %llu KiB of it "
	    "on 2 MiB pages)", lm->mm_id, lm->sock_path, lm->shmid,
	    lm->seg_size, lm_seg_huge_kib());
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
			loop_disarm(lm->tick);
			break;
		case LM_MADE_PAUSE:
			lm_pause_end(lm);
			break;
		case LM_MADE_FIRER:
			lm_firer_stop(lm);
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
			lm_segment_unmake(lm);
			break;
		case LM_MADE_LOCK:
			lock_unmake(lm);
			break;
		case LM_MADE_LOOP:
			lm_loop_unmake(lm);
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
	if (lm_cpus_place(&conf) != 0)
		return 1;
	peer_keep_memory();
	signal(SIGPIPE, SIG_IGN);
	memset(&lm, 0, sizeof lm);
	lm.mmid = conf.mmid;
	hmac_wipe(&conf.mmid, sizeof conf.mmid);
	snprintf(lm.mm_id, sizeof lm.mm_id, "%s", lm.mmid.hostport);
	lm.standalone = !conf.spawned;
	lm.successor = conf.successor;
	lm.linger_ns = (uint64_t)(conf.linger * 1e9);
	lm.mm_timeout_ns = (uint64_t)(conf.mm_timeout * 1e9);
	lm.spill_max = conf.spill_max;
	/* Liveness and pushes on time (lm_mm.c). */
	lm.silent_s = (unsigned)conf.silent_s;
	lm.push_ns = conf.push_s > 0 && conf.push_s < 0.01 ? 10000000u :
	    (uint64_t)(conf.push_s * 1e9);
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
	loop_run(lm.base);
	lm_unmake(&lm, LM_MADE_NOTHING);
	return 0;
}
