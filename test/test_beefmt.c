/* SPDX-License-Identifier: MIT */
/* test_beefmt.c: unit tests of the BEE Ascii trace format (tr_bee_w.c,
 * tr_bee_r.c; doc/formats.md, section 4): the exact text grm writes, the
 * example file of the BEE manual, BEE's own rules, hostile input.  Round
 * trips of every record kind are in test_tape.c (round_trip_bee,
 * meta_round_trip_bee). */
#include "tape_test.h"

TestSuite(bee, .init = setup, .fini = teardown);

static char *
slurp(const char *p, size_t *len)
{
	char *b;
	FILE *f;
	long n;

	cr_assert_not_null(f = fopen(p, "r"), "%s: %s", p, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	cr_assert_not_null(b = malloc((size_t)n + 1));
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	b[n] = '\0';
	*len = (size_t)n;
	return b;
}

/* The exact text grm writes (doc/formats.md 4.5, 4.6). */
Test(bee, exact_text)
{
	static const char want[] =
	    "(GRM-BEE-1 0)\n"
	    "(100 (#MM mm-4711))\n"
	    "(100 (#CLOCK 1718000000123456789 5000000000))\n"
	    "(100 (#HOST 2 -18250 901 beta.example.org))\n"
	    "(7 (%d%s \"%d\\x20%s\" \"process\\x20name\") "
	    "(-6 1 4 0 0 0 0 0.000000000))\n"
	    "(7 (%d%lu%s%f \"token\\x20%d,\\x20%5lu\\x20from\\x20%s\\x20took"
	    "\\x20%.2f\\x20s\" passed) (10 8 2 0 0 0 0 0.000000000))\n"
	    "(7 (%d %d \"\") (10 8 2 0 2 733 0 0.000000000))\n"
	    "(3 (\"ring\\x20\\x28b\\x29\" 0 2 733 0 0) "
	    "(-1 1 2 0 2 733 0 5.000100500 start 0 700))\n"
	    "(1 (-6 1 4 0 2 733 734 5.000150000 1 worker))\n"
	    "(1 (10 8 2 0 2 733 734 5.000201000 7 \"\\x20\" -0.25))\n"
	    "(1 (10 8 2 0 1 5001 5001 5.000201000 -7 18446744073709551615 "
	    "0.10000000000000001 \"a\\\"b\\\\c\\nd\\x00\\xff\\x28\"))\n"
	    "(100 (#LOSS 2 733 733 3 5000300000))\n"
	    "(100 (#CONTROL 5000350000 \"disable\\x20class\\x208\"))\n"
	    "(100 (#COLLECT 1 5000400000 3))\n"
	    "(100 (#STATS 2 733 count 10 250))\n"
	    "(100 (#STATS 2 733 range -1 1 250 75000 100 2000 300 "
	    "150000000))\n"
	    "(4 (\"\" 0 2 733 0 0) "
	    "(-1 1 2 0 2 733 0 5.000510000 killed 9 0))\n"
	    "(2 (-1 1 2 0 0 0 0 0.000000000 3))\n";
	static const char f10[] = "token %d, %5lu from %s took %.2f s";
	const char *p = path("x.evt");
	struct rec_field f[4];
	struct tape_w *w;
	size_t len;
	char *got;

	w = tape_open_fmt(p, TAPE_FMT_BEE, "mm-4711", 1718000000123456789ull,
	    5000000000ull);
	cr_assert_not_null(w, "%s", strerror(errno));
	cr_assert_eq(tape_host(w, 2, -18250, 901, "beta.example.org"), 0);
	cr_assert_eq(tape_def(w, -6, REC_CLASS_EVENT, REC_ATTR_NAME, "%d %s",
	    5, "process name", 12), 0);
	cr_assert_eq(tape_def(w, 10, REC_CLASS_USER, REC_ATTR_POINT, f10,
	    strlen(f10), "passed", 6), 0);
	cr_assert_eq(tape_def_scoped(w, 2, 733, 10, REC_CLASS_USER,
	    REC_ATTR_POINT, "%d", 2, NULL, 0), 0);
	cr_assert_eq(tape_proc(w, 2, 733, 700, TAPE_PROC_START, 5000100500ull,
	    0, "ring (b)"), 0);
	f[0] = fi(1);
	f[1] = fs("worker", 6);
	cr_assert_eq(tape_record(w, 5000150000ull, 2, 733, 734, -6, f, 2), 0);
	f[0] = fi(7);
	f[1] = fs(" ", 1);
	f[2] = fd(-0.25);
	/* The scoped type has one field; the writer does not check. */
	cr_assert_eq(tape_record(w, 5000201000ull, 2, 733, 734, 10, f, 3), 0);
	f[0] = fi(-7);
	f[1] = fu(UINT64_MAX);
	f[2] = fd(0.1);
	f[3] = fs("a\"b\\c\nd\0\xff(", 10);
	cr_assert_eq(tape_record(w, 5000201000ull, 1, 5001, 5001, 10, f, 4),
	    0);
	cr_assert_eq(tape_loss(w, 2, 733, 733, 3, 5000300000ull), 0);
	cr_assert_eq(tape_control(w, 5000350000ull, "disable class 8", 15), 0);
	cr_assert_eq(tape_collect(w, 1, 5000400000ull), 0);
	cr_assert_eq(tape_stats_count(w, 2, 733, 10, 250), 0);
	cr_assert_eq(tape_stats_range(w, 2, 733, -1, 1, 250, 75000, 100, 2000,
	    300, 1.5e8), 0);
	cr_assert_eq(tape_proc(w, 2, 733, 0, TAPE_PROC_KILLED, 5000510000ull,
	    9, ""), 0);
	/* No definition of eid 11: BEE needs its class and attribute. */
	errno = 0;
	cr_assert_eq(tape_record(w, 1, 1, 1, 1, 11, NULL, 0), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tape_piece(w, 1, 1, 1, "", 0), -1);
	cr_assert_eq(tape_close(w), 0);
	got = slurp(p, &len);
	cr_assert_str_eq(got, want);
	cr_assert_eq(len, strlen(want));
	free(got);
}

/* Records are written with the class and attribute of the definition
 * their process reads them with, and read back under it. */
Test(bee, scoped_definitions)
{
	const char *p = path("s.evt"), *why;
	struct rec_field f[2] = { fi(1), fi(2) };
	const struct grmtrace_ev *ev;
	struct tape_w *w;
	struct grmtrace *r;

	cr_assert_not_null(w = tape_open_fmt(p, TAPE_FMT_BEE, "h:1", 1, 2));
	cr_assert_eq(tape_def(w, 5, 8, 2, "%d", 2, "g", 1), 0);
	cr_assert_eq(tape_def_scoped(w, 3, 99, 5, 0, 0, "%u %u", 5, "s", 1),
	    0);
	cr_assert_eq(tape_record(w, 10, 3, 99, 100, 5, f, 2), 0);
	cr_assert_eq(tape_record(w, 11, 3, 98, 100, 5, f, 1), 0);
	f[0] = fu(1);
	f[1] = fu(2);
	cr_assert_eq(tape_record(w, 12, 3, 99, 100, 5, f, 2), 0);
	cr_assert_eq(tape_close(w), 0);
	cr_assert_not_null(r = topen(p, &why), "%s", why);
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->n == 2 && ev->def->node == 3 && ev->def->cls == 0 &&
	    ev->f[1].type == REC_K_UINT && ev->f[1].v.u == 2);
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->n == 1 && ev->def->node == 0 && ev->def->cls == 8 &&
	    ev->f[0].v.i == 1);
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	cr_assert_str_eq(grmtrace_def_for(r, 3, 99, 5)->description, "s");
	cr_assert_str_eq(grmtrace_def(r, 5)->description, "g");
	grmtrace_close(r);
}

