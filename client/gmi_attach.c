/* SPDX-License-Identifier: MIT */
/* gmi_attach.c: finding or starting the Local Monitor, attaching the
 * segment, and the slow paths of the client (new chunk, thread exit, fork). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "gmi_int.h"
#include "net/mmid.h"
#include "shm/lmproto.h"
#include "shm/rundir.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/num.h"

/* GRM_POLICY's choices (util/env.c) are the segment's policies. */
_Static_assert(SEG_POLICY_BLOCK == 0 && SEG_POLICY_DISCARD == 1 &&
    SEG_POLICY_OVERWRITE == 2, "GRM_POLICY's choices");

extern char **environ;

_Atomic int gmi_state = GMI_UNINIT;
struct seg_hdr *gmi_seg;
struct seg gmi_view;		/* layout as checked at attach */
int gmi_stats_mode;
int gmi_tsc;
static int gmi_policy = -1;	/* GRM_POLICY, or the segment's */
__thread struct gmi_thread gmi_thr __attribute__((tls_model("initial-exec")))
    = { .idx = -1 };

/* Which chunks' pages this process has faulted in, a bit each (NULL:
 * all of them, at attach): a chunk's pages are populated when a thread
 * first takes it, so a short process pays for the chunks it writes, not
 * for the whole segment. */
static _Atomic unsigned char *gmi_populated;

static pthread_mutex_t gmi_init_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t gmi_key;
static int gmi_lm_fd = -1;
static uint32_t gmi_session;
static int gmi_shmid = -1;
static uint32_t gmi_pid;
static struct mmid gmi_mmid;	/* GRM_MM, parsed */
static int gmi_signals = 1;	/* GRM_SIGNALS: report fatal signals */
static int gmi_debug;
static long gmi_block_ns = 2000000000L;	/* longest wait for a free chunk */
static _Atomic uint64_t gmi_chunk_seq = 1;	/* 0 names no chunk */

/* The variables a traced process reads itself, checked once. */
static const enum env_id gmi_env_ids[] = { ENV_BLOCK_MS, ENV_MODE,
    ENV_POLICY };

#define GRM_ATTACH_NS	10000000000ull	/* longest search for an LM */

int
gmi_error(int code, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int saved = errno;

	if (gmi_debug) {
		va_start(ap, fmt);
		vsnprintf(line, sizeof line, fmt, ap);
		va_end(ap);
		fprintf(stderr, "grm[%d]: %s\n", (int)getpid(), line);
	}
	errno = saved;
	return code;
}

