/* SPDX-License-Identifier: MIT */
/*
 * lm_guard.c: the guard, a small process the LM forks beside itself at its
 * start, which acts when the LM dies without a clean exit (killed,
 * crashed).  It holds nothing of the LM's but one end of a pipe, its
 * standard descriptors and its environment: not the segment, sockets or
 * lock, so it keeps nothing of the job alive.
 *
 *	- The global scheme (lm_pause.c) tells it each traced process before
 *	  the LM stops it: the guard lets them go (SIGCONT) if the LM dies, at
 *	  the round's time limit, or when asked to end.
 *	- If the LM dies (its end of the pipe closes without a goodbye) and
 *	  left its segment, the guard starts a successor, `localmon
 *	  --spawned`, which goes through the same election lock as a traced
 *	  process's LM (so at most one runs), adopts the segment, delivers it
 *	  to mainmon and exits after its linger: data is never stranded until
 *	  some other traced process comes.  A successor that dies soon after
 *	  its start (LM_SUCCESSOR_QUICK_NS) is followed by the next only
 *	  after a wait that doubles, and at most LM_SUCCESSOR_MAX in a row
 *	  (each is told its place with --successor): a successor that
 *	  cannot live is not started forever; the last guard says so in one
 *	  line, and the segment waits for the next LM of that MM.
 *
 * The LM's clean exit says goodbye first; SIGTERM, SIGINT or SIGHUP to the
 * guard end it without a successor.  The LM reaps it (and starts another
 * if it died).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/wait.h>

#include "lm.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/log.h"

/* One message on the guard's pipe (PIPE_BUF makes each write whole). */
struct guard_msg {
	uint32_t	op;
	uint32_t	pid;
	uint64_t	deadline;	/* CLOCK_MONOTONIC ns */
};

static volatile sig_atomic_t guard_quit;

static void
guard_sig(int sig)
{
	(void)sig;
	guard_quit = 1;
}

void
lm_cont_all(const uint32_t *pids, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		kill((pid_t)pids[i], SIGCONT);
}

/* Whether segment shmid is still there to adopt (not removed, not marked
 * for removal). */
static int
seg_left(int shmid)
{
	struct shmid_ds ds;

	return shmid >= 0 && shmctl(shmid, IPC_STAT, &ds) == 0 &&
	    (ds.shm_perm.mode & SHM_DEST) == 0;
}

/*
 * Starts the successor: this same program, as a traced process would
 * start it (it takes the election lock itself, and detaches).  mm_arg:
 * the MM's identifier with its token, passed as GRM_MM (never on a
 * command line).
 */
static void
successor(const char *mm_arg, unsigned nth)
{
	char arg[32];
	char *argv[] = { (char *)"localmon", (char *)"--spawned", arg, NULL };
	char path[4096];
	ssize_t n;
	pid_t pid;
	int st;

	if (setenv("GRM_MM", mm_arg, 1) != 0)
		return;
	snprintf(arg, sizeof arg, "--successor=%u", nth);
	pid = fork();
	if (pid == -1)
		return;
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(3);
		/* By its path, not /proc/self/exe: a program's name (comm,
		 * what ps and pgrep show) is the file name it was run by. */
		n = readlink("/proc/self/exe", path, sizeof path - 1);
		if (n > 0) {
			path[n] = '\0';
			execv(path, argv);
		}
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	/* --spawned forks and its first process exits at once. */
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
}

/*
 * The LM (lm_pid, the nth successor in a row, started at t0) died and
 * left segment shmid: starts the next successor, at once after an LM
 * that lived, else after a wait (0.5 s, doubled for each quick death
 * before), and none after LM_SUCCESSOR_MAX quick deaths in a row.  The
 * wait ends early on SIGTERM, SIGINT or SIGHUP (then none is started).
 */
static void
guard_succeed(int shmid, const char *mm_arg, int lm_pid, unsigned nth,
	      uint64_t t0, const sigset_t *unblocked)
{
	uint64_t age = clk_mono_ns() - t0, wait_ns;
	struct timespec ts = { 0, 10000000 };
	unsigned quick = nth > 0 && age < LM_SUCCESSOR_QUICK_NS ? nth : 0;
	int i;

	/* The pipe closes while the LM exits, maybe before its socket: a
	 * successor started now could find it still answering and step
	 * aside.  Once the LM is gone, this guard has another parent. */
	for (i = 0; i < 200 && getppid() == lm_pid; i++)
		nanosleep(&ts, NULL);

	if (quick >= LM_SUCCESSOR_MAX) {
		fprintf(stderr, "localmon-guard: local monitor %d died and "
		    "left segment %d: %u successors in a row died within "
		    "%llu s of their start, no more are started; the segment "
		    "waits for the next local monitor of this main monitor "
		    "on this host\n", lm_pid, shmid, quick,
		    LM_SUCCESSOR_QUICK_NS / 1000000000ull);
		return;
	}
	wait_ns = quick == 0 ? 0 : 500000000ull << (quick - 1);
	fprintf(stderr, "localmon-guard: local monitor %d died and left "
	    "segment %d: starting a successor to deliver it", lm_pid, shmid);
	if (quick > 0)
		fprintf(stderr, " in %.1f s (%u in a row died within %llu s)",
		    (double)wait_ns / 1e9, quick,
		    LM_SUCCESSOR_QUICK_NS / 1000000000ull);
	fputc('\n', stderr);
	ts.tv_sec = (time_t)(wait_ns / 1000000000u);
	ts.tv_nsec = (long)(wait_ns % 1000000000u);
	/* Only the signals end it (ppoll with nothing to watch). */
	while (wait_ns > 0 && !guard_quit &&
	    ppoll(NULL, 0, &ts, unblocked) == -1 && errno == EINTR)
		;
	if (!guard_quit && seg_left(shmid))
		successor(mm_arg, quick + 1);
}

