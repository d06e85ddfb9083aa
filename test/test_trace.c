/* SPDX-License-Identifier: MIT */
/* test_trace.c: unit tests of the public trace reader, <grm/trace.h>:
 * every line type of every format through the writer and back, the
 * tables of hosts, processes and threads, seeking, malformed input and
 * misuse, and memory that does not grow with the records. */
#include <malloc.h>
#include <sys/stat.h>

#include "tape_test.h"

TestSuite(trace, .init = setup, .fini = teardown);

static const char *const fmt_names[] = { "text", "bin", "bee" };
static const int fmt_kind[] = { GRMTRACE_FMT_TEXT, GRMTRACE_FMT_BIN,
	GRMTRACE_FMT_BEE };

/* Writes one line of every type (doc/formats.md 1.3) and records. */
static void
write_all_kinds(const char *p, int fmt)
{
	struct rec_field f[2];
	struct tape_w *w;

	cr_assert_not_null(w = tape_open_fmt(p, fmt, "mm-1", 11, 22));
	cr_assert_eq(tape_host(w, 1, -5, 700, "alpha"), 0);
	cr_assert_eq(tape_tsc(w, &(struct tape_tsc){ 1, 1000, 2000,
	    1756341250, 15, 20000000, 1500 }), 0);
	cr_assert_eq(tape_sync(w, &(struct tape_sync){ 1, 30, -6, 7, 8, 9,
	    10, 1, 25, 20, 40, 100000000 }), 0);
	cr_assert_eq(tape_def(w, -6, 1, 4, "%d %s", 5, "process name", 12),
	    0);
	cr_assert_eq(tape_def(w, 5, 8, 2, "%d %p", 5, "five", 4), 0);
	cr_assert_eq(tape_def_scoped(w, 1, 100, 5, 8, 3, "%u", 2, "own", 3),
	    0);
	cr_assert_eq(tape_proc(w, 1, 100, 99, TAPE_PROC_START, 40, 0, "app"),
	    0);
	f[0] = fi(3);
	f[1] = fs("rank three", 10);
	cr_assert_eq(tape_record(w, 50, 1, 100, 101, -6, f, 2), 0);
	f[0] = fu(77);
	cr_assert_eq(tape_record(w, 60, 1, 100, 102, 5, f, 1), 0);
	f[0] = fi(-1);
	f[1] = fu(0xbeef);
	cr_assert_eq(tape_record(w, 70, 1, 200, 201, 5, f, 2), 0);
	cr_assert_eq(tape_loss(w, 1, 100, 101, 4, 75), 0);
	cr_assert_eq(tape_stats_count(w, 1, 100, 5, 12), 0);
	cr_assert_eq(tape_stats_range(w, 1, 100, -1, 9, 2, 30, 10, 20, 15.5,
	    50.25), 0);
	cr_assert_eq(tape_control(w, 80, "disable class 8", 15), 0);
	cr_assert_eq(tape_plan_add(w, 3, 81, "when loss do mark \"a b\"",
	    24), 0);
	cr_assert_eq(tape_plan_del(w, 3, 82), 0);
	cr_assert_eq(tape_collect(w, 1, 85), 0);
	cr_assert_eq(tape_order(w, 1, 2, 3, 4), 0);
	cr_assert_eq(tape_causal(w, 5, 6, 7, 8, 9), 0);
	cr_assert_eq(tape_givenup(w, 1, 86, "silent"), 0);
	cr_assert_eq(tape_late(w, 1, 7), 0);
	cr_assert_eq(tape_missing(w, 1, 87, 65536, 100, 1), 0);
	cr_assert_eq(tape_proc(w, 1, 100, 99, TAPE_PROC_KILLED, 90, 9, "app"),
	    0);
	cr_assert_eq(tape_close(w), 0);
}

/* The field of ev named name. */
static const struct grmtrace_field *
field(const struct grmtrace_ev *ev, const char *name)
{
	const char *n;
	unsigned i;

	for (i = 0; i < ev->n; i++)
		if ((n = grmtrace_field_name(ev->kind, i)) != NULL &&
		    strcmp(n, name) == 0)
			return &ev->f[i];
	cr_assert_fail("%s has no field %s", grmtrace_kind_name(ev->kind),
	    name);
	return NULL;
}

static uint64_t
fu_of(const struct grmtrace_ev *ev, const char *name)
{
	const struct grmtrace_field *f = field(ev, name);

	cr_assert_eq(f->type, GRMTRACE_UINT, "%s", name);
	return f->v.u;
}

static int64_t
fi_of(const struct grmtrace_ev *ev, const char *name)
{
	const struct grmtrace_field *f = field(ev, name);

	cr_assert_eq(f->type, GRMTRACE_INT, "%s", name);
	return f->v.i;
}

static const char *
fs_of(const struct grmtrace_ev *ev, const char *name)
{
	const struct grmtrace_field *f = field(ev, name);

	cr_assert_eq(f->type, GRMTRACE_STRING, "%s", name);
	cr_assert_eq(f->v.s.p[f->v.s.len], '\0');
	return f->v.s.p;
}

/* The next event, which must be of kind k. */
static const struct grmtrace_ev *
next_kind(struct grmtrace *t, int k)
{
	const struct grmtrace_ev *ev;

	cr_assert_eq(grmtrace_next(t, &ev), 1, "%s", grmtrace_error(t));
	cr_assert_eq(ev->kind, k, "got %s, want %s",
	    grmtrace_kind_name(ev->kind), grmtrace_kind_name(k));
	return ev;
}

