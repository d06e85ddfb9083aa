/* SPDX-License-Identifier: MIT */
/* pl_main.c: libgrm-preload.so's start and end: a constructor that makes
 * the process attach (its #PROC start line) and records its command line
 * and load map, main wrapped through __libc_start_main (a return from main
 * told from exit), and _exit, _Exit, abort and failed asserts recorded
 * before they end the process. */
#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/syscall.h>

#include "grm.h"
#include "pl.h"
#include "util/env.h"

int pl_active;
int pl_threads = 1;
int pl_debug;

static pthread_once_t pl_once = PTHREAD_ONCE_INIT;
static __thread int pl_in_init;	/* libgrm's attach calls our wrappers */
static int pl_argc;
static char **pl_argv;
static int (*pl_real_main)(int, char **, char **);
static volatile int pl_returned;	/* main returned: exit is its return */

void
pl_say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int saved = errno;

	if (!pl_debug)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "grm-preload[%d]: %s\n", (int)getpid(), line);
	errno = saved;
}

void *
pl_next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (f == NULL) {
		fprintf(stderr, "grm-preload: no %s after this library\n",
		    name);
		abort();
	}
	return f;
}

uint32_t
pl_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* The types, in this process image (definition records). */
static void
define_types(void)
{
	static const struct {
		int eid, cls, attr;
		const char *fmt, *name;
	} t[] = {
		{ REC_EID_PL_CMDLINE, REC_CLASS_EVENT, REC_ATTR_POINT, "%s %s",
		  "process command line" },
		{ REC_EID_PL_END, REC_CLASS_EVENT, REC_ATTR_TERM, "%d %d",
		  "process end" },
		{ REC_EID_PL_FORK, REC_CLASS_EVENT, REC_ATTR_POINT, "%d %d",
		  "fork" },
		{ REC_EID_PL_SPAWN, REC_CLASS_EVENT, REC_ATTR_POINT, "%d %s",
		  "spawn" },
		{ REC_EID_PL_EXEC, REC_CLASS_EVENT, REC_ATTR_POINT, "%s",
		  "exec" },
		{ REC_EID_PL_EXEC_FAIL, REC_CLASS_EVENT, REC_ATTR_POINT,
		  "%d %s", "exec failed" },
		{ REC_EID_PL_THR_BEGIN, REC_CLASS_EVENT, REC_ATTR_ACT, "%u %u",
		  "thread begin" },
		{ REC_EID_PL_THR_END, REC_CLASS_EVENT, REC_ATTR_TERM, "%u %d",
		  "thread end" },
		{ REC_EID_PL_THR_NAME, REC_CLASS_EVENT, REC_ATTR_NAME, "%u %s",
		  "thread name" },
		{ REC_EID_PL_OBJECT, REC_CLASS_EVENT, REC_ATTR_POINT,
		  "%d %lx %s %s", "loaded object" },
		{ REC_EID_PL_UNLOAD, REC_CLASS_EVENT, REC_ATTR_POINT, "%lx %s",
		  "unloaded object" },
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++)
		(void)GMI_PreloadDefine(t[i].eid, t[i].cls, t[i].attr,
		    t[i].fmt, t[i].name);
}

/* The command line, arguments separated by spaces, cut at what a string
 * field holds. */
static void
record_cmdline(void)
{
	char cmd[REC_STR_MAX + 1], exe[REC_STR_MAX + 1];
	size_t n = 0, l;
	ssize_t e;
	int i;

	cmd[0] = '\0';
	for (i = 0; pl_argv != NULL && i < pl_argc && pl_argv[i] != NULL;
	    i++) {
		l = strlen(pl_argv[i]);
		if (n + l + (i > 0) > REC_STR_MAX)
			l = REC_STR_MAX - n - (i > 0);
		if (i > 0)
			cmd[n++] = ' ';
		memcpy(cmd + n, pl_argv[i], l);
		n += l;
		cmd[n] = '\0';
		if (n >= REC_STR_MAX)
			break;
	}
	e = readlink("/proc/self/exe", exe, REC_STR_MAX);
	exe[e > 0 ? e : 0] = '\0';
	(void)GMI_PreloadEvent(REC_EID_PL_CMDLINE, exe, cmd);
}

/* grm's own programs are never traced: an LM started by a traced
 * process inherits its environment. */
static int
ours(const char *name)
{
	static const char *const daemons[] = { "localmon", "mainmon",
	    "grmctl", "grm-run" };
	const char *lm = env_get(ENV_LOCALMON), *b;
	size_t i;

	for (i = 0; i < sizeof daemons / sizeof daemons[0]; i++)
		if (strcmp(name, daemons[i]) == 0)
			return 1;
	if (lm != NULL) {
		b = strrchr(lm, '/');
		b = b != NULL ? b + 1 : lm;
		if (strcmp(name, b) == 0)
			return 1;
	}
	return 0;
}

