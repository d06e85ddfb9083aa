/* SPDX-License-Identifier: MIT */
/* tr_meta.c: what every trace reader does with a meta line, read by the
 * schema (tr_schema.h) with its format's tokenizer, and with a record's
 * fields, read by its definition. */
#include <string.h>

#include "tr_int.h"

/*
 * The fields of meta line *m into v (a keyword whose lines differ by a
 * word: *m becomes the line's own), and a #DEF line's optional scope;
 * *n is how many were read.  1, 0 for a word this reader does not know
 * (the line is ignored, like an unknown keyword), -1.
 */
static int
fields(struct tape_r *r, struct cur *c, int *m, struct rec_field *v,
       unsigned *n)
{
	const char *kinds = tr_schema[*m].kinds, *word = NULL;
	size_t i, k = strlen(kinds) - tr_schema[*m].nopt;
	int w;

	for (i = 0; i < k; i++) {
		if (c->ops->get1(r, c, kinds[i], &v[i]) != 0)
			return word == NULL ?
			    tr_fail(r, "%s: %s", tr_schema[*m].key, c->why) :
			    tr_fail(r, "%s %s: %s", tr_schema[*m].key, word,
			    c->why);
		if (kinds[i] != '=')
			continue;
		if ((w = tr_schema_word(*m, v[i].v.s.p, v[i].v.s.len)) == 0)
			return 0;
		*m = w;
		word = tr_schema[w].word;
		kinds = tr_schema[w].kinds;
		k = strlen(kinds) - tr_schema[w].nopt;
	}
	*n = (unsigned)k;
	/* Optional fields (#SYNC's model number, range and allowance):
	 * each one there must be well-formed; the line says how many must
	 * be together (tr_meta_apply). */
	if (*m != TR_M_DEF) {
		for (i = k; kinds[i] != '\0' && !tr_at_end(c); i++)
			if (c->ops->get1(r, c, kinds[i], &v[i]) != 0)
				return tr_fail(r, "%s: %s", tr_schema[*m].key,
				    c->why);
		*n = (unsigned)i;
		return 1;
	}
	/* #DEF: an optional scope, node (>= 1) and pid; anything else
	 * trailing is ignored, as on every meta line. */
	if (tr_at_end(c) ||
	    c->ops->get1(r, c, 'U', &v[5]) != 0)
		return 1;
	if (c->ops->get1(r, c, 'U', &v[6]) != 0)
		return tr_fail(r, "#DEF scope: %s", c->why);
	if (v[5].v.u == 0)
		return tr_fail(r, "#DEF scope: node 0");
	*n = 7;
	return 1;
}

int
tr_meta(struct tape_r *r, struct cur *c, struct tape_ev *ev)
{
	struct rec_field v[TR_FIELDS_MAX], k;
	unsigned n = 0;
	int m, rc;

	if (c->ops->get1(r, c, 't', &k) != 0 ||
	    (m = tr_schema_find(k.v.s.p, k.v.s.len)) == 0 ||
	    m == TR_M_HEADER)
		return 0;
	if ((rc = fields(r, c, &m, v, &n)) <= 0)
		return rc;
	return tr_meta_apply(r, m, v, n, ev);
}

_Static_assert((int)TAPE_PROC == (int)TR_M_PROC &&
    (int)TAPE_END == (int)TR_M_END && (int)TAPE_NKINDS == (int)TR_M_HEADER &&
    (int)TAPE_DEF == (int)TR_M_DEF && (int)TAPE_MM == (int)TR_M_MM &&
    (int)TAPE_STATS_RANGE == (int)TR_M_STATS_RANGE,
    "one numbering of meta lines");

