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

/* A number variable's value (its default if unset); exits if it is
 * not one. */
static uint64_t
lm_env_number(enum env_id id)
{
	char msg[NUM_MSG_MAX];
	uint64_t v;

	if (env_u64(id, &v) != 0)
		fatal("%s", env_msg(id, msg, sizeof msg));
	return v;
}

/* A number of seconds (0 to a day) of option or variable `what`; exits
 * if s is not one. */
static double
parse_secs(const char *what, const char *s)
{
	char msg[NUM_MSG_MAX];
	double v;

	if (num_parse_double(s, 0, 86400, &v) != 0)
		fatal("%s", num_msg(msg, sizeof msg, what, s,
		    "a number of seconds (0 to 86400)"));
	return v;
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
threshold_for(uint32_t nchunks)
{
	uint64_t t;

	t = (uint64_t)nchunks * lm_env_number(ENV_THRESHOLD) / 100;
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

static int
lm_seg_create(struct lm *lm)
{
	size_t size = (size_t)lm_env_number(ENV_SEGSIZE);
	size_t chunk = (size_t)lm_env_number(ENV_CHUNKSIZE);
	char msg[NUM_MSG_MAX];
	int policy;
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
	lm->seg->threshold = threshold_for(lm->seg->nchunks);
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
	if (env_choice(ENV_POLICY, &policy) != 0)
		log_warn("%s: block", env_msg(ENV_POLICY, msg, sizeof msg));
	atomic_store(&lm->seg->policy, (uint32_t)policy);
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

/* Removes the .pid file, under the election lock, if it still names us
 * (a successor may have written its own). */
static void
remove_info(struct lm *lm)
{
	FILE *f;
	int fd, pid = 0;

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
	lm_pause_end(lm);
	event_del(lm->tick);
	event_del(lm->retry);
	event_del(lm->hs_timer);
	lm_unlisten(lm);
	if (lm->seg != NULL)	/* writers still attached record nothing more */
		atomic_fetch_and(&lm->seg->ctl, ~SEG_CTL_ON);
	lm_clients_free(lm);
	if (lm->mm != NULL) {
		peer_free(lm->mm);
		lm->mm = NULL;
	}
	if (lm->seg != NULL) {
		shmdt(lm->seg);
		lm->seg = NULL;
		shmctl(lm->shmid, IPC_RMID, NULL);
	}
	free(lm->view.sent);
	lm->view.sent = NULL;
	lm_defs_free(lm);
	remove_info(lm);
	lm_spill_close(lm);
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
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	lm_begin_exit(arg, sig == SIGTERM ? "SIGTERM" : "SIGINT");
}

static void
take_lock(struct lm *lm, int inherited)
{
	if (inherited >= 0) {
		lm->lock_fd = inherited;
		fcntl(lm->lock_fd, F_SETFD, FD_CLOEXEC);
		return;
	}
	lm->lock_fd = open(lm->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lm->lock_fd == -1)
		fatal("%s: %s", lm->lock_path, strerror(errno));
	while (flock(lm->lock_fd, LOCK_EX) == -1)
		if (errno != EINTR)
			fatal("%s: %s", lm->lock_path, strerror(errno));
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

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mm", required_argument, NULL, 'm' },
		{ "lock-fd", required_argument, NULL, 'L' },
		{ "spawned", no_argument, NULL, 'S' },
		{ "linger", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct lm lm;
	struct event *sigterm, *sigint;
	const char *why, *idarg = NULL;
	char idline[MMID_MAX], name[200];
	int c, lockfd = -1, spawned = 0, debug = 0;
	double linger = -1, secs;
	uint64_t u;
	char msg[NUM_MSG_MAX];

	memset(&lm, 0, sizeof lm);
	lm.standalone = 1;
	while ((c = getopt_long(argc, argv, "dm:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			debug = 1;
			break;
		case 'm':
			idarg = optarg;
			break;
		case 'L':
			if (num_parse_u64(optarg, 0, INT_MAX, &u) != 0)
				fatal("%s", num_msg(msg, sizeof msg,
				    "--lock-fd", optarg, "a descriptor"));
			lockfd = (int)u;
			break;
		case 'S':
			spawned = 1;
			lm.standalone = 0;
			break;
		case 'l':
			linger = parse_secs("--linger", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	lm.mm_arg = idarg;	/* NULL: GRM_MM */
	if (idarg == NULL)
		idarg = env_get(ENV_MM);
	if (idarg == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init("localmon", debug ? GRM_LOG_DEBUG : GRM_LOG_WARN);
	peer_keep_memory();
	/* The token is never written anywhere: messages show HOST:PORT. */
	if (mmid_read(idarg, idline, sizeof idline, &why) != 0)
		fatal("%s: %s", idarg, why);
	if (mmid_parse(idline, &lm.mmid, &why) != 0)
		fatal("main monitor identifier: %s", why);
	hmac_wipe(idline, sizeof idline);
	snprintf(lm.mm_id, sizeof lm.mm_id, "%s", lm.mmid.hostport);
	if (linger < 0 && env_seconds(ENV_LM_LINGER, &linger) != 0)
		fatal("%s", env_msg(ENV_LM_LINGER, msg, sizeof msg));
	lm.linger_ns = (uint64_t)(linger * 1e9);
	lm.spill_fd = -1;
	lm.spill_max = lm_env_number(ENV_SPILL_MAX);
	if (env_seconds(ENV_LM_MM_TIMEOUT, &secs) != 0)
		fatal("%s", env_msg(ENV_LM_MM_TIMEOUT, msg, sizeof msg));
	lm.mm_timeout_ns = (uint64_t)(secs * 1e9);
	/* Liveness, pushes on time, and the guard's successor (lm_mm.c,
	 * lm_guard.c). */
	lm.silent_s = (unsigned)lm_env_number(ENV_LM_SILENT);
	if (env_seconds(ENV_PUSH_INTERVAL, &secs) != 0)
		fatal("%s", env_msg(ENV_PUSH_INTERVAL, msg, sizeof msg));
	lm.push_ns = secs > 0 && secs < 0.01 ? 10000000u :
	    (uint64_t)(secs * 1e9);

	/* Started by a traced process: leave its session and its children. */
	if (spawned) {
		pid_t pid = fork();

		if (pid == -1)
			fatal("fork: %s", strerror(errno));
		if (pid > 0)
			_exit(0);
	}
	if (rundir_get(lm.dir, sizeof lm.dir) != 0)
		fatal("run folder: %s", strerror(errno));
	if (mmid_lm_name(&lm.mmid, lm.dir, name, sizeof name) != 0 ||
	    rundir_path(lm.sock_path, sizeof lm.sock_path, lm.dir, name,
	    ".sock") != 0 ||
	    rundir_path(lm.lock_path, sizeof lm.lock_path, lm.dir, name,
	    ".lock") != 0 ||
	    rundir_path(lm.info_path, sizeof lm.info_path, lm.dir, name,
	    ".pid") != 0 ||
	    rundir_path(lm.spill_path, sizeof lm.spill_path, lm.dir, name,
	    ".spill") != 0)
		fatal("run folder path too long for %s", lm.mm_id);
	signal(SIGPIPE, SIG_IGN);
	lm.base = event_base_new();
	if (lm.base == NULL)
		fatal("cannot create event base");
	lm.procs = evbuffer_new();

	take_lock(&lm, lockfd);
	if (lm_alive(lm.sock_path)) {
		/* Another LM won the election: free what we made, go away. */
		close(lm.lock_fd);
		log_warn("a local monitor for %s is already running", lm.mm_id);
		evbuffer_free(lm.procs);
		event_base_free(lm.base);
		return lm.standalone ? 1 : 0;
	}
	if (lm_listen(&lm) != 0) {
		close(lm.lock_fd);
		return 1;
	}
	if (lm_seg_adopt_dead(&lm) != 0 && lm_seg_create(&lm) != 0) {
		lm_unlisten(&lm);
		close(lm.lock_fd);
		return 1;
	}
	(void)lm_spill_take(&lm);
	write_info(&lm);
	close(lm.lock_fd);
	lm.lock_fd = -1;
	log_debug("serving %s on %s, segment %d (%zu bytes)", lm.mm_id,
	    lm.sock_path, lm.shmid, lm.seg_size);

	lm_mm_init(&lm);
	lm_pause_init(&lm);
	lm_guard_init(&lm);
	lm.tick = event_new(lm.base, -1, EV_PERSIST, tick_cb, &lm);
	event_add(lm.tick,
	    &(struct timeval){ .tv_sec = 0, .tv_usec = 100000 });
	sigterm = evsignal_new(lm.base, SIGTERM, signal_cb, &lm);
	sigint = evsignal_new(lm.base, SIGINT, signal_cb, &lm);
	event_add(sigterm, NULL);
	event_add(sigint, NULL);
	lm.idle_since = clk_mono_ns();
	lm.mm_down_since = lm.idle_since;
	lm_mm_connect(&lm);

	event_base_dispatch(lm.base);

	event_free(sigterm);
	event_free(sigint);
	event_free(lm.tick);
	event_free(lm.retry);
	event_free(lm.hs_timer);
	lm_mm_finish(&lm);
	evbuffer_free(lm.procs);
	event_base_free(lm.base);
	return 0;
}
