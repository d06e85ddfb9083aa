/* SPDX-License-Identifier: MIT */
/* gmi_app.c: an instrumented test program, one mode per feature of the
 * client library; the shell tests run it traced and check the trace.
 *
 *	gmi_app errors		every misuse; prints "name code" per call
 *	gmi_app api		all conversions, strings, messages, names
 *	gmi_app ints BASE N	N records of each of 4 types of ints only
 *	gmi_app fork N		parent and a forked child emit N events each
 *	gmi_app exec N		N events, exec itself ("after-exec N"), N more
 *	gmi_app threads T N	T threads emit N events each and exit
 *	gmi_app exit MODE N	N events, then exit(0) | _exit | return | abort
 *	gmi_app flood N		N events as fast as possible; "lost K"
 *	gmi_app flush N		N events, then GMI_Flush; "flush CODE"
 *	gmi_app blocks N	nested blocks with known sleeps (statistics)
 *	gmi_app ticker FILE	events 1 and 2 every 200 us until FILE exists
 *	gmi_app pingpong N	two processes exchange N messages over pipes
 *	gmi_app children N	a child of its own, then N events; "child S"
 *				(its status, reaped by the program itself)
 *	gmi_app short K N	K short processes, 8 at a time (forked by
 *				this one), each a block and N events
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "grm.h"

static void
die(const char *what, int r)
{
	fprintf(stderr, "gmi_app: %s: %d\n", what, r);
	exit(1);
}

#define OK(call) do { int r_ = (call); if (r_ != GRM_OK) die(#call, r_); } \
	while (0)

static void
sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void
seq_events(long n, int tag)
{
	long i;

	OK(GMI_DefineEvent(1, "%d %ld", "seq"));
	for (i = 0; i < n; i++)
		OK(GMI_Event(1, tag, i));
}

static int
mode_errors(void)
{
	char big[GRM_STR_MAX + 2];

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	OK(GMI_DefineEvent(1, "%d", "one"));
#define SHOW(name, call) printf("%s %d\n", name, call)
	SHOW("event_undefined", GMI_Event(2, 5));
	SHOW("event_negative", GMI_Event(-1, 5));
	SHOW("event_too_big", GMI_Event(GRM_EID_MAX, 5));
	SHOW("define_negative", GMI_DefineEvent(-7, "%d", NULL));
	SHOW("define_too_big", GMI_DefineEvent(GRM_EID_MAX, "%d", NULL));
	SHOW("define_null", GMI_DefineEvent(3, NULL, NULL));
	SHOW("define_bad_format", GMI_DefineEvent(3, "%n", NULL));
	SHOW("define_star", GMI_DefineEvent(3, "%*d", NULL));
	SHOW("define_long_double", GMI_DefineEvent(3, "%Lf", NULL));
	SHOW("define_too_many", GMI_DefineEvent(3,
	    "%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d", NULL));
	SHOW("redefine_other", GMI_DefineEvent(1, "%u", "one"));
	SHOW("redefine_same", GMI_DefineEvent(1, "%d", "one again"));
	OK(GMI_DefineEvent(4, "%s", "text"));
	SHOW("string_too_long", GMI_Event(4, big));
	SHOW("string_null", GMI_Event(4, (char *)NULL));
	big[GRM_STR_MAX] = '\0';
	SHOW("string_longest", GMI_Event(4, big));
	SHOW("block_name_null", GMI_DefineBlock(1, NULL));
	SHOW("message_negative", GMI_MessageSend(1, 2, -1));
	SHOW("name_negative_rank", GMI_SetName(-1, "x"));
	SHOW("name_null", GMI_SetName(0, NULL));
	SHOW("after_errors", GMI_Event(1, 77));
	return 0;
}

static int
mode_api(void)
{
	int x = 0;

	OK(GMI_SetName(3, "worker three"));
	OK(GMI_DefineEvent(10, "i=%d u=%u x=%x o=%o c=%c", "ints"));
	OK(GMI_DefineEvent(11, "%ld %lu %lld %llu %zu %hd %hhu", "longs"));
	OK(GMI_DefineEvent(12, "%f %g %e %.3f", "doubles"));
	OK(GMI_DefineEvent(13, "ptr %p then %s and %s", "pointer strings"));
	OK(GMI_Event(10, -5, 4000000000u, 0xbeefu, 8u, 'A'));
	OK(GMI_Event(11, -9000000000L, 18000000000UL, -1LL, 2ULL,
	    (size_t)12345, (short)-3, (unsigned char)250));
	OK(GMI_Event(12, 0.5, -2.25, 1e300, 3.14159));
	OK(GMI_Event(13, (void *)&x, "", "quote\" backslash\\ tab\t"));
	OK(GMI_DefineBlock(7, "phase seven"));
	OK(GMI_BlockBegin(7));
	OK(GMI_MessageSend(4, 99, 1024));
	OK(GMI_MessageRecv(4, 98, 512));
	OK(GMI_BlockEnd(7));
	printf("pointer %p\n", (void *)&x);
	return 0;
}

/*
 * "gmi_app ints BASE N": N records of each of four types of ints only,
 * event ids BASE to BASE + 3, of 1, 2, 5 and 7 fields (the last with two
 * arguments past those that come in registers), the values f(i, k) of
 * ints_value below; across several chunks.
 */
