/* SPDX-License-Identifier: MIT */
/*
 * bench_lttng.c: the per-event cost of an LTTng-UST tracepoint with two int
 * fields next to GMI_Event with two ints, in one process, so that their
 * ratio comes from one run.  Batches of the two alternate (which one goes
 * first alternates too), and with several threads every thread starts each
 * batch at the same time (a barrier, outside the timed part), so machine
 * noise falls on both.  Prints figures, asserts nothing.
 *
 * Built and run by bench/lttng.sh, which starts an LTTng session daemon, a
 * session listening to grm_bench:two_ints and a live mainmon; with -m off
 * it checks that neither is listening and measures the disabled costs.
 *
 * With -n EVENTS it measures instead the amortized cost: one loop of
 * EVENTS calls per thread, timed whole and divided by EVENTS, far more
 * than the segment holds, so that the writer runs at the speed of the
 * path behind it (the Local Monitor, the socket, mainmon) and not of its
 * buffer.  Runs of grm and LTTng alternate (-r RUNS, the first system
 * alternating too); after each grm run GMI_Flush waits until mainmon has
 * everything, and the CPU time mainmon (-M PID) and the Local Monitor
 * (found in GRM_RUNDIR) spent over the run is read from /proc/PID/stat.
 * -g MS: sleep MS milliseconds before each loop, so that each starts
 * after the machine was idle (a burst after a quiet moment).
 * -S NS: start the first run when CLOCK_REALTIME reaches NS, so that
 * several processes run at once (each prints its own figures).  -s all
 * adds, alternating with the two, the bare loops a record's timestamp
 * costs at least: rdtsc, rdtscp and clock_gettime(CLOCK_MONOTONIC), each
 * result stored (GRM_CLOCK=tsc stamps with rdtsc; bench/lttng.sh, the TSC
 * part).
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "grm.h"
#include "util/tsc.h"

#define TRACEPOINT_DEFINE
#include "grm_tp.h"
#include <lttng/ust-version.h>

#ifndef LTTNG_UST_VERSION
#define LTTNG_UST_VERSION "?"
#endif

#define BATCH		10000
#define MAXTHREADS	16

enum { LTTNG, GRM, RDTSC, RDTSCP, CGT, NSYS };
#define SYS_TWO		(1 << LTTNG | 1 << GRM)
#define SYS_ALL		((1 << NSYS) - 1)
#define NBATCHSYS	2	/* the batch mode's: LTTng and grm */

static const char *sysname[NSYS] = {
	"LTTng tracepoint(2 ints)", "GMI_Event(2 ints)", "bare rdtsc",
	"bare rdtscp", "bare clock_gettime"
};

static long nbatches = 200;
static pthread_barrier_t sync_all;

static long nevents;		/* -n: amortized mode, calls per loop */
static int nruns = 5;		/* -r */
static int mm_pid;		/* -M */
static uint64_t start_at;	/* -S, CLOCK_REALTIME ns */
static int sys_mask = SYS_TWO;	/* -s */

struct result {
	double	*ns[NSYS];	/* per-event cost of each batch */
	long	grm_lost;	/* GMI_Event calls that did not return GRM_OK */
};

static double
batch_lttng(long b)
{
	uint64_t t0;
	long i;

	t0 = now_ns();
	for (i = 0; i < BATCH; i++)
		tracepoint(grm_bench, two_ints, (int)i, (int)b);
	return (double)(now_ns() - t0) / BATCH;
}

static double
batch_grm(long b, long *lost)
{
	uint64_t t0;
	long i;

	t0 = now_ns();
	for (i = 0; i < BATCH; i++)
		if (GMI_Event(1, (int)i, (int)b) != GRM_OK)
			(*lost)++;
	return (double)(now_ns() - t0) / BATCH;
}

static void *
run(void *arg)
{
	struct result *r = arg;
	long b;
	int k, s;

	for (b = 0; b < nbatches; b++) {
		for (k = 0; k < NBATCHSYS; k++) {
			s = (int)((b + k) % NBATCHSYS);
			pthread_barrier_wait(&sync_all);
			if (s == LTTNG)
				r->ns[s][b] = batch_lttng(b);
			else
				r->ns[s][b] = batch_grm(b, &r->grm_lost);
		}
	}
	return NULL;
}