static void
read_all_kinds(int fmt)
{
	const char *p = path("all"), *why;
	const struct grmtrace_ev *ev;
	const struct grmtrace_proc *pr;
	const struct grmtrace_host *h;
	struct grmtrace *t;
	uint64_t end;

	write_all_kinds(p, fmt);
	cr_assert_not_null(t = grmtrace_open(p, NULL, 0));
	(void)why;
	cr_assert_eq(grmtrace_format(t), fmt_kind[fmt], "%s", fmt_names[fmt]);
	ev = next_kind(t, GRMTRACE_MM);
	cr_assert_str_eq(ev->str, "mm-1");
	cr_assert_str_eq(fs_of(ev, "id"), "mm-1");
	ev = next_kind(t, GRMTRACE_CLOCK);
	cr_assert(fu_of(ev, "realtime_ns") == 11 &&
	    fu_of(ev, "monotonic_ns") == 22);
	ev = next_kind(t, GRMTRACE_HOST);
	cr_assert(ev->node == 1 && fi_of(ev, "offset_ns") == -5 &&
	    fu_of(ev, "lm_pid") == 700);
	cr_assert_str_eq(fs_of(ev, "hostname"), "alpha");
	ev = next_kind(t, GRMTRACE_TSC);
	cr_assert(ev->node == 1 && fu_of(ev, "tick0") == 1000 &&
	    fu_of(ev, "ns0") == 2000 && fu_of(ev, "mult") == 1756341250 &&
	    fu_of(ev, "error_ns") == 15 && fu_of(ev, "span_ns") == 20000000 &&
	    fu_of(ev, "rate_ppb") == 1500);
	cr_assert_str_eq(grmtrace_kind_name(ev->kind), "#TSC");
	ev = next_kind(t, GRMTRACE_SYNC);
	cr_assert(ev->node == 1 && ev->ts == 30 && fu_of(ev, "at_ns") == 30 &&
	    fi_of(ev, "offset_ns") == -6 && fi_of(ev, "drift_ppb") == 7 &&
	    fu_of(ev, "error_ns") == 8 && fu_of(ev, "rtt_ns") == 9 &&
	    fu_of(ev, "samples") == 10);
	cr_assert(fu_of(ev, "model") == 1 && fu_of(ev, "from_ns") == 25 &&
	    fu_of(ev, "lo_ns") == 20 && fu_of(ev, "hi_ns") == 40 &&
	    fu_of(ev, "allow_ppb") == 100000000);
	cr_assert_not_null(h = grmtrace_host(t, 1));
	cr_assert(h->synced && h->sync_offset_ns == -6 && h->lm_pid == 700 &&
	    h->offset_ns == -5 && h->connections == 1 && h->samples == 10);
	cr_assert(h->model == 1 && h->from_ns == 25 && h->lo_ns == 20 &&
	    h->hi_ns == 40 && h->allow_ppb == 100000000);
	cr_assert_str_eq(h->hostname, "alpha");
	ev = next_kind(t, GRMTRACE_DEF);
	cr_assert(ev->eid == -6 && ev->def != NULL && ev->def->eid == -6);
	ev = next_kind(t, GRMTRACE_DEF);
	cr_assert(ev->eid == 5 && ev->node == 0 && ev->def->nfields == 2 &&
	    ev->def->conv[1] == 'p' && ev->def->type[1] == GRMTRACE_UINT);
	cr_assert_str_eq(fs_of(ev, "format"), "%d %p");
	cr_assert_str_eq(ev->def->description, "five");
	ev = next_kind(t, GRMTRACE_DEF);
	cr_assert(ev->eid == 5 && ev->node == 1 && ev->pid == 100 &&
	    ev->def->node == 1 && ev->def->attr == 3 &&
	    fu_of(ev, "node") == 1 && fu_of(ev, "pid") == 100);
	ev = next_kind(t, GRMTRACE_PROC);
	cr_assert(ev->node == 1 && ev->pid == 100 && ev->ppid == 99 &&
	    ev->how == GRMTRACE_PROC_START && ev->ts == 40);
	cr_assert_str_eq(ev->str, "app");
	cr_assert_str_eq(fs_of(ev, "how"), "start");
	ev = next_kind(t, GRMTRACE_RECORD);
	cr_assert(ev->eid == -6 && ev->ts == 50 && ev->tid == 101 &&
	    ev->n == 2 && ev->f[0].v.i == 3);
	/* Its clock bound: 8 ns, and 10% of its 10 ns past the samples. */
	cr_assert(ev->sync_model == 1 && ev->bound_ns == 9);
	cr_assert_str_eq(ev->f[1].v.s.p, "rank three");
	ev = next_kind(t, GRMTRACE_RECORD);
	cr_assert(ev->eid == 5 && ev->n == 1 && ev->def->node == 1 &&
	    ev->f[0].type == GRMTRACE_UINT && ev->f[0].v.u == 77);
	ev = next_kind(t, GRMTRACE_RECORD);
	cr_assert(ev->eid == 5 && ev->pid == 200 && ev->n == 2 &&
	    ev->def->node == 0 && ev->f[1].v.u == 0xbeef);
	cr_assert(ev->sync_model == 1 && ev->bound_ns == 11);
	ev = next_kind(t, GRMTRACE_LOSS);
	cr_assert(ev->node == 1 && ev->pid == 100 && ev->tid == 101 &&
	    ev->count == 4 && ev->ts == 75);
	ev = next_kind(t, GRMTRACE_STATS_COUNT);
	cr_assert(ev->eid == 5 && ev->count == 12 && ev->def != NULL &&
	    ev->def->node == 1);
	cr_assert_str_eq(fs_of(ev, "kind"), "count");
	ev = next_kind(t, GRMTRACE_STATS_RANGE);
	cr_assert(ev->eid == -1 && ev->count == 2 && fi_of(ev, "key") == 9 &&
	    fu_of(ev, "total_ns") == 30 && fu_of(ev, "min_ns") == 10 &&
	    fu_of(ev, "max_ns") == 20 && field(ev, "mean_ns")->v.d == 15.5 &&
	    field(ev, "m2")->v.d == 50.25);
	ev = next_kind(t, GRMTRACE_CONTROL);
	cr_assert(ev->ts == 80 && ev->str_len == 15);
	cr_assert_str_eq(ev->str, "disable class 8");
	ev = next_kind(t, GRMTRACE_PLAN_ADD);
	cr_assert(ev->count == 3 && ev->ts == 81 && ev->str_len == 24 &&
	    fu_of(ev, "n") == 3 && fu_of(ev, "ts") == 81);
	cr_assert_str_eq(ev->str, "when loss do mark \"a b\"");
	cr_assert_str_eq(fs_of(ev, "what"), "add");
	cr_assert_str_eq(fs_of(ev, "rule"), "when loss do mark \"a b\"");
	cr_assert_str_eq(grmtrace_kind_name(ev->kind), "#PLAN");
	ev = next_kind(t, GRMTRACE_PLAN_DEL);
	cr_assert(ev->count == 3 && ev->ts == 82 && ev->n == 3);
	cr_assert_str_eq(fs_of(ev, "what"), "del");
	ev = next_kind(t, GRMTRACE_COLLECT);
	cr_assert(ev->count == 1 && ev->ts == 85 && ev->records == 3);
	ev = next_kind(t, GRMTRACE_ORDER);
	cr_assert(fu_of(ev, "late") == 1 && fu_of(ev, "held_max") == 4);
	ev = next_kind(t, GRMTRACE_CAUSAL);
	cr_assert(fu_of(ev, "matched") == 5 && fu_of(ev, "unchecked") == 8 &&
	    fu_of(ev, "beyond") == 9);
	ev = next_kind(t, GRMTRACE_GIVENUP);
	cr_assert(ev->node == 1 && ev->ts == 86 && ev->str_len == 6);
	cr_assert_str_eq(ev->str, "silent");
	ev = next_kind(t, GRMTRACE_LATE);
	cr_assert(ev->node == 1 && ev->count == 7);
	ev = next_kind(t, GRMTRACE_MISSING);
	cr_assert(ev->node == 1 && ev->ts == 87 &&
	    fu_of(ev, "held_bytes") == 65536 &&
	    fu_of(ev, "spilled_bytes") == 100 && fu_of(ev, "known") == 1);
	ev = next_kind(t, GRMTRACE_PROC);
	cr_assert(ev->how == GRMTRACE_PROC_KILLED && ev->status == 9);
	ev = next_kind(t, GRMTRACE_END);
	cr_assert_eq(ev->records, 3);
	cr_assert_eq(grmtrace_next(t, &ev), 0, "%s", grmtrace_error(t));

	/* What was kept. */
	cr_assert(grmtrace_ended(t, &end) == 1 && end == 3);
	cr_assert_eq(grmtrace_losses(t), 4);
	cr_assert_eq(grmtrace_records(t), 3);
	cr_assert_eq(grmtrace_ndefs(t), 3);
	cr_assert_eq(grmtrace_def_at(t, 2)->node, 1);
	cr_assert_null(grmtrace_def_at(t, 3));
	cr_assert_eq(grmtrace_def_for(t, 1, 100, 5)->attr, 3);
	cr_assert_eq(grmtrace_def_for(t, 1, 200, 5)->attr, 2);
	cr_assert_eq(grmtrace_def(t, 5)->node, 0);
	cr_assert_null(grmtrace_def(t, 6));
	cr_assert_eq(grmtrace_nhosts(t), 1);
	cr_assert_eq(grmtrace_nprocs(t), 2);
	cr_assert_not_null(pr = grmtrace_proc(t, 1, 100));
	cr_assert(pr->started && pr->start_ts == 40 && pr->ended &&
	    pr->how == GRMTRACE_PROC_KILLED && pr->status == 9 &&
	    pr->end_ts == 90 && pr->ppid == 99 && pr->has_rank &&
	    pr->rank == 3 && pr->records == 2 && pr->threads == 2);
	cr_assert_str_eq(pr->name, "app");
	cr_assert_str_eq(pr->rank_name, "rank three");
	pr = grmtrace_proc(t, 1, 200);
	cr_assert(pr != NULL && !pr->started && pr->records == 1);
	cr_assert_str_eq(pr->name, "");
	cr_assert_eq(grmtrace_nthreads(t), 3);
	cr_assert_eq(grmtrace_thread_at(t, 0)->tid, 101);
	cr_assert(grmtrace_thread(t, 1, 100, 102)->first_ts == 60 &&
	    grmtrace_thread(t, 1, 100, 102)->records == 1);
	cr_assert_null(grmtrace_thread(t, 1, 100, 103));
	grmtrace_close(t);
}