static int
ints_value(long i, int k)
{
	unsigned u = (unsigned)i * 2654435761u + (unsigned)k * 40503u;

	return (int)u;	/* negative half the time */
}

static int
mode_ints(int base, long n)
{
	long i;

#define V(k) ints_value(i, k)
	OK(GMI_DefineEvent(base, "%d", "one int"));
	OK(GMI_DefineEvent(base + 1, "%d %d", "two ints"));
	OK(GMI_DefineEvent(base + 2, "%d %d %d %d %d", "five ints"));
	OK(GMI_DefineEvent(base + 3, "%d %d %d %d %d %d %d", "seven ints"));
	for (i = 0; i < n; i++) {
		OK(GMI_Event(base, V(0)));
		OK(GMI_Event(base + 1, V(0), V(1)));
		OK(GMI_Event(base + 2, V(0), V(1), V(2), V(3), V(4)));
		OK(GMI_Event(base + 3, V(0), V(1), V(2), V(3), V(4), V(5),
		    V(6)));
	}
#undef V
	printf("ints %ld\n", n);
	return 0;
}

static int
mode_fork(long n)
{
	pid_t pid;
	int st;

	seq_events(n, 0);
	pid = fork();
	if (pid == -1)
		die("fork", errno);
	if (pid == 0) {
		/* The child's own records, with types inherited. */
		seq_events(n, 1);
		_exit(0);
	}
	seq_events(n, 2);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		die("child", st);
	printf("child %d\n", (int)pid);
	return 0;
}

static int
mode_exec(const char *self, long n, int after)
{
	char arg[32];

	if (after) {
		/* A new image: types must be defined again. */
		OK(GMI_DefineEvent(1, "%d %ld %s", "seq after exec"));
		for (long i = 0; i < n; i++)
			OK(GMI_Event(1, 2, i, "after"));
		return 0;
	}
	seq_events(n, 1);
	snprintf(arg, sizeof arg, "%ld", n);
	fflush(stdout);
	execl(self, self, "after-exec", arg, (char *)NULL);
	die("exec", errno);
	return 1;
}

static long thread_n;

static void *
thread_main(void *arg)
{
	long i;

	for (i = 0; i < thread_n; i++)
		OK(GMI_Event(1, (int)(long)arg, i));
	return NULL;
}