/* The guard's life: holds the list of stopped processes until told to
 * forget it; lets them go when the LM's end of the pipe closes, at the
 * deadline, or on SIGTERM, SIGINT or SIGHUP; starts a successor if the LM
 * (the nth successor in a row) died and left segment shmid. */
static void __attribute__((noreturn))
guard_main(int fd, int shmid, const char *mm_arg, unsigned nth)
{
	struct guard_msg m;
	struct sigaction sa;
	struct pollfd pfd;
	struct timespec ts, *tp;
	sigset_t block, old;
	uint32_t *pids = NULL, *np, n = 0, cap = 0;
	uint64_t deadline = 0, now;
	ssize_t r;
	int died = 0, lm_pid = (int)getppid();
	uint64_t t0 = clk_mono_ns();	/* about when the LM started */

	prctl(PR_SET_NAME, "localmon-guard", 0, 0, 0);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigdelset(&old, SIGTERM);
	sigdelset(&old, SIGINT);
	sigdelset(&old, SIGHUP);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = guard_sig;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	for (;;) {
		tp = NULL;
		if (n > 0) {
			now = clk_mono_ns();
			if (now >= deadline) {
				lm_cont_all(pids, n);
				n = 0;
				continue;
			}
			ts.tv_sec = (time_t)((deadline - now) / 1000000000u);
			ts.tv_nsec = (long)((deadline - now) % 1000000000u);
			tp = &ts;
		}
		pfd.fd = fd;
		pfd.events = POLLIN;
		r = ppoll(&pfd, 1, tp, &old);
		if (guard_quit)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0)
			continue;	/* the deadline, checked above */
		r = read(fd, &m, sizeof m);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof m) {
			died = 1;	/* the LM is gone, without a word */
			break;
		}
		if (m.op == LM_GUARD_BYE)
			break;
		if (m.op == LM_GUARD_CLEAR) {
			n = 0;
			continue;
		}
		if (m.op != LM_GUARD_ADD)
			continue;
		if (n == cap) {
			np = realloc(pids, sizeof *np * (cap ? 2 * cap : 64));
			if (np == NULL) {
				/* Cannot watch it: it must not stay stopped
				 * (it may be stopped just after this). */
				kill((pid_t)m.pid, SIGCONT);
				continue;
			}
			pids = np;
			cap = cap ? 2 * cap : 64;
		}
		pids[n++] = m.pid;
		deadline = m.deadline;
	}
	lm_cont_all(pids, n);
	if (died && !guard_quit && seg_left(shmid))
		guard_succeed(shmid, mm_arg, lm_pid, nth, t0, &old);
	_exit(0);
}

int
lm_guard_start(struct lm *lm)
{
	struct lm_guard *g = &lm->guard;
	char id[MMID_MAX];
	int fds[2];
	pid_t pid;

	if (g->pid != 0)
		return 0;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		log_warn("guard process: pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == -1) {
		log_warn("guard process: fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		/* Nothing of the LM's but the pipe: not the segment (an LM
		 * adopting it must see it unattached), not its sockets or
		 * its lock. */
		if (lm->seg != NULL)
			shmdt(lm->seg);
		if (fds[0] != 3 && dup2(fds[0], 3) == -1)
			_exit(1);
		close_range(4, ~0u, 0);
		if (mmid_format(&lm->mmid, id, sizeof id) != 0)
			_exit(1);
		guard_main(3, lm->shmid, id, lm->successor);
	}
	close(fds[0]);
	g->fd = fds[1];
	g->pid = (int)pid;
	log_debug("guard process %d started", (int)pid);
	return 0;
}

int
lm_guard_send(struct lm *lm, uint32_t op, uint32_t pid, uint64_t deadline)
{
	struct guard_msg m = { op, pid, deadline };
	ssize_t r;

	if (lm->guard.fd == -1)
		return -1;
	while ((r = write(lm->guard.fd, &m, sizeof m)) == -1 && errno == EINTR)
		;
	return r == (ssize_t)sizeof m ? 0 : -1;
}

int
lm_guard_tick(struct lm *lm)
{
	struct lm_guard *g = &lm->guard;
	int st;

	if (g->pid == 0 || waitpid(g->pid, &st, WNOHANG) != g->pid)
		return 0;
	log_warn("guard process %d ended (%s %d)", g->pid,
	    WIFSIGNALED(st) ? "signal" : "status",
	    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	close(g->fd);
	g->fd = -1;
	g->pid = 0;
	if (lm->exiting || lm->finished)
		return 0;
	return lm_guard_start(lm) == 0;
}

void
lm_guard_init(struct lm *lm)
{
	lm->guard.fd = -1;
	lm->guard.pid = 0;
	(void)lm_guard_start(lm);
}

void
lm_guard_end(struct lm *lm)
{
	struct lm_guard *g = &lm->guard;

	if (g->pid == 0)
		return;
	/* A clean exit: no successor.  Its end of the pipe then closes. */
	(void)lm_guard_send(lm, LM_GUARD_BYE, 0, 0);
	close(g->fd);
	g->fd = -1;
	(void)waitpid(g->pid, NULL, WNOHANG);
	g->pid = 0;
}
