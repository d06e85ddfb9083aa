/* SPDX-License-Identifier: MIT */
/* bench_sock.c: what moving trace data between two processes of one host
 * costs in the kernel, by TCP loopback and by a Unix stream socket (the
 * Local Monitor's two ways to a Main Monitor on its host: doc/protocol.md
 * 1.1).  A sender writes 64 KiB at a time, as the LM sends a chunk; a
 * receiver reads up to 256 KiB at a time; both on one CPU (-c, default 1),
 * as the LM and mainmon share one.  Prints, per 16-byte record (a dense
 * record of two ints), the CPU time of each side (user and system) and the
 * elapsed time, each way, RUNS times alternated.  Asserts nothing.
 * Usage: bench_sock [-c CPU] [-n MB] [-r RUNS] */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#define WRITE_SZ	65536
#define READ_SZ		262144
#define REC		16.0

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double
tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* A connected pair: *srv (the receiver's end), *cli (the sender's). */
static int
pair(int unix_, int *srv, int *cli)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	int l, one = 1;

	memset(&ss, 0, sizeof ss);
	if (unix_) {
		struct sockaddr_un *un = (struct sockaddr_un *)&ss;

		un->sun_family = AF_UNIX;
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
		    (size_t)snprintf(un->sun_path + 1, sizeof un->sun_path - 1,
		    "grm-bench-sock/%ld", (long)getpid()));
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof *in;
	}
	if ((l = socket(ss.ss_family, SOCK_STREAM, 0)) < 0 ||
	    bind(l, (struct sockaddr *)&ss, len) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&ss, &len) != 0 ||
	    (*cli = socket(ss.ss_family, SOCK_STREAM, 0)) < 0 ||
	    connect(*cli, (struct sockaddr *)&ss, len) != 0 ||
	    (*srv = accept(l, NULL, NULL)) < 0) {
		fprintf(stderr, "bench_sock: %s: %s\n", unix_ ? "unix" : "tcp",
		    strerror(errno));
		return -1;
	}
	if (!unix_) {
		setsockopt(*cli, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		setsockopt(*srv, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	}
	close(l);
	return 0;
}

/* One run: bytes through a fresh pair; prints a line. */
static int
run(int unix_, long bytes)
{
	static char wbuf[WRITE_SZ], rbuf[READ_SZ];
	struct rusage r0, r1, rc;
	double t0, t1, recs = (double)bytes / REC;
	long got = 0, sent = 0;
	ssize_t n;
	pid_t pid;
	int srv, cli, st;

	if (pair(unix_, &srv, &cli) != 0)
		return -1;
	getrusage(RUSAGE_SELF, &r0);
	t0 = now_s();
	if ((pid = fork()) == 0) {
		close(srv);
		while (sent < bytes && (n = write(cli, wbuf, WRITE_SZ)) > 0)
			sent += n;
		_exit(sent < bytes);
	}
	close(cli);
	while ((n = read(srv, rbuf, READ_SZ)) > 0)
		got += n;
	t1 = now_s();
	getrusage(RUSAGE_SELF, &r1);
	waitpid(pid, &st, 0);
	getrusage(RUSAGE_CHILDREN, &rc);	/* only this run's child: each
						   run is a process of its own */
	close(srv);
	if (got < bytes || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench_sock: short transfer\n");
		return -1;
	}
	printf("%-5s  send sys %5.2f user %4.2f  recv sys %5.2f user %4.2f  "
	    "total %5.2f ns/record  elapsed %5.2f ns/record (%.1f GB/s)\n",
	    unix_ ? "unix" : "tcp", tv_s(rc.ru_stime) / recs * 1e9,
	    tv_s(rc.ru_utime) / recs * 1e9,
	    (tv_s(r1.ru_stime) - tv_s(r0.ru_stime)) / recs * 1e9,
	    (tv_s(r1.ru_utime) - tv_s(r0.ru_utime)) / recs * 1e9,
	    (tv_s(rc.ru_stime) + tv_s(rc.ru_utime) + tv_s(r1.ru_stime) -
	    tv_s(r0.ru_stime) + tv_s(r1.ru_utime) - tv_s(r0.ru_utime)) /
	    recs * 1e9, (t1 - t0) / recs * 1e9, (double)bytes / (t1 - t0) /
	    1e9);
	return 0;
}

int
main(int argc, char **argv)
{
	long mb = 2000;
	int cpu = 1, runs = 3, c, i, w;
	cpu_set_t set;
	pid_t pid;

	while ((c = getopt(argc, argv, "c:n:r:")) != -1) {
		switch (c) {
		case 'c': cpu = atoi(optarg); break;
		case 'n': mb = atol(optarg); break;
		case 'r': runs = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: bench_sock [-c CPU] [-n MB] "
			    "[-r RUNS]\n");
			return 2;
		}
	}
	if (mb < 1 || runs < 1 || cpu < 0 || cpu >= CPU_SETSIZE) {
		fprintf(stderr, "bench_sock: bad -c, -n or -r\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0)
		fprintf(stderr, "bench_sock: not pinned to CPU %d: %s\n", cpu,
		    strerror(errno));
	printf("%ld MB each way and run, %d-byte writes, %d-byte reads, both "
	    "ends on CPU %d\n", mb, WRITE_SZ, READ_SZ, cpu);
	for (i = 0; i < 2 * runs; i++) {
		/* Each run in a process of its own, so that RUSAGE_CHILDREN
		 * counts that run's sender alone. */
		fflush(stdout);
		if ((pid = fork()) == 0) {
			c = run(i % 2, mb * 1000000);
			fflush(stdout);
			_exit(c == 0 ? 0 : 1);
		}
		if (pid < 0 || waitpid(pid, &w, 0) != pid || !WIFEXITED(w) ||
		    WEXITSTATUS(w) != 0)
			return 1;
	}
	return 0;
}