static struct bench_stats
summarise(struct result *r, int n, int s)
{
	struct bench_stats st;
	double *all;
	long k = 0, b;
	int t;

	all = malloc(sizeof *all * (size_t)(nbatches * n));
	if (all == NULL) {
		perror("bench_lttng");
		exit(1);
	}
	for (t = 0; t < n; t++)
		for (b = 0; b < nbatches; b++)
			all[k++] = r[t].ns[s][b];
	st = bench_stats(all, (size_t)k);
	free(all);
	return st;
}

static void
measure(int nthreads, const char *state)
{
	pthread_t th[MAXTHREADS];
	struct result r[MAXTHREADS];
	struct bench_stats st[NSYS];
	long calls, lost = 0;
	int t, s;

	memset(r, 0, sizeof r);
	pthread_barrier_init(&sync_all, NULL, (unsigned)nthreads);
	for (t = 0; t < nthreads; t++) {
		for (s = 0; s < NBATCHSYS; s++) {
			r[t].ns[s] = calloc((size_t)nbatches, sizeof(double));
			if (r[t].ns[s] == NULL) {
				perror("bench_lttng");
				exit(1);
			}
		}
		if (t > 0 && pthread_create(&th[t], NULL, run, &r[t]) != 0) {
			fprintf(stderr, "bench_lttng: pthread_create failed\n");
			exit(1);
		}
	}
	run(&r[0]);
	for (t = 1; t < nthreads; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&sync_all);

	calls = nbatches * BATCH * (long)nthreads;
	for (t = 0; t < nthreads; t++)
		lost += r[t].grm_lost;
	printf("-- %s, %d thread%s writing at once (%ld calls of each, "
	    "per-thread cost)\n", state, nthreads, nthreads > 1 ? "s" : "",
	    calls);
	for (s = 0; s < NBATCHSYS; s++) {
		st[s] = summarise(r, nthreads, s);
		printf("%-26s median %7.1f ns  p10 %7.1f  p90 %7.1f", sysname[s],
		    st[s].med, st[s].p10, st[s].p90);
		if (s == GRM)
			printf("  (%ld not GRM_OK)", lost);
		printf("\n");
	}
	printf("%-26s %.2f\n", "LTTng/grm (medians)",
	    st[GRM].med > 0 ? st[LTTNG].med / st[GRM].med : 0.0);
	for (t = 0; t < nthreads; t++)
		for (s = 0; s < NBATCHSYS; s++)
			free(r[t].ns[s]);
}

/* ---- amortized mode (-n) ---- */

/* utime + stime of process pid, in ns; 0 if it cannot be read. */
static uint64_t
cpu_ns(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	long tck = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	if (pid <= 0 || tck <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after "pid (comm) ": state is field 3, utime 14, stime 15 */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
	    "%llu %llu", &ut, &st) != 2)
		return 0;
	return (ut + st) * (1000000000ull / (unsigned long long)tck);
}

/* The bytes pid has written with write(2) and the like (/proc/PID/io
 * wchar): for a Local Monitor, what it sent mainmon (and its log). */
static uint64_t
wchar(int pid)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/io", pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "wchar: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* The pid of the Local Monitor of GRM_RUNDIR (its lm-*.pid file). */
static int
lm_pid(void)
{
	const char *rd = getenv("GRM_RUNDIR");
	char path[4096];
	struct dirent *e;
	DIR *d;
	FILE *f;
	int pid = 0;

	if (rd == NULL || (d = opendir(rd)) == NULL)
		return 0;
	while (pid == 0 && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "lm-", 3) != 0 ||
		    strstr(e->d_name, ".pid") == NULL)
			continue;
		snprintf(path, sizeof path, "%s/%s", rd, e->d_name);
		if ((f = fopen(path, "r")) != NULL) {
			if (fscanf(f, "%d", &pid) != 1)
				pid = 0;
			fclose(f);
		}
	}
	closedir(d);
	return pid;
}