/* The example file of the BEE manual (section 9.10.2). */
static const char *
example(void)
{
	const char *top = getenv("top_srcdir");
	static char p[PATH_MAX];

	/* test/traces/bee-example.evt was written by the original BEE
	 * (1990), from the BEE manual's examples. */
	snprintf(p, sizeof p, "%s/test/traces/bee-example.evt",
	    top != NULL ? top : "..");
	return p;
}

struct want {
	uint64_t	ts;
	int32_t		eid;
	uint8_t		cls;
	uint8_t		attr;
	const char	*name;		/* the type's description */
	int		kind;		/* of the one value; -1: none */
	double		v;
};

Test(bee, example_file)
{
	static const struct want want[] = {
		{ 5000000000ull, 1, 0, 0, "foo", -1, 0 },
		{ 6000000000ull, 1, 0, 1, "foo", -1, 0 },
		{ 13510071000ull, 1, 0, 0, "foo", -1, 0 },
		{ 13510447000ull, 1, 0, 1, "foo", -1, 0 },
		{ 27858328000ull, 9, 0, 0, "bar", -1, 0 },
		{ 27858715000ull, 9, 0, 1, "bar", -1, 0 },
		{ 27858328000ull, 10, 0, 0, "hello", -1, 0 },
		{ 27858715000ull, 10, 0, 1, "hello", -1, 0 },
		{ 27862600000ull, 9, 0, 0, "bar", -1, 0 },
		{ 27862005000ull, 10, 0, 0, "hello", -1, 0 },
		{ 27862389000ull, 10, 0, 1, "hello", -1, 0 },
		{ 27863000000ull, 9, 0, 1, "bar", -1, 0 },
		{ 29743554000ull, 5, 4, 2, "SensorA", -1, 0 },
		{ 29743735000ull, 5, 3, 2, "SensorA", REC_K_INT, 30 },
		{ 29743920000ull, 6, 4, 2, "SensorB", -1, 0 },
		{ 29744077000ull, 6, 3, 2, "SensorB", REC_K_DOUBLE, 40.45 },
		{ 29744262000ull, 7, 4, 2, "SensorC", -1, 0 },
		{ 29744420000ull, 7, 3, 2, "SensorC", REC_K_INT, 40 },
		{ 193883695000ull, 5, 3, 2, "SensorA", REC_K_INT, 25 },
		{ 193883943000ull, 6, 3, 2, "SensorB", REC_K_DOUBLE, 35.34 },
		{ 193884256000ull, 7, 3, 2, "SensorC", REC_K_INT, 45 },
	};
	const struct want *x;
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	const char *why;
	uint64_t end;
	unsigned i;

	r = topen(example(), &why);
	cr_assert_not_null(r, "%s: %s", example(), why);
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_PROC));
	/* (3 (test 5506 8002fadc 2205 0 0) (1 1 2 16559 8002fadc 2205 0
	 * 4.945444 )): client "test" registers. */
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->kind == GRMTRACE_PROC && ev->how == GRMTRACE_PROC_START &&
	    ev->node == 0x8002fadc && ev->pid == 2205 && ev->ppid == 0 &&
	    ev->ts == 4945444000ull && ev->status == 0);
	cr_assert_str_eq(ev->str, "test");
	/* The E_INIT entry, continued on a second line, is skipped. */
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		x = &want[i];
		cr_assert_eq(grmtrace_next(r, &ev), 1, "%u: %s", i,
		    grmtrace_error(r));
		cr_assert_eq(ev->kind, GRMTRACE_RECORD, "%u", i);
		cr_assert_eq(ev->ts, x->ts, "%u: %llu", i,
		    (unsigned long long)ev->ts);
		cr_assert(ev->node == 0x8002fadc && ev->pid == 2205 &&
		    ev->tid == 0 && ev->eid == x->eid, "%u", i);
		cr_assert(ev->def->cls == x->cls && ev->def->attr == x->attr,
		    "%u", i);
		cr_assert_str_eq(ev->def->description, x->name, "%u", i);
		cr_assert_eq(ev->n, x->kind < 0 ? 0u : 1u, "%u", i);
		cr_assert_eq(ev->def->nfields, ev->n);
		if (x->kind == REC_K_INT)
			cr_assert(ev->f[0].type == REC_K_INT &&
			    ev->f[0].v.i == (int64_t)x->v, "%u", i);
		else if (x->kind == REC_K_DOUBLE)
			cr_assert(ev->f[0].type == REC_K_DOUBLE &&
			    ev->f[0].v.d == x->v, "%u", i);
	}
	/* (2 (-1 ...)): E_FINAL, the end; (4 ...): E_DEATH, how unknown. */
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->kind == GRMTRACE_PROC && ev->how == GRMTRACE_PROC_GONE &&
	    ev->node == 0x8002fadc && ev->pid == 2205 &&
	    ev->ts == 194884256000ull);
	cr_assert_str_eq(ev->str, "test");
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	cr_assert_eq(grmtrace_ended(r, &end), 1);
	cr_assert_eq(end, 21);
	cr_assert_str_eq(grmtrace_def(r, 1)->description, "foo");
	cr_assert_str_eq(grmtrace_def(r, 5)->description, "SensorA");
	cr_assert_str_eq(grmtrace_def(r, 6)->description, "SensorB");
	cr_assert_str_eq(grmtrace_def(r, 7)->description, "SensorC");
	cr_assert_null(grmtrace_def(r, 2));
	grmtrace_close(r);
}

