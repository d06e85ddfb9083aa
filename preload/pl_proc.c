/* SPDX-License-Identifier: MIT */
/* pl_proc.c: the preload library's process wrappers: fork (and vfork,
 * run as fork), the exec family, posix_spawn; and the environment every
 * child gets, so that what the program starts is traced too. */
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl.h"

#define PL_API __attribute__((visibility("default")))

extern char **environ;

/* ---- fork ---- */

static pid_t
pl_fork(int how)
{
	pid_t (*real)(void) = pl_next("fork");
	pid_t pid;
	int saved;

	pl_init();
	pid = real();
	saved = errno;
	if (pid == 0)
		pl_after_fork_child();
	else if (pid > 0 && pl_active)
		(void)GMI_PreloadEvent(REC_EID_PL_FORK, (int)pid, how);
	errno = saved;
	return pid;
}

PL_API pid_t
fork(void)
{
	return pl_fork(0);
}

/*
 * vfork's child borrows its parent's memory until it execs or exits: the
 * child of a traced process must not attach in it.  As libmonitor does,
 * it is a fork here; a correct vfork child (exec or _exit) cannot tell.
 */
PL_API pid_t
vfork(void)
{
	return pl_fork(1);
}

/* ---- what children inherit ---- */

/* Whether envp has a variable NAME= (n bytes with the '='). */
static const char *
env_find(char *const envp[], const char *name, size_t n)
{
	size_t i;

	for (i = 0; envp != NULL && envp[i] != NULL; i++)
		if (strncmp(envp[i], name, n) == 0)
			return envp[i];
	return NULL;
}

/*
 * Our own environment's LD_PRELOAD and GRM_* variables, added to envp
 * where it lacks them (a program that builds its children's environment
 * itself); the caller's values win where envp has them.
 */
char **
pl_env_fix(char *const envp[])
{
	size_t n = 0, add = 0, i, j, k;
	char **out;
	const char *e, *eq;

	if (!pl_active || envp == environ)
		return (char **)envp;
	while (envp != NULL && envp[n] != NULL)
		n++;
	for (i = 0; environ[i] != NULL; i++) {
		e = environ[i];
		if (strncmp(e, "GRM_", 4) != 0 &&
		    strncmp(e, "LD_PRELOAD=", 11) != 0)
			continue;
		if ((eq = strchr(e, '=')) != NULL &&
		    env_find(envp, e, (size_t)(eq - e) + 1) == NULL)
			add++;
	}
	if (add == 0)
		return (char **)envp;
	out = malloc((n + add + 1) * sizeof *out);
	if (out == NULL)
		return (char **)envp;
	for (j = 0; j < n; j++)
		out[j] = envp[j];
	for (i = 0, k = j; environ[i] != NULL; i++) {
		e = environ[i];
		if (strncmp(e, "GRM_", 4) != 0 &&
		    strncmp(e, "LD_PRELOAD=", 11) != 0)
			continue;
		if ((eq = strchr(e, '=')) != NULL &&
		    env_find(envp, e, (size_t)(eq - e) + 1) == NULL)
			out[k++] = (char *)e;
	}
	out[k] = NULL;
	return out;
}

static void
env_done(char **fixed, char *const envp[])
{
	if (fixed != (char **)envp)
		free(fixed);
}

/* ---- exec ---- */

static void
exec_before(const char *path)
{
	pl_init();
	if (pl_active)
		(void)GMI_PreloadEvent(REC_EID_PL_EXEC, path != NULL ? path :
		    "");
}

/* exec returned: it failed, and nothing else changed. */
static int
exec_failed(const char *path)
{
	int saved = errno;

	if (pl_active)
		(void)GMI_PreloadEvent(REC_EID_PL_EXEC_FAIL, saved,
		    path != NULL ? path : "");
	errno = saved;
	return -1;
}