Test(trace, every_kind_text)
{
	read_all_kinds(TAPE_FMT_TAPE);
}

Test(trace, every_kind_bin)
{
	read_all_kinds(TAPE_FMT_BIN);
}

Test(trace, every_kind_bee)
{
	read_all_kinds(TAPE_FMT_BEE);
}

/* Selected kinds only; the tables are kept all the same. */
Test(trace, select)
{
	const char *p = path("sel");
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	unsigned n = 0;

	write_all_kinds(p, TAPE_FMT_TAPE);
	cr_assert_not_null(t = grmtrace_open(p, NULL, 0));
	cr_assert_eq(grmtrace_select(t, GRMTRACE_WANT(GRMTRACE_LOSS)), 0);
	while (grmtrace_next(t, &ev) == 1) {
		cr_assert(ev->kind == GRMTRACE_RECORD ||
		    ev->kind == GRMTRACE_LOSS);
		n++;
	}
	cr_assert_eq(n, 4);
	cr_assert_not_null(grmtrace_host(t, 1));
	cr_assert_eq(grmtrace_proc(t, 1, 100)->how, GRMTRACE_PROC_KILLED);
	errno = 0;
	cr_assert_eq(grmtrace_select(t, 1u << GRMTRACE_NKINDS), -1);
	cr_assert_eq(errno, EINVAL);
	grmtrace_close(t);
}

/* Collection phases: records -7 and -8 of process 0 of a node; two Local
 * Monitors of one node overlap into one phase. */