/* The example, then one more line: errors name the right line, past the
 * continued entry too. */
Test(bee, example_then_garbage)
{
	const char *err;
	char *t, *u;
	unsigned n;
	size_t len;

	t = slurp(example(), &len);
	cr_assert_not_null(u = malloc(len + 64));
	memcpy(u, t, len);
	strcpy(u + len, "(1 (5 3 2 0 8002fadc 2205 0 1.0 a b c) x)\n");
	cr_assert_eq(read_text(u, strlen(u), &err, &n),
	    -1);
	cr_assert_not_null(strstr(err, "line 30: entry 1: expected \"(\""),
	    "%s", err);
	cr_assert_eq(n, 21, "%u records before", n);
	/* Inside the continued entry: its first line. */
	memcpy(u, t, len + 1);
	cr_assert_not_null(strstr(u, "5 1 20 1 0 0)"));
	memcpy(strstr(u, "5 1 20 1 0 0)"), "5 1 20 1 0 0(", 13);
	cr_assert_eq(read_text(u, len, &err, &n), -1);
	cr_assert_not_null(strstr(err, "line 3: entry 0: nested"), "%s", err);
	free(t);
	free(u);
}

/* What BEE files hold beyond the example: type descriptors of classes
 * (hexadecimal, octal, strings), E_NAME records, quoted strings, requests
 * and replies, E_INIT, the end with a count, a file without it. */
