/* SPDX-License-Identifier: MIT */
/* fn_app.c: a program built with -finstrument-functions (PIE, linked with
 * its own shared library and nothing of grm's) for functions.sh: it knows
 * how many calls it makes of each function and prints them.
 *   fn_app calls THREADS N   fib(N) recursively in main, and in each of
 *                            THREADS threads N calls of solver_step, each
 *                            calling fn_lib_work (libfnlib.so)
 *   fn_app short N           N calls of tiny (nothing) and 3 of slow (2 ms)
 *   fn_app crash N           dive N deep, then killed by SIGKILL
 *   fn_app plugin PATH N     dlopen PATH (fn_lib.c built again with
 *                            -Dfn_lib_work=fn_plug_work) and call its
 *                            fn_plug_work N times
 * Exits with status 3, so that the status is seen to be kept. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int fn_lib_work(int k);

static long fib_calls;

static long __attribute__((noinline))
fib(int n)
{
	fib_calls++;
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int solver_step(int i);

int __attribute__((noinline))
solver_step(int i)
{
	return fn_lib_work(i) + 1;
}

static int steps;

static void *
worker(void *arg)
{
	long s = 0;
	int i;

	(void)arg;
	for (i = 0; i < steps; i++)
		s += solver_step(i);
	return (void *)s;
}

static void __attribute__((noinline))
tiny(void)
{
	__asm__ volatile("" ::: "memory");
}

static void __attribute__((noinline))
slow(void)
{
	struct timespec ts = { 0, 2000000 };

	nanosleep(&ts, NULL);
}

static void __attribute__((noinline))
dive(int n)
{
	if (n > 1)
		dive(n - 1);
	else
		raise(SIGKILL);
}

int
main(int argc, char **argv)
{
	pthread_t t[64];
	int i, n, nt;
	long r;

	if (argc == 4 && strcmp(argv[1], "calls") == 0) {
		nt = atoi(argv[2]);
		n = atoi(argv[3]);
		if (nt < 0 || nt > 64 || n < 0 || n > 30)
			return 2;
		steps = n;
		r = fib(n);
		for (i = 0; i < nt; i++)
			if (pthread_create(&t[i], NULL, worker, NULL) != 0)
				return 2;
		for (i = 0; i < nt; i++)
			pthread_join(t[i], NULL);
		printf("fib(%d) = %ld in %ld calls; %d threads x %d "
		    "solver_step\n", n, r, fib_calls, nt, n);
		return 3;
	}
	if (argc == 3 && strcmp(argv[1], "short") == 0) {
		n = atoi(argv[2]);
		for (i = 0; i < n; i++)
			tiny();
		for (i = 0; i < 3; i++)
			slow();
		printf("%d tiny, 3 slow\n", n);
		return 3;
	}
	if (argc == 4 && strcmp(argv[1], "plugin") == 0) {
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		int (*work)(int);
		long s = 0;

		if (h == NULL)
			return 2;
		*(void **)&work = dlsym(h, "fn_plug_work");
		if (work == NULL)
			return 2;
		n = atoi(argv[3]);
		for (i = 0; i < n; i++)
			s += work(i);
		printf("plugin: %d calls, sum %ld\n", n, s);
		return 3;
	}
	if (argc == 3 && strcmp(argv[1], "crash") == 0) {
		dive(atoi(argv[2]));
		return 2;
	}
	fprintf(stderr, "usage: fn_app calls THREADS N | short N | crash N\n");
	return 2;
}