int
tr_meta_apply(struct tape_r *r, int m, const struct rec_field *v,
	      unsigned n, struct tape_ev *ev)
{
	const char *kinds = tr_schema[m].kinds;
	unsigned i;

	memset(ev, 0, sizeof *ev);
	ev->kind = (enum tape_kind)m;
	ev->where = r->eline != 0 ? r->eline : r->lineno;
	ev->n = n;
	for (i = 0; i < n; i++) {
		ev->f[i] = v[i];
		switch (kinds[i]) {
		case 'i':
		case 'I':
			ev->f[i].kind = REC_K_INT;
			break;
		case 'd':
			ev->f[i].kind = REC_K_DOUBLE;
			break;
		case 's':
			ev->f[i].kind = REC_K_STR;
			break;
		case 't':
		case '=':
			/* Tokens point into the line: handed out NUL-
			 * terminated like strings. */
			ev->f[i].kind = REC_K_STR;
			ev->f[i].v.s.p = tr_keep(r, v[i].v.s.p, v[i].v.s.len);
			break;
		default:
			ev->f[i].kind = REC_K_UINT;
		}
	}
	switch (m) {
	case TR_M_MM:
		ev->str = ev->f[0].v.s.p;
		ev->str_len = ev->f[0].v.s.len;
		break;
	case TR_M_HOST:
		ev->node = (uint32_t)v[0].v.u;
		ev->str = ev->f[3].v.s.p;
		ev->str_len = ev->f[3].v.s.len;
		break;
	case TR_M_SYNC:
		/* Version 2 before the model numbers: 7 fields. */
		if (n != 7 && n != TR_SYNC_FIELDS)
			return tr_fail(r, "#SYNC: %u fields of 7 or %d", n,
			    TR_SYNC_FIELDS);
		ev->node = (uint32_t)v[0].v.u;
		ev->ts = v[1].v.u;
		break;
	case TR_M_DEF:
		ev->eid = (int32_t)v[0].v.i;
		if (n == 7) {
			ev->node = (uint32_t)v[5].v.u;
			ev->pid = (uint32_t)v[6].v.u;
		}
		if (memchr(v[3].v.s.p, '\0', v[3].v.s.len) != NULL ||
		    rec_parse_format(v[3].v.s.p, &(struct rec_fmt){ 0 }) != 0)
			return tr_fail(r, "#DEF %d: bad format", (int)ev->eid);
		if (memchr(v[4].v.s.p, '\0', v[4].v.s.len) != NULL)
			return tr_fail(r, "#DEF %d: NUL in description",
			    (int)ev->eid);
		if ((ev->def = tr_define(r, ev->eid, (uint8_t)v[1].v.u,
		    (uint8_t)v[2].v.u, v[3].v.s.p, v[4].v.s.p, ev->node,
		    ev->pid)) == NULL)
			return -1;
		break;
	case TR_M_PROC:
		if ((ev->is_exit = tr_proc_word(v[3].v.s.p,
		    v[3].v.s.len)) < 0)
			return tr_fail(r, "#PROC: expected start, exit, "
			    "killed, exec or gone");
		ev->node = (uint32_t)v[0].v.u;
		ev->pid = (uint32_t)v[1].v.u;
		ev->ppid = (uint32_t)v[2].v.u;
		ev->ts = v[4].v.u;
		ev->status = (int32_t)v[5].v.i;
		ev->str = v[6].v.s.p;
		ev->str_len = v[6].v.s.len;
		break;
	case TR_M_LOSS:
		r->losses = v[3].v.u > UINT64_MAX - r->losses ? UINT64_MAX :
		    r->losses + v[3].v.u;
		ev->node = (uint32_t)v[0].v.u;
		ev->pid = (uint32_t)v[1].v.u;
		ev->tid = (uint32_t)v[2].v.u;
		ev->count = v[3].v.u;
		ev->ts = v[4].v.u;
		break;
	case TR_M_GIVENUP:
		ev->node = (uint32_t)v[0].v.u;
		ev->ts = v[1].v.u;
		ev->str = ev->f[2].v.s.p;
		ev->str_len = ev->f[2].v.s.len;
		break;
	case TR_M_LATE:
		ev->node = (uint32_t)v[0].v.u;
		ev->count = v[1].v.u;
		break;
	case TR_M_MISSING:
	case TR_M_CLOCKSTEP:
		ev->node = (uint32_t)v[0].v.u;
		ev->ts = v[1].v.u;
		break;
	case TR_M_END:
		r->ended = 1;
		r->end_records = v[0].v.u;
		ev->records = v[0].v.u;
		break;
	case TR_M_STATS_COUNT:
	case TR_M_STATS_RANGE:
		ev->node = (uint32_t)v[0].v.u;
		ev->pid = (uint32_t)v[1].v.u;
		ev->eid = (int32_t)v[3].v.i;
		if (m == TR_M_STATS_COUNT)
			ev->count = v[4].v.u;
		else {
			ev->count = v[5].v.u;
			ev->range = (struct tape_range){ v[4].v.i, v[6].v.u,
			    v[7].v.u, v[8].v.u, v[9].v.d, v[10].v.d };
		}
		ev->def = tr_def_for(r, ev->node, ev->pid, ev->eid);
		break;
	case TR_M_CONTROL:
		ev->ts = v[0].v.u;
		ev->str = v[1].v.s.p;
		ev->str_len = v[1].v.s.len;
		break;
	case TR_M_PLAN_ADD:
		ev->str = v[3].v.s.p;
		ev->str_len = v[3].v.s.len;
		/* FALLTHROUGH */
	case TR_M_PLAN_DEL:
		ev->count = v[1].v.u;
		ev->ts = v[2].v.u;
		break;
	case TR_M_TSC:
		ev->node = (uint32_t)v[0].v.u;
		break;
	case TR_M_PLAN_FIRE:
		ev->count = v[1].v.u;
		ev->ts = v[2].v.u;
		ev->records = v[3].v.u;
		ev->node = (uint32_t)v[4].v.u;
		ev->pid = (uint32_t)v[5].v.u;
		ev->tid = (uint32_t)v[6].v.u;
		ev->eid = (int32_t)v[7].v.i;
		ev->str = v[10].v.s.p;
		ev->str_len = v[10].v.s.len;
		break;
	case TR_M_COLLECT:
		ev->count = v[0].v.u;
		ev->ts = v[1].v.u;
		ev->records = v[2].v.u;
		break;
	default:
		break;
	}
	return (r->want & TAPE_WANT(ev->kind)) != 0;
}

