/* SPDX-License-Identifier: MIT */
/* pl_func.c: function entry and exit of programs built with
 * -finstrument-functions: __cyg_profile_func_enter/exit record the
 * function's address (named when the trace is read), through a per-thread
 * stack that keeps ranges nested, applies the name filter (GRM_FUNCTIONS,
 * resolved to addresses from the objects' symbol tables at start and at
 * dlopen) and drops ranges shorter than GRM_MIN_DURATION. */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl.h"
#include "util/clock.h"
#include "util/elfsym.h"
#include "util/env.h"

#define PL_NOI	__attribute__((no_instrument_function))
#define PL_API	__attribute__((visibility("default"), no_instrument_function))

/* Deeper calls are not recorded (nor their exits): the stack is static
 * thread-local storage, 16 bytes a frame. */
#define PL_FN_DEPTH	512

struct pl_frame {
	uintptr_t	fn;	/* 0: not recorded (filtered out) */
	uint64_t	ts;	/* its entry's time, while pending */
	uint64_t	stamp;	/* the same on the records' clock */
};

struct pl_fstack {
	uint32_t	depth;	/* frames in use, also past PL_FN_DEPTH */
	uint32_t	written;	/* frames [0, written) have their entry
				   in the trace; the rest are pending */
	int		busy;	/* inside our hook: calls made from it (a
				   signal handler, an instrumented malloc)
				   are not recorded */
	struct pl_frame	f[PL_FN_DEPTH];
};

static __thread struct pl_fstack pl_fs
    __attribute__((tls_model("initial-exec")));

/* Set once the types are defined (pl_func_init). */
static int pl_fn_on;
static uint64_t pl_fn_min;	/* GRM_MIN_DURATION in ns; 0: none */

/* The filter: the entry addresses whose verdict is not the default, sorted;
 * replaced whole (never freed: a thread may still read the old one) when
 * dlopen adds objects. */
struct pl_fset {
	size_t		n;
	uintptr_t	a[];
};
static char *pl_fn_pat;		/* GRM_FUNCTIONS, a copy; NULL: all */
static int pl_fn_default = 1;	/* a function no pattern names: recorded */
static struct pl_fset *_Atomic pl_fn_set;
static pthread_mutex_t pl_fn_lock = PTHREAD_MUTEX_INITIALIZER;

static PL_NOI int
wanted(uintptr_t fn)
{
	const struct pl_fset *s;
	size_t lo = 0, hi, mid;

	if (pl_fn_pat == NULL)
		return 1;
	s = atomic_load_explicit(&pl_fn_set, memory_order_acquire);
	if (s == NULL)
		return pl_fn_default;
	hi = s->n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->a[mid] == fn)
			return !pl_fn_default;
		if (s->a[mid] < fn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return pl_fn_default;
}

/* Writes the pending entries up to frame `to` (excluded). */
static PL_NOI void
flush_to(struct pl_fstack *t, uint32_t to)
{
	for (; t->written < to; t->written++)
		if (t->f[t->written].fn != 0)
			(void)GMI_PreloadFunc(REC_EID_FN_ENTER,
			    t->f[t->written].fn, t->f[t->written].stamp);
}

PL_API void
__cyg_profile_func_enter(void *fn, void *site)
{
	struct pl_fstack *t = &pl_fs;
	struct pl_frame *f;
	uint64_t now;

	(void)site;
	if (!pl_fn_on || t->busy)
		return;
	t->busy = 1;
	if (t->depth >= PL_FN_DEPTH) {
		t->depth++;
		goto out;
	}
	f = &t->f[t->depth++];
	f->fn = wanted((uintptr_t)fn) ? (uintptr_t)fn : 0;
	if (pl_fn_min == 0) {
		if (f->fn != 0)
			(void)GMI_PreloadFunc(REC_EID_FN_ENTER, f->fn, 0);
		t->written = t->depth;
		goto out;
	}
	/* Pending: written once it has lasted pl_fn_min (checked here and
	 * at exits), or dropped at its exit if it ends sooner. */
	/* Durations on CLOCK_MONOTONIC; the records on the segment's clock
	 * (the TSC's ticks under GRM_CLOCK=tsc). */
	f->ts = now = clk_mono_ns();
	f->stamp = GMI_PreloadNow();
	while (t->written < t->depth - 1 &&
	    now - t->f[t->written].ts >= pl_fn_min)
		flush_to(t, t->written + 1);
out:
	t->busy = 0;
}

