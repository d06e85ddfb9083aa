/* SPDX-License-Identifier: MIT */
/* crasher.c: a traced process that dies.  It forks; the child emits
 * events 0..N-1 (event 1, "seq %ld") and then ends as MODE says; the
 * parent, untraced, waits a while before reaping it, so that the kernel
 * still shows how it ended when its Local Monitor looks, and prints
 * "pid PID" and how the child ended.
 *
 *	crasher MODE N
 *	MODE: kill (SIGKILL itself), segv, abort, exit3 (exit(3)),
 *	      _exit4 (_exit(4)), return (return 0 from the child's main
 *	      path), loop (emit forever from 0 on; the parent kills it with
 *	      SIGKILL after N milliseconds, at whatever point it is). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "grm.h"

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int
child(const char *mode, long n)
{
	long i;

	if (GMI_DefineEvent(1, "seq %ld", "sequence") != GRM_OK)
		return 1;
	if (strcmp(mode, "loop") == 0)
		for (i = 0;; i++)
			GMI_Event(1, i);
	for (i = 0; i < n; i++)
		if (GMI_Event(1, i) != GRM_OK)
			return 1;
	if (strcmp(mode, "kill") == 0)
		raise(SIGKILL);
	else if (strcmp(mode, "segv") == 0) {
		/* A real fault: a write to a page that forbids it. */
		volatile int *p = mmap(NULL, 4096, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED)
			*p = 1;
	}
	else if (strcmp(mode, "abort") == 0)
		abort();
	else if (strcmp(mode, "exit3") == 0)
		exit(3);
	else if (strcmp(mode, "_exit4") == 0)
		_exit(4);
	return 0;
}

int
main(int argc, char **argv)
{
	long n;
	pid_t pid;
	int st;

	if (argc != 3 || (n = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: crasher MODE N\n");
		return 2;
	}
	pid = fork();
	if (pid == -1)
		return 1;
	if (pid == 0)
		exit(child(argv[1], n));
	printf("pid %d\n", (int)pid);
	fflush(stdout);
	if (strcmp(argv[1], "loop") == 0) {
		sleep_ms(n);
		kill(pid, SIGKILL);
	}
	/* Let the LM see the zombie before we reap it. */
	sleep_ms(500);
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	if (WIFSIGNALED(st))
		printf("killed %d\n", WTERMSIG(st));
	else
		printf("exit %d\n", WEXITSTATUS(st));
	return 0;
}
