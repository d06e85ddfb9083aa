/* SPDX-License-Identifier: MIT */
/* pl_dl.c: the preload library's load map: every object loaded (path,
 * base address, GNU build id) at start, what each dlopen adds, what each
 * dlclose unmaps, so that addresses can be named when the trace is read. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl.h"
#include "util/elfsym.h"

#define PL_API __attribute__((visibility("default")))

/* The objects recorded, by base and path (a path's first bytes). */
struct pl_obj {
	uintptr_t	base;
	char		path[240];
	int		seen;	/* in the last walk */
};

static struct pl_obj *pl_objs;
static size_t pl_nobj, pl_capobj;
static pthread_mutex_t pl_dl_lock = PTHREAD_MUTEX_INITIALIZER;

/* The build id of the object as hex, from its PT_NOTE segments; "" if
 * it has none. */
static void
build_id(const struct dl_phdr_info *info, char *out, size_t cap)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE &&
		    elfsym_build_id((const char *)(info->dlpi_addr +
		    info->dlpi_phdr[i].p_vaddr), info->dlpi_phdr[i].p_memsz,
		    out, cap) == 0)
			return;
}

static struct pl_obj *
find(uintptr_t base, const char *path)
{
	size_t i;

	for (i = 0; i < pl_nobj; i++)
		if (pl_objs[i].base == base &&
		    strncmp(pl_objs[i].path, path,
		    sizeof pl_objs[i].path - 1) == 0)
			return &pl_objs[i];
	return NULL;
}

static int
walk_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	char id[80], exe[REC_STR_MAX + 1];
	const char *path = info->dlpi_name;
	struct pl_obj *o;
	int why = *(int *)arg;
	ssize_t n;

	(void)size;
	if (path == NULL || path[0] == '\0') {
		/* The executable (listed first, without a name). */
		n = readlink("/proc/self/exe", exe, REC_STR_MAX);
		exe[n > 0 ? n : 0] = '\0';
		path = exe;
	}
	if ((o = find(info->dlpi_addr, path)) != NULL) {
		o->seen = 1;
		return 0;
	}
	if (pl_nobj == pl_capobj) {
		size_t cap = pl_capobj ? 2 * pl_capobj : 64;
		struct pl_obj *t = realloc(pl_objs, cap * sizeof *t);

		if (t == NULL)
			return 0;
		pl_objs = t;
		pl_capobj = cap;
	}
	o = &pl_objs[pl_nobj++];
	o->base = info->dlpi_addr;
	n = (ssize_t)strnlen(path, sizeof o->path - 1);
	memcpy(o->path, path, (size_t)n);
	o->path[n] = '\0';
	o->seen = 1;
	build_id(info, id, sizeof id);
	(void)GMI_PreloadEvent(REC_EID_PL_OBJECT, why,
	    (unsigned long)info->dlpi_addr, path, id);
	return 0;
}

/* Records the objects not recorded yet, and (after dlclose) those gone. */
static void
walk(int why, int gone)
{
	size_t i, j;

	pthread_mutex_lock(&pl_dl_lock);
	for (i = 0; i < pl_nobj; i++)
		pl_objs[i].seen = 0;
	dl_iterate_phdr(walk_one, &why);
	if (gone) {
		for (i = j = 0; i < pl_nobj; i++) {
			if (!pl_objs[i].seen) {
				(void)GMI_PreloadEvent(REC_EID_PL_UNLOAD,
				    (unsigned long)pl_objs[i].base,
				    pl_objs[i].path);
				continue;
			}
			pl_objs[j++] = pl_objs[i];
		}
		pl_nobj = j;
	}
	pthread_mutex_unlock(&pl_dl_lock);
}

void
pl_dl_map(int why)
{
	int saved = errno;

	walk(why, 0);
	errno = saved;
}

/* Whether dir/file exists, into out. */
static int
in_dir(const char *dir, size_t dlen, const char *origin, const char *file,
       char *out, size_t cap)
{
	int n;

	if (dlen >= 7 && strncmp(dir, "$ORIGIN", 7) == 0)
		n = snprintf(out, cap, "%s%.*s/%s", origin, (int)(dlen - 7),
		    dir + 7, file);
	else if (dlen >= 9 && strncmp(dir, "${ORIGIN}", 9) == 0)
		n = snprintf(out, cap, "%s%.*s/%s", origin, (int)(dlen - 9),
		    dir + 9, file);
	else
		n = snprintf(out, cap, "%.*s/%s", (int)dlen, dir, file);
	return n > 0 && (size_t)n < cap && access(out, F_OK) == 0;
}

