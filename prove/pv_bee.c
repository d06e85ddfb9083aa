/* SPDX-License-Identifier: MIT */
/* pv_bee.c: BEE's views of a selection (prove stats' numbers: counts by
 * event type, exclusive time per block, messages, load meter) from prove
 * serve's index, not from the file: for each row, the sums of its marks,
 * of its spans by depth and of its messages are kept at every 2^k of
 * them, so that a time range and rows are answered with binary searches
 * and at most 2^k items added up at each edge. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "pv_idx.h"

/* A checkpoint every 2^shift items at least (more when a sequence has
 * many keys: shift is the least with 2^shift >= 4 x keys x values, so
 * the sums cost at most 2 bytes per item). */
#define CUM_SHIFT_MIN	6

typedef unsigned __int128 u128;

struct seq;

/* A sequence of items in time order and its sums: for each of nk keys,
 * nv values; c[j * nk * nv ...] the sums of the items before item
 * j << shift.  add(q, i, acc) adds item i to acc ([nk][nv]). */
struct seq {
	const void	*items;
	size_t		n;
	size_t		size;		/* of an item */
	uint64_t	(*ts)(const struct seq *, size_t);
	int		(*key)(const struct seq *, size_t, struct pv_key *);
	void		(*add)(const struct seq *, size_t, uint64_t *);
	unsigned	shift;
	size_t		ncap;		/* rows of c allocated */
	uint32_t	nk;
	uint32_t	nv;
	struct pv_key	*keys;
	uint32_t	*h;		/* open addressing: key index + 1 */
	uint32_t	hmask;
	uint64_t	*c;
	const struct pv_bee_row *row;
};

/* Of a row's messages, by time. */
struct bsnd {
	uint64_t	ts;
	uint64_t	tr;	/* its receive's time, if matched */
	int64_t		bytes;
	int64_t		peer;
	uint32_t	rr;	/* the receive's row; UINT32_MAX: unmatched */
	uint32_t	pad;
};

struct brcv {
	uint64_t	ts;
	int64_t		peer;
};

struct pv_bee_row {
	struct seq	marks;	/* r->pt: key (eid, unmatched end), 1 value */
	struct seq	*dep;	/* by depth: key (state, beid:eeid), SV_N */
	size_t		nd;	/* depths with tables */
	struct bsnd	*snd;
	struct seq	sends;	/* key (peer, rr), SN_N values */
	struct brcv	*rcv;
	struct seq	recvs;	/* key (peer, 0), 1 value */
	uint64_t	maxlat;	/* of its matched sends: receive - send */
	uint64_t	maxneg;	/* send - receive */
	int		has_rank;
	int64_t		rank;
	size_t		ix;	/* the row's index when made */
};

/* Values of a depth's keys. */
enum { SV_BEGIN, SV_OWN, SV_NOOWN, SV_CLOSED, SV_S1, SV_S2LO, SV_S2HI,
    SV_N };
/* Values of a row's sends' keys. */
enum { SN_SENDS, SN_BYTES, SN_MATCHED, SN_LAT, SN_HIST, SN_N = SN_HIST +
    PV_LAT_BUCKETS };

static uint64_t
hkey(const struct pv_key *k)
{
	uint64_t h = k->k1 * UINT64_C(0x9e3779b97f4a7c15) ^ k->k2 *
	    UINT64_C(0xc2b2ae3d27d4eb4f);

	return h ^ h >> 29;
}

/* The index of key k in q, or UINT32_MAX. */
static uint32_t
seq_find(const struct seq *q, const struct pv_key *k)
{
	uint32_t i, j;

	if (q->h == NULL)
		return UINT32_MAX;
	for (i = (uint32_t)hkey(k) & q->hmask; (j = q->h[i]) != 0;
	    i = (i + 1) & q->hmask)
		if (q->keys[j - 1].k1 == k->k1 && q->keys[j - 1].k2 == k->k2)
			return j - 1;
	return UINT32_MAX;
}

/* Adds key k to q if new.  0, or -1 if out of memory. */
static int
seq_key(struct seq *q, const struct pv_key *k)
{
	uint32_t i, j, cap = q->hmask + 1, *h;
	struct pv_key *nk;

	if (seq_find(q, k) != UINT32_MAX)
		return 0;
	if (q->h == NULL || (q->nk + 1) * 2 > cap) {
		cap = q->h == NULL ? 16 : cap * 2;
		if ((h = calloc(cap, sizeof *h)) == NULL ||
		    (nk = realloc(q->keys, cap / 2 * sizeof *nk)) == NULL) {
			free(h);
			return -1;
		}
		q->keys = nk;
		for (j = 0; j < q->nk; j++) {
			for (i = (uint32_t)hkey(&nk[j]) & (cap - 1); h[i] != 0;
			    i = (i + 1) & (cap - 1))
				continue;
			h[i] = j + 1;
		}
		free(q->h);
		q->h = h;
		q->hmask = cap - 1;
	}
	q->keys[q->nk] = *k;
	for (i = (uint32_t)hkey(k) & q->hmask; q->h[i] != 0;
	    i = (i + 1) & q->hmask)
		continue;
	q->h[i] = ++q->nk;
	return 0;
}

static size_t
seq_width(const struct seq *q)
{
	return (size_t)q->nk * q->nv;
}

/* Rows of checkpoints q holds room for. */
static size_t
seq_rows(const struct seq *q)
{
	return (q->n >> q->shift) + 1;
}

/*
 * Makes q's sums for its items now at items[0..n), those of the items
 * before low being what they were (low is taken down to the items the
 * sums were made of; a new q: none): its new keys added, the checkpoints
 * from the last one at or before low made again.  When its keys grew so
 * that its checkpoints would cost more than 2 bytes an item, they are
 * made again with a longer step (rare: the keys doubled).  0, or -1 if
 * out of memory or *stop was set (stop NULL: none).
 */
