/* SPDX-License-Identifier: MIT */
/* pv_detail.c: prove serve's details of one record (read again from the
 * file, by its time), and the counts of the trace as prove stats has
 * them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "pv_idx.h"

/* The field f as the text format has it, as a JSON string. */
int
pv_field_json(const struct grmtrace_field *f, struct evbuffer *out)
{
	char *s = NULL;
	size_t n = 0;
	FILE *m;

	if ((m = open_memstream(&s, &n)) == NULL)
		return -1;
	if (grmtrace_fput_field(m, f) != 0) {
		fclose(m);
		free(s);
		return -1;
	}
	if (fclose(m) != 0) {
		free(s);
		return -1;
	}
	pv_json_str(out, s, n);
	free(s);
	return 0;
}

static uint64_t
sent_at(const void *x, size_t i)
{
	return ((const struct pv_idx *)x)->arrow[i].ts;
}

static uint64_t
received_at(const void *arg, size_t i)
{
	const struct pv_idx *x = arg;

	return x->arrow[x->arecv[i]].tr;
}

/* The arrow of the message sent (send) or received at ts on row, or
 * NULL. */
static const struct pv_arrow *
arrow_at(const struct pv_idx *x, size_t row, uint64_t ts, int send)
{
	const struct pv_arrow *a;
	size_t i;

	for (i = pv_lb(x, 0, x->narrow, ts, send ? sent_at : received_at);
	    i < x->narrow; i++) {
		a = send ? &x->arrow[i] : &x->arrow[x->arecv[i]];
		if ((send ? a->ts : a->tr) != ts)
			break;
		if ((send ? a->rs : a->rr) == row)
			return a;
	}
	return NULL;
}

static void
message(const struct pv_idx *x, size_t row, const struct grmtrace_ev *ev,
	struct evbuffer *out)
{
	int send = ev->eid == GRMTRACE_EID_MSG_SEND;
	const struct pv_arrow *a;
	const struct pv_row *o;

	if (ev->eid != GRMTRACE_EID_MSG_SEND &&
	    ev->eid != GRMTRACE_EID_MSG_RECV)
		return;
	if ((a = arrow_at(x, row, ev->ts, send)) == NULL) {
		evbuffer_add_printf(out, ",\"message\":{\"matched\":false}");
		return;
	}
	o = &x->row[send ? a->rr : a->rs];
	evbuffer_add_printf(out, ",\"message\":{\"matched\":true,"
	    "\"send_ts\":\"%" PRIu64 "\",\"recv_ts\":\"%" PRIu64 "\",\"latency_ns\":%"
	    PRId64 ",\"bytes\":%" PRId64 ",\"other_row\":%" PRIu32
	    ",\"other\":{\"node\":%" PRIu32 ",\"pid\":%" PRIu32 ",\"tid\":%"
	    PRIu32 "},\"bound_ns\":%" PRIu64 ",\"unsure\":%s}", a->ts, a->tr,
	    (int64_t)(a->tr - a->ts), a->bytes, send ? a->rr : a->rs,
	    o->node, o->pid, o->tid, a->bound,
	    pv_arrow_unsure(a) ? "true" : "false");
}

static int
record_json(const struct pv_idx *x, size_t row, const struct grmtrace_ev *ev,
	    struct evbuffer *out)
{
	const struct pv_proc *p = pv_proc(&x->msgs, ev->node, ev->pid);
	const struct grmtrace_def *d = ev->def;
	unsigned i;

