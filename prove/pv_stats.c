/* pv_stats.c: prove stats, the BEE frequency counter and time profiler. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pv.h"

/* A hash map from two 64-bit keys to zeroed, individually allocated values. */
struct slot {
	uint64_t	k1;
	uint64_t	k2;
	void		*v;
};

struct map {
	struct slot	*s;
	size_t		cap;
	size_t		n;
};

struct frame {
	int64_t		bid;
	uint64_t	start;
	uint64_t	child;		/* inclusive time of closed children */
};

struct thr {
	struct frame	*st;
	size_t		depth;
	size_t		cap;
};

struct blk {
	int64_t		bid;
	uint64_t	count;
	double		mean;		/* Welford, of exclusive ns */
	double		m2;
	uint64_t	total;		/* exclusive ns */
	char		*name;
	size_t		name_len;
};

struct evc {
	int32_t		eid;
	uint64_t	count;
};

struct stats {
	struct map	thrs;
	struct map	procs;
	struct map	evcs;
	struct map	blks;
	uint64_t	records;
	uint64_t	first;
	uint64_t	last;
	uint64_t	unmatched;
	uint64_t	unclosed;
};

static size_t
hash(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (size_t)x;
}

static int
map_grow(struct map *m)
{
	struct slot *old = m->s;
	size_t i, j, ocap = m->cap;

	m->cap = ocap == 0 ? 64 : ocap * 2;
	if ((m->s = calloc(m->cap, sizeof *m->s)) == NULL) {
		m->s = old;
		m->cap = ocap;
		return -1;
	}
	for (i = 0; i < ocap; i++) {
		if (old[i].v == NULL)
			continue;
		j = hash(old[i].k1, old[i].k2) & (m->cap - 1);
		while (m->s[j].v != NULL)
			j = (j + 1) & (m->cap - 1);
		m->s[j] = old[i];
	}
	free(old);
	return 0;
}

/* The value of (k1, k2), created zeroed with size bytes if new. */
static void *
map_get(struct map *m, uint64_t k1, uint64_t k2, size_t size)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && map_grow(m) != 0)
		return NULL;
	j = hash(k1, k2) & (m->cap - 1);
	for (; m->s[j].v != NULL; j = (j + 1) & (m->cap - 1)) {
		if (m->s[j].k1 == k1 && m->s[j].k2 == k2)
			return m->s[j].v;
	}
	if ((m->s[j].v = calloc(1, size)) == NULL)
		return NULL;
	m->s[j].k1 = k1;
	m->s[j].k2 = k2;
	m->n++;
	return m->s[j].v;
}

/* The values, in a new array of m->n pointers. */
static void **
map_values(const struct map *m)
{
	void **a;
	size_t i, n = 0;

	if ((a = calloc(m->n + 1, sizeof *a)) == NULL)
		return NULL;
	for (i = 0; i < m->cap; i++)
		if (m->s[i].v != NULL)
			a[n++] = m->s[i].v;
	return a;
}

static void
map_free(struct map *m, void (*fn)(void *))
{
	size_t i;

	for (i = 0; i < m->cap; i++) {
		if (m->s[i].v != NULL && fn != NULL)
			fn(m->s[i].v);
		free(m->s[i].v);
	}
	free(m->s);
}

static void
thr_free(void *v)
{
	free(((struct thr *)v)->st);
}

static void
blk_free(void *v)
{
	free(((struct blk *)v)->name);
}

static struct blk *
blk_get(struct stats *st, int64_t bid)
{
	struct blk *b;

	if ((b = map_get(&st->blks, (uint64_t)bid, 0, sizeof *b)) != NULL)
		b->bid = bid;
	return b;
}

static int
push(struct thr *t, int64_t bid, uint64_t ts)
{
	struct frame *f;

	if (t->depth == t->cap) {
		if ((f = realloc(t->st, (t->cap + 16) * 2 * sizeof *f)) == NULL)
			return -1;
		t->st = f;
		t->cap = (t->cap + 16) * 2;
	}
	t->st[t->depth++] = (struct frame){ bid, ts, 0 };
	return 0;
}