Test(bee, bee_rules)
{
	static const char text[] =
	    "  (BEE2.8:25-Oct-1990 0)  \r\n"
	    "\n"
	    "(7 (%x%o%s%d) (1 9 2 0 a 7 0 1.0))\n"
	    "(1 (1 9 2 0 a 7 0 1.5 ff 17 30 -4))\n"
	    "(1 (1 9 2 0 a 7 0 1.6 zz 17 30 -4))\n"
	    "(1 (2 9 4 0 a 7 0 1.7 Probe))\n"
	    "(1 (2 9 2 0 a 7 0 1.8 1 2 3))\n"
	    "(1 (3 2 2 0 a 7 1 1.9 \"hi\\x20there\" 5 2.5e3 -0))\n"
	    "(1 (3 2 2 0 a 7 1 2 first))\n"
	    "(5 (anything goes) (here))\n"
	    "(6 ())\n"
	    "(0 (w) (d) (1 0 0 0 a 7 0 0.5))\n"
	    "(99 (a \"b)\" c))\n"
	    "(2 (-1 1 2 0 a 7 0 3.0 42))\n";
	static const char cut[] = "(BEE2.8 0)\n(1 (1 0 0 0 1 1 0 1.0 f))\n";
	static const char cut2[] = "(BEE2.8 0)\n(1 (1 0 0 0 1 1 0 1.0 f))\n"
	    "(1 (1 0 0 0 1 1 0 2.0 g))\n";
	const char *why, *p = put_file(text, strlen(text));
	int k;
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	uint64_t end;

	cr_assert_not_null(r = topen(p, &why), "%s", why);
	/* Class 9's descriptor fits: hex, octal, a string, an int. */
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->n == 4 && ev->f[0].type == REC_K_UINT &&
	    ev->f[0].v.u == 0xff && ev->f[1].v.u == 017 &&
	    ev->f[2].type == REC_K_STR && ev->f[3].v.i == -4 && ev->node == 10 &&
	    ev->ts == 1500000000ull);
	cr_assert_str_eq(ev->f[2].v.s.p, "30");
	cr_assert_str_eq(ev->def->format, "%lu %lu %s %ld");
	/* It does not: each value as it looks. */
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->n == 4 && ev->f[0].type == REC_K_STR &&
	    ev->f[1].type == REC_K_INT && ev->f[1].v.i == 17 &&
	    ev->f[2].type == REC_K_INT && ev->f[2].v.i == 30);
	cr_assert_str_eq(ev->def->format, "%s %ld %ld %ld");
	/* E_NAME: the value is the name. */
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->n == 1 && ev->f[0].type == REC_K_STR && ev->eid == 2);
	cr_assert_str_eq(ev->f[0].v.s.p, "Probe");
	cr_assert_str_eq(ev->def->description, "Probe");
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->n == 3 && ev->def->attr == 2);
	cr_assert_str_eq(ev->def->description, "Probe");
	/* No descriptor for class 2: no name taken, a quoted string. */
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->n == 4 && ev->tid == 1 && ev->f[0].type == REC_K_STR &&
	    ev->f[1].type == REC_K_INT && ev->f[2].type == REC_K_DOUBLE &&
	    ev->f[2].v.d == 2500 && ev->f[3].type == REC_K_INT);
	cr_assert_str_eq(ev->f[0].v.s.p, "hi there");
	cr_assert_str_eq(ev->def->description, "");
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->n == 1 && ev->f[0].type == REC_K_STR &&
	    ev->ts == 2000000000ull);
	cr_assert_str_eq(ev->def->description, "");
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	cr_assert_eq(grmtrace_ended(r, &end), 1);
	cr_assert_eq(end, 42);
	grmtrace_close(r);

	/* Without E_FINAL, the trace may be cut short. */
	p = put_file(cut, strlen(cut));
	cr_assert_not_null(r = topen(p, &why), "%s", why);
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	cr_assert_eq(grmtrace_ended(r, NULL), 0);
	cr_assert_null(grmtrace_warning(r));
	grmtrace_close(r);

	/* Its last entry cut (in a value, before its "))", before its
	 * LF): the entries before it, and a warning. */
	for (k = 3; k >= 1; k--) {
		p = put_file(cut2, strlen(cut2) - k);
		cr_assert_not_null(r = topen(p, &why), "%s", why);
		cr_assert_eq(grmtrace_next(r, &ev), 1, "%s",
		    grmtrace_error(r));
		cr_assert_eq(grmtrace_next(r, &ev), 0, "%s",
		    grmtrace_error(r));
		cr_assert_not_null(grmtrace_warning(r));
		cr_assert_not_null(strstr(grmtrace_warning(r),
		    "line 3: cut short"), "%s", grmtrace_warning(r));
		grmtrace_close(r);
	}
}