	evbuffer_add_printf(out, "{\"row\":%zu,\"ts\":\"%" PRIu64 "\",\"node\":%"
	    PRIu32 ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"eid\":%" PRId32
	    ",\"where\":%" PRIu64 ",\"bound_ns\":%" PRIu64 ",\"model\":%"
	    PRIu32 ",\"raw_ts\":\"%" PRIu64 "\"", row, ev->ts, ev->node,
	    ev->pid, ev->tid, ev->eid, ev->where, ev->bound_ns,
	    ev->sync_model, ev->raw_ts);
	if (d != NULL) {
		evbuffer_add_printf(out, ",\"format\":");
		pv_json_str(out, d->format, strlen(d->format));
		evbuffer_add_printf(out, ",\"name\":");
		pv_json_str(out, d->description, strlen(d->description));
	}
	evbuffer_add_printf(out, ",\"fields\":[");
	for (i = 0; i < ev->n; i++) {
		if (i > 0)
			evbuffer_add(out, ",", 1);
		if (pv_field_json(&ev->f[i], out) != 0)
			return -1;
	}
	evbuffer_add(out, "]", 1);
	if (p != NULL) {
		evbuffer_add_printf(out, ",\"process\":{");
		if (p->has_rank) {
			evbuffer_add_printf(out, "\"rank\":%" PRId64
			    ",\"name\":", p->rank);
			pv_json_str(out, p->name, p->name_len);
			evbuffer_add(out, ",", 1);
		}
		evbuffer_add_printf(out, "\"prog\":");
		pv_json_str(out, p->prog != NULL ? p->prog : "",
		    p->prog != NULL ? p->prog_len : 0);
		evbuffer_add(out, "}", 1);
	}
	message(x, row, ev, out);
	evbuffer_add_printf(out, "}\n");
	return 0;
}

int
pv_idx_record(const struct pv_idx *x, size_t row, uint64_t ts, int32_t eid,
	      int has_eid, struct evbuffer *out, char *err, size_t errlen)
{
	const struct pv_row *r = &x->row[row];
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	size_t i, n = pv_idx_files(x).n;
	int rc;

	/* A job followed across files: each, in turn, until it is found. */
	for (i = 0; i < n; i++) {
		if ((t = pv_idx_open(x, i, err, errlen)) == NULL)
			return -1;
		grmtrace_select(t, 0);
		/* The seek is by the file's times; a record may have been
		 * moved later (grmtrace_causal), by at most maxmove. */
		rc = grmtrace_seek(t, ts > x->maxmove ? ts - x->maxmove : 0);
		while (rc == 1 && (rc = grmtrace_next(t, &ev)) == 1 &&
		    ev->raw_ts <= ts) {
			if (ev->ts == ts && ev->node == r->node &&
			    ev->pid == r->pid && ev->tid == r->tid &&
			    (!has_eid || ev->eid == eid)) {
				rc = record_json(x, row, ev, out);
				grmtrace_close(t);
				if (rc != 0)
					snprintf(err, errlen, "out of memory");
				return rc;
			}
		}
		if (rc < 0) {
			snprintf(err, errlen, "%s", grmtrace_error(t));
			grmtrace_close(t);
			return -1;
		}
		grmtrace_close(t);
	}
	snprintf(err, errlen, "no such record");
	return -1;
}

int
pv_idx_stats(const struct pv_idx *x, struct evbuffer *out)
{
	const struct pv_evc *c;
	uint32_t it = 0;
	char span[32];
	int first = 1;

	evbuffer_add_printf(out, "{\"records\":%" PRIu64 ",\"span\":\"%s\","
	    "\"processes\":%zu,\"threads\":%zu,\"losses\":%" PRIu64
	    ",\"matched\":%" PRIu64 ",\"sends\":%zu,\"receives\":%zu"
	    ",\"ended\":%s,\"counts\":[", x->records,
	    pv_secs(span, sizeof span, x->last - x->first),
	    pv_map_n(&x->procs), x->nrow, x->losses, x->msgs.matched,
	    x->msgs.nsnd, x->msgs.nrcv, x->ended ? "true" : "false");
	while ((c = pv_map_next(&x->evc, &it)) != NULL) {
		evbuffer_add_printf(out, "%s[%" PRId32 ",%" PRIu64 "]",
		    first ? "" : ",", c->eid, c->count);
		first = 0;
	}
	evbuffer_add_printf(out, "],\"text\":");
	pv_json_str(out, x->stats != NULL ? x->stats : "", x->stats_len);
	evbuffer_add_printf(out, "}\n");
	return 0;
}