static void
sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Connects to the LM socket at path; returns the fd or -1. */
static int
gmi_lm_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
full_io(int fd, void *buf, size_t len, int wr)
{
	char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Handshake on fd and attach; returns 0, or -1 (fd closed).  With
 * resume, the process is attached already and its LM died: it asks the
 * new LM to take it back, in the same segment. */
static int
gmi_lm_attach(int fd, int resume)
{
	struct lmp_hello h;
	struct lmp_reply r;
	struct timeval tv = { 5, 0 };
	void *mem;
	const char *name;

	memset(&h, 0, sizeof h);
	h.magic = LMP_MAGIC;
	h.version = LMP_VERSION;
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	name = program_invocation_short_name;
	snprintf(h.name, sizeof h.name, "%s", name != NULL ? name : "?");
	memcpy(gmi_name, h.name, sizeof gmi_name);
	h.session = resume ? gmi_session : 0;
	h.shmid = resume ? gmi_shmid : -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (full_io(fd, &h, sizeof h, 1) != 0 ||
	    full_io(fd, &r, sizeof r, 0) != 0)
		goto fail;
	if (r.magic != LMP_MAGIC || r.version != LMP_VERSION ||
	    r.status != LMP_OK) {
		gmi_error(0, "local monitor refused this process");
		goto fail;
	}
	if (resume) {
		if (r.shmid != gmi_shmid || r.session != gmi_session)
			goto fail;
		gmi_lm_fd = fd;
		return 0;
	}
	mem = seg_attach(r.shmid, r.size);
	if (mem == (void *)-1) {
		gmi_error(0, "cannot attach segment %d: %s", r.shmid,
		    strerror(errno));
		goto fail;
	}
	if (seg_check(mem, r.size) != 0) {
		gmi_error(0, "segment %d has a layout this library does not "
		    "know", r.shmid);
		shmdt(mem);
		goto fail;
	}
	seg_view(&gmi_view, mem, r.size);
	/* Fault the pages in now, not one per 128 events later: the header
	 * and chunk entries here, each chunk's data when first taken
	 * (gmi_take_chunk); all of it if the map cannot be had. */
	free((void *)gmi_populated);
	gmi_populated = calloc((gmi_view.nchunks + 7) / 8, 1);
	(void)seg_populate(mem, gmi_populated != NULL ? gmi_view.data_off :
	    r.size);
	gmi_seg = mem;
	/* Every record of the segment on its clock (GRM_CLOCK, the LM's). */
	gmi_tsc = TSC_HAVE && gmi_seg->clock == SEG_CLOCK_TSC;
	/* Differ from the segment's word: the first event applies the
	 * control words. */
	gmi_ctl_seen = atomic_load(&gmi_seg->ctl) + SEG_CTL_STEP;
	gmi_session = r.session;
	gmi_shmid = r.shmid;
	gmi_lm_fd = fd;
	return 0;
fail:
	close(fd);
	return -1;
}

/*
 * The environment of a spawned LM: ours, with GRM_MM set to the identifier
 * we use (on the command line, the token would be in every user's ps).
 * Returns a malloc'ed array (one block) or NULL.
 */
static char **
gmi_lm_env(const struct mmid *id)
{
	size_t n, i, j;
	char **env, *var;

	for (n = 0; environ[n] != NULL; n++)
		;
	env = malloc((n + 2) * sizeof *env + MMID_MAX + 8);
	if (env == NULL)
		return NULL;
	var = (char *)(env + n + 2);
	memcpy(var, "GRM_MM=", 7);
	if (mmid_format(id, var + 7, MMID_MAX) != 0) {
		free(env);
		return NULL;
	}
	for (i = j = 0; i < n; i++)
		if (strncmp(environ[i], "GRM_MM=", 7) != 0)
			env[j++] = environ[i];
	env[j++] = var;
	env[j] = NULL;
	return env;
}

/*
 * Starts a Local Monitor for id, passing it the election lock (as fd 3)
 * and sending its stderr to the run folder's log.  posix_spawn runs no
 * fork handlers and copies nothing of this process's threads.  localmon
 * detaches itself: the child started here exits once the LM serves (0)
 * or gave up (1), and is reaped by gmi_lm_wait.  Returns its pid, or -1.
 */
static pid_t
gmi_lm_spawn(const struct mmid *id, int lockfd, const char *logpath)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	const char *prog;
	char *argv[4], **env;
	pid_t pid;
	int r;

	if ((prog = env_get(ENV_LOCALMON)) == NULL)
		prog = GRM_LOCALMON_PATH;
	argv[0] = (char *)"localmon";
	argv[1] = (char *)"--spawned";
	argv[2] = (char *)"--lock-fd=3";
	argv[3] = NULL;
	env = gmi_lm_env(id);
	if (env == NULL) {
		gmi_error(0, "cannot start local monitor: out of memory");
		return -1;
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_adddup2(&fa, lockfd, 3);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, logpath,
	    O_WRONLY | O_CREAT | O_APPEND, 0600);
	posix_spawn_file_actions_addclosefrom_np(&fa, 4);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	r = posix_spawn(&pid, prog, &fa, &at, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(env);
	if (r != 0) {
		gmi_error(0, "cannot start local monitor %s: %s", prog,
		    strerror(r));
		return -1;
	}
	return pid;
}

/* The last line of the LM's log (its reason for giving up), in buf. */
static const char *
gmi_log_tail(const char *path, char *buf, size_t cap)
{
	ssize_t n = -1;
	off_t end;
	char *p;
	int fd;

	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return buf;
	end = lseek(fd, 0, SEEK_END);
	if (end > 0)
		n = pread(fd, buf, cap - 1, end > (off_t)(cap - 1) ?
		    end - (off_t)(cap - 1) : 0);
	close(fd);
	if (n <= 0)
		return buf;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	p = strrchr(buf, '\n');
	return p != NULL ? p + 1 : buf;
}

/*
 * Waits until the deadline for the LM that child pid (gmi_lm_spawn)
 * starts to answer on sock; returns the connected fd, -1 if it did not,
 * or -2 if it gave up: then at once, not at the deadline.  The child
 * exits only once the LM serves or gave up, so it gave up if the child
 * exited with a failure status, or exited unseen and no socket answers
 * (exited with 0 and none answers: the LM died since, -1 at once).  Only
 * pid is reaped.  If the program reaped it first (a SIGCHLD handler, or
 * SIGCHLD ignored), its status is unknown: a pid that no longer exists
 * means it exited (one that was reused meanwhile, that the socket is
 * waited for until the deadline).  A child still there at the deadline is
 * killed and reaped: never left a zombie of the program's.
 */
static int
gmi_lm_wait(const char *sock, pid_t pid, uint64_t deadline)
{
	pid_t r;
	int fd, st, ended = 0;

	for (;;) {
		if (pid > 0) {
			r = waitpid(pid, &st, WNOHANG);
			if (r == pid) {
				pid = 0;
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
					return -2;
				ended = -1;	/* served: try again if gone */
			} else if (r == -1 && errno == ECHILD) {
				/* reaped by the program */
				ended = kill(pid, 0) == -1 && errno == ESRCH;
				pid = 0;
			}
		}
		fd = gmi_lm_connect(sock);
		if (fd != -1 || clk_mono_ns() >= deadline)
			break;
		if (ended != 0)
			return ended > 0 ? -2 : -1;
		sleep_ns(2000000L);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
	}
	return fd;
}

/*
 * Finds the LM of mm_id or elects one: connect; else take the election
 * lock, connect again (another process may have won meanwhile), else start
 * one and wait for its socket.  Exactly one process at a time holds the
 * lock, so exactly one LM is started.
 */
static int
gmi_lm_find(const struct mmid *id, int resume)
{
	char dir[96], sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char lock[256], logp[256], name[200], tail[512];
	uint64_t deadline;
	int fd, lockfd, attempt;
	pid_t pid;

	if (rundir_get(dir, sizeof dir) != 0) {
		gmi_error(0, "run folder: %s", strerror(errno));
		return -1;
	}
	if (mmid_lm_name(id, dir, name, sizeof name) != 0 ||
	    rundir_path(sock, sizeof sock, dir, name, ".sock") != 0 ||
	    rundir_path(lock, sizeof lock, dir, name, ".lock") != 0 ||
	    rundir_path(logp, sizeof logp, dir, name, ".log") != 0) {
		gmi_error(0, "run folder path too long for %s", id->hostport);
		return -1;
	}
	/* One deadline for the whole search: a program's first GMI call
	 * waits at most about GRM_ATTACH_NS for a monitor, then runs
	 * untraced. */
	deadline = clk_mono_ns() + GRM_ATTACH_NS;
	for (attempt = 0; attempt < 5 && clk_mono_ns() < deadline;
	    attempt++) {
		fd = gmi_lm_connect(sock);
		if (fd != -1) {
			if (gmi_lm_attach(fd, resume) == 0)
				return 0;
			sleep_ns(10000000L);
			continue;
		}
		lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (lockfd == -1) {
			gmi_error(0, "%s: %s", lock, strerror(errno));
			return -1;
		}
		while (flock(lockfd, LOCK_EX) == -1 && errno == EINTR)
			;
		fd = gmi_lm_connect(sock);
		if (fd == -1) {
			/* A program that cannot be started now will not be
			 * started by trying again: said once, not per try. */
			if ((pid = gmi_lm_spawn(id, lockfd, logp)) == -1) {
				close(lockfd);
				return -1;
			}
			fd = gmi_lm_wait(sock, pid, deadline);
		}
		close(lockfd);
		if (fd == -2) {
			gmi_error(0, "local monitor for %s refused to start: "
			    "%s (%s)", id->hostport, gmi_log_tail(logp, tail,
			    sizeof tail), logp);
			return -1;
		}
		if (fd != -1 && gmi_lm_attach(fd, resume) == 0)
			return 0;
	}
	gmi_error(0, "no local monitor for %s (see %s)", id->hostport, logp);
	return -1;
}

/* Thread exit: hand the chunk, with every record in it, to the LM. */
static void
thread_exit(void *arg)
{
	struct gmi_thread *t = &gmi_thr;

	(void)arg;
	if (t->data != NULL &&
	    atomic_load(&gmi_state) == GMI_ON) {
		seg_release(&gmi_view, (uint32_t)t->idx);
		t->data = NULL;
		t->idx = -1;
	}
	if (t->table != NULL && atomic_load(&gmi_state) == GMI_ON)
		gmi_table_release(t);
}

static void
before_fork(void)
{
	gmi_def_lock_fork(0);
	pthread_mutex_lock(&gmi_init_lock);
}

static void
after_fork_parent(void)
{
	pthread_mutex_unlock(&gmi_init_lock);
	gmi_def_lock_fork(1);
}

/* In a forked child: the parent's chunks and LM session are not ours. */
static void
after_fork_child(void)
{
	pthread_mutex_unlock(&gmi_init_lock);
	gmi_def_lock_fork(1);
	gmi_thr.data = NULL;
	gmi_thr.idx = -1;
	gmi_thr.off = gmi_thr.cap = 0;
	gmi_thr.keyed = 0;
	/* The parent's table chunk is not ours: drop our copy of its
	 * private index. */
	free(gmi_thr.table);
	gmi_thr.table = NULL;
	gmi_set_on_word(-1);
	gmi_ctl_seen = UINT32_MAX;
	if (gmi_lm_fd != -1)
		close(gmi_lm_fd);
	gmi_lm_fd = -1;
	if (gmi_seg != NULL)
		shmdt(gmi_seg);
	gmi_seg = NULL;
	gmi_shmid = -1;
	free((void *)gmi_populated);
	gmi_populated = NULL;
	atomic_store(&gmi_chunk_seq, 1);
	atomic_store(&gmi_rank, -1);	/* the parent's, not ours */
	atomic_store(&gmi_state, GMI_UNINIT);
}

/* At exit: the exiting thread's table index (its chunk stays in the
 * segment for the LM).  Destructors run after atexit handlers. */
__attribute__((destructor)) static void
gmi_fini(void)
{
	struct gmi_table *t = gmi_thr.table;

	gmi_thr.table = NULL;
	free(t);
}

/* ---- telling the LM how the process ends ---- */

static void
death_note(char kind, int32_t v)
{
	unsigned char b[1 + sizeof v];
	int fd = gmi_lm_fd;

	if (fd == -1)
		return;
	b[0] = (unsigned char)kind;
	memcpy(b + 1, &v, sizeof v);
	(void)send(fd, b, sizeof b, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void
on_exit_note(int status, void *arg)
{
	(void)arg;
	death_note(LMP_NOTE_EXIT, status);
}

/* The preload library's _exit and _Exit: no on_exit handler runs there,
 * so it tells the status itself (gmi_preload.c). */
void
gmi_exit_note(int status)
{
	death_note(LMP_NOTE_EXIT, status);
}

/* A fatal signal with its default action: say which, then die of it. */
static void
on_fatal_signal(int sig)
{
	int saved = errno;

	death_note(LMP_NOTE_SIGNAL, sig);
	errno = saved;
	raise(sig);	/* SA_RESETHAND: the default action now */
}

/*
 * Once per process: the exit status at exit(), and the fatal signals the
 * program leaves at their default action (GRM_SIGNALS=0: none), are told
 * to the LM, which writes them in the process's end record.  A signal the
 * program handles itself, or SIGKILL, the LM reads from the kernel.
 */
static void
death_notes_install(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
	    SIGTERM, SIGINT, SIGHUP, SIGQUIT };
	static int done;
	struct sigaction sa, old;
	size_t i;

	if (done)
		return;
	done = 1;
	on_exit(on_exit_note, NULL);
	if (!gmi_signals)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal_signal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
}

/*
 * Whether the LM died (its end of the connection closed).  Then a new one
 * is elected, which adopts the segment, and this process attaches to it
 * again, keeping its session and its chunks: the writers lose nothing.
 * If that fails, the process goes on untraced.  Called on the slow path
 * only (a new chunk).
 */
static void
gmi_lm_check(void)
{
	struct pollfd pfd;
	int fd = gmi_lm_fd;

	if (fd == -1)
		return;
	pfd.fd = fd;
	pfd.events = POLLRDHUP;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) <= 0 ||
	    !(pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return;
	pthread_mutex_lock(&gmi_init_lock);
	if (gmi_lm_fd == fd && atomic_load(&gmi_state) == GMI_ON) {
		gmi_lm_fd = -1;
		close(fd);
		gmi_error(0, "local monitor gone: electing another");
		if (gmi_lm_find(&gmi_mmid, 1) != 0) {
			gmi_error(0, "no local monitor took this process back: "
			    "untraced from now on");
			gmi_set_on_word(0);
			atomic_store(&gmi_state, GMI_OFF);
		}
	}
	pthread_mutex_unlock(&gmi_init_lock);
}

int
gmi_init(void)
{
	static int once, bad;
	static char msg[NUM_MSG_MAX];
	const char *mm, *v, *why;
	int st, ix, saved = errno;
	uint64_t u;

	pthread_mutex_lock(&gmi_init_lock);
	st = atomic_load(&gmi_state);
	if (st != GMI_UNINIT)
		goto out;
	if (!once) {
		once = 1;
		gmi_debug = env_flag(ENV_DEBUG);
		v = env_get(ENV_SIGNALS);
		gmi_signals = v == NULL || strcmp(v, "0") != 0;
		/* A bad value of ours: untraced, as the LM would refuse one
		 * of its own (see grm(3)). */
		bad = env_check(gmi_env_ids, sizeof gmi_env_ids /
		    sizeof gmi_env_ids[0], msg, sizeof msg);
		(void)env_u64(ENV_BLOCK_MS, &u);
		gmi_block_ns = (long)u * 1000000L;
		(void)env_choice(ENV_MODE, &ix);
		gmi_stats_mode = ix == 1;	/* "trace stats" */
		/* Unset: the job's policy, which the LM wrote into the
		 * segment; its choices are SEG_POLICY_* (localmon). */
		if (env_get(ENV_POLICY) != NULL &&
		    env_choice(ENV_POLICY, &ix) == 0)
			gmi_policy = ix;
		gmi_define_predefined();
		pthread_key_create(&gmi_key, thread_exit);
		pthread_atfork(before_fork, after_fork_parent,
		    after_fork_child);
	}
	st = GMI_OFF;
	mm = env_get(ENV_MM);
	if (mm != NULL && bad)
		gmi_error(0, "%s: running untraced", msg);
	else if (mm != NULL && mmid_parse(mm, &gmi_mmid, &why) != 0)
		gmi_error(0, "GRM_MM: %s: running untraced", why);
	else if (mm != NULL) {
		gmi_pid = (uint32_t)getpid();
		if (gmi_lm_find(&gmi_mmid, 0) == 0) {
			st = GMI_ON;
			death_notes_install();
		}
	}
	gmi_set_on_word(st == GMI_ON);
	atomic_store(&gmi_state, st);
out:
	pthread_mutex_unlock(&gmi_init_lock);
	errno = saved;
	return st;
}

char gmi_name[64];

uint32_t
gmi_self_pid(void)
{
	return gmi_pid;
}

void
gmi_notify_lm(void)
{
	char c = LMP_NOTE_PUSH;

	if (gmi_lm_fd != -1)
		(void)send(gmi_lm_fd, &c, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * Writes a loss record at the start of a fresh chunk: n events of thread
 * (pid, tid) were not recorded (pid 0: this thread's own).
 */
static void
put_loss(struct gmi_thread *t, uint64_t n, uint32_t pid, uint32_t tid)
{
	uint64_t who = (uint64_t)pid << 32 | tid;
	char *p = t->data + t->off;

	rec_put_hdr(p, sizeof(struct rec_hdr) + 16, REC_CLASS_META,
	    REC_ATTR_LOSS, 0, gmi_now());
	memcpy(p + sizeof(struct rec_hdr), &n, 8);
	memcpy(p + sizeof(struct rec_hdr) + 8, &who, 8);
	t->off += sizeof(struct rec_hdr) + 16;
	atomic_store_explicit(t->committed, t->off, memory_order_release);
}

/* The policy in force: GRM_POLICY, else the one the LM was started with. */
static int
policy(void)
{
	uint32_t p;

	if (gmi_policy >= 0)
		return gmi_policy;
	p = atomic_load_explicit(&gmi_seg->policy, memory_order_relaxed);
	return p <= SEG_POLICY_OVERWRITE ? (int)p : SEG_POLICY_BLOCK;
}

int
gmi_take_chunk(uint32_t kind)
{
	struct gmi_thread *t = &gmi_thr;
	int idx, notify;

	if (!t->keyed) {
		t->tid = (uint32_t)syscall(SYS_gettid);
		pthread_setspecific(gmi_key, t);
		t->keyed = 1;
	}
	idx = seg_acquire(&gmi_view, gmi_session, gmi_pid, t->tid,
	    atomic_fetch_add(&gmi_chunk_seq, 1), kind, &notify);
	if (notify)
		gmi_notify_lm();
	if (idx >= 0 && gmi_populated != NULL &&
	    !(atomic_fetch_or(&gmi_populated[idx / 8],
	    (unsigned char)(1u << (idx % 8))) & (1u << (idx % 8))))
		(void)seg_populate(seg_data(&gmi_view, (uint32_t)idx),
		    gmi_view.chunk_size);
	return idx;
}

/* Counts one event this thread could not record. */
static char *
lose_one(struct gmi_thread *t)
{
	t->lost++;
	atomic_fetch_add_explicit(&gmi_seg->lost, 1, memory_order_relaxed);
	return NULL;
}

char *
gmi_new_chunk(uint32_t need)
{
	struct gmi_thread *t = &gmi_thr;
	const struct seg *s = &gmi_view;
	struct seg_loss stolen = { 0, 0, 0 };
	long waited = 0, step = 20000;
	int idx, pol;

	if (need > REC_MAX || atomic_load(&gmi_state) != GMI_ON)
		return NULL;
	gmi_lm_check();
	if (t->data != NULL) {
		seg_release(s, (uint32_t)t->idx);
		t->data = NULL;
		t->idx = -1;
	}
	pol = policy();
	for (;;) {
		idx = gmi_take_chunk(SEG_KIND_RECORDS);
		if (idx >= 0)
			break;
		if (waited == 0)
			gmi_notify_lm();
		if (pol == SEG_POLICY_OVERWRITE) {
			idx = seg_steal(s, gmi_session, gmi_pid, t->tid,
			    atomic_fetch_add(&gmi_chunk_seq, 1), &stolen);
			if (idx >= 0)
				break;
		}
		/* Block: wait for the LM, but after a loss try once without
		 * waiting until space returns. */
		if (pol != SEG_POLICY_BLOCK || t->lost > 0 ||
		    waited >= gmi_block_ns)
			return lose_one(t);
		sleep_ns(step);
		waited += step;
		if (step < 1000000)
			step *= 2;
		else
			gmi_lm_check();	/* no LM to free chunks? */
	}
	t->idx = idx;
	t->data = seg_data(s, (uint32_t)idx);
	t->committed = &seg_chunk(s, (uint32_t)idx)->committed;
	t->cap = s->chunk_size;
	/* A chunk taken back starts with the definitions it held. */
	t->off = (uint32_t)atomic_load_explicit(t->committed,
	    memory_order_relaxed);
	if (t->off + 2 * (sizeof(struct rec_hdr) + 16) + need > t->cap) {
		/* Definitions fill it (hardly ever): hand it to the LM as it
		 * is; the overwritten events are counted, unattributed. */
		atomic_fetch_add_explicit(&gmi_seg->lost, stolen.events,
		    memory_order_relaxed);
		seg_release(s, (uint32_t)idx);
		t->data = NULL;
		t->idx = -1;
		return lose_one(t);
	}
	if (t->lost > 0) {
		put_loss(t, t->lost, 0, 0);
		atomic_fetch_add_explicit(&gmi_seg->lost_recorded, t->lost,
		    memory_order_relaxed);
		t->lost = 0;
	}
	if (stolen.events > 0) {
		/* Lost by overwriting: counted in the segment and recorded
		 * at once, for the thread whose chunk it was. */
		atomic_fetch_add_explicit(&gmi_seg->lost, stolen.events,
		    memory_order_relaxed);
		atomic_fetch_add_explicit(&gmi_seg->lost_recorded,
		    stolen.events, memory_order_relaxed);
		put_loss(t, stolen.events, stolen.pid, stolen.tid);
	}
	return t->data + t->off;
}

/*
 * A definition was just written in this thread's chunk: the next push
 * takes the chunk's committed records even if it is not full (carry, as
 * for definitions moved by overwriting), so that the records other
 * threads write with that type, in chunks that fill sooner, never reach
 * mainmon before it.
 */
void
gmi_carry_defs(void)
{
	struct gmi_thread *t = &gmi_thr;

	if (t->data == NULL || t->idx < 0)
		return;
	atomic_store_explicit(&seg_chunk(&gmi_view, (uint32_t)t->idx)->carry,
	    t->off, memory_order_release);
}

int
gmi_flush_lm(long ms)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct pollfd pfd;
	uint64_t deadline;
	char c = LMP_NOTE_FLUSH;
	int r = GRM_ETIMEDOUT, n;

	pthread_mutex_lock(&lock);
	if (gmi_lm_fd == -1)
		goto out;
	/* An answer to an earlier flush that gave up waiting is stale. */
	while (recv(gmi_lm_fd, &c, 1, MSG_DONTWAIT) == 1)
		;
	c = LMP_NOTE_FLUSH;
	if (send(gmi_lm_fd, &c, 1, MSG_NOSIGNAL) != 1)
		goto out;
	deadline = clk_mono_ns() + (uint64_t)ms * 1000000u;
	for (;;) {
		n = (int)((deadline - clk_mono_ns()) / 1000000u);
		if (clk_mono_ns() >= deadline)
			break;
		pfd.fd = gmi_lm_fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, n > 0 ? n : 1) <= 0)
			continue;
		if (recv(gmi_lm_fd, &c, 1, MSG_DONTWAIT) != 1)
			break;
		if (c == LMP_REPLY_FLUSHED)
			r = GRM_OK;
		break;
	}
out:
	pthread_mutex_unlock(&lock);
	if (r != GRM_OK)
		gmi_error(r, "GMI_Flush: the local monitor did not confirm "
		    "delivery in %ld ms", ms);
	return r;
}