#define GRM	"(GRM-BEE-1 0)\n(7 (%d%s \"%d\\x20%s\" ev) " \
		"(5 8 2 0 0 0 0 0))\n"

Test(bee, hostile_header)
{
	bad_text("(GRM-BEE-2 0)\n", -2, "unsupported grm BEE Ascii version");
	bad_text("(GRM-BEE-0 0)\n", -2, "unsupported");
	bad_text("(GRM-BEE-1x 0)\n", -2, "unsupported");
	bad_text("(GRM-BEE-99999999999999999999 0)\n", -2, "unsupported");
	bad_text("(BEE2.8)\n", -2, "bad header");
	bad_text("(BEE2.8 x)\n", -2, "bad header");
	bad_text("(BEE2.8 0) x\n", -2, "bad header");
	bad_text("(BEE2.8 0 1)\n", -2, "bad header");
	bad_text("(\"BEE\" 0)\n", -2, "bad header");
	bad_text("( 0)\n", -2, "bad header");
	bad_text("(BEE2.8 0\n", -2, "bad header");
}

Test(bee, hostile_entries)
{
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0 7 x))\n(1 (5 8 2 0 0 1 1 1.0 7))\n",
	    -1, "line 4: too few fields for eid 5");
	bad_text(GRM "(1 (6 8 2 0 0 1 1 1.0 7 x))\n", -1,
	    "line 3: record before definition of eid 6");
	bad_text(GRM "(1 (5 8 3 0 0 1 1 1.0 7 x))\n", -1,
	    "line 3: E_EVERY: class 8 and attribute 3 of eid 5 are not");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0 7 x y))\n", -1, "too many fields");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0 x x))\n", -1,
	    "field 1 of eid 5: bad number");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0 7 \"x))\n", -1,
	    "unterminated string");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0 7 \"x\"y))\n", -1, "after closing");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0 7 \"\\q\"))\n", -1, "bad escape");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0 7 x)\n", -1, "entry without");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0 7 x)) (1)\n", -1, "text after");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0 7 (x)))\n", -1, "nested");
	bad_text(GRM "(1 5 8 2 0 0 1 1 1.0 7 x)\n", -1, "expected \"(\"");
	bad_text(GRM "(x (5))\n", -1, "line 3: bad command number");
	bad_text(GRM "(-1 (5))\n", -1, "bad command number");
	bad_text(GRM "(1234567890 (5))\n", -1, "bad command number");
	bad_text(GRM "1 (5)\n", -1, "expected an entry");
	bad_text(GRM "#GRM-TRACE 2\n", -1, "expected an entry");
	bad_text(GRM "(1 (5 8 2) (1))\n", -1, "E_EVERY: 2 groups");
	bad_text(GRM "(1 () () () () () () () () ())\n", -1,
	    "more than 8 groups");
	bad_text(GRM "(1 (5 8 2 0 0 1 1))\n", -1,
	    "E_EVERY: event record: missing field");
	bad_text(GRM "(1 (2147483648 8 2 0 0 1 1 1.0))\n", -1, "out of range");
	bad_text(GRM "(1 (5 256 2 0 0 1 1 1.0))\n", -1, "out of range");
	bad_text(GRM "(1 (5 8 2 x 0 1 1 1.0))\n", -1, "bad number");
	bad_text(GRM "(1 (5 8 2 0 g 1 1 1.0))\n", -1, "bad hexadecimal");
	bad_text(GRM "(1 (5 8 2 0 100000000 1 1 1.0))\n", -1,
	    "bad hexadecimal number (at most ffffffff)");
	bad_text(GRM "(1 (5 8 2 0 0 4294967296 1 1.0))\n", -1, "out of range");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.))\n", -1, "bad time");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0123456789))\n", -1, "bad time");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 -1.0))\n", -1, "bad time");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 .5))\n", -1, "bad time");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1e3))\n", -1, "bad time");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 18446744074.0))\n", -1, "bad time");
	bad_text(GRM "(1 (5 8 2 0 0 1 1 18446744073.709551616))\n", -1,
	    "time out of range");
	bad_text(GRM "(7 (%s \"%d\" x) (6 8 2 0 0 0 0 0))\n", -1,
	    "E_DESCRIPTOR of eid 6: type %s is not that of its format");
	bad_text(GRM "(7 (%d%d \"%d\" x) (6 8 2 0 0 0 0 0))\n", -1,
	    "is not that of its format");
	bad_text(GRM "(7 (%n %n x) (6 8 2 0 0 0 0 0))\n", -1, "bad format");
	bad_text(GRM "(7 (%d \"%d\\x00\" x) (6 8 2 0 0 0 0 0))\n", -1,
	    "NUL in a string");
	bad_text(GRM "(7 (%d %d) (6 8 2 0 0 0 0 0))\n", -1,
	    "E_DESCRIPTOR: missing field");
	bad_text(GRM "(7 (%d %d x) (6 8 2 0 0 5 0 0))\n", -1,
	    "scope of node 0");
	bad_text(GRM "(7 (%d %d x))\n", -1, "E_DESCRIPTOR: 1 groups");
	bad_text(GRM "(3 (p 0 1 2 0 0) (-1 1 2 0 1 2 0 1.0 exit 0 1))\n", -1,
	    "E_REGISTRATION: bad word exit");
	bad_text(GRM "(4 (p 0 1 2 0 0) (-1 1 2 0 1 2 0 1.0 start 0 1))\n", -1,
	    "E_DEATH: bad word start");
	bad_text(GRM "(4 (p 0 1 2 0 0) (-1 1 2 0 1 2 0 1.0 exit 0))\n", -1,
	    "E_DEATH: missing field");
	bad_text(GRM "(4 (p 0 1 2 0 0) (-1 1 2 0 1 2 0 1.0 exit 0 1 2))\n", -1,
	    "E_DEATH: too many values");
	bad_text(GRM "(4 (p 0 1 2 0 0) (-1 1 2 0 1 2 0 1.0 exit 2147483648 "
	    "1))\n", -1, "status out of range");
	bad_text(GRM "(4 () (-1 1 2 0 1 2 0 1.0))\n", -1,
	    "E_DEATH: client name: missing field");
	bad_text(GRM "(2 (-1 1 2 0 0 0 0 0))\n", -1,
	    "E_FINAL: records: missing field");
	bad_text(GRM "(2 (-1 1 2 0 0 0 0 0 1 2))\n", -1, "too many values");
	bad_text(GRM "(100 ())\n", -1, "grm entry");
	bad_text(GRM "(100 (#LOSS 1 2 3 x 4))\n", -1, "#LOSS: bad number");
	bad_text(GRM "(100 (#CONTROL 5 \"a\\q\"))\n", -1, "bad escape");
	/* The file ends inside a continued entry: it is cut short. */
	bad_text(GRM "(1 (5 8 2 0 0 1 1 1.0 7 x)) \\\n", 0,
	    "entry 3: cut short");
	bad_text("(BEE 0)\n(1 (1 2 2 0 1 1 1 1.0 1 2 3 4 5 6 7 8 9 10 11 12 "
	    "13 14 15 16 17))\n", -1, "line 2: E_EVERY: more than 16 values");
	/* The quote closes in the middle of a token for the entry, and
	 * not for the value that starts with the next one. */
	bad_text("(BEE 0)\n(1 (1 2 2 0 1 1 1 1.0 ab\"c \"d))\n", -1,
	    "line 2: E_EVERY: value 2: a bad quoted string");
	bad_text("(BEE 0)\n(1 (1 2 2 0 1 1 1 1.0 \"a\\q\"))\n", -1,
	    "value 1: a bad quoted string");
	bad_text("(BEE 0)\n(7 (%q) (1 2 2 0 1 1 1 1.0))\n", -1,
	    "E_DESCRIPTOR of eid 1: bad format");
	bad_text("(BEE 0)\n(1 (1 2 4 0 1 1 1 1.0 \"a\\x00\"))\n", -1,
	    "NUL in a sensor name");
}