Test(trace, phases)
{
	const char *p = path("ph");
	const struct grmtrace_ev *ev;
	const struct grmtrace_host *h;
	struct rec_field b[4] = { fu(1), fu(2), fu(0), fu(50) };
	struct rec_field e[3] = { fu(1), fu(2), fu(0) };
	struct grmtrace *t;
	struct tape_w *w;

	cr_assert_not_null(w = tape_open_fmt(p, TAPE_FMT_TAPE, "m", 0, 0));
	cr_assert_eq(tape_def(w, -7, 1, 0, "%u %u %u %lu", 12, "", 0), 0);
	cr_assert_eq(tape_def(w, -8, 1, 1, "%u %u %u", 8, "", 0), 0);
	cr_assert_eq(tape_host(w, 2, 0, 9, "b"), 0);
	cr_assert_eq(tape_record(w, 100, 2, 0, 0, -7, b, 4), 0);
	cr_assert_eq(tape_record(w, 130, 2, 0, 0, -8, e, 3), 0);
	cr_assert_eq(tape_record(w, 200, 2, 0, 0, -7, b, 4), 0);
	cr_assert_eq(tape_record(w, 210, 2, 0, 0, -7, b, 4), 0);
	cr_assert_eq(tape_record(w, 250, 2, 0, 0, -8, e, 3), 0);
	cr_assert_eq(tape_record(w, 260, 2, 0, 0, -8, e, 3), 0);
	cr_assert_eq(tape_record(w, 300, 3, 0, 0, -7, b, 4), 0);
	cr_assert_eq(tape_close(w), 0);
	cr_assert_not_null(t = grmtrace_open(p, NULL, 0));
	while (grmtrace_next(t, &ev) == 1)
		;
	cr_assert_not_null(h = grmtrace_host(t, 2));
	cr_assert_eq(h->phases, 3);
	cr_assert_eq(h->stopped_ns, 30 + 60);
	cr_assert_not_null(h = grmtrace_host(t, 3), "a node seen in phases");
	cr_assert(h->phases == 1 && h->stopped_ns == 0 && h->connections == 0);
	cr_assert_str_eq(h->hostname, "");
	grmtrace_close(t);
}

/* ---- seeking ---- */

#define SEEK_N	20000

/* SEEK_N records, ts 1000 + 10 i, with a #DEF and a #HOST in the middle
 * (seeking past them keeps them), as records or pieces. */
static void
write_seq(const char *p, int fmt, int pieces)
{
	static unsigned char buf[64 * 1024];
	struct rec_field f[1];
	struct tape_w *w;
	size_t len = 0;
	unsigned i;

	cr_assert_not_null(w = tape_open_fmt(p, fmt, "m", 0, 0));
	cr_assert_eq(tape_def(w, 1, 8, 2, "%lu", 3, "n", 1), 0);
	for (i = 0; i < SEEK_N; i++) {
		if (i == SEEK_N / 2) {
			if (len > 0)
				cr_assert_eq(tape_piece(w, 1, 2, 3, buf, len),
				    0);
			len = 0;
			cr_assert_eq(tape_host(w, 7, 0, 1, "late"), 0);
			cr_assert_eq(tape_def(w, 2, 8, 2, "%s", 2, "", 0), 0);
		}
		if (!pieces) {
			f[0] = fu(i);
			cr_assert_eq(tape_record(w, 1000 + 10 * (uint64_t)i,
			    1, 2, 3, 1, f, 1), 0);
			continue;
		}
		rec_put_hdr(buf + len, 24, 8, 2, 1, 1000 + 10 * (uint64_t)i);
		memcpy(buf + len + 16, &(uint64_t){ i }, 8);
		len += 24;
		if (len + 24 > sizeof buf || i % 1000 == 999) {
			cr_assert_eq(tape_piece(w, 1, 2, 3, buf, len), 0);
			len = 0;
		}
	}
	if (len > 0)
		cr_assert_eq(tape_piece(w, 1, 2, 3, buf, len), 0);
	cr_assert_eq(tape_close(w), 0);
}

/* Seeks to ts; the next record must be the first at or after it. */
static void
seek_to(struct grmtrace *t, uint64_t ts)
{
	const struct grmtrace_ev *ev;
	uint64_t want = ts <= 1000 ? 0 : (ts - 1000 + 9) / 10;

	if (want >= SEEK_N) {
		cr_assert_eq(grmtrace_seek(t, ts), 0, "%s", grmtrace_error(t));
		cr_assert_eq(grmtrace_next(t, &ev), 0);
		return;
	}
	cr_assert_eq(grmtrace_seek(t, ts), 1, "%s", grmtrace_error(t));
	cr_assert_eq(grmtrace_next(t, &ev), 1, "%s", grmtrace_error(t));
	cr_assert_eq(ev->kind, GRMTRACE_RECORD);
	cr_assert_eq(ev->ts, 1000 + 10 * want, "seek %llu: at %llu",
	    (unsigned long long)ts, (unsigned long long)ev->ts);
	cr_assert_eq(ev->f[0].v.u, want);
	/* What comes before the place is known. */
	cr_assert_not_null(grmtrace_def(t, 1));
	if (want > SEEK_N / 2) {
		cr_assert_not_null(grmtrace_host(t, 7));
		cr_assert_not_null(grmtrace_def(t, 2));
	}
	/* And reading goes on from there. */
	if (want + 1 == SEEK_N) {
		cr_assert_eq(grmtrace_next(t, &ev), 0);
		return;
	}
	cr_assert_eq(grmtrace_next(t, &ev), 1);
	cr_assert_eq(ev->ts, 1000 + 10 * (want + 1));
}

static void
seeks(int fmt, int pieces)
{
	static const uint64_t at[] = { 0, 1000, 1001, 1010, 55555, 101000,
	    100995, 100990, 150007, 1000 + 10 * (SEEK_N - 1), 7000,
	    1000 + 10 * SEEK_N, UINT64_MAX, 3 };
	const char *p = path("seq");
	struct grmtrace *t;
	size_t i;

	write_seq(p, fmt, pieces);
	cr_assert_not_null(t = grmtrace_open(p, NULL, 0));
	cr_assert_eq(grmtrace_select(t, 0), 0);
	for (i = 0; i < sizeof at / sizeof at[0]; i++)
		seek_to(t, at[i]);
	grmtrace_close(t);
}

Test(trace, seek_text)
{
	seeks(TAPE_FMT_TAPE, 0);
}

Test(trace, seek_bee)
{
	seeks(TAPE_FMT_BEE, 0);
}

Test(trace, seek_bin_records)
{
	seeks(TAPE_FMT_BIN, 0);
}

Test(trace, seek_bin_pieces)
{
	seeks(TAPE_FMT_BIN, 1);
}

/* A seek in a binary file cut short past the place it looks at still
 * finds what comes first, and says where the file is cut. */
