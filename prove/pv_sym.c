/* SPDX-License-Identifier: MIT */
/* pv_sym.c: function addresses named from the load map in the trace: each
 * process's objects (base, path, build id) kept as their records come, and
 * an address named by the symbol of the object that holds it, read from
 * that object's file on disk (common/util/elfsym) and checked against the
 * build id the trace recorded. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pv.h"
#include "util/elfsym.h"

struct sym_obj {
	uint64_t	base;
	uint64_t	path;	/* id in pv_sym.strs */
	uint64_t	bid;	/* build id, id in pv_sym.strs */
};

struct sym_proc {
	struct sym_obj	*o;
	size_t		n, cap;
	int		inherited;	/* copied from its parent at fork */
};

struct sym_file {
	struct elfsym	e;
	int		state;	/* 0 not read yet, 1 read, -1 cannot be */
	uint64_t	warned;	/* build id (id) said to differ; 0 none */
};

static int
is_uint(const struct grmtrace_field *f)
{
	return f->type == GRMTRACE_UINT || f->type == GRMTRACE_INT;
}

static struct sym_proc *
proc_of(struct pv_sym *s, uint32_t node, uint32_t pid)
{
	return pv_map_get(&s->procs, node, pid, sizeof(struct sym_proc));
}

static int
add_obj(struct pv_sym *s, struct sym_proc *p, uint64_t base,
	const char *path, size_t plen, const char *bid, size_t blen)
{
	struct sym_obj *o;
	uint64_t pi, bi;
	size_t i;

	if ((pi = pv_str_id(&s->strs, path, plen)) == 0 ||
	    (bi = pv_str_id(&s->strs, bid, blen)) == 0)
		return -1;
	for (i = 0; i < p->n; i++)
		if (p->o[i].base == base && p->o[i].path == pi)
			return 0;
	if ((o = pv_grow(p->o, &p->cap, p->n, sizeof *o)) == NULL)
		return -1;
	p->o = o;
	o[p->n].base = base;
	o[p->n].path = pi;
	o[p->n].bid = bi;
	p->n++;
	return 0;
}

int
pv_sym_ev(struct pv_sym *s, const struct grmtrace_ev *ev)
{
	const struct grmtrace_field *f = ev->f;
	struct sym_proc *p, *pp;
	size_t i;

	if (ev->kind == GRMTRACE_PROC) {
		if (ev->how == GRMTRACE_PROC_EXEC) {
			if ((p = pv_map_find(&s->procs, ev->node, ev->pid)))
				p->n = 0;
			return 0;
		}
		if (ev->how != GRMTRACE_PROC_START || ev->ppid == 0 ||
		    (pp = pv_map_find(&s->procs, ev->node, ev->ppid)) ==
		    NULL)
			return 0;
		/* A fork's child runs its parent's image until it says
		 * otherwise (its own load map at start, after an exec). */
		if ((p = proc_of(s, ev->node, ev->pid)) == NULL)
			return -1;
		if (p->n != 0)
			return 0;
		for (i = 0; i < pp->n; i++) {
			struct sym_obj *o = pv_grow(p->o, &p->cap, p->n,
			    sizeof *o);

			if (o == NULL)
				return -1;
			p->o = o;
			o[p->n++] = pp->o[i];
		}
		p->inherited = 1;
		return 0;
	}
	if (ev->kind != GRMTRACE_RECORD)
		return 0;
	if (ev->eid == GRMTRACE_EID_OBJECT && ev->n >= 4 && is_uint(&f[0]) &&
	    is_uint(&f[1]) && f[2].type == GRMTRACE_STRING &&
	    f[3].type == GRMTRACE_STRING) {
		if ((p = proc_of(s, ev->node, ev->pid)) == NULL)
			return -1;
		if (p->inherited && f[0].v.i == 0) {
			p->inherited = 0;
			p->n = 0;
		}
		return add_obj(s, p, f[1].v.u, f[2].v.s.p, f[2].v.s.len,
		    f[3].v.s.p, f[3].v.s.len);
	}
	if (ev->eid == GRMTRACE_EID_UNLOAD && ev->n >= 1 && is_uint(&f[0]) &&
	    (p = pv_map_find(&s->procs, ev->node, ev->pid)) != NULL) {
		for (i = 0; i < p->n; i++)
			if (p->o[i].base == f[0].v.u) {
				p->o[i] = p->o[--p->n];
				break;
			}
	}
	return 0;
}

