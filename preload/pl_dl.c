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
	const ElfW(Nhdr) *nh;
	const char *p, *end, *desc;
	size_t i, j, namesz, descsz;

	out[0] = '\0';
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr +
		    info->dlpi_phdr[i].p_vaddr);
		end = p + info->dlpi_phdr[i].p_memsz;
		while (p + sizeof *nh <= end) {
			nh = (const ElfW(Nhdr) *)(const void *)p;
			namesz = (nh->n_namesz + 3) & ~(size_t)3;
			descsz = (nh->n_descsz + 3) & ~(size_t)3;
			desc = p + sizeof *nh + namesz;
			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID &&
			    nh->n_namesz == 4 &&
			    memcmp(p + sizeof *nh, "GNU", 4) == 0) {
				for (j = 0; j < nh->n_descsz &&
				    2 * j + 2 < cap; j++)
					snprintf(out + 2 * j, 3, "%02x",
					    (unsigned char)desc[j]);
				return;
			}
			p = desc + descsz;
		}
	}
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

/*
 * dlopen through this wrapper searches as if called from this library:
 * a name without a slash is not looked up in the calling object's own
 * RUNPATH (doc/ARCHITECTURE.md, "Interposition").
 */
PL_API void *
dlopen(const char *file, int flags)
{
	void *(*real)(const char *, int) = pl_next("dlopen");
	void *h = real(file, flags);
	int saved = errno;

	pl_init();
	if (h != NULL && pl_active)
		walk(1, 0);
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