static int
seq_update(struct seq *q, const void *items, size_t n, size_t low,
	   const int *stop)
{
	struct pv_key k;
	uint64_t *acc, *nc;
	size_t i, w0 = seq_width(q), w, j0, rows, cap, keep;

	q->items = items;
	if (q->c == NULL || low > q->n)
		low = q->c == NULL ? 0 : q->n;
	q->n = n;
	for (i = low; i < n; i++)
		if (q->key(q, i, &k) == 0 && seq_key(q, &k) != 0)
			return -1;
	w = seq_width(q);
	if (q->c == NULL || (((size_t)1 << q->shift) < 4 * w &&
	    q->shift < 40)) {
		free(q->c);
		q->c = NULL;
		q->ncap = 0;
		low = 0;
		for (q->shift = CUM_SHIFT_MIN; ((size_t)1 << q->shift) < 4 * w &&
		    q->shift < 40; q->shift++)
			continue;
	}
	rows = seq_rows(q);
	j0 = low >> q->shift;
	if (w != w0 || rows > q->ncap) {
		cap = rows > q->ncap ? rows + rows / 2 : q->ncap;
		if ((nc = calloc(cap * w + 1, sizeof *nc)) == NULL)
			return -1;
		/* The checkpoints kept: up to j0; a new key's sums 0. */
		keep = q->c == NULL ? 0 : j0 + 1;
		for (i = 0; i < keep; i++)
			memcpy(nc + i * w, q->c + i * w0, w0 * sizeof *nc);
		free(q->c);
		q->c = nc;
		q->ncap = cap;
	}
	if ((acc = calloc(w + 1, sizeof *acc)) == NULL)
		return -1;
	memcpy(acc, q->c + j0 * w, w * sizeof *acc);
	for (i = j0 << q->shift; i <= n; i++) {
		if ((i & (((size_t)1 << q->shift) - 1)) == 0)
			memcpy(q->c + (i >> q->shift) * w, acc, w * sizeof *acc);
		if (i < n)
			q->add(q, i, acc);
		if ((i & 0xffff) == 0 && stop != NULL &&
		    __atomic_load_n(stop, __ATOMIC_RELAXED))
			break;
	}
	free(acc);
	return i <= n ? -1 : 0;
}

/* The bytes q's sums and keys hold. */
static size_t
seq_bytes(const struct seq *q)
{
	return q->ncap * seq_width(q) * sizeof *q->c + (q->c != NULL ?
	    (q->hmask + 1) * sizeof *q->h + (q->hmask + 1) / 2 *
	    sizeof *q->keys : 0);
}

/* The sums of items [0, i) in acc: c[j], those of [0, j << shift), and
 * the items after it. */
static void
seq_at(const struct seq *q, size_t i, uint64_t *acc)
{
	size_t w = seq_width(q), j = i >> q->shift, k;

	memcpy(acc, q->c + j * w, w * sizeof *acc);
	for (k = j << q->shift; k < i; k++)
		q->add(q, k, acc);
}

/* The sums of items [i0, i1) in d (acc: room for another table). */
static void
seq_range(const struct seq *q, size_t i0, size_t i1, uint64_t *d,
	  uint64_t *acc)
{
	size_t w = seq_width(q), k;

	seq_at(q, i1, d);
	seq_at(q, i0, acc);
	for (k = 0; k < w; k++)
		d[k] -= acc[k];
}

static void
seq_free(struct seq *q)
{
	free(q->keys);
	free(q->h);
	free(q->c);
	q->keys = NULL;
	q->h = NULL;
	q->c = NULL;
	q->nk = 0;
	q->hmask = 0;
	q->ncap = 0;
	q->n = 0;
}

/* The first item of q at or after t. */
static uint64_t
seq_ts_at(const void *arg, size_t i)
{
	const struct seq *q = arg;

	return q->ts(q, i);
}

static size_t
seq_lb(const struct seq *q, uint64_t t)
{
	return pv_lb(q, 0, q->n, t, seq_ts_at);
}

/* ---- the sequences ---- */

static uint64_t
pt_ts(const struct seq *q, size_t i)
{
	return ((const struct pv_pt *)q->items)[i].ts;
}

static int
pt_key(const struct seq *q, size_t i, struct pv_key *k)
{
	const struct pv_pt *p = &((const struct pv_pt *)q->items)[i];

	*k = (struct pv_key){ (uint32_t)p->eid, p->kind == PV_END };
	return 0;
}

static void
pt_add1(const struct seq *q, size_t i, uint64_t *acc)
{
	struct pv_key k;

	pt_key(q, i, &k);
	acc[seq_find(q, &k)]++;
}

static uint64_t
span_t0(const struct seq *q, size_t i)
{
	return ((const struct pv_span *)q->items)[i].t0;
}

static uint64_t
span_t1(const void *arg, size_t i)
{
	return ((const struct pv_span *)((const struct seq *)arg)->items)[i].t1;
}

static int
span_key(const struct seq *q, size_t i, struct pv_key *k)
{
	const struct pv_span *s = &((const struct pv_span *)q->items)[i];

	*k = (struct pv_key){ s->name, (uint64_t)(uint32_t)s->beid << 32 |
	    (uint32_t)s->eeid };
	return 0;
}

/* A span's values (v: SV_N of them). */
static void
span_vals(const struct pv_span *s, uint64_t *v)
{
	u128 sq, a;

	v[SV_BEGIN]++;
	if (s->open & PV_SPAN_OPEN)
		return;
	v[s->open & PV_SPAN_OWN ? SV_OWN : SV_NOOWN]++;
	v[SV_CLOSED]++;
	v[SV_S1] += s->excl;
	sq = (u128)s->excl * s->excl;
	a = ((u128)v[SV_S2HI] << 64 | v[SV_S2LO]) + sq;
	v[SV_S2LO] = (uint64_t)a;
	v[SV_S2HI] = (uint64_t)(a >> 64);
}

static void
span_add1(const struct seq *q, size_t i, uint64_t *acc)
{
	struct pv_key k;

	span_key(q, i, &k);
	span_vals(&((const struct pv_span *)q->items)[i],
	    acc + (size_t)seq_find(q, &k) * SV_N);
}

static uint64_t
snd_ts(const struct seq *q, size_t i)
{
	return ((const struct bsnd *)q->items)[i].ts;
}