Test(trace, seek_bin_truncated)
{
	const char *p = path("seq");
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	FILE *f;
	long size;

	write_seq(p, TAPE_FMT_BIN, 1);
	cr_assert_not_null(f = fopen(p, "r+"));
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	cr_assert_eq(ftruncate(fileno(f), size - 100), 0);
	fclose(f);
	cr_assert_not_null(t = grmtrace_open(p, NULL, 0));
	cr_assert_eq(grmtrace_seek(t, 1000 + 10 * 17), 1);
	cr_assert_eq(grmtrace_next(t, &ev), 1);
	cr_assert_eq(ev->f[0].v.u, 17);
	cr_assert_null(grmtrace_warning(t));
	cr_assert_eq(grmtrace_seek(t, 1000 + 10 * (SEEK_N - 1)), 0);
	cr_assert_not_null(grmtrace_warning(t));
	cr_assert_not_null(strstr(grmtrace_warning(t), "cut short"), "%s",
	    grmtrace_warning(t));
	cr_assert_eq(grmtrace_next(t, &ev), 0, "the end");
	grmtrace_close(t);
}

/* ---- files cut short: a writer that stopped, a full disk ---- */

#define CUT_N	6

/* Writes a trace of CUT_N records (strings, of several lengths, and a
 * piece in the binary format) and returns its bytes; end[i] is the file's
 * size once record i is in it (each goes out at once), end[CUT_N] with
 * the closing lines. */
static char *
write_cut(const char *p, int fmt, size_t end[CUT_N + 1])
{
	unsigned char rec[48];
	struct rec_field f[2];
	struct tape_w *w;
	struct stat sb;
	char *data;
	FILE *in;
	unsigned i;

	cr_assert_not_null(w = tape_open_fmt(p, fmt, "m", 0, 0));
	cr_assert_eq(tape_def(w, 1, 8, 2, "%lu %s", 6, "n", 1), 0);
	cr_assert_eq(tape_def(w, 2, 8, 2, "%lu", 3, "p", 1), 0);
	for (i = 0; i < CUT_N; i++) {
		if (fmt == TAPE_FMT_BIN && i == CUT_N - 2) {
			rec_put_hdr(rec, 24, 8, 2, 2, 100 + (uint64_t)i);
			memcpy(rec + 16, &(uint64_t){ i }, 8);
			rec_put_hdr(rec + 24, 24, 8, 2, 2, 101 + (uint64_t)i);
			memcpy(rec + 40, &(uint64_t){ i }, 8);
			cr_assert_eq(tape_piece(w, 1, 2, 3, rec, 48), 0);
		} else {
			f[0] = fu(i);
			f[1] = fs("a string (\"quoted\")", 4 + 3 * i);
			cr_assert_eq(tape_record(w, 100 + (uint64_t)i, 1, 2,
			    3, 1, f, 2), 0);
		}
		cr_assert_eq(tape_write_out(w), 0);
		cr_assert_eq(stat(p, &sb), 0);
		end[i] = (size_t)sb.st_size;
	}
	cr_assert_eq(tape_close(w), 0);
	cr_assert_eq(stat(p, &sb), 0);
	end[CUT_N] = (size_t)sb.st_size;
	cr_assert_not_null(data = malloc(end[CUT_N]));
	cr_assert_not_null(in = fopen(p, "r"));
	cr_assert_eq(fread(data, 1, end[CUT_N], in), end[CUT_N]);
	fclose(in);
	return data;
}

/* Reads a..a+alen then b..b+blen as one file: the result of the last
 * grmtrace_next, the records read (a piece's records count one each),
 * and the warning. */
static int
read_cut(const char *a, size_t alen, const char *b, size_t blen,
	 unsigned *nrec, const char **warn)
{
	static char wbuf[256];
	const struct grmtrace_ev *ev;
	const char *p = path("cut");
	struct grmtrace *t;
	FILE *f;
	int rc;

	cr_assert_not_null(f = fopen(p, "w"));
	cr_assert_eq(fwrite(a, 1, alen, f), alen);
	cr_assert_eq(fwrite(b, 1, blen, f), blen);
	cr_assert_eq(fclose(f), 0);
	cr_assert_not_null(t = grmtrace_open(p, NULL, 0));
	*nrec = 0;
	while ((rc = grmtrace_next(t, &ev)) == 1)
		*nrec += ev->kind == GRMTRACE_RECORD;
	snprintf(wbuf, sizeof wbuf, "%s", grmtrace_warning(t) != NULL ?
	    grmtrace_warning(t) : "");
	*warn = wbuf;
	grmtrace_close(t);
	return rc;
}

/* The records in the first m record lines or frames (the binary piece
 * holds two). */
static unsigned
cut_records(unsigned fmt, unsigned m)
{
	return m + (fmt == TAPE_FMT_BIN && m > CUT_N - 2);
}

/* A file cut inside its last record line or frame (at several places,
 * in its header's bytes too) is read up to it, with a warning; cut
 * between two, it is whole.  A record cut short with others after it is
 * an error (where the rest cannot be taken for fields: cut in its middle,
 * or just before its end). */
Test(trace, cut_short)
{
	size_t end[CUT_N + 1], at, len;
	const char *warn;
	unsigned fmt, k, n, d;
	char *data;
	int rc;

	for (fmt = 0; fmt < 3; fmt++) {
		data = write_cut(path("full"), (int)fmt, end);
		rc = read_cut(data, end[CUT_N], "", 0, &n, &warn);
		cr_assert_eq(rc, 0);
		cr_assert_eq(n, cut_records(fmt, CUT_N));
		cr_assert_str_empty(warn, "%s: %s", fmt_names[fmt], warn);
		for (k = 1; k < CUT_N; k++) {
			len = end[k] - end[k - 1];
			rc = read_cut(data, end[k], "", 0, &n, &warn);
			cr_assert_eq(rc, 0);
			cr_assert_eq(n, cut_records(fmt, k + 1),
			    "%s: up to %u: %u records", fmt_names[fmt], k, n);
			cr_assert_str_empty(warn, "%s: %s", fmt_names[fmt],
			    warn);
			for (d = 1; d < len; d += d < 6 ? 1 : len / 4) {
				at = end[k - 1] + d;
				rc = read_cut(data, at, "", 0, &n, &warn);
				cr_assert_eq(rc, 0, "%s: cut in %u at +%u",
				    fmt_names[fmt], k, d);
				cr_assert_eq(n, cut_records(fmt, k),
				    "%s: cut in %u at +%u: %u records",
				    fmt_names[fmt], k, d, n);
				cr_assert_not_null(strstr(warn, "cut short"),
				    "%s: cut in %u at +%u: [%s]",
				    fmt_names[fmt], k, d, warn);
			}
			/* Cut, and the records after it (more than the
			 * closing line a frame's length may take in). */
			for (d = (unsigned)len / 2; k < CUT_N - 1 && d < len;
			    d += d < len - 1 ?
			    (unsigned)(len - 1 - d) : 1) {
				at = end[k - 1] + d;
				rc = read_cut(data, at, data + end[k],
				    end[CUT_N] - end[k], &n, &warn);
				cr_assert_eq(rc, -1, "%s: cut in %u at +%u, "
				    "then the rest: %d (%u records) [%s]",
				    fmt_names[fmt], k, d, rc, n, warn);
			}
		}
		free(data);
	}
}