struct arun {
	double	ns[NSYS];	/* this thread's loop / nevents, per run */
};

struct athread {
	struct arun	*runs;
	long		lost;	/* GMI_Event calls not GRM_OK */
	int		id;
};

/* -g: milliseconds each thread sleeps before each timed loop (the machine
 * idle, as a program that traces in bursts leaves it). */
static int gap_ms;

/* Filled by thread 0, per run and system. */
struct aglobal {
	double		wall_ns;	/* barrier to barrier */
	double		flush_ns;	/* GMI_Flush after a grm loop */
	uint64_t	mm_cpu, lm_cpu;	/* ns over the run, flush included */
	uint64_t	lm_bytes;	/* what the LM wrote over it; 0: not
					   known */
};
static struct aglobal *aglob[NSYS];

static void
loop_lttng(long n)
{
	long i;

	for (i = 0; i < n; i++)
		tracepoint(grm_bench, two_ints, (int)i, (int)n);
}

/* The bare loops: each read stored, as a record's timestamp is. */
static volatile uint64_t sink;

static void
loop_bare(int s, long n)
{
	long i;

	if (s == RDTSC)
		for (i = 0; i < n; i++)
			sink = tsc_read();
	else if (s == RDTSCP)
		for (i = 0; i < n; i++)
			sink = tsc_read_p();
	else
		for (i = 0; i < n; i++)
			sink = clk_mono_ns();
}

static long
loop_grm(long n)
{
	long i, lost = 0;

	for (i = 0; i < n; i++)
		if (GMI_Event(1, (int)i, (int)n) != GRM_OK)
			lost++;
	return lost;
}

static void *
arun_thread(void *arg)
{
	struct athread *a = arg;
	uint64_t t0, t1, w0 = 0, m0 = 0, l0 = 0, b0 = 0;
	int r, k, s, lm = a->id == 0 ? lm_pid() : 0;

	for (r = 0; r < nruns; r++) {
		for (k = 0; k < NSYS; k++) {
			s = (r + k) % NSYS;
			if (!(sys_mask & (1 << s)))
				continue;
			if (a->id == 0) {
				m0 = cpu_ns(mm_pid);
				l0 = cpu_ns(lm);
				b0 = wchar(lm);
			}
			if (gap_ms > 0)		/* idle, then the loop */
				usleep((useconds_t)gap_ms * 1000);
			pthread_barrier_wait(&sync_all);
			t0 = now_ns();
			if (a->id == 0)
				w0 = t0;
			if (s == LTTNG)
				loop_lttng(nevents);
			else if (s == GRM)
				a->lost += loop_grm(nevents);
			else
				loop_bare(s, nevents);
			t1 = now_ns();
			a->runs[r].ns[s] = (double)(t1 - t0) / (double)nevents;
			pthread_barrier_wait(&sync_all);
			if (a->id != 0)
				continue;
			aglob[s][r].wall_ns = (double)(now_ns() - w0);
			if (s == GRM) {
				t0 = now_ns();
				if (GMI_Flush() != GRM_OK)
					fprintf(stderr, "bench_lttng: "
					    "GMI_Flush timed out\n");
				aglob[s][r].flush_ns = (double)(now_ns() - t0);
				if (lm == 0)
					lm = lm_pid();
				aglob[s][r].mm_cpu = cpu_ns(mm_pid) - m0;
				aglob[s][r].lm_cpu = lm != 0 ?
				    cpu_ns(lm) - l0 : 0;
				/* Flushed: the LM has sent the loop's
				 * records (a run's first may count the
				 * LM's start). */
				aglob[s][r].lm_bytes = lm != 0 && b0 != 0 ?
				    wchar(lm) - b0 : 0;
			}
		}
	}
	return NULL;
}

static double
median(double *v, size_t n)
{
	return bench_stats(v, n).med;
}