static int
snd_key(const struct seq *q, size_t i, struct pv_key *k)
{
	const struct bsnd *s = &((const struct bsnd *)q->items)[i];

	*k = (struct pv_key){ (uint64_t)s->peer, s->rr };
	return 0;
}

/* A send's values: sign -1 takes its match away (the edges). */
static void
snd_vals(const struct bsnd *s, uint64_t *v, int match_only, int sign)
{
	uint64_t lat;

	if (!match_only) {
		v[SN_SENDS]++;
		v[SN_BYTES] += s->bytes > 0 ? (uint64_t)s->bytes : 0;
	}
	if (s->rr == UINT32_MAX)
		return;
	lat = s->tr > s->ts ? s->tr - s->ts : 0;
	if (sign > 0) {
		v[SN_MATCHED]++;
		v[SN_LAT] += s->tr - s->ts;	/* as int64, wrapping */
		v[SN_HIST + pv_lat_bucket(lat)]++;
	} else {
		v[SN_MATCHED]--;
		v[SN_LAT] -= s->tr - s->ts;
		v[SN_HIST + pv_lat_bucket(lat)]--;
	}
}

static void
snd_add1(const struct seq *q, size_t i, uint64_t *acc)
{
	struct pv_key k;

	snd_key(q, i, &k);
	snd_vals(&((const struct bsnd *)q->items)[i],
	    acc + (size_t)seq_find(q, &k) * SN_N, 0, 1);
}

static uint64_t
rcv_ts(const struct seq *q, size_t i)
{
	return ((const struct brcv *)q->items)[i].ts;
}

static int
rcv_key(const struct seq *q, size_t i, struct pv_key *k)
{
	*k = (struct pv_key){ (uint64_t)((const struct brcv *)q->items)[i].peer,
	    0 };
	return 0;
}

static void
rcv_add1(const struct seq *q, size_t i, uint64_t *acc)
{
	struct pv_key k;

	rcv_key(q, i, &k);
	acc[seq_find(q, &k)]++;
}

/* By time, then the rest of the item: an order that does not depend on
 * the order they were gathered in (compared with the last, pv_bee_update). */
static int
by_snd(const void *a, const void *b)
{
	const struct bsnd *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->tr != y->tr)
		return x->tr < y->tr ? -1 : 1;
	if (x->rr != y->rr)
		return x->rr < y->rr ? -1 : 1;
	return x->peer != y->peer ? pv_cmp(x->peer, y->peer) :
	    pv_cmp(x->bytes, y->bytes);
}

static int
by_rcv(const void *a, const void *b)
{
	const struct brcv *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return pv_cmp(x->peer, y->peer);
}

/* qsort, unless in order already (messages mostly are). */
static void
sort_if(void *a, size_t n, size_t size, int (*cmp)(const void *,
	const void *))
{
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp((char *)a + (i - 1) * size, (char *)a + i * size) > 0) {
			qsort(a, n, size, cmp);
			return;
		}
}

/* The row of a message, the last one found first (messages come in runs
 * of a thread). */
static uint32_t
row_of(const struct pv_idx *x, const struct pv_msg *m, uint32_t *last)
{
	const struct pv_row *r;
	const size_t *ix;

	if (*last != UINT32_MAX) {
		r = &x->row[*last];
		if (r->tid == m->tid && r->pid == m->pid && r->node == m->node)
			return *last;
	}
	ix = pv_map_find(&x->rows, (uint64_t)m->node << 32 | m->pid, m->tid);
	if (ix == NULL)
		return UINT32_MAX;
	return *last = (uint32_t)(*ix - 1);
}

/* The first i below n at which a[i] and b[i] differ (n if none). */
static size_t
first_diff(const void *a, const void *b, size_t n, size_t size)
{
	size_t i;

	if (a == NULL || b == NULL || n == 0 ||
	    memcmp(a, b, n * size) == 0)
		return n;
	for (i = 0; i < n; i++)
		if (memcmp((const char *)a + i * size, (const char *)b + i * size,
		    size) != 0)
			break;
	return i;
}

/* The rows' messages gathered again from the index's matched sends and
 * receives (a followed job's old sends may have found their receives
 * since), each row's sums made again from its first that changed. */
static int
update_msgs(struct pv_idx *x)
{
	const struct pv_msgs *g = &x->msgs;
	const struct pv_msg *m, *o;
	struct pv_bee_row *b;
	const struct pv_proc *p;
	struct bsnd **snd;
	struct brcv **rcv;
	size_t i, *ns, *nr, lo;
	uint32_t r, rr, last = UINT32_MAX, lastr = UINT32_MAX;
	int rc = -1;

	ns = calloc(x->nrow + 1, sizeof *ns);
	nr = calloc(x->nrow + 1, sizeof *nr);
	snd = calloc(x->nrow + 1, sizeof *snd);
	rcv = calloc(x->nrow + 1, sizeof *rcv);
	if (ns == NULL || nr == NULL || snd == NULL || rcv == NULL)
		goto out;
	for (i = 0; i < g->nsnd; i++)
		if ((r = row_of(x, &g->snd[i], &last)) != UINT32_MAX)
			ns[r]++;
	for (i = 0; i < g->nrcv; i++)
		if ((r = row_of(x, &g->rcv[i], &last)) != UINT32_MAX)
			nr[r]++;
	for (r = 0; r < x->nrow; r++) {
		b = x->row[r].bee;
		if ((snd[r] = calloc(ns[r] + 1, sizeof **snd)) == NULL ||
		    (rcv[r] = calloc(nr[r] + 1, sizeof **rcv)) == NULL)
			goto out;
		p = pv_proc(g, x->row[r].node, x->row[r].pid);
		b->has_rank = p != NULL && p->has_rank;
		b->rank = b->has_rank ? p->rank : 0;
		b->maxlat = 0;
		b->maxneg = 0;
		ns[r] = 0;
		nr[r] = 0;
	}
	for (i = 0; i < g->nsnd; i++) {
		m = &g->snd[i];
		if ((r = row_of(x, m, &last)) == UINT32_MAX)
			continue;
		b = x->row[r].bee;
		o = m->match != 0 ? &g->rcv[m->match - 1] : NULL;
		rr = o == NULL ? UINT32_MAX : row_of(x, o, &lastr);
		snd[r][ns[r]++] = (struct bsnd){ m->ts, o != NULL ? o->ts : 0,
		    m->bytes, m->peer, rr, 0 };
		if (rr == UINT32_MAX)
			continue;
		if (o->ts > m->ts && o->ts - m->ts > b->maxlat)
			b->maxlat = o->ts - m->ts;
		if (m->ts > o->ts && m->ts - o->ts > b->maxneg)
			b->maxneg = m->ts - o->ts;
	}
	for (i = 0; i < g->nrcv; i++) {
		m = &g->rcv[i];
		if ((r = row_of(x, m, &last)) == UINT32_MAX)
			continue;
		rcv[r][nr[r]++] = (struct brcv){ m->ts, m->peer };
	}
	for (r = 0; r < x->nrow; r++) {
		b = x->row[r].bee;
		sort_if(snd[r], ns[r], sizeof **snd, by_snd);
		sort_if(rcv[r], nr[r], sizeof **rcv, by_rcv);
		lo = first_diff(b->snd, snd[r], ns[r] < b->sends.n ? ns[r] :
		    b->sends.n, sizeof **snd);
		free(b->snd);
		b->snd = snd[r];
		snd[r] = NULL;
		if (seq_update(&b->sends, b->snd, ns[r], lo, x->stop) != 0)
			goto out;
		lo = first_diff(b->rcv, rcv[r], nr[r] < b->recvs.n ? nr[r] :
		    b->recvs.n, sizeof **rcv);
		free(b->rcv);
		b->rcv = rcv[r];
		rcv[r] = NULL;
		if (seq_update(&b->recvs, b->rcv, nr[r], lo, x->stop) != 0)
			goto out;
	}
	rc = 0;
out:
	for (r = 0; snd != NULL && rcv != NULL && r < x->nrow; r++) {
		free(snd[r]);
		free(rcv[r]);
	}
	free(snd);
	free(rcv);
	free(ns);
	free(nr);
	return rc;
}