/* ---- malformed input and misuse ---- */

static void
bad_file(const char *text, size_t len, const char *reason)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	char err[256];
	int rc;

	t = grmtrace_open(put_file(text, len), err, sizeof err);
	if (t == NULL) {
		cr_assert_not_null(strstr(err, reason), "%s", err);
		cr_assert_eq(errno, EILSEQ);
		return;
	}
	while ((rc = grmtrace_next(t, &ev)) == 1)
		;
	cr_assert_eq(rc, -1, "[%s] read to its end", text);
	cr_assert_eq(errno, EILSEQ);
	cr_assert_not_null(strstr(grmtrace_error(t), reason), "%s",
	    grmtrace_error(t));
	cr_assert_eq(grmtrace_next(t, &ev), -1);
	grmtrace_close(t);
}

/* Which model converted a record, and its bound, from the record's time;
 * a file without model numbers; a rotated trace's repeated models. */
Test(trace, clock_models)
{
	static const char text[] = "#GRM-TRACE 2\n"
	    "#HOST 1 0 7 a\n"
	    "#HOST 2 0 8 b\n"
	    "#SYNC 2 5 0 0 300 600 1\n"
	    "#SYNC 1 1000 0 0 100 200 1 1 1 1000 1000 500000\n"
	    "#DEF 5 1 2 \"%d\" \"e\"\n"
	    "1500 1 9 9 5 1\n"
	    "#SYNC 1 2000 0 0 50 200 2 2 3000 1000 2500 20000\n"
	    "2999 1 9 9 5 2\n"
	    "3000 2 9 9 5 3\n"
	    "3000 1 9 9 5 4\n"
	    "#SYNC 1 1000 0 0 100 200 1 1 1 1000 1000 500000\n"
	    "1000000003500 1 9 9 5 5\n"
	    "7 3 9 9 5 6\n";
	static const uint32_t model[] = { 1, 1, 0, 2, 2, 0 };
	static const uint64_t bound[] = { 101, 101, 300, 51, 20000051, 0 };
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	int i;

	cr_assert_not_null(t = grmtrace_open(put_file(text, sizeof text - 1),
	    NULL, 0));
	cr_assert_eq(grmtrace_select(t, GRMTRACE_WANT(GRMTRACE_RECORD)), 0);
	for (i = 0; i < 6; i++) {
		cr_assert_eq(grmtrace_next(t, &ev), 1);
		cr_assert(ev->f[0].v.i == i + 1 && ev->sync_model == model[i] &&
		    ev->bound_ns == bound[i], "record %d: model %u bound %llu",
		    i + 1, ev->sync_model, (unsigned long long)ev->bound_ns);
	}
	cr_assert_eq(grmtrace_next(t, &ev), 0);
	grmtrace_close(t);
	bad_file("#GRM-TRACE 2\n#SYNC 1 2 3 4 5 6 7 8 9\n", 37,
	    "line 2: #SYNC: 9 fields of 7 or 12");
}

/* A #CLOCKSTEP widens by |step| the bound of its host's records where
 * records stamped around the step can lie on mainmon's clock
 * (doc/formats.md): [ts - S - max(step, 0) - m, ts + max(-step, 0) + m],
 * S = host_hi - host_lo, m = S / 2000 + 1 ms; not before the window,
 * after it, or on another host; the larger of two steps where windows
 * meet; a line whose host_lo exceeds host_hi is ignored. */
Test(trace, clock_steps)
{
	static const char text[] = "#GRM-TRACE 2\n"
	    "#HOST 1 0 7 a\n"
	    "#HOST 2 0 8 b\n"
	    "#SYNC 1 1000 0 0 100 200 1 1 1 0 100000000 0\n"
	    "#SYNC 2 1000 0 0 70 200 1 1 1 0 100000000 0\n"
	    "#DEF 5 1 2 \"%d\" \"e\"\n"
	    "6999000 1 9 9 5 1\n"
	    /* paused 0.5 ms: S 2 ms, m 1.001 ms: [6999000, 11501000] */
	    "#CLOCKSTEP 1 10000000 -500000 1000000 3000000\n"
	    "6998999 1 9 9 5 2\n"
	    "6999000 1 9 9 5 3\n"
	    "8000000 2 9 9 5 4\n"
	    "11501000 1 9 9 5 5\n"
	    "11501001 1 9 9 5 6\n"
	    /* ahead 10 ms: S 1 ms, m 1.0005 ms: [17999500, 31000500];
	     * then paused 2 us: S 0, m 1 ms: [30000000, 32002000] */
	    "#CLOCKSTEP 1 30000000 10000000 4000000 5000000\n"
	    "#CLOCKSTEP 1 31000000 -2000 6000000 6000000\n"
	    "17999499 1 9 9 5 7\n"
	    "17999500 1 9 9 5 8\n"
	    "31000500 1 9 9 5 9\n"
	    "31000501 1 9 9 5 10\n"
	    "#CLOCKSTEP 1 40000000 5 30000000 1\n"
	    "40000000 1 9 9 5 11\n";
	static const uint64_t bound[] = { 100, 100, 500100, 70, 500100, 100,
	    100, 10000100, 10000100, 2100, 100 };
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	int i;

	cr_assert_not_null(t = grmtrace_open(put_file(text, sizeof text - 1),
	    NULL, 0));
	cr_assert_eq(grmtrace_select(t, GRMTRACE_WANT(GRMTRACE_RECORD) |
	    GRMTRACE_WANT(GRMTRACE_CLOCKSTEP)), 0);
	for (i = 0; i < 11; i++) {
		do
			cr_assert_eq(grmtrace_next(t, &ev), 1, "%s",
			    grmtrace_error(t));
		while (ev->kind == GRMTRACE_CLOCKSTEP);
		cr_assert(ev->f[0].v.i == i + 1 && ev->bound_ns == bound[i],
		    "record %d: bound %llu, want %llu", (int)ev->f[0].v.i,
		    (unsigned long long)ev->bound_ns,
		    (unsigned long long)bound[i]);
	}
	cr_assert_eq(grmtrace_next(t, &ev), 0);
	grmtrace_close(t);
}