int
tr_record_def(struct tape_r *r, struct tape_ev *ev)
{
	if ((ev->def = tr_def_for(r, ev->node, ev->pid, ev->eid)) == NULL)
		return tr_fail(r, "record before definition of eid %d",
		    (int)ev->eid);
	return 0;
}

int
tr_fields(struct tape_r *r, struct cur *c, struct tape_ev *ev)
{
	unsigned i;
	int k;

	ev->n = ev->def->fmt.n;
	for (i = 0; i < ev->n; i++) {
		k = ev->def->fmt.kind[i];
		ev->f[i].kind = k;
		if (tr_at_end(c))
			return tr_fail(r, "too few fields for eid %d (its "
			    "format has %u)", (int)ev->eid, ev->n);
		if (c->ops->get1(r, c, "Iuds"[k], &ev->f[i]) != 0)
			return tr_fail(r, "field %u of eid %d: %s", i + 1,
			    (int)ev->eid, c->why);
	}
	if (!tr_at_end(c))
		return tr_fail(r, "too many fields for eid %d (its format has "
		    "%u)", (int)ev->eid, ev->n);
	return 0;
}

int
tr_record(struct tape_r *r, struct cur *c, struct tape_ev *ev)
{
	struct rec_field h[5];
	unsigned i;

	for (i = 0; i < 5; i++)
		if (c->ops->get1(r, c, "uUUUi"[i], &h[i]) != 0)
			return tr_fail(r, "record: %s", c->why);
	ev->kind = TAPE_RECORD;
	ev->ts = h[0].v.u;
	ev->node = (uint32_t)h[1].v.u;
	ev->pid = (uint32_t)h[2].v.u;
	ev->tid = (uint32_t)h[3].v.u;
	ev->eid = (int32_t)h[4].v.i;
	if (tr_record_def(r, ev) != 0)
		return -1;
	return tr_fields(r, c, ev);
}