static void
seq_init(struct seq *q, size_t size, uint32_t nv,
	 uint64_t (*ts)(const struct seq *, size_t),
	 int (*key)(const struct seq *, size_t, struct pv_key *),
	 void (*add)(const struct seq *, size_t, uint64_t *))
{
	q->size = size;
	q->nv = nv;
	q->ts = ts;
	q->key = key;
	q->add = add;
}

/* A row's tables of depths: room for its depths now (new ones empty). */
static int
row_depths(struct pv_bee_row *b, size_t nd)
{
	struct seq *dep;

	if (nd <= b->nd)
		return 0;
	if ((dep = realloc(b->dep, nd * sizeof *dep)) == NULL)
		return -1;
	b->dep = dep;
	for (; b->nd < nd; b->nd++) {
		memset(&dep[b->nd], 0, sizeof *dep);
		seq_init(&dep[b->nd], sizeof(struct pv_span), SV_N, span_t0,
		    span_key, span_add1);
	}
	return 0;
}

/* Whether the tables of x must be made whole: none yet, rows added or
 * reordered (their messages' keys hold row indexes), old data dropped. */
static int
whole(const struct pv_idx *x)
{
	size_t i;

	if (!x->bee || x->cut != x->bee_cut)
		return 1;
	for (i = 0; i < x->nrow; i++)
		if (x->row[i].bee == NULL || x->row[i].bee->ix != i)
			return 1;
	return 0;
}

int
pv_bee_update(struct pv_idx *x)
{
	struct pv_bee_row *b;
	struct pv_row *r;
	struct pv_depth *d;
	size_t i, j, bytes = 0;

	if (whole(x)) {
		pv_bee_free(x);
		x->bee_full++;
	}
	for (i = 0; i < x->nrow; i++) {
		r = &x->row[i];
		if (r->bee == NULL) {
			if ((r->bee = calloc(1, sizeof *b)) == NULL)
				goto fail;
			b = r->bee;
			b->ix = i;
			seq_init(&b->marks, sizeof *r->pt, 1, pt_ts, pt_key,
			    pt_add1);
			seq_init(&b->sends, sizeof *b->snd, SN_N, snd_ts,
			    snd_key, snd_add1);
			seq_init(&b->recvs, sizeof *b->rcv, 1, rcv_ts, rcv_key,
			    rcv_add1);
		}
	}
	if (update_msgs(x) != 0)
		goto fail;
	for (i = 0; i < x->nrow; i++) {
		r = &x->row[i];
		b = r->bee;
		if (seq_update(&b->marks, r->pt, r->npt, r->ptlow,
		    x->stop) != 0 ||
		    row_depths(b, r->nd) != 0)
			goto fail;
		r->ptlow = SIZE_MAX;
		bytes += sizeof *b + seq_bytes(&b->marks) +
		    seq_bytes(&b->sends) + seq_bytes(&b->recvs) +
		    b->sends.n * sizeof *b->snd + b->recvs.n * sizeof *b->rcv +
		    b->nd * sizeof *b->dep;
		for (j = 0; j < r->nd; j++) {
			d = &r->d[j];
			if (seq_update(&b->dep[j], d->s, d->n, d->low,
			    x->stop) != 0)
				goto fail;
			d->low = SIZE_MAX;
			bytes += seq_bytes(&b->dep[j]);
		}
	}
	x->bee = 1;
	x->bee_cut = x->cut;
	x->bee_bytes = bytes;
	return 0;
fail:
	pv_bee_free(x);
	return -1;
}

int
pv_bee_build(struct pv_idx *x)
{
	if (pv_bee_update(x) != 0)
		return -1;
	x->bytes += x->bee_bytes;
	return 0;
}

void
pv_bee_free(struct pv_idx *x)
{
	struct pv_bee_row *b;
	size_t i, j;

	for (i = 0; i < x->nrow; i++) {
		if ((b = x->row[i].bee) == NULL)
			continue;
		seq_free(&b->marks);
		seq_free(&b->sends);
		seq_free(&b->recvs);
		for (j = 0; j < b->nd; j++)
			seq_free(&b->dep[j]);
		free(b->dep);
		free(b->snd);
		free(b->rcv);
		free(b);
		x->row[i].bee = NULL;
	}
	x->bee = 0;
}