/* #CAUSAL before its count of violations beyond the bounds: still read,
 * without the field; with it, the field by its name. */
Test(trace, causal_without_beyond)
{
	static const char text[] = "#GRM-TRACE 2\n"
	    "#CAUSAL 5 6 7 8\n"
	    "#CAUSAL 5 6 7 8 2\n";
	const struct grmtrace_ev *ev;
	struct grmtrace *t;

	cr_assert_not_null(t = grmtrace_open(put_file(text, sizeof text - 1),
	    NULL, 0));
	cr_assert_eq(grmtrace_select(t, GRMTRACE_WANT(GRMTRACE_CAUSAL)), 0);
	cr_assert_eq(grmtrace_next(t, &ev), 1);
	cr_assert(ev->n == 4 && fu_of(ev, "unchecked") == 8);
	cr_assert_eq(grmtrace_next(t, &ev), 1);
	cr_assert(ev->n == 5 && fu_of(ev, "beyond") == 2);
	cr_assert_eq(grmtrace_next(t, &ev), 0);
	grmtrace_close(t);
	/* There, it is a number. */
	bad_file("#GRM-TRACE 2\n#CAUSAL 1 2 3 4 x\n", 31, "line 2: #CAUSAL:");
}

Test(trace, malformed)
{
	static const char bin[] = "\x89GRMBIN\n\x14\0\0\0L\x0a\0#GRM-TRACE"
	    "\x02\0\0\0\0\0\0\0" "\xff\xff\0\0P";

	bad_file("", 0, "empty file");
	bad_file("hello\n", 6, "not a grm trace");
	bad_file("#GRM-TRACE 9\n", 13, "unsupported trace version");
	bad_file("#GRM-TRACE 2\n1 1 1 1 5\n", 23,
	    "line 2: record before definition of eid 5");
	bad_file("#GRM-TRACE 2\n#HOST 1 2\n", 23, "line 2: #HOST: missing");
	bad_file("#GRM-TRACE 2\n#SYNC 1 2 x 4 5 6 7\n", 33,
	    "line 2: #SYNC: bad number");
	bad_file("#GRM-TRACE 2\n#DEF 1 8 2 \"%n\" \"\"\n", 32,
	    "line 2: #DEF 1: bad format");
	bad_file("(GRM-BEE-1 0)\n(1 (5 8 2 0 1 2 3 0.5 1))\n", 40,
	    "line 2: record before definition of eid 5");
	bad_file("(GRM-BEE-7 0)\n", 14, "unsupported grm BEE Ascii version");
	bad_file(bin, sizeof bin - 1, "line 2: frame of 65535 bytes");
}

Test(trace, predef_names_every_predefined_type_without_a_file)
{
	const struct grmtrace_def *d;

	cr_assert_null(grmtrace_predef(0));
	cr_assert_null(grmtrace_predef(GRMTRACE_EID_COLL_END - 1));
	d = grmtrace_predef(GRMTRACE_EID_BLOCK_BEGIN);
	cr_assert_not_null(d);
	cr_assert_eq(d->eid, -1);
	cr_assert_str_eq(d->description, "block begin");
	cr_assert_str_eq(d->format, "%d");
	cr_assert_eq(d->nfields, 1);
	cr_assert_eq(d->type[0], GRMTRACE_INT);
	cr_assert_eq(d->conv[0], 'd');
	d = grmtrace_predef(GRMTRACE_EID_MSG_SEND);
	cr_assert_eq(d->cls, GRMTRACE_CLASS_MESSAGE);
	cr_assert_eq(d->attr, GRMTRACE_ATTR_ACT);
	cr_assert_eq(d->nfields, 3);
	d = grmtrace_predef(GRMTRACE_EID_COLL_END);
	cr_assert_str_eq(d->description, "collection end");
	cr_assert_eq(d->type[2], GRMTRACE_UINT);
	cr_assert_eq(d->node, 0);
}