/* The first dir/file of a colon-separated list that exists, into out. */
static int
in_list(const char *list, const char *origin, const char *file, char *out,
	size_t cap)
{
	const char *p, *e;

	for (p = list; p != NULL && *p != '\0'; p = e != NULL ? e + 1 : NULL) {
		e = strchr(p, ':');
		if (in_dir(p, e != NULL ? (size_t)(e - p) : strlen(p), origin,
		    file, out, cap))
			return 1;
	}
	return 0;
}

/*
 * glibc searches a name without a slash in the calling object's RUNPATH
 * (or RPATH), and takes the caller from dlopen's return address: through
 * this wrapper, the caller would be the preload library.  So the wrapper
 * searches the real caller's paths itself, in the loader's order: its
 * RPATH (if it has no RUNPATH), LD_LIBRARY_PATH, its RUNPATH; a file
 * found there is opened by its path (the loader's cache and default
 * folders need no caller).  $ORIGIN is expanded; $LIB and $PLATFORM are
 * not, nor is the executable's RPATH searched for a caller without
 * one.  Returns file itself, or out.
 */
static const char *
caller_path(const char *file, const void *ret, char *out, size_t cap)
{
	struct link_map *lm = NULL;
	const ElfW(Dyn) *d;
	const char *strtab = NULL, *runpath = NULL, *rpath = NULL, *s;
	char origin[512];
	uintptr_t rp = 0, rn = 0;
	Dl_info info;

	if (file == NULL || strchr(file, '/') != NULL ||
	    dladdr1(ret, &info, (void **)&lm, RTLD_DL_LINKMAP) == 0 ||
	    lm == NULL || lm->l_ld == NULL)
		return file;
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = (const char *)(d->d_un.d_ptr < lm->l_addr ?
			    d->d_un.d_ptr + lm->l_addr : d->d_un.d_ptr);
		else if (d->d_tag == DT_RUNPATH)
			rn = d->d_un.d_val + 1;
		else if (d->d_tag == DT_RPATH)
			rp = d->d_un.d_val + 1;
	}
	if (strtab == NULL || (rn == 0 && rp == 0))
		return file;
	if (rn != 0)
		runpath = strtab + rn - 1;
	else
		rpath = strtab + rp - 1;
	/* $ORIGIN: the caller's folder (the executable's has no name). */
	s = lm->l_name != NULL && lm->l_name[0] != '\0' ? lm->l_name : NULL;
	if (s == NULL) {
		ssize_t n = readlink("/proc/self/exe", origin,
		    sizeof origin - 1);

		origin[n > 0 ? n : 0] = '\0';
	} else
		snprintf(origin, sizeof origin, "%s", s);
	if (strrchr(origin, '/') != NULL)
		*strrchr(origin, '/') = '\0';
	if (rpath != NULL && in_list(rpath, origin, file, out, cap))
		return out;
	if (in_list(getenv("LD_LIBRARY_PATH"), origin, file, out, cap))
		return file;	/* the loader finds it there itself */
	if (runpath != NULL && in_list(runpath, origin, file, out, cap))
		return out;
	return file;
}

PL_API void *
dlopen(const char *file, int flags)
{
	void *(*real)(const char *, int) = pl_next("dlopen");
	char path[4096];
	void *h;
	int saved;

	const char *f = caller_path(file, __builtin_return_address(0), path,
	    sizeof path);

	/* Loaded already (by its soname): the loader would take that one
	 * before any search. */
	h = f != file ? real(file, flags | RTLD_NOLOAD) : NULL;
	if (h == NULL)
		h = real(f, flags);
	saved = errno;

	pl_init();
	if (h != NULL && pl_active) {
		walk(1, 0);
		pl_func_map();	/* the function filter, in what it added */
	}
	errno = saved;
	return h;
}

PL_API int
dlclose(void *h)
{
	int (*real)(void *) = pl_next("dlclose");
	int r = real(h);
	int saved = errno;

	if (r == 0 && pl_active)
		walk(1, 1);
	errno = saved;
	return r;
}
