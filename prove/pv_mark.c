/* SPDX-License-Identifier: MIT */
/* pv_mark.c: what a record means to prove's analyses: blocks, BEE ranges,
 * messages and process names. */
#include <string.h>

#include "pv.h"

static int
is_int(const struct grmtrace_field *f)
{
	return f->type == GRMTRACE_INT || f->type == GRMTRACE_UINT;
}

int
pv_mark(struct pv_strs *names, struct pv_sym *sym,
	const struct grmtrace_ev *ev, struct pv_mark *m)
{
	const struct grmtrace_def *d = ev->def;
	const struct grmtrace_field *f = ev->f;
	uint64_t id;

	memset(m, 0, sizeof *m);
	if (pv_sym_ev(sym, ev) != 0)
		return -1;
	if (ev->kind != GRMTRACE_RECORD)
		return 0;
	switch (ev->eid) {
	case GRMTRACE_EID_FN_ENTER:
	case GRMTRACE_EID_FN_EXIT:
		if (ev->n < 1 || !is_int(&f[0]))
			return 0;
		if ((m->s = pv_sym_name(sym, ev->node, ev->pid, f[0].v.u,
		    &m->len)) == NULL ||
		    (id = pv_str_id(names, m->s, m->len)) == 0)
			return -1;
		m->kind = ev->eid == GRMTRACE_EID_FN_ENTER ? PV_BEGIN : PV_END;
		m->range = 1;
		m->id = (int64_t)id;
		return 0;
	case GRMTRACE_EID_BLOCK_BEGIN:
	case GRMTRACE_EID_BLOCK_END:
		if (ev->n < 1 || !is_int(&f[0]))
			return 0;
		m->kind = ev->eid == GRMTRACE_EID_BLOCK_BEGIN ? PV_BEGIN : PV_END;
		m->id = f[0].v.i;
		return 0;
	case GRMTRACE_EID_BLOCK_NAME:
	case GRMTRACE_EID_PROC_NAME:
		if (ev->n < 2 || !is_int(&f[0]) || f[1].type != GRMTRACE_STRING)
			return 0;
		m->kind = ev->eid == GRMTRACE_EID_BLOCK_NAME ? PV_BNAME : PV_PNAME;
		m->id = f[0].v.i;
		m->s = f[1].v.s.p;
		m->len = f[1].v.s.len;
		return 0;
	case GRMTRACE_EID_COLL_BEGIN:
	case GRMTRACE_EID_COLL_END:
		if (ev->n < 1 || !is_int(&f[0]))
			return 0;
		m->kind = ev->eid == GRMTRACE_EID_COLL_BEGIN ? PV_CBEGIN : PV_CEND;
		m->id = f[0].v.i;
		return 0;
	case GRMTRACE_EID_MSG_SEND:
	case GRMTRACE_EID_MSG_RECV:
		if (ev->n < 3 || !is_int(&f[0]) || !is_int(&f[1]) ||
		    !is_int(&f[2]))
			return 0;
		m->kind = ev->eid == GRMTRACE_EID_MSG_SEND ? PV_SEND : PV_RECV;
		m->id = f[0].v.i;
		m->tag = f[1].v.i;
		m->bytes = f[2].v.i;
		return 0;
	}
	/* A BEE range: a user type of class PROCEDURE, attribute ACT or
	 * TERM, named by its description. */
	if (ev->eid < 0 || d == NULL || d->cls != GRMTRACE_CLASS_PROCEDURE ||
	    (d->attr != GRMTRACE_ATTR_ACT && d->attr != GRMTRACE_ATTR_TERM) ||
	    d->description[0] == '\0')
		return 0;
	m->len = strlen(d->description);
	if ((id = pv_str_id(names, d->description, m->len)) == 0)
		return -1;
	m->kind = d->attr == GRMTRACE_ATTR_ACT ? PV_BEGIN : PV_END;
	m->range = 1;
	m->id = (int64_t)id;
	m->s = d->description;
	return 0;
}