PL_API int
execve(const char *path, char *const argv[], char *const envp[])
{
	int (*real)(const char *, char *const[], char *const[]);
	char **env;
	int saved;

	real = pl_next("execve");
	exec_before(path);
	env = pl_env_fix(envp);
	(void)real(path, argv, env);
	saved = errno;
	env_done(env, envp);
	errno = saved;
	return exec_failed(path);
}

PL_API int
execv(const char *path, char *const argv[])
{
	int (*real)(const char *, char *const[]) = pl_next("execv");

	exec_before(path);
	(void)real(path, argv);
	return exec_failed(path);
}

PL_API int
execvp(const char *file, char *const argv[])
{
	int (*real)(const char *, char *const[]) = pl_next("execvp");

	exec_before(file);
	(void)real(file, argv);
	return exec_failed(file);
}

PL_API int
execvpe(const char *file, char *const argv[], char *const envp[])
{
	int (*real)(const char *, char *const[], char *const[]);
	char **env;
	int saved;

	real = pl_next("execvpe");
	exec_before(file);
	env = pl_env_fix(envp);
	(void)real(file, argv, env);
	saved = errno;
	env_done(env, envp);
	errno = saved;
	return exec_failed(file);
}

/* The execl family: the arguments gathered into an array (on the stack:
 * exec does not return on success), and *envp after the NULL for
 * execle. */
#define PL_ARGS_MAX	4096

static int
gather(const char *arg0, va_list ap, char **argv, char ***envp)
{
	int n = 0;

	argv[n++] = (char *)arg0;
	while (arg0 != NULL && n < PL_ARGS_MAX) {
		argv[n] = va_arg(ap, char *);
		if (argv[n++] == NULL)
			break;
	}
	if (n >= PL_ARGS_MAX && argv[n - 1] != NULL)
		return -1;
	if (envp != NULL)
		*envp = va_arg(ap, char **);
	return 0;
}

/* The execl family, one body: kind 0 execl (execv), 1 execlp (execvp),
 * 2 execle (execve with the environment after the NULL). */
static int
execl_any(int kind, const char *path, const char *arg, va_list ap)
{
	char *argv[PL_ARGS_MAX], **envp = NULL;

	if (gather(arg, ap, argv, kind == 2 ? &envp : NULL) != 0) {
		errno = E2BIG;
		return -1;
	}
	if (kind == 0)
		return execv(path, argv);
	if (kind == 1)
		return execvp(path, argv);
	return execve(path, argv, envp);
}

PL_API int
execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_any(0, path, arg, ap);
	va_end(ap);
	return r;
}

PL_API int
execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_any(1, file, arg, ap);
	va_end(ap);
	return r;
}

PL_API int
execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_any(2, path, arg, ap);
	va_end(ap);
	return r;
}

/* ---- posix_spawn (also what system and popen use) ---- */

typedef int spawn_fn(pid_t *, const char *,
    const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
    char *const[], char *const[]);

static int
pl_spawn(const char *name, pid_t *pid, const char *path,
	 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *at,
	 char *const argv[], char *const envp[])
{
	spawn_fn *real = pl_next(name);
	pid_t child = 0;
	char **env;
	int r, saved;

	if (pl_is_localmon(path))
		return real(pid, path, fa, at, argv, envp);
	pl_init();
	env = pl_env_fix(envp);
	r = real(&child, path, fa, at, argv, env);
	saved = errno;
	env_done(env, envp);
	if (r == 0 && pl_active)
		(void)GMI_PreloadEvent(REC_EID_PL_SPAWN, (int)child, path);
	if (pid != NULL)
		*pid = child;
	errno = saved;
	return r;
}

PL_API int
posix_spawn(pid_t *pid, const char *path,
	    const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *at,
	    char *const argv[], char *const envp[])
{
	return pl_spawn("posix_spawn", pid, path, fa, at, argv, envp);
}

PL_API int
posix_spawnp(pid_t *pid, const char *file,
	     const posix_spawn_file_actions_t *fa,
	     const posix_spawnattr_t *at, char *const argv[],
	     char *const envp[])
{
	return pl_spawn("posix_spawnp", pid, file, fa, at, argv, envp);
}