Test(trace, misuse)
{
	const struct grmtrace_ev *ev;
	struct grmtrace_field f = { .type = 9 };
	struct grmtrace *t;
	char err[64];

	errno = 0;
	cr_assert_null(grmtrace_open(NULL, err, sizeof err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(grmtrace_open("", NULL, 0));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(grmtrace_open(path("none"), err, sizeof err));
	cr_assert_eq(errno, ENOENT);
	cr_assert_not_null(strstr(err, "No such file"), "%s", err);
	errno = 0;
	cr_assert_eq(grmtrace_next(NULL, &ev), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(grmtrace_seek(NULL, 0), -1);
	cr_assert_eq(grmtrace_select(NULL, 0), -1);
	cr_assert_str_eq(grmtrace_error(NULL), "no trace (NULL)");
	cr_assert_eq(grmtrace_format(NULL), -1);
	cr_assert_null(grmtrace_def(NULL, 1));
	cr_assert_null(grmtrace_proc(NULL, 1, 1));
	cr_assert_eq(grmtrace_nthreads(NULL), 0);
	cr_assert_eq(grmtrace_fput_field(stdout, &f), -1);
	cr_assert_eq(grmtrace_fput_field(NULL, &f), -1);
	cr_assert_eq(grmtrace_fput_string(stdout, NULL, 3), -1);
	cr_assert_null(grmtrace_field_name(GRMTRACE_RECORD, 0));
	cr_assert_null(grmtrace_field_name(GRMTRACE_HOST, 4));
	cr_assert_str_eq(grmtrace_field_name(GRMTRACE_SYNC, 6), "samples");
	cr_assert_str_eq(grmtrace_kind_name(GRMTRACE_CAUSAL), "#CAUSAL");
	cr_assert_null(grmtrace_kind_name(GRMTRACE_NKINDS));
	cr_assert_eq(grmtrace_version(), GRMTRACE_VERSION);
	grmtrace_close(NULL);
	write_all_kinds(path("ok"), TAPE_FMT_TAPE);
	cr_assert_not_null(t = grmtrace_open(path("ok"), NULL, 0));
	cr_assert_eq(grmtrace_next(t, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(grmtrace_next(t, &ev), 1, "a misuse is no failure");
	grmtrace_close(t);
}

Test(trace, fput)
{
	struct grmtrace_field f = { .type = GRMTRACE_STRING };
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	cr_assert_not_null(m = open_memstream(&buf, &len));
	f.v.s.p = "a \"b\"\n";
	f.v.s.len = 6;
	cr_assert_eq(grmtrace_fput_field(m, &f), 0);
	putc(' ', m);
	f.type = GRMTRACE_DOUBLE;
	f.v.d = 0.1;
	cr_assert_eq(grmtrace_fput_field(m, &f), 0);
	putc(' ', m);
	f.type = GRMTRACE_INT;
	f.v.i = -3;
	cr_assert_eq(grmtrace_fput_field(m, &f), 0);
	putc(' ', m);
	cr_assert_eq(grmtrace_fput_string(m, "x\x01", 2), 0);
	fclose(m);
	cr_assert_str_eq(buf, "\"a \\\"b\\\"\\n\" 0.10000000000000001 -3 "
	    "\"x\\x01\"");
	free(buf);
}

/* ---- memory ---- */

#define MEM_N	1000000

/* Bytes in use by malloc now. */
static size_t
in_use(void)
{
	return mallinfo2().uordblks;
}

static void
bounded(int fmt)
{
	const char *p = path("big");
	const struct grmtrace_ev *ev;
	struct rec_field f[2] = { fi(0), fs("some text", 9) };
	struct grmtrace *t;
	size_t base, at_first = 0, peak = 0, now;
	struct tape_w *w;
	unsigned i;
	int rc;

	cr_assert_not_null(w = tape_open_fmt(p, fmt, "m", 0, 0));
	cr_assert_eq(tape_def(w, 1, 8, 2, "%d %s", 5, "", 0), 0);
	for (i = 0; i < MEM_N; i++) {
		f[0].v.i = i;
		cr_assert_eq(tape_record(w, i, 1, 2, 3 + i % 4, 1, f, 2), 0);
	}
	cr_assert_eq(tape_close(w), 0);
	base = in_use();
	cr_assert_not_null(t = grmtrace_open(p, NULL, 0));
	for (i = 0; (rc = grmtrace_next(t, &ev)) == 1; i++) {
		if (i % 50000 != 0)
			continue;
		now = in_use() - base;
		if (i == 50000)
			at_first = now;
		peak = now > peak ? now : peak;
	}
	cr_assert_eq(rc, 0, "%s", grmtrace_error(t));
	cr_assert_eq(grmtrace_records(t), MEM_N);
	cr_assert_eq(grmtrace_nthreads(t), 4);
	/* The reader's buffers (about 400 KiB), and nothing per record. */
	cr_assert_lt(peak, 1024 * 1024, "peak %zu bytes", peak);
	cr_assert_eq(peak, at_first, "grew from %zu to %zu bytes", at_first,
	    peak);
	grmtrace_close(t);
}

Test(trace, memory_bounded_text)
{
	bounded(TAPE_FMT_TAPE);
}

Test(trace, memory_bounded_bin)
{
	bounded(TAPE_FMT_BIN);
}

/* ---- following a file being written (grmtrace_limit) ---- */

/* Reads t to its limit: the records, which must go on from *next. */
static unsigned
read_on(struct grmtrace *t, uint64_t *next)
{
	const struct grmtrace_ev *ev;
	unsigned n = 0;
	int rc;

	while ((rc = grmtrace_next(t, &ev)) == 1) {
		cr_assert_eq(ev->f[0].v.u, *next, "record %llu, want %llu",
		    (unsigned long long)ev->f[0].v.u,
		    (unsigned long long)*next);
		(*next)++;
		n++;
	}
	cr_assert_eq(rc, 0, "%s", grmtrace_error(t));
	return n;
}

/* A reader opened while the writer writes, limited to what the writer
 * says is whole, reads exactly that, then goes on when the limit is
 * raised, to the end with no limit; what the writer wrote past the limit
 * before the open is not read early. */
static void
follow(int fmt)
{
	const char *p = path("follow");
	struct grmtrace *t;
	struct tape_w *w;
	struct rec_field f[1];
	uint64_t off1 = 0, off2 = 0, next = 0, i;

	cr_assert_not_null(w = tape_open_fmt(p, fmt, "m", 0, 0));
	cr_assert_eq(tape_def(w, 1, 8, 2, "%lu", 3, "n", 1), 0);
	for (i = 0; i < 30; i++) {
		if (i == 10) {
			cr_assert_eq(tape_flush(w), 0);
			off1 = tape_written(w);
		}
		if (i == 20) {
			cr_assert_eq(tape_flush(w), 0);
			off2 = tape_written(w);
		}
		f[0] = fu(i);
		cr_assert_eq(tape_record(w, 1000 + i, 1, 2, 3, 1, f, 1), 0);
	}
	cr_assert_eq(tape_write_out(w), 0);
	cr_assert_not_null(t = grmtrace_open(p, NULL, 0));
	cr_assert_eq(grmtrace_select(t, 0), 0);
	cr_assert_eq(grmtrace_limit(t, off1), 0);
	cr_assert_eq(read_on(t, &next), 10);
	cr_assert_eq(read_on(t, &next), 0);
	cr_assert_eq(grmtrace_limit(t, off2), 0);
	cr_assert_eq(read_on(t, &next), 10);
	cr_assert_eq(tape_close(w), 0);
	cr_assert_eq(grmtrace_limit(t, 0), 0);
	cr_assert_eq(read_on(t, &next), 10);
	cr_assert(grmtrace_ended(t, NULL));
	cr_assert_null(grmtrace_warning(t));
	grmtrace_close(t);
	cr_assert_eq(grmtrace_limit(NULL, 1), -1);
}

Test(trace, follow_text)
{
	follow(TAPE_FMT_TAPE);
}

Test(trace, follow_bin)
{
	follow(TAPE_FMT_BIN);
}

Test(trace, follow_bee)
{
	follow(TAPE_FMT_BEE);
}