/* Closes the innermost open block of t at ts. */
static int
pop(struct stats *st, struct thr *t, uint64_t ts)
{
	struct frame *f = &t->st[--t->depth];
	uint64_t dur, excl;
	struct blk *b;
	double d;

	dur = ts > f->start ? ts - f->start : 0;
	excl = dur > f->child ? dur - f->child : 0;
	if (t->depth > 0) {
		f[-1].child = dur > UINT64_MAX - f[-1].child ? UINT64_MAX :
		    f[-1].child + dur;
	}
	if ((b = blk_get(st, f->bid)) == NULL)
		return -1;
	b->count++;
	d = (double)excl - b->mean;
	b->mean += d / (double)b->count;
	b->m2 += d * ((double)excl - b->mean);
	b->total = excl > UINT64_MAX - b->total ? UINT64_MAX : b->total + excl;
	return 0;
}

/*
 * Ends block bid.  An end that does not match the innermost block closes
 * the blocks above a matching one, each counted as unmatched; with no
 * matching block open it is counted and ignored.
 */
static int
block_end(struct stats *st, struct thr *t, int64_t bid, uint64_t ts)
{
	size_t i;

	for (i = t->depth; i > 0 && t->st[i - 1].bid != bid; i--)
		continue;
	if (i == 0) {
		st->unmatched++;
		return 0;
	}
	while (t->depth >= i) {
		if (t->depth > i)
			st->unmatched++;
		if (pop(st, t, ts) != 0)
			return -1;
	}
	return 0;
}

static int
block_name(struct stats *st, int64_t bid, const struct rec_field *f)
{
	struct blk *b;
	char *s;

	if ((b = blk_get(st, bid)) == NULL ||
	    (s = malloc(f->v.s.len + 1)) == NULL)
		return -1;
	memcpy(s, f->v.s.p, f->v.s.len);
	free(b->name);
	b->name = s;
	b->name_len = f->v.s.len;
	return 0;
}

static int
account(struct stats *st, const struct tape_ev *ev)
{
	uint64_t pk = (uint64_t)ev->node << 32 | ev->pid;
	struct thr *t;
	struct evc *e;
	int64_t bid;

	if (st->records == 0 || ev->ts < st->first)
		st->first = ev->ts;
	if (st->records == 0 || ev->ts > st->last)
		st->last = ev->ts;
	st->records++;
	if (map_get(&st->procs, pk, 0, 1) == NULL ||
	    (t = map_get(&st->thrs, pk, ev->tid, sizeof *t)) == NULL ||
	    (e = map_get(&st->evcs, (uint32_t)ev->eid, 0, sizeof *e)) == NULL)
		return -1;
	e->eid = ev->eid;
	e->count++;
	if (ev->eid < REC_EID_BLOCK_NAME || ev->eid > REC_EID_BLOCK_BEGIN ||
	    ev->n < 1 || ev->f[0].kind == REC_K_DOUBLE ||
	    ev->f[0].kind == REC_K_STR)
		return 0;
	bid = ev->f[0].v.i;
	switch (ev->eid) {
	case REC_EID_BLOCK_BEGIN:
		return push(t, bid, ev->ts);
	case REC_EID_BLOCK_END:
		return block_end(st, t, bid, ev->ts);
	default:
		if (ev->n < 2 || ev->f[1].kind != REC_K_STR)
			return 0;
		return block_name(st, bid, &ev->f[1]);
	}
}

/* Prints a name: printable ASCII as is, other bytes and '\' escaped. */
static void
put_name(const char *s, size_t n)
{
	unsigned char c;

	for (; n > 0; s++, n--) {
		c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f && c != '\\')
			putchar(c);
		else
			printf("\\x%02x", c);
	}
}

static const char *
secs(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%" PRIu64 ".%09" PRIu64, ns / 1000000000,
	    ns % 1000000000);
	return buf;
}

static int
by_count(const void *a, const void *b)
{
	const struct evc *x = *(const struct evc *const *)a;
	const struct evc *y = *(const struct evc *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->eid > y->eid) - (x->eid < y->eid);
}

static int
by_total(const void *a, const void *b)
{
	const struct blk *x = *(const struct blk *const *)a;
	const struct blk *y = *(const struct blk *const *)b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return (x->bid > y->bid) - (x->bid < y->bid);
}