static void
amortized(int nthreads)
{
	pthread_t th[MAXTHREADS];
	struct athread a[MAXTHREADS];
	double v[MAXTHREADS * 64], c[64], med[NSYS] = { 0 };
	uint64_t cpu_all;
	long lost = 0;
	size_t k;
	int t, s, r;
	struct timespec ts;
	uint64_t now;

	if (start_at != 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		if (start_at > now) {
			ts.tv_sec = (time_t)((start_at - now) / 1000000000u);
			ts.tv_nsec = (long)((start_at - now) % 1000000000u);
			nanosleep(&ts, NULL);
		}
	}
	for (s = 0; s < NSYS; s++)
		if ((aglob[s] = calloc((size_t)nruns, sizeof *aglob[s])) ==
		    NULL) {
			perror("bench_lttng");
			exit(1);
		}
	pthread_barrier_init(&sync_all, NULL, (unsigned)nthreads);
	for (t = 0; t < nthreads; t++) {
		a[t].id = t;
		a[t].lost = 0;
		if ((a[t].runs = calloc((size_t)nruns, sizeof *a[t].runs)) ==
		    NULL) {
			perror("bench_lttng");
			exit(1);
		}
		if (t > 0 && pthread_create(&th[t], NULL, arun_thread,
		    &a[t]) != 0) {
			fprintf(stderr, "bench_lttng: pthread_create failed\n");
			exit(1);
		}
	}
	arun_thread(&a[0]);
	for (t = 1; t < nthreads; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&sync_all);
	for (t = 0; t < nthreads; t++)
		lost += a[t].lost;

	printf("-- amortized: %d thread%s, %ld calls per thread per loop, "
	    "%d runs of each, medians (per-thread cost: its loop / calls)\n",
	    nthreads, nthreads > 1 ? "s" : "", nevents, nruns);
	for (s = 0; s < NSYS; s++) {
		if (!(sys_mask & (1 << s)))
			continue;
		k = 0;
		for (r = 0; r < nruns; r++)
			for (t = 0; t < nthreads; t++)
				v[k++] = a[t].runs[r].ns[s];
		med[s] = median(v, k);
		printf("%-26s amortized %7.1f ns/call  (runs:", sysname[s],
		    med[s]);
		for (r = 0; r < nruns; r++)
			printf(" %.1f", a[0].runs[r].ns[s]);
		printf(")\n");
		for (r = 0; r < nruns; r++)
			c[r] = (double)nthreads * (double)nevents /
			    aglob[s][r].wall_ns * 1e3;
		printf("%-26s aggregate %7.2f M calls/s", "", median(c,
		    (size_t)nruns));
		if (s == GRM) {
			for (r = 0; r < nruns; r++)
				c[r] = (aglob[s][r].wall_ns +
				    aglob[s][r].flush_ns) / (double)nevents;
			printf("; loop+flush %.1f ns/call", median(c,
			    (size_t)nruns));
			printf("; %ld not GRM_OK", lost);
		}
		printf("\n");
		/* /proc counts in ticks (10 ms): below a second of mainmon's
		 * CPU over all runs, the figure says nothing. */
		cpu_all = 0;
		for (r = 0; r < nruns; r++)
			cpu_all += aglob[s][r].mm_cpu;
		if (s == GRM && mm_pid > 0 && cpu_all < 1000000000u)
			printf("%-26s mainmon and Local Monitor CPU: too "
			    "little to measure in ticks\n", "");
		if (s == GRM && mm_pid > 0 && cpu_all >= 1000000000u) {
			for (r = 0; r < nruns; r++)
				c[r] = (double)aglob[s][r].mm_cpu /
				    ((double)nthreads * (double)nevents);
			printf("%-26s mainmon CPU %5.1f ns/record", "",
			    median(c, (size_t)nruns));
			for (r = 0; r < nruns; r++)
				c[r] = (double)aglob[s][r].lm_cpu /
				    ((double)nthreads * (double)nevents);
			printf(", Local Monitor CPU %5.1f ns/record",
			    median(c, (size_t)nruns));
			for (k = 0, r = 0; r < nruns; r++)
				if (aglob[s][r].lm_bytes != 0)
					c[k++] = (double)aglob[s][r].lm_bytes /
					    ((double)nthreads *
					    (double)nevents);
			if (k > 0)
				printf(", Local Monitor wrote %.1f "
				    "bytes/record", median(c, k));
			printf("\n");
		}
	}
	if ((sys_mask & SYS_TWO) == SYS_TWO)
		printf("%-26s %.2f\n", "LTTng/grm (medians)",
		    med[GRM] > 0 ? med[LTTNG] / med[GRM] : 0.0);
	if ((sys_mask & (1 << GRM | 1 << RDTSC)) == (1 << GRM | 1 << RDTSC))
		printf("%-26s %+.1f ns\n", "grm - bare rdtsc (medians)",
		    med[GRM] - med[RDTSC]);
	if (sys_mask & (1 << GRM))
		printf("grm calls recorded: %ld\n", (long)nthreads * nevents *
		    nruns - lost);
	fflush(stdout);
	for (t = 0; t < nthreads; t++)
		free(a[t].runs);
	for (s = 0; s < NSYS; s++)
		free(aglob[s]);
}