/* ---- a selection's numbers ---- */

struct cnt {			/* by eid */
	int32_t		eid;
	uint64_t	count;
};

struct prof {			/* by state */
	uint32_t	state;
	uint64_t	count;
	uint64_t	s1;
	u128		s2;
};

struct pair {			/* by (sender rank, receiver rank) */
	int64_t		from;
	int64_t		to;
	uint64_t	sends;
	uint64_t	bytes;
	uint64_t	recvs;
	uint64_t	matched;
	int64_t		lat;
};

struct lproc {			/* the load meter's */
	uint32_t	node;
	uint32_t	pid;
	uint64_t	first;	/* its first record's time */
	size_t		order;
	uint64_t	*c;
};

struct ans {
	const struct pv_idx	*x;
	const struct pv_sel	*sel;
	uint64_t		from;
	uint64_t		to;
	unsigned char		*rsel;	/* by row: selected */
	uint64_t		records;
	uint64_t		first;
	uint64_t		last;
	uint64_t		unmatched;
	uint64_t		unclosed;
	uint64_t		sends;
	uint64_t		recvs;
	uint64_t		matched;
	uint64_t		norank;
	uint64_t		hist[PV_LAT_BUCKETS];
	size_t			threads;
	struct pv_map		rprocs;	/* (node, pid) of rows counted */
	struct pv_map		procs;	/* (node, pid) -> struct lproc */
	struct pv_map		cnts;	/* (eid, 0) */
	struct pv_map		profs;	/* (state, 0) */
	struct pv_map		pairs;	/* (from, to) */
	uint64_t		*acc;	/* scratch: two tables */
	uint64_t		*acc2;
	size_t			cap;
};

static int
count_eid(struct ans *a, int32_t eid, uint64_t n)
{
	struct cnt *c;

	if (n == 0)
		return 0;
	if ((c = pv_map_get(&a->cnts, (uint32_t)eid, 0, sizeof *c)) == NULL)
		return -1;
	c->eid = eid;
	c->count += n;
	return 0;
}

static struct pair *
pair_get(struct ans *a, int64_t from, int64_t to)
{
	struct pair *p;

	if ((p = pv_map_get(&a->pairs, (uint64_t)from, (uint64_t)to,
	    sizeof *p)) != NULL) {
		p->from = from;
		p->to = to;
	}
	return p;
}

/* Room for two tables of q in the scratch. */
static int
scratch(struct ans *a, const struct seq *q)
{
	size_t w = seq_width(q) + 1;
	uint64_t *n1, *n2;

	if (w <= a->cap)
		return 0;
	if ((n1 = realloc(a->acc, w * sizeof *n1)) == NULL)
		return -1;
	a->acc = n1;
	if ((n2 = realloc(a->acc2, w * sizeof *n2)) == NULL)
		return -1;
	a->acc2 = n2;
	a->cap = w;
	return 0;
}

static void
seen(struct ans *a, uint64_t first, uint64_t last, uint64_t n)
{
	if (n == 0)
		return;
	if (a->records == 0 || first < a->first)
		a->first = first;
	if (a->records == 0 || last > a->last)
		a->last = last;
	a->records += n;
}

/* The first and last selected record of row r (n of them). */
static void
row_ends(struct ans *a, const struct pv_row *r, uint64_t *f, uint64_t *l)
{
	const struct pv_bee_row *b = r->bee;
	const struct pv_span *s;
	const struct seq *q;
	uint64_t from = a->from, to = a->to;
	size_t i, j;

	*f = UINT64_MAX;
	*l = 0;
	q = &b->marks;
	if ((i = seq_lb(q, from)) < q->n && r->pt[i].ts < to)
		*f = r->pt[i].ts;
	if ((i = seq_lb(q, to)) > 0 && r->pt[i - 1].ts >= from)
		*l = r->pt[i - 1].ts;
	for (j = 0; j < r->nd; j++) {
		q = &b->dep[j];
		s = r->d[j].s;
		if ((i = seq_lb(q, from)) < q->n && s[i].t0 < to &&
		    s[i].t0 < *f)
			*f = s[i].t0;
		if ((i = seq_lb(q, to)) > 0 && s[i - 1].t0 >= from &&
		    s[i - 1].t0 > *l)
			*l = s[i - 1].t0;
		/* Ends of their own: the first at or after from, the last
		 * before to. */
		for (i = pv_lb(q, 0, q->n, from, span_t1); i < q->n &&
		    s[i].t1 < to && !(s[i].open & PV_SPAN_OWN); i++)
			continue;
		if (i < q->n && s[i].t1 < to && s[i].t1 < *f)
			*f = s[i].t1;
		for (i = pv_lb(q, 0, q->n, to, span_t1); i > 0 &&
		    s[i - 1].t1 >= from && !(s[i - 1].open & PV_SPAN_OWN);
		    i--)
			continue;
		if (i > 0 && s[i - 1].t1 >= from && s[i - 1].t1 > *l)
			*l = s[i - 1].t1;
	}
}

/* Records of row r (selected) before t: marks, begins, own ends. */
static uint64_t
row_before(struct ans *a, const struct pv_row *r, uint64_t t)
{
	const struct pv_bee_row *b = r->bee;
	const struct seq *q;
	uint64_t n = seq_lb(&b->marks, t);
	size_t j, k;

	for (j = 0; j < r->nd; j++) {
		q = &b->dep[j];
		n += seq_lb(q, t);
		seq_at(q, pv_lb(q, 0, q->n, t, span_t1), a->acc);
		for (k = 0; k < q->nk; k++)
			n += a->acc[k * SV_N + SV_OWN];
	}
	return n;
}

static int
row_marks(struct ans *a, const struct pv_row *r, uint64_t *n)
{
	const struct seq *q = &r->bee->marks;
	size_t k;

	if (scratch(a, q) != 0)
		return -1;
	seq_range(q, seq_lb(q, a->from), seq_lb(q, a->to), a->acc, a->acc2);
	for (k = 0; k < q->nk; k++) {
		*n += a->acc[k];
		if (q->keys[k].k2 != 0)
			a->unmatched += a->acc[k];
		if (count_eid(a, (int32_t)(uint32_t)q->keys[k].k1,
		    a->acc[k]) != 0)
			return -1;
	}
	return 0;
}