static int
print_counts(const struct stats *st, const struct tape_r *r)
{
	const struct tape_def *def;
	const char *name;
	struct evc **e;
	size_t i;

	if ((e = (struct evc **)map_values(&st->evcs)) == NULL)
		return -1;
	qsort(e, st->evcs.n, sizeof *e, by_count);
	printf("\nevent counts (frequency counter)\n");
	printf("%11s %20s  %s\n", "eid", "count", "name");
	for (i = 0; i < st->evcs.n; i++) {
		def = tape_rdef(r, e[i]->eid);
		name = def == NULL ? "" : def->dsc[0] != '\0' ? def->dsc :
		    def->format;
		printf("%11" PRId32 " %20" PRIu64 "  ", e[i]->eid, e[i]->count);
		put_name(name, strlen(name));
		putchar('\n');
	}
	free(e);
	return 0;
}

static int
print_profile(const struct stats *st)
{
	struct blk **b;
	double sum = 0;
	char t[32];
	size_t i, n = 0;

	if ((b = (struct blk **)map_values(&st->blks)) == NULL)
		return -1;
	for (i = 0; i < st->blks.n; i++) {
		sum += (double)b[i]->total;
		if (b[i]->count > 0)
			b[n++] = b[i];
	}
	qsort(b, n, sizeof *b, by_total);
	printf("\ntime profile (exclusive time of blocks, seconds)\n");
	if (n == 0)
		printf("no closed blocks\n");
	else
		printf("%11s %12s %14s %14s %16s %7s  %s\n", "block",
		    "count", "mean", "variance(s^2)", "total", "%", "name");
	for (i = 0; i < n; i++) {
		printf("%11" PRId64 " %12" PRIu64 " %14.9f %14.6e %16s %7.2f  ",
		    b[i]->bid, b[i]->count, b[i]->mean / 1e9,
		    b[i]->m2 / (double)b[i]->count / 1e18,
		    secs(t, sizeof t, b[i]->total),
		    sum > 0 ? 100 * (double)b[i]->total / sum : 0.0);
		if (b[i]->name != NULL)
			put_name(b[i]->name, b[i]->name_len);
		else
			printf("block %" PRId64, b[i]->bid);
		putchar('\n');
	}
	if (st->unmatched > 0)
		printf("unmatched block events: %" PRIu64 "\n",
		    st->unmatched);
	if (st->unclosed > 0)
		printf("blocks still open at end of trace: %" PRIu64 "\n",
		    st->unclosed);
	free(b);
	return 0;
}

static void
print_header(const char *path, const struct stats *st,
	     const struct tape_r *r)
{
	uint64_t end;
	char t[32];

	printf("trace      %s\n", path);
	printf("records    %" PRIu64 "\n", st->records);
	printf("span       %s s\n", secs(t, sizeof t, st->last - st->first));
	printf("processes  %zu\n", st->procs.n);
	printf("threads    %zu\n", st->thrs.n);
	printf("losses     %" PRIu64 "\n", tape_rlosses(r));
	if (tape_rend(r, &end))
		printf("end        complete (#END %" PRIu64 ")\n", end);
	else
		printf("end        no #END line: the trace may be truncated\n");
}

int
pv_stats(const char *path)
{
	struct stats st;
	struct tape_ev ev;
	struct tape_r *r;
	size_t i;
	int rc;

	if ((r = pv_open(path)) == NULL)
		return 1;
	memset(&st, 0, sizeof st);
	while ((rc = tape_next(r, &ev)) == 1) {
		if (account(&st, &ev) != 0) {
			rc = -2;
			break;
		}
	}
	for (i = 0; i < st.thrs.cap; i++)
		if (st.thrs.s[i].v != NULL)
			st.unclosed += ((struct thr *)st.thrs.s[i].v)->depth;
	if (rc == 0) {
		print_header(path, &st, r);
		if (print_counts(&st, r) != 0 || print_profile(&st) != 0)
			rc = -2;
	}
	map_free(&st.thrs, thr_free);
	map_free(&st.procs, NULL);
	map_free(&st.evcs, NULL);
	map_free(&st.blks, blk_free);
	if (rc == -1)
		return pv_fail(path, r);
	tape_rclose(r);
	if (rc != 0) {
		fprintf(stderr, "prove: out of memory\n");
		return 1;
	}
	return pv_flush();
}
