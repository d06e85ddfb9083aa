/* SPDX-License-Identifier: MIT */
/* bee_agg.c: Event_Handle_Rate's aggregation: events accumulated per
 * sensor in process memory and recorded as E_AGGREGATE records of the
 * sensor's aggregate type. */
#include <stdlib.h>
#include <string.h>

#include "bee_int.h"
#include "util/clock.h"

/* A sensor's pending aggregate; under the sensor's lock. */
struct bee_agg {
	uint64_t		rate;	/* the rate it is accumulated under */
	uint64_t		count;	/* events; 0: nothing pending */
	uint64_t		start;	/* ns, its first event */
	unsigned		n;
	struct rec_field	v[REC_ARGS_MAX];	/* latest, sum, or sum
							   for the mean */
	char			*str[REC_ARGS_MAX];	/* latest strings */
};

/* Starts an aggregate with the kinds the aggregate type has. */
static void
begin(struct bee_agg *a, uint64_t rate, uint64_t now,
      const struct rec_field *f, unsigned n)
{
	unsigned i;

	a->rate = rate;
	a->start = now;
	a->n = n;
	memset(a->v, 0, sizeof a->v);
	for (i = 0; i < n; i++)
		a->v[i].kind = f[i].kind == REC_K_STR ||
		    BEE_RATE_ACC(rate) != E_MEAN ? f[i].kind : REC_K_DOUBLE;
}

static void
accumulate(struct bee_agg *a, const struct rec_field *f)
{
	int acc = BEE_RATE_ACC(a->rate);
	struct rec_field *v;
	unsigned i;

	for (i = 0; i < a->n; i++) {
		v = &a->v[i];
		switch (f[i].kind) {
		case REC_K_STR:
			if (a->str[i] == NULL &&
			    (a->str[i] = malloc(REC_STR_MAX)) == NULL) {
				v->v.s.p = "";
				v->v.s.len = 0;
				break;
			}
			memcpy(a->str[i], f[i].v.s.p, f[i].v.s.len);
			v->v.s.p = a->str[i];
			v->v.s.len = f[i].v.s.len;
			break;
		case REC_K_INT:
			if (acc == E_MEAN)
				v->v.d += (double)f[i].v.i;
			else if (acc == E_ADD)	/* wraps, as unsigned */
				v->v.i = (int64_t)((uint64_t)v->v.i +
				    (uint64_t)f[i].v.i);
			else
				v->v.i = f[i].v.i;
			break;
		case REC_K_UINT:
			if (acc == E_MEAN)
				v->v.d += (double)f[i].v.u;
			else if (acc == E_ADD)
				v->v.u += f[i].v.u;
			else
				v->v.u = f[i].v.u;
			break;
		default:
			if (acc == E_LATEST)
				v->v.d = f[i].v.d;
			else
				v->v.d += f[i].v.d;
			break;
		}
	}
}

/* Records a's aggregate and empties it; s's lock held.  The aggregate
 * type exists: it was made before the first event was accumulated. */
static void
dispatch(struct bee_sensor *s, struct bee_agg *a)
{
	struct rec_field out[REC_ARGS_MAX];
	int acc = BEE_RATE_ACC(a->rate);
	unsigned i;

	out[0].kind = REC_K_UINT;
	out[0].v.u = a->count;
	for (i = 0; i < a->n; i++) {
		out[i + 1] = a->v[i];
		if (acc == E_MEAN && a->v[i].kind == REC_K_DOUBLE)
			out[i + 1].v.d /= (double)a->count;
	}
	(void)gmi_emit_fields(atomic_load(&s->agg[acc].eid), out, a->n + 1);
	a->count = 0;
}

void
bee_agg_event(struct bee_sensor *s, uint64_t rate, const struct rec_field *f,
	      unsigned n)
{
	uint64_t now, nr = BEE_RATE_NR(rate);
	struct bee_agg *a;
	int due;

	/* Outside the lock: making the type takes bee_lock. */
	if (bee_agg_type(s, BEE_RATE_ACC(rate)) == 0)
		return;
	now = clk_mono_ns();
	pthread_mutex_lock(&s->lock);
	a = s->pend;
	if (a == NULL && (a = s->pend = calloc(1, sizeof *a)) == NULL) {
		pthread_mutex_unlock(&s->lock);
		gmi_error(0, "sensor %s: no memory to aggregate", s->name);
		return;
	}
	/* The rate changed since the pending events came: they go first. */
	if (a->count > 0 && a->rate != rate)
		dispatch(s, a);
	if (a->count == 0)
		begin(a, rate, now, f, n);
	accumulate(a, f);
	a->count++;
	if (BEE_RATE_DISP(rate) == E_HANDLE_BY_EVENTS)
		due = a->count >= nr;
	else
		due = (now - a->start) / 1000000000u >= nr;
	if (due)
		dispatch(s, a);
	pthread_mutex_unlock(&s->lock);
}

/* Calls fn on every sensor (once: at its own slot). */
static void
each_sensor(void (*fn)(struct bee_sensor *, int), int arg)
{
	struct bee_sensor *s;
	unsigned i, n = bee_nslots();

	for (i = 0; i < n; i++) {
		s = bee_sensor_of(GMI_SENSOR_BASE + (int)i);
		if (s != NULL && atomic_load(&s->self.eid) ==
		    GMI_SENSOR_BASE + (int)i)
			fn(s, arg);
	}
}

static void
flush_one(struct bee_sensor *s, int cls)
{
	if (cls != E_ALL && s->cls != cls)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->pend != NULL && s->pend->count > 0)
		dispatch(s, s->pend);
	pthread_mutex_unlock(&s->lock);
}

void
bee_agg_flush(int cls)
{
	each_sensor(flush_one, cls);
}

static void
fork_one(struct bee_sensor *s, int phase)
{
	if (phase == 0) {
		pthread_mutex_lock(&s->lock);
		return;
	}
	/* The child's pending events are its parent's: not its own to
	 * report. */
	if (phase == 2 && s->pend != NULL)
		s->pend->count = 0;
	pthread_mutex_unlock(&s->lock);
}

void
bee_agg_fork(int phase)
{
	each_sensor(fork_one, phase);
}