/* Future grm entries and meta lines, and trailing values of a grm entry,
 * are skipped as in the text format. */
Test(bee, lenient_grm)
{
	static const char text[] = GRM
	    "(100 (#FUTURE 1 \"x\"))\n"
	    "(100 (#HOST 1 -3 4 h 0.5 12 future))\n"
	    "(100 (#COLLECT 1 2 3))\n"
	    "(101 (future) (entry))\n"
	    "(1 (5 8 2 0 0 1 1 1.5 7 \"\"))\n"
	    "(100 (#END 1))\n";
	const char *err;
	unsigned n;

	cr_assert_eq(read_text(text, sizeof text - 1, &err, &n), 0, "%s", err);
	cr_assert_eq(n, 1);
}

/* An entry, its lines joined, may be as long as a line; one byte more is
 * refused. */
Test(bee, overlong_entry)
{
	static const char head[] = "(1 (5 8 2 0 0 1 1 1.0 7 \\\n ";
	size_t hl = strlen(GRM), i, a;
	char *t = malloc(hl + 2 * TAPE_LINE_MAX + 100);
	const char *err;
	unsigned n;

	cr_assert_not_null(t);
	memcpy(t, GRM, hl);
	memcpy(t + hl, head, sizeof head - 1);
	/* Joined: the first line less its backslash, a blank, the second
	 * line (a blank, the a's, "))"). */
	a = TAPE_LINE_MAX - (sizeof head - 4) - 1 - 3;
	for (i = hl + sizeof head - 1; i < hl + sizeof head - 1 + a; i++)
		t[i] = 'a';
	memcpy(t + i, "))\n", 3);
	i += 3;
	cr_assert_eq(read_text(t, i, &err, &n), 0, "%s",
	    err);
	cr_assert_eq(n, 1);
	memmove(t + hl + sizeof head, t + hl + sizeof head - 1,
	    i - hl - sizeof head + 1);
	cr_assert_eq(read_text(t, i + 1, &err, &n), -1);
	cr_assert_not_null(strstr(err, "line 3: entry longer"), "%s", err);
	free(t);
}