/* Takes span s of depth q out of the sums e of its key. */
static void
span_out(const struct seq *q, const struct pv_span *s, size_t i,
	 uint64_t *acc)
{
	uint64_t v[SV_N] = { 0 }, *e;
	struct pv_key key;
	size_t k;
	u128 s2;

	span_key(q, i, &key);
	e = acc + (size_t)seq_find(q, &key) * SV_N;
	span_vals(s, v);
	s2 = ((u128)e[SV_S2HI] << 64 | e[SV_S2LO]) -
	    ((u128)v[SV_S2HI] << 64 | v[SV_S2LO]);
	for (k = SV_OWN; k < SV_S2LO; k++)
		e[k] -= v[k];
	e[SV_S2LO] = (uint64_t)s2;
	e[SV_S2HI] = (uint64_t)(s2 >> 64);
}

static int
row_depth(struct ans *a, const struct pv_row *r, size_t j, uint64_t *n)
{
	const struct seq *q = &r->bee->dep[j];
	const struct pv_span *s = r->d[j].s, *c;
	uint64_t from = a->from, to = a->to, *e;
	size_t k, b0, b1, e0, e1;
	struct pv_key key;
	struct prof *p;

	if (q->n == 0)
		return 0;
	if (scratch(a, q) != 0)
		return -1;
	b0 = seq_lb(q, from);
	b1 = seq_lb(q, to);
	e0 = pv_lb(q, 0, q->n, from, span_t1);
	e1 = pv_lb(q, 0, q->n, to, span_t1);
	/* Begins in the range, by the key's begin eid. */
	seq_range(q, b0, b1, a->acc, a->acc2);
	for (k = 0; k < q->nk; k++) {
		*n += a->acc[k * SV_N + SV_BEGIN];
		if (count_eid(a, (int32_t)(q->keys[k].k2 >> 32),
		    a->acc[k * SV_N + SV_BEGIN]) != 0)
			return -1;
	}
	/* Ends in the range: closed spans, but one begun before from
	 * (at most one a depth: e0) is no block of the selection, its end
	 * one with no begin. */
	seq_range(q, e0, e1, a->acc, a->acc2);
	if (e0 < e1 && s[e0].t0 < from) {
		c = &s[e0];
		span_out(q, c, e0, a->acc);
		if (c->open & PV_SPAN_OWN) {
			/* Its end is a record of the range all the same. */
			span_key(q, e0, &key);
			a->acc[(size_t)seq_find(q, &key) * SV_N + SV_OWN]++;
			a->unmatched++;
		}
	}
	for (k = 0; k < q->nk; k++) {
		e = a->acc + k * SV_N;
		*n += e[SV_OWN];
		a->unmatched += e[SV_NOOWN];
		if (count_eid(a, (int32_t)(uint32_t)q->keys[k].k2,
		    e[SV_OWN]) != 0)
			return -1;
		if (e[SV_CLOSED] == 0)
			continue;
		if ((p = pv_map_get(&a->profs, q->keys[k].k1, 0,
		    sizeof *p)) == NULL)
			return -1;
		p->state = (uint32_t)q->keys[k].k1;
		p->count += e[SV_CLOSED];
		p->s1 += e[SV_S1];
		p->s2 += (u128)e[SV_S2HI] << 64 | e[SV_S2LO];
	}
	/* Begun in the range and not ended in it. */
	if (e1 < q->n && !(s[e1].open & PV_SPAN_OPEN) && s[e1].t0 >= from &&
	    s[e1].t0 < to)
		a->unclosed++;
	c = &s[q->n - 1];
	if ((c->open & PV_SPAN_OPEN) && c->t0 >= from && c->t0 < to)
		a->unclosed++;
	return 0;
}

/* The row's sends and receives in the range; rows: which rows are
 * selected (a match counts when its receive's row is). */
static int
row_msgs(struct ans *a, const struct pv_row *r)
{
	const struct pv_bee_row *b = r->bee;
	const struct seq *q = &b->sends;
	const struct bsnd *s = b->snd;
	uint64_t from = a->from, to = a->to, *e;
	size_t i0, i1, k, i, lo;
	struct pair *p;
	unsigned h;

	if (scratch(a, q) != 0 || scratch(a, &b->recvs) != 0)
		return -1;
	i0 = seq_lb(q, from);
	i1 = seq_lb(q, to);
	seq_range(q, i0, i1, a->acc, a->acc2);
	/* Matches whose receive is out of the range: near its edges. */
	lo = to > b->maxlat ? seq_lb(q, to - b->maxlat) : 0;
	for (i = lo > i0 ? lo : i0; i < i1; i++)
		if (s[i].rr != UINT32_MAX && s[i].tr >= to)
			snd_vals(&s[i], a->acc + (size_t)seq_find(q,
			    &(struct pv_key){ (uint64_t)s[i].peer, s[i].rr }) *
			    SN_N, 1, -1);
	lo = from < UINT64_MAX - b->maxneg ? seq_lb(q, from + b->maxneg) :
	    q->n;
	for (i = i0; i < i1 && i < lo; i++)
		if (s[i].rr != UINT32_MAX && s[i].tr < from)
			snd_vals(&s[i], a->acc + (size_t)seq_find(q,
			    &(struct pv_key){ (uint64_t)s[i].peer, s[i].rr }) *
			    SN_N, 1, -1);
	for (k = 0; k < q->nk; k++) {
		e = a->acc + k * SN_N;
		a->sends += e[SN_SENDS];
		if (!b->has_rank) {
			a->norank += e[SN_SENDS];
			continue;
		}
		if (e[SN_SENDS] == 0)
			continue;
		if ((p = pair_get(a, b->rank, (int64_t)q->keys[k].k1)) == NULL)
			return -1;
		p->sends += e[SN_SENDS];
		p->bytes += e[SN_BYTES];
		/* A match counts when its receive's row is selected. */
		if (q->keys[k].k2 == UINT32_MAX ||
		    !a->rsel[q->keys[k].k2])
			continue;
		p->matched += e[SN_MATCHED];
		p->lat += (int64_t)e[SN_LAT];
		a->matched += e[SN_MATCHED];
		for (h = 0; h < PV_LAT_BUCKETS; h++)
			a->hist[h] += e[SN_HIST + h];
	}
	q = &b->recvs;
	seq_range(q, seq_lb(q, from), seq_lb(q, to), a->acc, a->acc2);
	for (k = 0; k < q->nk; k++) {
		a->recvs += a->acc[k];
		if (!b->has_rank) {
			a->norank += a->acc[k];
			continue;
		}
		if (a->acc[k] == 0)
			continue;
		if ((p = pair_get(a, (int64_t)q->keys[k].k1, b->rank)) == NULL)
			return -1;
		p->recvs += a->acc[k];
	}
	return 0;
}