/* The object's symbols, read once per path; NULL if they cannot be (said
 * once on stderr), or if its build id is not the one recorded (said once
 * per build id). */
static struct sym_file *
file_of(struct pv_sym *s, const struct sym_obj *o)
{
	struct sym_file *sf;
	const char *path, *bid;
	size_t bl;

	if ((sf = pv_map_get(&s->files, o->path, 0, sizeof *sf)) == NULL)
		return NULL;
	path = pv_str(&s->strs, o->path, NULL);
	if (sf->state == 0) {
		sf->state = elfsym_load(&sf->e, path) == 0 ? 1 : -1;
		if (sf->state < 0 && path[0] == '/')
			fprintf(stderr, "prove: %s: cannot be read: its "
			    "functions are named by address\n", path);
	}
	if (sf->state < 0)
		return NULL;
	bid = pv_str(&s->strs, o->bid, &bl);
	if (bl != 0 && strcmp(bid, sf->e.build_id) != 0) {
		if (sf->warned != o->bid)
			fprintf(stderr, "prove: %s: build id %s, not %s as "
			    "traced: its functions are named by address\n",
			    path, sf->e.build_id[0] ? sf->e.build_id :
			    "(none)", bid);
		sf->warned = o->bid;
		return NULL;
	}
	return sf;
}

const char *
pv_sym_name(struct pv_sym *s, uint32_t node, uint32_t pid, uint64_t addr,
	    size_t *len)
{
	const struct sym_proc *p = pv_map_find(&s->procs, node, pid);
	const struct sym_obj *best = NULL;
	const struct elfsym_fn *fn = NULL;
	struct sym_file *sf;
	const char *path, *b;
	char buf[320];
	uint64_t id;
	size_t i;
	int n;

	/* The object with the highest base at or below addr. */
	for (i = 0; p != NULL && i < p->n; i++)
		if (p->o[i].base <= addr &&
		    (best == NULL || p->o[i].base > best->base))
			best = &p->o[i];
	if (best == NULL) {
		n = snprintf(buf, sizeof buf, "0x%" PRIx64, addr);
		goto out;
	}
	if ((sf = file_of(s, best)) != NULL)
		fn = elfsym_find(&sf->e, addr - best->base);
	if (fn != NULL) {
		n = snprintf(buf, sizeof buf, "%s", fn->name);
		if (n >= (int)sizeof buf) {
			/* A long (C++) name: interned whole. */
			id = pv_str_id(&s->strs, fn->name, strlen(fn->name));
			return id ? pv_str(&s->strs, id, len) : NULL;
		}
		goto out;
	}
	path = pv_str(&s->strs, best->path, NULL);
	b = strrchr(path, '/');
	n = snprintf(buf, sizeof buf, "%s+0x%" PRIx64, b ? b + 1 : path,
	    addr - best->base);
out:
	if (n < 0 || n >= (int)sizeof buf)
		n = (int)strlen(buf);
	if ((id = pv_str_id(&s->strs, buf, (size_t)n)) == 0)
		return NULL;
	return pv_str(&s->strs, id, len);
}

static void
free_file(void *v)
{
	elfsym_free(&((struct sym_file *)v)->e);
}

static void
free_proc(void *v)
{
	free(((struct sym_proc *)v)->o);
}

void
pv_sym_free(struct pv_sym *s)
{
	pv_map_free(&s->procs, free_proc);
	pv_map_free(&s->files, free_file);
	pv_strs_free(&s->strs);
}