static void
end_note(int status, void *arg)
{
	(void)arg;
	(void)GMI_PreloadEvent(REC_EID_PL_END, pl_returned ?
	    REC_PL_END_RETURN : REC_PL_END_EXIT, status);
}

static void
init_once(void)
{
	const char *v;
	int saved = errno;

	pl_in_init = 1;
	pl_debug = env_flag(ENV_DEBUG);
	if (getauxval(AT_SECURE)) {
		pl_say("a setuid or setgid program: not traced");
		goto out;
	}
	if (ours(program_invocation_short_name))
		goto out;
	if (env_get(ENV_MM) == NULL)
		goto out;
	v = env_get(ENV_THREADS);
	pl_threads = v == NULL || strcmp(v, "0") != 0;
	if (!GMI_Traced()) {
		pl_say("not traced (GRM_DEBUG shows libgrm's reason above)");
		goto out;
	}
	pl_active = 1;
	define_types();
	record_cmdline();
	pl_dl_map(0);
	pl_func_init();
	on_exit(end_note, NULL);
out:
	pl_in_init = 0;
	errno = saved;
}

/* Inside init_once, libgrm's attach may call fork or posix_spawn (to
 * start a Local Monitor): those calls pass through, untraced. */
void
pl_init(void)
{
	if (!pl_in_init)
		pthread_once(&pl_once, init_once);
}

int
pl_is_localmon(const char *path)
{
	const char *lm = env_get(ENV_LOCALMON), *b;

	if (path == NULL)
		return 0;
	b = strrchr(path, '/');
	b = b != NULL ? b + 1 : path;
	if (strcmp(b, "localmon") == 0)
		return 1;
	return lm != NULL && strcmp(path, lm) == 0;
}

/* glibc calls the constructors of init_array with main's arguments. */
__attribute__((constructor)) static void
pl_ctor(int argc, char **argv, char **envp)
{
	(void)envp;
	if (pl_argv == NULL) {
		pl_argc = argc;
		pl_argv = argv;
	}
	pl_init();
}

void
pl_after_fork_child(void)
{
	int saved = errno;

	if (pl_active)
		(void)GMI_Traced();
	pl_func_after_fork();
	errno = saved;
}

/* ---- main and the ways out ---- */

static int
pl_main(int argc, char **argv, char **envp)
{
	int r = pl_real_main(argc, argv, envp);

	pl_returned = 1;
	return r;
}

int __libc_start_main(int (*main)(int, char **, char **), int argc,
    char **argv, void (*init)(void), void (*fini)(void),
    void (*rtld_fini)(void), void *stack_end);

__attribute__((visibility("default"))) int
__libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
    void (*init)(void), void (*fini)(void), void (*rtld_fini)(void),
    void *stack_end)
{
	int (*real)(int (*)(int, char **, char **), int, char **,
	    void (*)(void), void (*)(void), void (*)(void), void *);

	real = pl_next("__libc_start_main");
	pl_real_main = main;
	pl_argc = argc;
	pl_argv = argv;
	return real(pl_main, argc, argv, init, fini, rtld_fini, stack_end);
}

static void
end_now(int how, int status)
{
	pl_init();
	if (pl_active)
		(void)GMI_PreloadEvent(REC_EID_PL_END, how, status);
}

/* _exit and _Exit: the record, then the C library's own. */
__attribute__((noreturn)) static void
pl__exit(const char *name, int status)
{
	void (*real)(int) = pl_next(name);

	end_now(REC_PL_END__EXIT, status);
	if (pl_active)
		GMI_PreloadExit(status);
	real(status);
	__builtin_unreachable();
}

__attribute__((visibility("default"))) void
_exit(int status)
{
	pl__exit("_exit", status);
}

__attribute__((visibility("default"))) void
_Exit(int status)
{
	pl__exit("_Exit", status);
}

__attribute__((visibility("default"))) void
abort(void)
{
	void (*real)(void) = pl_next("abort");

	end_now(REC_PL_END_ABORT, 0);
	real();
	__builtin_unreachable();
}

__attribute__((visibility("default"))) void
__assert_fail(const char *expr, const char *file, unsigned int line,
    const char *fn)
{
	void (*real)(const char *, const char *, unsigned int, const char *);

	real = pl_next("__assert_fail");
	end_now(REC_PL_END_ASSERT, 0);
	real(expr, file, line, fn);
	__builtin_unreachable();
}