static struct lproc *
lproc_get(struct ans *a, uint32_t node, uint32_t pid, uint64_t first)
{
	struct lproc *p;

	if ((p = pv_map_get(&a->procs, node, pid, sizeof *p)) == NULL)
		return NULL;
	if (p->order == 0) {
		p->node = node;
		p->pid = pid;
		p->first = first;
		p->order = pv_map_n(&a->procs);
	} else if (first < p->first)
		p->first = first;
	return p;
}

/* Every selected row's numbers, and the records of no row. */
static int
gather(struct ans *a)
{
	const struct pv_idx *x = a->x;
	const struct pv_row *r;
	const struct pv_oth *o;
	uint64_t n, f, l;
	size_t i, j;

	for (i = 0; i < x->nrow; i++) {
		r = &x->row[i];
		if (!a->rsel[i])
			continue;
		n = 0;
		if (row_marks(a, r, &n) != 0)
			return -1;
		for (j = 0; j < r->nd; j++)
			if (row_depth(a, r, j, &n) != 0)
				return -1;
		if (row_msgs(a, r) != 0)
			return -1;
		if (n == 0)
			continue;
		row_ends(a, r, &f, &l);
		seen(a, f, l, n);
		a->threads++;
		if (pv_map_get(&a->rprocs, r->node, r->pid, 1) == NULL ||
		    lproc_get(a, r->node, r->pid, f) == NULL)
			return -1;
	}
	for (i = 0; i < x->noth; i++) {
		o = &x->oth[i];
		if (!pv_sel_has(a->sel, o->node, o->pid, o->tid, o->ts))
			continue;
		seen(a, o->ts, o->ts, 1);
		if (count_eid(a, o->eid, 1) != 0 ||
		    lproc_get(a, o->node, o->pid, o->ts) == NULL)
			return -1;
	}
	return 0;
}

static int
by_first(const void *p, const void *q)
{
	const struct lproc *x = *(const struct lproc *const *)p;
	const struct lproc *y = *(const struct lproc *const *)q;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* The load meter: per process (in the order of their first records), the
 * records of each of n buckets, as prove stats' JSON has them. */
static int
load_json(struct ans *a, unsigned n, struct evbuffer *out)
{
	const struct pv_idx *x = a->x;
	struct lproc **v = NULL, *p;
	const struct pv_oth *o;
	uint64_t t0 = 0, w = 1, *bd = NULL, prev, cur, b;
	size_t i, j, np = pv_map_n(&a->procs);
	int rc = -1;

	if (a->from > 0 && a->to < UINT64_MAX) {
		t0 = a->from;
		w = (a->to - a->from + n - 1) / n;
		w = w != 0 ? w : 1;
	} else if (a->records > 0) {
		t0 = a->first;
		while ((a->last - t0) / w >= n && w <= UINT64_MAX / 2)
			w *= 2;
	}
	if ((v = (struct lproc **)pv_map_values(&a->procs)) == NULL ||
	    (bd = calloc(n + 1, sizeof *bd)) == NULL)
		goto out;
	/* Bucket k: [bd[k], bd[k + 1]) within the selection. */
	for (i = 0; i <= n; i++) {
		bd[i] = i > (UINT64_MAX - t0) / w ? UINT64_MAX : t0 + i * w;
		if (bd[i] < a->from)
			bd[i] = a->from;
		if (bd[i] > a->to || i == n)
			bd[i] = a->to;
	}
	bd[0] = a->from;
	for (i = 0; i < np; i++)
		if ((v[i]->c = calloc(n, sizeof *v[i]->c)) == NULL)
			goto out;
	for (i = 0; i < x->nrow; i++) {
		if (!a->rsel[i])
			continue;
		p = pv_map_find(&a->procs, x->row[i].node, x->row[i].pid);
		if (p == NULL)
			continue;
		prev = row_before(a, &x->row[i], bd[0]);
		for (j = 0; j < n; j++) {
			cur = row_before(a, &x->row[i], bd[j + 1]);
			p->c[j] += cur - prev;
			prev = cur;
		}
	}
	for (i = 0; i < x->noth; i++) {
		o = &x->oth[i];
		if (!pv_sel_has(a->sel, o->node, o->pid, o->tid, o->ts) ||
		    (p = pv_map_find(&a->procs, o->node, o->pid)) == NULL)
			continue;
		b = o->ts > t0 ? (o->ts - t0) / w : 0;
		p->c[b < n ? b : n - 1]++;
	}
	qsort(v, np, sizeof *v, by_first);
	evbuffer_add_printf(out, ",\"load\":{\"origin\":%" PRIu64
	    ",\"width\":%" PRIu64 ",\"n\":%u,\"procs\":[", t0, w, n);
	for (j = 0; j < np; j++)
		pv_bee_lproc(out, j, &x->msgs, v[j]->node, v[j]->pid, v[j]->c,
		    n, n);
	evbuffer_add(out, "]}", 2);
	rc = 0;
out:
	free(bd);
	free(v);
	return rc;
}

static int
by_count(const void *p, const void *q)
{
	const struct cnt *x = *(const struct cnt *const *)p;
	const struct cnt *y = *(const struct cnt *const *)q;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->eid > y->eid) - (x->eid < y->eid);
}

static const struct pv_idx *sort_x;