static void
clock_cost(void)
{
	printf("%-26s %7.1f ns\n", "clock_gettime(MONOTONIC)",
	    bench_clock_cost());
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_lttng -m on|off [-b BATCHES] "
	    "[-t THREADS]\n"
	    "       bench_lttng -m on -n EVENTS [-r RUNS] [-t THREADS] "
	    "[-M MAINMON_PID] [-S REALTIME_NS] [-s both|grm|lttng|all] "
	    "[-g IDLE_MS]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	int c, threads = 2, want = -1, lt, gr;
	const char *state;

	while ((c = getopt(argc, argv, "b:g:m:t:n:r:M:S:s:")) != -1) {
		switch (c) {
		case 'g':
			gap_ms = atoi(optarg);
			break;
		case 'n':
			nevents = atol(optarg);
			break;
		case 'r':
			nruns = atoi(optarg);
			break;
		case 'M':
			mm_pid = atoi(optarg);
			break;
		case 'S':
			start_at = strtoull(optarg, NULL, 10);
			break;
		case 's':
			if (strcmp(optarg, "grm") == 0)
				sys_mask = 1 << GRM;
			else if (strcmp(optarg, "lttng") == 0)
				sys_mask = 1 << LTTNG;
			else if (strcmp(optarg, "both") == 0)
				sys_mask = SYS_TWO;
			else if (strcmp(optarg, "all") == 0)
				sys_mask = SYS_ALL;
			else
				usage();
			break;
		case 'b':
			nbatches = atol(optarg);
			break;
		case 'm':
			if (strcmp(optarg, "on") == 0)
				want = 1;
			else if (strcmp(optarg, "off") == 0)
				want = 0;
			else
				usage();
			break;
		case 't':
			threads = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (want < 0 || nbatches < 1 || threads < 1 || threads > MAXTHREADS ||
	    nevents < 0 || nruns < 1 || nruns > 64 || gap_ms < 0 ||
	    gap_ms > 10000 ||
	    (nevents > 0 && want != 1))
		usage();
	if (GMI_DefineEvent(1, "%d %d", "bench") != GRM_OK) {
		fprintf(stderr, "bench_lttng: GMI_DefineEvent failed\n");
		return 1;
	}
	/* LTTng registers with the session daemon before main runs. */
	lt = tracepoint_enabled(grm_bench, two_ints) ? 1 : 0;
	gr = GMI_Traced();
	printf("LTTng-UST %s: grm_bench:two_ints %s; grm %s; batches of %d "
	    "calls\n", LTTNG_UST_VERSION, lt ? "enabled" : "disabled",
	    gr ? "traced" : "untraced (no GRM_MM)", BATCH);
	if (lt != want || gr != want) {
		fprintf(stderr, "bench_lttng: expected both systems %s\n",
		    want ? "recording" : "off");
		return 1;
	}
	if (nevents > 0) {
		amortized(threads);
		return 0;
	}
	state = want ? "recording" : "disabled / untraced";
	clock_cost();
	measure(1, state);
	if (threads > 1)
		measure(threads, state);
	return 0;
}