static int
mode_threads(int t, long n)
{
	pthread_t th[64];
	int i;

	if (t < 1 || t > 64)
		die("threads", t);
	OK(GMI_DefineEvent(1, "%d %ld", "seq"));
	thread_n = n;
	for (i = 0; i < t; i++)
		if (pthread_create(&th[i], NULL, thread_main, (void *)(long)i))
			die("pthread_create", i);
	for (i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int
mode_exit(const char *how, long n)
{
	seq_events(n, 0);
	if (strcmp(how, "exit") == 0)
		exit(0);
	if (strcmp(how, "_exit") == 0)
		_exit(0);
	if (strcmp(how, "abort") == 0)
		abort();
	return 0;	/* "return" */
}

static int
mode_flood(long n)
{
	const char *start = getenv("GMI_APP_START");
	long i, lost = 0;
	int r;

	OK(GMI_DefineEvent(1, "%d %ld", "seq"));
	/* With GMI_APP_START=FILE: attached now, emit once FILE exists. */
	if (start != NULL) {
		printf("ready\n");
		fflush(stdout);
		while (access(start, F_OK) != 0)
			sleep_us(1000);
	}
	for (i = 0; i < n; i++) {
		r = GMI_Event(1, 0, i);
		if (r == GRM_ELOST)
			lost++;
		else if (r != GRM_OK)
			die("GMI_Event", r);
	}
	printf("lost %ld\n", lost);
	return 0;
}

static int
mode_flush(long n)
{
	seq_events(n, 0);
	printf("flush %d\n", GMI_Flush());
	fflush(stdout);
	/* Stay alive: the records must have arrived while we run. */
	sleep_us(3000000);
	return 0;
}

/* Block 1 (10 ms) contains block 2 (20 ms, twice) and block 3 (5 ms): the
 * exclusive times are 10, 20 and 5 ms. */
static int
mode_blocks(long n)
{
	long i;

	OK(GMI_DefineBlock(1, "outer"));
	OK(GMI_DefineBlock(2, "inner"));
	OK(GMI_DefineBlock(3, "leaf"));
	OK(GMI_DefineEvent(5, "%d", "tick"));
	for (i = 0; i < n; i++) {
		OK(GMI_BlockBegin(1));
		sleep_us(10000);
		OK(GMI_BlockBegin(2));
		sleep_us(20000);
		OK(GMI_BlockEnd(2));
		OK(GMI_BlockBegin(2));
		OK(GMI_BlockBegin(3));
		sleep_us(5000);
		OK(GMI_BlockEnd(3));
		sleep_us(20000);
		OK(GMI_BlockEnd(2));
		OK(GMI_Event(5, (int)i));
		OK(GMI_BlockEnd(1));
	}
	return 0;
}

static int
mode_ticker(const char *file)
{
	long i;

	OK(GMI_DefineEvent(1, "%ld", "alpha ticks"));
	OK(GMI_DefineEvent(2, "%ld", "beta ticks"));
	for (i = 0; access(file, F_OK) != 0; i++) {
		OK(GMI_Event(1, i));
		OK(GMI_Event(2, i));
		sleep_us(200);
	}
	return 0;
}

/* Rank 0 sends n messages to rank 1, which answers each. */
static int
mode_pingpong(long n)
{
	int ab[2], ba[2], st;
	pid_t pid;
	long i, v;

	if (pipe(ab) != 0 || pipe(ba) != 0)
		die("pipe", errno);
	pid = fork();
	if (pid == -1)
		die("fork", errno);
	if (pid == 0) {
		OK(GMI_SetName(1, "pong"));
		for (i = 0; i < n; i++) {
			if (read(ab[0], &v, sizeof v) != sizeof v)
				_exit(1);
			OK(GMI_MessageRecv(0, 5, sizeof v));
			OK(GMI_MessageSend(0, 6, sizeof v));
			if (write(ba[1], &v, sizeof v) != sizeof v)
				_exit(1);
		}
		_exit(0);
	}
	OK(GMI_SetName(0, "ping"));
	for (i = 0; i < n; i++) {
		OK(GMI_MessageSend(1, 5, sizeof i));
		if (write(ab[1], &i, sizeof i) != sizeof i ||
		    read(ba[0], &v, sizeof v) != sizeof v)
			die("pipe io", errno);
		OK(GMI_MessageRecv(1, 6, sizeof v));
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

/* Counts the SIGCHLDs it gets; reaps nothing (the program's own wait
 * does). */
static volatile sig_atomic_t sigchlds;

static void
on_sigchld(int sig)
{
	(void)sig;
	sigchlds++;
}

/*
 * A program with a child of its own, started before its first GMI call,
 * and a SIGCHLD handler: starting (or failing to start) a Local Monitor
 * must not reap its child nor disturb the handler.
 */
static int
mode_children(long n)
{
	struct sigaction sa;
	pid_t pid;
	long i;
	int st;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigchld;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGCHLD, &sa, NULL) != 0)
		die("sigaction", errno);
	pid = fork();
	if (pid == -1)
		die("fork", errno);
	if (pid == 0)
		_exit(7);
	OK(GMI_DefineEvent(1, "%d %ld", "seq"));
	for (i = 0; i < n; i++)
		OK(GMI_Event(1, 0, i));
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			die("waitpid", errno);
	printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return sigchlds > 0 ? 0 : 1;
}

static int
mode_short(long k, long n)
{
	long i, running = 0;
	pid_t pid;
	int st, rc = 0;

	/* Attached once here: the children share the mapping. */
	OK(GMI_DefineEvent(1, "%d %ld", "seq"));
	for (i = 0; i < k || running > 0;) {
		/* Eight at a time. */
		if (i < k && running < 8) {
			if ((pid = fork()) < 0)
				die("fork", errno);
			if (pid == 0) {
				OK(GMI_DefineBlock(1, "short"));
				OK(GMI_BlockBegin(1));
				seq_events(n, (int)(i % 1000));
				OK(GMI_BlockEnd(1));
				exit(0);
			}
			i++;
			running++;
			continue;
		}
		if (wait(&st) < 0)
			die("wait", errno);
		running--;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = 1;
	}
	return rc;
}

int
main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (strcmp(m, "errors") == 0)
		return mode_errors();
	if (strcmp(m, "api") == 0)
		return mode_api();
	if (strcmp(m, "ints") == 0 && argc > 3)
		return mode_ints((int)n, atol(argv[3]));
	if (strcmp(m, "fork") == 0)
		return mode_fork(n);
	if (strcmp(m, "exec") == 0)
		return mode_exec(argv[0], n, 0);
	if (strcmp(m, "after-exec") == 0)
		return mode_exec(argv[0], n, 1);
	if (strcmp(m, "threads") == 0 && argc > 3)
		return mode_threads((int)n, atol(argv[3]));
	if (strcmp(m, "exit") == 0 && argc > 3)
		return mode_exit(argv[2], atol(argv[3]));
	if (strcmp(m, "flood") == 0)
		return mode_flood(n);
	if (strcmp(m, "flush") == 0)
		return mode_flush(n);
	if (strcmp(m, "blocks") == 0)
		return mode_blocks(n);
	if (strcmp(m, "ticker") == 0 && argc > 2)
		return mode_ticker(argv[2]);
	if (strcmp(m, "pingpong") == 0)
		return mode_pingpong(n);
	if (strcmp(m, "children") == 0)
		return mode_children(n);
	if (strcmp(m, "short") == 0 && argc > 3)
		return mode_short(n, atol(argv[3]));
	fprintf(stderr, "usage: gmi_app errors|api|ints BASE N|fork N|exec N|"
	    "threads T N|exit MODE N|flood N|flush N|blocks N|ticker FILE|"
	    "pingpong N|children N|short K N\n");
	return 2;
}