PL_API void
__cyg_profile_func_exit(void *fn, void *site)
{
	struct pl_fstack *t = &pl_fs;
	uint32_t d;
	uint64_t now, stamp;

	(void)site;
	if (!pl_fn_on || t->busy || t->depth == 0)
		return;
	t->busy = 1;
	if (t->depth > PL_FN_DEPTH) {
		t->depth--;
		goto out;
	}
	/* Frames left without their exit (longjmp, a thread unwound) end
	 * here with the one that matches; an exit that matches none (its
	 * entry came before tracing started) is ignored. */
	for (d = t->depth; d > 0 && t->f[d - 1].fn != (uintptr_t)fn &&
	    t->f[d - 1].fn != 0; d--)
		;
	if (d == 0)
		goto out;
	now = pl_fn_min != 0 ? clk_mono_ns() : 0;
	stamp = pl_fn_min != 0 ? GMI_PreloadNow() : 0;
	while (t->depth >= d) {
		struct pl_frame *f = &t->f[t->depth - 1];

		if (pl_fn_min != 0 && t->written < t->depth) {
			if (f->fn == 0 || now - f->ts < pl_fn_min) {
				t->depth--;	/* too short: dropped whole */
				continue;
			}
			flush_to(t, t->depth);
		}
		if (f->fn != 0)
			(void)GMI_PreloadFunc(REC_EID_FN_EXIT, f->fn, stamp);
		t->depth--;
		t->written = t->depth;
	}
out:
	t->busy = 0;
}

/* ---- the filter, from the objects' symbol tables ---- */

struct collect {
	uintptr_t	*a;
	size_t		n, cap;
};

/* Whether name is recorded: the last pattern that matches it decides
 * ("!P" excludes); none: the default. */
static int
verdict(const char *name)
{
	const char *p = pl_fn_pat, *e;
	char one[256];
	int v = pl_fn_default, neg;
	size_t l;

	while (*p != '\0') {
		e = strchr(p, ',');
		l = e != NULL ? (size_t)(e - p) : strlen(p);
		neg = l > 0 && p[0] == '!';
		if (l - neg > 0 && l - neg < sizeof one) {
			memcpy(one, p + neg, l - neg);
			one[l - neg] = '\0';
			if (fnmatch(one, name, 0) == 0)
				v = !neg;
		}
		p += l + (e != NULL);
	}
	return v;
}

static int
add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct collect *c = arg;
	struct elfsym e;
	const char *path = info->dlpi_name;
	uintptr_t *t;
	size_t i;

	(void)size;
	if (path == NULL || path[0] == '\0')
		path = "/proc/self/exe";
	if (elfsym_load(&e, path) != 0)
		return 0;
	for (i = 0; i < e.n; i++) {
		if (verdict(e.fn[i].name) == pl_fn_default)
			continue;
		if (c->n == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 256;
			if ((t = realloc(c->a, c->cap * sizeof *t)) == NULL)
				break;
			c->a = t;
		}
		c->a[c->n++] = info->dlpi_addr + e.fn[i].addr;
	}
	elfsym_free(&e);
	return 0;
}

static int
by_value(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return (x > y) - (x < y);
}

void
pl_func_map(void)
{
	struct collect c = { NULL, 0, 0 };
	struct pl_fset *s;
	int saved = errno;

	if (!pl_fn_on || pl_fn_pat == NULL)
		return;
	pthread_mutex_lock(&pl_fn_lock);
	dl_iterate_phdr(add_object, &c);
	qsort(c.a, c.n, sizeof *c.a, by_value);
	if ((s = malloc(sizeof *s + c.n * sizeof s->a[0])) != NULL) {
		s->n = c.n;
		if (c.n > 0)
			memcpy(s->a, c.a, c.n * sizeof s->a[0]);
		atomic_store_explicit(&pl_fn_set, s, memory_order_release);
	}
	pthread_mutex_unlock(&pl_fn_lock);
	pl_say("functions: %zu named by the filter", c.n);
	free(c.a);
	errno = saved;
}

void
pl_func_init(void)
{
	const char *v = env_get(ENV_FUNCTIONS), *p;
	double s;

	if (env_seconds(ENV_MIN_DURATION, &s) == 0)
		pl_fn_min = (uint64_t)(s * 1e9 + 0.5);
	else
		pl_say("GRM_MIN_DURATION=%s: not seconds from 0 to 86400; "
		    "every function range recorded",
		    env_get(ENV_MIN_DURATION));
	if (v != NULL && (pl_fn_pat = strdup(v)) != NULL) {
		/* With a pattern that includes, what none names is out. */
		for (p = v; p != NULL; p = strchr(p, ','), p = p ? p + 1 : p)
			if (*p != '!' && *p != ',' && *p != '\0')
				pl_fn_default = 0;
	}
	(void)GMI_PreloadDefine(REC_EID_FN_ENTER, REC_CLASS_PROCEDURE,
	    REC_ATTR_ACT, "%lx", "function entry");
	(void)GMI_PreloadDefine(REC_EID_FN_EXIT, REC_CLASS_PROCEDURE,
	    REC_ATTR_TERM, "%lx", "function exit");
	pl_fn_on = 1;
	pl_func_map();
}

void
pl_func_after_fork(void)
{
	uint32_t i;

	/* The child's trace starts here: the frames it inherited end
	 * unrecorded. */
	for (i = 0; i < pl_fs.depth && i < PL_FN_DEPTH; i++)
		pl_fs.f[i].fn = 0;
	pl_fs.written = pl_fs.depth < PL_FN_DEPTH ? pl_fs.depth : PL_FN_DEPTH;
}