/* Random damage to grm's BEE files and to BEE's never crashes the
 * reader, and an error is final. */
Test(bee, fuzz)
{
	const char *p = path("f.evt");
	struct rec_field f[3] = { fi(-5), fs("a b(c)", 6), fd(1.5) };
	char *orig[2], *buf;
	const char *err;
	size_t len[2];
	unsigned i, k, n, j;
	struct tape_w *w;

	cr_assert_not_null(w = tape_open_fmt(p, TAPE_FMT_BEE, "x", 1, 2));
	cr_assert_eq(tape_def(w, 3, 8, 2, "%d %s %f", 8, "three", 5), 0);
	cr_assert_eq(tape_proc(w, 1, 2, 3, TAPE_PROC_START, 4, 0, "p q"), 0);
	for (i = 0; i < 20; i++)
		cr_assert_eq(tape_record(w, i, 1, 2, 3, 3, f, 3), 0);
	cr_assert_eq(tape_stats_count(w, 1, 2, 3, 4), 0);
	cr_assert_eq(tape_proc(w, 1, 2, 3, TAPE_PROC_EXIT, 40, 1, "p q"), 0);
	cr_assert_eq(tape_close(w), 0);
	orig[0] = slurp(p, &len[0]);
	orig[1] = slurp(example(), &len[1]);
	cr_assert_not_null(buf = malloc(len[0] + len[1]));
	srand(4242);
	for (i = 0; i < 3000; i++) {
		j = i % 2;
		memcpy(buf, orig[j], len[j]);
		for (k = 0; k < 1 + i % 8; k++)
			buf[15 + (size_t)rand() % (len[j] - 15)] =
			    (char)("()\"\\\n x0-9a.#"[rand() % 14] +
			    (i % 3 == 0 ? rand() % 256 : 0));
		read_text(buf, len[j] - (i % 5 == 0 ? (size_t)rand() % len[j] :
		    0), &err, &n);
	}
	free(orig[0]);
	free(orig[1]);
	free(buf);
}
