/* SPDX-License-Identifier: MIT */
/* pl_app.c: a program built without libgrm, that test/preload.sh runs
 * under grm-run: threads ending every way and named, fork without exec, an
 * exec chain, a fatal signal, dlopen, and the ways a process ends.  Its
 * output is the same traced or not. */
#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static pthread_barrier_t started;
static pthread_t early;
static int early_on;

static void *
early_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "early");
	return NULL;
}

/* "pl_app early": a thread started before main, as a C++ static
 * constructor would. */
__attribute__((constructor)) static void
before_main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "early") == 0)
		early_on = pthread_create(&early, NULL, early_thread, NULL) == 0;
}

static void *
worker(void *arg)
{
	long i = (long)arg;
	char name[16];

	if (i % 2 == 1) {
		snprintf(name, sizeof name, "worker-%d", (int)(i % 1000));
		pthread_setname_np(pthread_self(), name);
	}
	pthread_barrier_wait(&started);
	switch (i % 3) {
	case 0:
		return (void *)i;
	case 1:
		pthread_exit((void *)i);
	default:
		for (;;)
			pause();	/* a cancellation point */
	}
	return NULL;
}

static int
threads(int n)
{
	pthread_t *th = calloc((size_t)n, sizeof *th);
	char name[16];
	void *r;
	long i;
	int cancelled = 0;

	if (th == NULL)
		return 1;
	pthread_barrier_init(&started, NULL, (unsigned)n + 1);
	for (i = 0; i < n; i++) {
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
			return 1;
		if (i % 2 == 0) {
			snprintf(name, sizeof name, "worker-%d", (int)(i % 1000));
			pthread_setname_np(th[i], name);
		}
	}
	pthread_barrier_wait(&started);
	for (i = 0; i < n; i++) {
		if (i % 3 == 2)
			pthread_cancel(th[i]);
		pthread_join(th[i], &r);
		cancelled += r == PTHREAD_CANCELED;
	}
	printf("threads %d, cancelled %d\n", n, cancelled);
	free(th);
	return 0;
}

static int
forked(void)
{
	pid_t p;
	int st;

	fflush(stdout);
	p = fork();
	if (p == 0) {
		printf("child\n");
		exit(3);
	}
	if (p == -1 || waitpid(p, &st, 0) != p)
		return 1;
	printf("child exited %d\n", WEXITSTATUS(st));
	return 0;
}

static int
chain(const char *self, int k)
{
	char n[16];

	if (k == 0) {
		printf("end of the chain\n");
		return 0;
	}
	if (execl("/nonexistent/pl_app", "pl_app", (char *)NULL) == -1)
		printf("exec failed: %s\n", strerror(errno));
	fflush(stdout);
	snprintf(n, sizeof n, "%d", k - 1);
	execl(self, self, "exec", n, (char *)NULL);
	return 1;
}

static int
plugin(const char *path)
{
	int (*f)(void);
	void *h = dlopen(path, RTLD_NOW);

	if (h == NULL) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	f = (int (*)(void))dlsym(h, "pl_plugin_value");
	printf("dlerror after dlopen: %s\n", dlerror() != NULL ? "set" :
	    "none");
	printf("plugin says %d\n", f != NULL ? f() : -1);
	return dlclose(h) != 0;
}

int
main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (strcmp(m, "threads") == 0 && argc > 2)
		return threads(atoi(argv[2]));
	if (strcmp(m, "fork") == 0)
		return forked();
	if (strcmp(m, "early") == 0) {
		if (early_on)
			pthread_join(early, NULL);
		printf("early thread %s\n", early_on ? "joined" : "missing");
		return !early_on;
	}
	if (strcmp(m, "exec") == 0 && argc > 2)
		return chain(argv[0], atoi(argv[2]));
	if (strcmp(m, "dlopen") == 0 && argc > 2)
		return plugin(argv[2]);
	if (strcmp(m, "segv") == 0) {
		printf("before the fault\n");
		fflush(stdout);
		*(volatile int *)(uintptr_t)argc = 1;
		return 0;
	}
	if (strcmp(m, "exit") == 0 && argc > 2) {
		printf("ending by %s\n", argv[2]);
		fflush(stdout);
		if (strcmp(argv[2], "exit") == 0)
			exit(7);
		if (strcmp(argv[2], "_exit") == 0)
			_exit(7);
		if (strcmp(argv[2], "abort") == 0)
			abort();
		if (strcmp(argv[2], "assert") == 0)
			assert(argc == 0);
		return 7;
	}
	fprintf(stderr, "usage: pl_app threads N | early | fork | exec K | dlopen LIB "
	    "| segv | exit exit|_exit|abort|assert|return\n");
	return 2;
}