static int
by_total(const void *p, const void *q)
{
	const struct prof *a = *(const struct prof *const *)p;
	const struct prof *b = *(const struct prof *const *)q;
	const struct pv_state *x = &sort_x->states[a->state];
	const struct pv_state *y = &sort_x->states[b->state];

	if (a->s1 != b->s1)
		return a->s1 < b->s1 ? 1 : -1;
	if (x->range != y->range)
		return x->range - y->range;
	return (x->id > y->id) - (x->id < y->id);
}

static int
by_ranks(const void *p, const void *q)
{
	const struct pair *x = *(const struct pair *const *)p;
	const struct pair *y = *(const struct pair *const *)q;

	return x->from != y->from ? pv_cmp(x->from, y->from) :
	    pv_cmp(x->to, y->to);
}

static const char *
eid_name(const struct pv_idx *x, int32_t eid)
{
	const struct pv_evc *c = pv_map_find(&x->evc, (uint32_t)eid, 0);

	return c != NULL && c->name != NULL ? c->name : "";
}

static int
counts_json(struct ans *a, struct evbuffer *out)
{
	struct cnt **e;
	size_t i, n = pv_map_n(&a->cnts);

	if ((e = (struct cnt **)pv_map_values(&a->cnts)) == NULL)
		return -1;
	qsort(e, n, sizeof *e, by_count);
	evbuffer_add_printf(out, ",\"counts\":[");
	for (i = 0; i < n; i++)
		pv_bee_count(out, i, e[i]->eid, e[i]->count,
		    eid_name(a->x, e[i]->eid));
	evbuffer_add(out, "]", 1);
	free(e);
	return 0;
}

/* The variance of a state's exclusive times, ns^2: exact integer sums,
 * long double once they would overflow. */
static double
variance(const struct prof *p)
{
	u128 n = p->count, s1 = p->s1, d;
	long double m;

	if (p->count == 0)
		return 0;
	if (p->s2 <= ~(u128)0 / n) {
		d = n * p->s2 - s1 * s1;
		return (double)((long double)d / (long double)n /
		    (long double)n);
	}
	m = (long double)p->s1 / (long double)p->count;
	return (double)((long double)p->s2 / (long double)p->count - m * m);
}

static int
profile_json(struct ans *a, struct evbuffer *out)
{
	const struct pv_state *st;
	struct prof **v;
	size_t i, n = pv_map_n(&a->profs);
	double sum = 0;
	char id[32], nm[32];

	if ((v = (struct prof **)pv_map_values(&a->profs)) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		sum += (double)v[i]->s1;
	sort_x = a->x;
	qsort(v, n, sizeof *v, by_total);
	evbuffer_add_printf(out, ",\"unmatched\":%" PRIu64 ",\"unclosed\":%"
	    PRIu64 ",\"profile\":[", a->unmatched, a->unclosed);
	for (i = 0; i < n; i++) {
		st = &a->x->states[v[i]->state];
		if (st->range)
			snprintf(id, sizeof id, "eid %" PRId32, st->eid);
		else
			snprintf(id, sizeof id, "%" PRId64, st->id);
		if (st->name == NULL)
			snprintf(nm, sizeof nm, "block %" PRId64, st->id);
		pv_bee_block(out, i, id, v[i]->count, (double)v[i]->s1 /
		    (double)v[i]->count, variance(v[i]), v[i]->s1, sum,
		    st->name != NULL ? st->name : nm, st->name != NULL ?
		    st->len : strlen(nm));
	}
	evbuffer_add(out, "]", 1);
	free(v);
	return 0;
}

static int
messages_json(struct ans *a, struct evbuffer *out)
{
	struct pair **p;
	size_t i, n = pv_map_n(&a->pairs);

	if ((p = (struct pair **)pv_map_values(&a->pairs)) == NULL)
		return -1;
	qsort(p, n, sizeof *p, by_ranks);
	evbuffer_add_printf(out, ",\"sends\":%" PRIu64 ",\"recvs\":%" PRIu64
	    ",\"matched\":%" PRIu64 ",\"norank\":%" PRIu64 ",\"pairs\":[",
	    a->sends, a->recvs, a->matched, a->norank);
	for (i = 0; i < n; i++)
		pv_bee_pair(out, i, p[i]->from, p[i]->to, p[i]->sends,
		    (int64_t)p[i]->bytes, p[i]->recvs, p[i]->matched,
		    (double)p[i]->lat);
	evbuffer_add(out, "]", 1);
	pv_bee_lathist(out, a->hist);
	free(p);
	return 0;
}

static void
lproc_free(void *v)
{
	free(((struct lproc *)v)->c);
}

int
pv_bee_json(const struct pv_idx *x, const struct pv_sel *sel,
	    unsigned load_n, struct evbuffer *out)
{
	static const struct pv_sel all = PV_SEL_ALL;
	struct ans a;
	size_t i;
	int rc = -1;

	memset(&a, 0, sizeof a);
	a.x = x;
	a.sel = sel != NULL ? sel : &all;
	a.from = a.sel->from;
	a.to = a.sel->to;
	if ((a.rsel = calloc(x->nrow + 1, 1)) == NULL)
		goto out;
	for (i = 0; i < x->nrow; i++)
		a.rsel[i] = (unsigned char)pv_sel_row(a.sel, x->row[i].node,
		    x->row[i].pid, x->row[i].tid);
	if (gather(&a) != 0)
		goto out;
	pv_bee_head(out, a.records, a.first, a.last, pv_map_n(&a.rprocs),
	    a.threads, x->losses);
	if (counts_json(&a, out) != 0 || profile_json(&a, out) != 0 ||
	    messages_json(&a, out) != 0 ||
	    (load_n != 0 && load_json(&a, load_n, out) != 0))
		goto out;
	evbuffer_add(out, "}\n", 2);
	rc = 0;
out:
	free(a.rsel);
	free(a.acc);
	free(a.acc2);
	pv_map_free(&a.cnts, NULL);
	pv_map_free(&a.profs, NULL);
	pv_map_free(&a.pairs, NULL);
	pv_map_free(&a.procs, lproc_free);
	pv_map_free(&a.rprocs, NULL);
	return rc;
}
