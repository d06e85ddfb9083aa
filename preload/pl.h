/* SPDX-License-Identifier: MIT */
/* pl.h: the preload library's shared state and the calls its parts make
 * of each other (libgrm-preload.so: pl_main, pl_proc, pl_thread, pl_dl). */
#ifndef GRM_PL_H
#define GRM_PL_H

#include <stdint.h>

#include "rec/rec.h"
#include "../client/gmi_preload.h"

/*
 * pl_active: this process is traced through the preload library (set once
 * by pl_init: GRM_MM set, the program is not one of grm's daemons, not a
 * setuid run).  Every wrapper calls pl_init first; it is idempotent and
 * safe from any thread, also before the library's constructor ran (a
 * thread started by another library's constructor).
 */
extern int pl_active;
extern int pl_threads;	/* GRM_THREADS: thread starts and ends recorded */
extern int pl_debug;	/* GRM_DEBUG */

void pl_init(void);

/* One line on stderr under GRM_DEBUG; errno kept. */
void pl_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Looks up the next definition of name (the C library's); aborts with a
 * message if there is none (the wrapper could not do its job). */
void *pl_next(const char *name);

/* Whether path is the Local Monitor (libgrm starts one with
 * posix_spawn): then a spawn is libgrm's, passed through unrecorded. */
int pl_is_localmon(const char *path);

/* The calling thread's kernel id. */
uint32_t pl_tid(void);

/* The child of a fork: attach it now, as a process of its own. */
void pl_after_fork_child(void);

/* The load map: recorded whole (why 0), or what dlopen added (why 1);
 * pl_dl.c. */
void pl_dl_map(int why);

/* An environment for exec or spawn with what tracing needs (LD_PRELOAD,
 * GRM_*) added where envp lacks it: envp itself if nothing is missing,
 * else a malloc'ed array (pl_proc.c). */
char **pl_env_fix(char *const envp[]);

/* Function entry and exit (pl_func.c): the types defined and the filter
 * read (at start), the filter's addresses again (after dlopen), the
 * stack inherited by a fork's child silenced. */
void pl_func_init(void);
void pl_func_map(void);
void pl_func_after_fork(void);

#endif /* GRM_PL_H */
