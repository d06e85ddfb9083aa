/* SPDX-License-Identifier: MIT */
/* test_bee.c: unit tests of the BEE layer (client/bee*.c), linked with a
 * stand-in for the rest of the client library that keeps what it is
 * asked to define and record.  Each test runs in its own process. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bee_int.h"

/* ---- the stand-in for gmi.c ---- */

struct stype {
	int	defined, cls, attr, range, range_eid;
	char	fmt[REC_FMT_MAX];
	char	name[REC_DSC_MAX];
};

struct srec {
	int			eid;
	int			dormant;
	unsigned		n;
	struct rec_field	f[REC_ARGS_MAX];
	char			str[REC_ARGS_MAX][REC_STR_MAX + 1];
};

#define NREC	64
static struct stype types[GMI_SENSOR_MAX];
static struct srec recs[NREC];
static int nrec, ndefs, nflush, traced = 1, lose_defines;
static int cls_off[256], eid_off[GMI_SENSOR_MAX];
static long nemit;
static char filter[SEG_FILTER_MAX];
static pthread_mutex_t stub_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned on_word = 1;

const volatile unsigned int *volatile GMI_on_ = &on_word;

int
GMI_Traced(void)
{
	return traced;
}

int
GMI_Flush(void)
{
	nflush++;
	return GRM_OK;
}

int
gmi_error(int code, const char *fmt, ...)
{
	(void)fmt;
	return code;
}

static struct stype *
stype(int eid)
{
	cr_assert(eid >= GMI_SENSOR_BASE && eid < GMI_SENSOR_BASE +
	    GMI_SENSOR_MAX, "eid %d is not a sensor's", eid);
	return &types[eid - GMI_SENSOR_BASE];
}

int
gmi_define_type(int eid, uint8_t cls, uint8_t attr, uint8_t range,
		int range_eid, const char *format, const char *name)
{
	struct stype *t = stype(eid);
	struct rec_fmt rf;

	if (!traced)
		return GRM_OK;
	if (lose_defines)
		return GRM_ELOST;
	if (t->defined)
		return strcmp(t->fmt, format) == 0 ? GRM_OK : GRM_EREDEF;
	cr_assert(rec_parse_format(format, &rf) == 0, "format %s", format);
	t->cls = cls;
	t->attr = attr;
	t->range = range;
	t->range_eid = range_eid;
	snprintf(t->fmt, sizeof t->fmt, "%s", format);
	snprintf(t->name, sizeof t->name, "%s", name);
	t->defined = 1;
	ndefs++;
	return GRM_OK;
}

int
gmi_type_on(int eid)
{
	const struct stype *t = stype(eid);

	return traced && t->defined && !cls_off[t->cls] &&
	    !eid_off[eid - GMI_SENSOR_BASE] &&
	    (filter[0] == '\0' || strstr(t->name, filter) != NULL);
}

static int
keep(int eid, const struct rec_field *f, unsigned n, int dormant)
{
	struct rec_fmt rf;
	struct srec *r;
	unsigned i;

	cr_assert(rec_parse_format(stype(eid)->fmt, &rf) == 0);
	cr_assert_eq(n, rf.n, "%u values for the %u fields of %s", n, rf.n,
	    stype(eid)->fmt);
	for (i = 0; i < n; i++)
		cr_assert_eq(f[i].kind, rf.kind[i], "kind of value %u", i);
	pthread_mutex_lock(&stub_lock);
	nemit++;
	if (nrec < NREC) {
		r = &recs[nrec++];
		r->eid = eid;
		r->dormant = dormant;
		r->n = n;
		for (i = 0; i < n; i++) {
			r->f[i] = f[i];
			if (f[i].kind == REC_K_STR) {
				memcpy(r->str[i], f[i].v.s.p, f[i].v.s.len);
				r->str[i][f[i].v.s.len] = '\0';
				r->f[i].v.s.p = r->str[i];
			}
		}
	}
	pthread_mutex_unlock(&stub_lock);
	return GRM_OK;
}

int
gmi_emit_fields(int eid, const struct rec_field *f, unsigned n)
{
	if (!gmi_type_on(eid))
		return GRM_OK;
	return keep(eid, f, n, 0);
}

int
gmi_set_dormant(int eid, const struct rec_field *f, unsigned n)
{
	return keep(eid, f, n, 1);
}

void
gmi_local_class(unsigned cls, int on)
{
	cls_off[cls] = !on;
}

int
gmi_local_filter(const char *substr)
{
	if (substr != NULL && strlen(substr) >= sizeof filter)
		return GRM_EINVAL;
	snprintf(filter, sizeof filter, "%s", substr != NULL ? substr : "");
	return GRM_OK;
}

const char *
gmi_type_name(int eid)
{
	if (eid == 7)
		return "a GMI type";
	if (eid < GMI_SENSOR_BASE || eid >= GMI_SENSOR_BASE + GMI_SENSOR_MAX)
		return NULL;
	return stype(eid)->defined ? stype(eid)->name : NULL;
}

/* ---- helpers ---- */

/* The eid defined for (name, attr), or 0. */
static int
eid_of(const char *name, int attr)
{
	int i;

	for (i = 0; i < GMI_SENSOR_MAX; i++)
		if (types[i].defined && types[i].attr == attr &&
		    strcmp(types[i].name, name) == 0)
			return GMI_SENSOR_BASE + i;
	return 0;
}

static int
count(int eid)
{
	int i, n = 0;

	for (i = 0; i < nrec; i++)
		n += recs[i].eid == eid;
	return n;
}

/* The k-th record of eid. */
static const struct srec *
rec_of(int eid, int k)
{
	int i;

	for (i = 0; i < nrec; i++)
		if (recs[i].eid == eid && k-- == 0)
			return &recs[i];
	cr_assert_fail("no record %d of event %d", k, eid);
	return NULL;
}

/* ---- type descriptors ---- */

struct all {
	int		i;
	double		d;
	const char	*s;
	char		c;
	short		h;
	float		f;
	long		l;
	unsigned	u;
	char		tag[8];
	signed char	hh;
	unsigned long long ull;
	void		*p;
};
#define ALL_TYPE "%d %lf %s %c %hd %f %ld %u %8s %hhd %llu %p"

Test(layout, natural_alignment)
{
	static const size_t offs[] = {
		offsetof(struct all, i), offsetof(struct all, d),
		offsetof(struct all, s), offsetof(struct all, c),
		offsetof(struct all, h), offsetof(struct all, f),
		offsetof(struct all, l), offsetof(struct all, u),
		offsetof(struct all, tag), offsetof(struct all, hh),
		offsetof(struct all, ull), offsetof(struct all, p)
	};
	struct bee_layout l;
	unsigned i;

	cr_assert_eq(bee_layout_parse(ALL_TYPE, &l), 0);
	cr_assert_eq(l.n, 12);
	cr_assert_eq(l.size, sizeof(struct all));
	for (i = 0; i < l.n; i++)
		cr_assert_eq(l.f[i].off, offs[i], "field %u", i);
}

Test(layout, sizes)
{
	struct { char a[3]; int b; } s1;
	struct { char c; double d; } s2;
	struct { int i; char c; } s3;
	struct bee_layout l;

	cr_assert_eq(bee_layout_parse("%3s %d", &l), 0);
	cr_assert_eq(l.size, sizeof s1);
	cr_assert_eq(l.f[1].off, offsetof(__typeof__(s1), b));
	cr_assert_eq(bee_layout_parse("%c %lf", &l), 0);
	cr_assert_eq(l.size, sizeof s2);
	cr_assert_eq(bee_layout_parse("i=%d c=%c 100%%", &l), 0);
	cr_assert_eq(l.size, sizeof s3);
	cr_assert_eq(l.n, 2);
	cr_assert_eq(bee_layout_parse("", &l), 0);
	cr_assert_eq(l.size, 0);
	cr_assert_eq(l.n, 0);
}

Test(layout, rejects)
{
	static const char *const bad[] = {
		"%n", "%Lf", "%*d", "%ls", "%lld %", "%100000s", "%q",
		"%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", NULL
	};
	struct bee_layout l;
	unsigned i;

	for (i = 0; bad[i] != NULL; i++)
		cr_assert_neq(bee_layout_parse(bad[i], &l), 0, "%s", bad[i]);
	cr_assert_neq(bee_layout_parse(NULL, &l), 0);
}

Test(layout, decode)
{
	struct all v = { -5, 2.5, NULL, (char)0xe9, -2, 0.5f, 1L << 40,
	    4000000000u, "abcdefgh", -3, 1ull << 63, (void *)&v };
	struct rec_field f[REC_ARGS_MAX];
	struct bee_layout l;

	cr_assert_eq(bee_layout_parse(ALL_TYPE, &l), 0);
	cr_assert_eq(bee_decode(&l, &v, f), 12);
	cr_assert_eq(f[0].v.i, -5);
	cr_assert_float_eq(f[1].v.d, 2.5, 0);
	cr_assert_eq(f[2].v.s.len, 6);
	cr_assert_eq(memcmp(f[2].v.s.p, "(null)", 6), 0);
	cr_assert_eq(f[3].v.i, 0xe9);
	cr_assert_eq(f[4].v.i, -2);
	cr_assert_eq(f[4].kind, REC_K_INT);
	cr_assert_float_eq(f[5].v.d, 0.5, 0);
	cr_assert_eq(f[6].v.i, 1L << 40);
	cr_assert_eq(f[7].v.u, 4000000000u);
	cr_assert_eq(f[7].kind, REC_K_UINT);
	/* A full char[8] has no NUL: 8 bytes, nothing of the next field. */
	cr_assert_eq(f[8].v.s.len, 8);
	cr_assert_eq(memcmp(f[8].v.s.p, "abcdefgh", 8), 0);
	cr_assert_eq(f[9].v.i, -3);
	cr_assert_eq(f[10].v.u, 1ull << 63);
	cr_assert_eq(f[11].v.u, (uint64_t)(uintptr_t)&v);
	cr_assert_eq(bee_decode(&l, NULL, f), -1);
	v.s = "str";
	cr_assert_eq(bee_decode(&l, &v, f), 12);
	cr_assert_eq(f[2].v.s.p, v.s);
	cr_assert_eq(f[2].v.s.len, 3);
}

/* ---- classes ---- */

Test(classes, register_and_names)
{
	struct all v;
	int c;

	(void)v;
	cr_assert_eq(Event_Class_ID("E_PROCEDURE"), E_PROCEDURE);
	cr_assert_eq(Event_Class_ID("E_EVENT"), E_EVENT);
	cr_assert_eq(Event_Class_ID("E_STRING"), E_STRING);
	cr_assert_eq(Event_Class_ID("E_USER"), E_USER);
	cr_assert_str_eq(Event_Class_Name(E_MESSAGE), "E_MESSAGE");
	cr_assert_str_eq(Event_Class_Name(77), "");
	cr_assert_str_eq(Event_Class_Name(-3), "");
	c = Event_Register_Class("E_ALLF", ALL_TYPE, sizeof v);
	cr_assert_eq(c, E_CLASS_USER_MIN);
	cr_assert_eq(Event_Register_Class("E_ALLF", ALL_TYPE, sizeof v), c);
	cr_assert_eq(Event_Register_Class("E_ALLF", "%d", 4), E_FAILURE);
	cr_assert_eq(Event_Register_Class("E_EVENT", "", 0), E_EVENT);
	cr_assert_eq(Event_Register_Class("E_USER", "", 0), E_FAILURE);
	cr_assert_eq(Event_Register_Class("E_X", "%d", 8), E_FAILURE);
	cr_assert_eq(Event_Register_Class("E_X", "%d", -1), E_FAILURE);
	cr_assert_eq(Event_Register_Class("E_X", NULL, 0), E_FAILURE);
	cr_assert_eq(Event_Register_Class(NULL, "%d", 4), E_FAILURE);
	cr_assert_eq(Event_Register_Class("", "%d", 4), E_FAILURE);
	cr_assert_eq(Event_Class_ID("E_ALLF"), c);
	cr_assert_str_eq(Event_Class_Name(c), "E_ALLF");
	cr_assert_eq(Event_Class_ID(NULL), -1);
}

Test(classes, numbers_run_out)
{
	char name[32];
	int c, i;

	for (i = E_CLASS_USER_MIN; i <= E_CLASS_USER_MAX; i++) {
		snprintf(name, sizeof name, "C%d", i);
		cr_assert_eq(Event_Register_Class(name, "%d", 4), i);
	}
	cr_assert_eq(Event_Register_Class("ONE_MORE", "%d", 4), E_FAILURE);
	/* A deleted class's name is free again, its number is not. */
	cr_assert_eq(Event_Delete(20), E_SUCCESS);
	cr_assert_eq(Event_Class_ID("C20"), -1);
	cr_assert_eq(Event_Register_Class("C20", "%d", 4), E_FAILURE);
	c = Event_Class_ID("C21");
	cr_assert_eq(c, 21);
}

/* ---- sensors ---- */

static int norder;

static int
inside(void)
{
	POINT_EVENT("inside");
	return 42;
}

static int
fn(int early)
BEGIN(fn)
	if (early)
		RETURN(inside());
	BEGIN_PROCEDURE("nested");
	END_PROCEDURE("nested");
	RETURN(-1);
END(fn)

static void
proc(void)
BEGIN("proc")
	RET;
END("proc")

static void
falls(void)
BEGIN(falls)
	norder++;
END(falls)

Test(sensors, procedure_ranges)
{
	int act, term, i;

	cr_assert_eq(fn(1), 42);
	cr_assert_eq(fn(0), -1);
	proc();
	falls();
	act = eid_of("fn", E_ACT);
	term = eid_of("fn", E_TERM);
	cr_assert(act != 0 && term != 0);
	cr_assert_eq(types[act - GMI_SENSOR_BASE].range, GMI_R_BEGIN);
	cr_assert_eq(types[term - GMI_SENSOR_BASE].range, GMI_R_END);
	cr_assert_eq(types[term - GMI_SENSOR_BASE].range_eid, act);
	cr_assert_eq(types[act - GMI_SENSOR_BASE].cls, E_PROCEDURE);
	cr_assert_str_eq(types[act - GMI_SENSOR_BASE].fmt, "");
	cr_assert_eq(count(act), 2);
	cr_assert_eq(count(term), 2);
	/* RETURN evaluates its value inside the range. */
	for (i = 0; i < nrec && recs[i].eid != eid_of("inside", E_POINT); i++)
		;
	cr_assert(i < nrec && i > 0 && recs[i - 1].eid == act &&
	    recs[i + 1].eid == term);
	cr_assert_eq(count(eid_of("nested", E_ACT)), 1);
	cr_assert_eq(count(eid_of("nested", E_TERM)), 1);
	/* BEGIN("proc") is the sensor proc, quotes off. */
	cr_assert_eq(count(eid_of("proc", E_ACT)), 1);
	cr_assert_eq(count(eid_of("proc", E_TERM)), 1);
	cr_assert_eq(count(eid_of("falls", E_TERM)), 1);
	cr_assert_eq(norder, 1);
}

Test(sensors, event_ranges_and_points)
{
	int i;

	for (i = 0; i < 3; i++) {
		BEGIN_EVENT("ev");
		POINT_EVENT("pt");
		END_EVENT("ev");
	}
	cr_assert_eq(types[eid_of("ev", E_ACT) - GMI_SENSOR_BASE].cls,
	    E_EVENT);
	cr_assert_eq(count(eid_of("ev", E_ACT)), 3);
	cr_assert_eq(count(eid_of("ev", E_TERM)), 3);
	cr_assert_eq(count(eid_of("pt", E_POINT)), 3);
	cr_assert_eq(types[eid_of("pt", E_POINT) - GMI_SENSOR_BASE].range,
	    GMI_R_NONE);
	/* One type per (name, class, attribute): 3 definitions. */
	cr_assert_eq(ndefs, 3);
}

Test(sensors, user_variant)
{
	struct all v = { 1, 2.0, "s", 'c', 3, 4.0f, 5, 6, "tag", 7, 8, NULL };
	const struct srec *r;
	int c = Event_Register_Class("E_ALLF", ALL_TYPE, sizeof v);

	EVENT("all", c, E_POINT, &v);
	EVENT("all", c, E_POINT, NULL);		/* refused: no variant */
	cr_assert_str_eq(types[eid_of("all", E_POINT) - GMI_SENSOR_BASE].fmt,
	    ALL_TYPE);
	cr_assert_eq(count(eid_of("all", E_POINT)), 1);
	r = rec_of(eid_of("all", E_POINT), 0);
	cr_assert_eq(r->n, 12);
	cr_assert_str_eq(r->str[2], "s");
	cr_assert_eq(r->f[3].v.i, 'c');
	cr_assert_str_eq(r->str[8], "tag");
	EVENT("text", E_STRING, E_POINT, "hello");
	r = rec_of(eid_of("text", E_POINT), 0);
	cr_assert_str_eq(r->str[0], "hello");
}

Test(sensors, bad_sensors)
{
	Event_id_t a = 0, b = 0, c = 0;

	Event_Sensor(NULL, E_EVENT, E_POINT, NULL, &a);
	Event_Sensor("x", E_USER, E_POINT, NULL, &b);
	Event_Sensor("x", E_EVENT, 9, NULL, &c);
	cr_assert(a == -1 && b == -1 && c == -1);
	Event_Sensor(NULL, E_EVENT, E_POINT, NULL, &a);	/* silent now */
	cr_assert_eq(nrec, 0);
}

Test(sensors, untraced)
{
	Event_id_t id = 0;

	on_word = 0;
	POINT_EVENT("p");
	Event_Sensor("p", E_EVENT, E_POINT, NULL, &id);
	cr_assert_eq(id, 0);
	on_word = 1;
	traced = 0;
	Event_Sensor("p", E_EVENT, E_POINT, NULL, &id);
	cr_assert_eq(id, 0);
	cr_assert_eq(nrec + ndefs, 0);
}

Test(sensors, errno_kept)
{
	errno = 1234;
	POINT_EVENT("e");
	Event_Sensor(NULL, E_EVENT, E_POINT, NULL, NULL);
	cr_assert_eq(errno, 1234);
}

/* The definition could not be recorded: tried again at the next event. */
Test(sensors, define_retried)
{
	int i;

	lose_defines = 1;
	for (i = 0; i < 2; i++) {
		if (i == 1)
			lose_defines = 0;
		POINT_EVENT("late");
	}
	cr_assert_eq(count(eid_of("late", E_POINT)), 1);
	BEGIN_EVENT("r");
	lose_defines = 1;
	END_EVENT("r");
	lose_defines = 0;
	END_EVENT("r");
	cr_assert_eq(count(eid_of("r", E_TERM)), 1);
}

Test(sensors, table_full)
{
	char name[32];
	Event_id_t id;
	int i;

	cr_assert_eq(Event_Sensor_Max(), GMI_SENSOR_MAX);
	for (i = 0; i < GMI_SENSOR_MAX; i++) {
		snprintf(name, sizeof name, "s%d", i);
		cr_assert_eq(Event_Register_Name(name, &id),
		    GMI_SENSOR_BASE + i);
	}
	cr_assert_eq(Event_Register_Name("more", &id), E_FAILURE);
	cr_assert_eq(id, E_FAILURE);
	cr_assert_eq(Event_Register_Name("s7", NULL), GMI_SENSOR_BASE + 7);
}

/* ---- naming and generation ---- */

Test(naming, register_name_and_generate)
{
	Event_id_t id, again;

	id = Event_Register_Name("named", NULL);
	cr_assert_gt(id, 0);
	cr_assert(types[id - GMI_SENSOR_BASE].defined);	/* E_NAME */
	cr_assert_eq(Event_Register_Name("named", &again), id);
	cr_assert_eq(again, id);
	cr_assert_str_eq(Event_Sensor_Name(id), "named");
	cr_assert_str_eq(Event_Sensor_Name(7), "a GMI type");
	cr_assert_str_eq(Event_Sensor_Name(-99), "");
	cr_assert_str_eq(Event_Sensor_Name(GMI_SENSOR_BASE + 99), "");
	Event_Generate(E_EVENT, E_POINT, id, NULL);
	Event_Generate(E_EVENT, E_ACT, id, NULL);
	Event_Generate(E_EVENT, E_TERM, id, NULL);
	Event_Generate(E_EVENT, E_POINT, 12345, NULL);
	cr_assert_eq(count(id), 1);
	cr_assert_eq(count(eid_of("named", E_ACT)), 1);
	cr_assert_eq(count(eid_of("named", E_TERM)), 1);
}

Test(naming, client)
{
	cr_assert_str_eq(Event_Client_Name(), program_invocation_short_name);
	cr_assert_eq(Event_Initialize("me"), E_SUCCESS);
	cr_assert_str_eq(Event_Client_Name(), "me");
	cr_assert_eq(Event_Initialize(NULL), E_SUCCESS);
	cr_assert_str_eq(Event_Client_Name(), "me");
	cr_assert_eq(Event_Finalize("me"), E_SUCCESS);
	cr_assert_eq(nflush, 1);
}

/* ---- states and switches ---- */

Test(states, sensor_control_and_enable)
{
	int one = 1, c = Event_Register_Class("E_ONE", "%d", sizeof one);

	EVENT("a", c, E_POINT, &one);
	Event_Sensor_Control(c, FALSE);
	EVENT("a", c, E_POINT, &one);
	cr_assert_eq(Event_Disable(c), E_SUCCESS);
	Event_Sensor_Control(c, TRUE);
	EVENT("a", c, E_POINT, &one);	/* still disabled */
	cr_assert_eq(Event_Enable(c), E_SUCCESS);
	EVENT("a", c, E_POINT, &one);
	cr_assert_eq(count(eid_of("a", E_POINT)), 2);
	Event_Sensor_Control(E_ALL, FALSE);
	POINT_EVENT("b");
	EVENT("a", c, E_POINT, &one);
	Event_Sensor_Control(E_ALL, TRUE);
	POINT_EVENT("b");
	cr_assert_eq(count(eid_of("a", E_POINT)), 2);
	cr_assert_eq(count(eid_of("b", E_POINT)), 1);
	cr_assert_eq(Event_Enable(99), E_FAILURE);
	cr_assert_eq(Event_Disable(-5), E_FAILURE);
	cr_assert_eq(Event_Disable(E_ALL), E_SUCCESS);
	cr_assert(cls_off[E_PROCEDURE] && cls_off[E_USER] && cls_off[c]);
}

Test(states, filter)
{
	char longf[200];

	cr_assert_eq(Event_Sensor_Filter(E_EVENT, "ke"), E_SUCCESS);
	POINT_EVENT("keep");
	POINT_EVENT("drop");
	cr_assert_eq(Event_Sensor_Filter(E_EVENT, "?"), E_SUCCESS);
	POINT_EVENT("drop");
	memset(longf, 'x', sizeof longf - 1);
	longf[sizeof longf - 1] = '\0';
	cr_assert_eq(Event_Sensor_Filter(E_ALL, longf), E_FAILURE);
	cr_assert_eq(count(eid_of("keep", E_POINT)), 1);
	cr_assert_eq(count(eid_of("drop", E_POINT)), 1);
}

Test(states, passive_and_dormant)
{
	Event_id_t d = 0, p = 0, o = 0;
	int x, c = Event_Register_Class("E_X", "%d", sizeof x);
	const struct srec *r;

	cr_assert_eq(Event_Sensor_State("dorm", E_DORMANT), E_SUCCESS);
	cr_assert_eq(Event_Sensor_State("pass", E_PASSIVE), E_SUCCESS);
	cr_assert_eq(Event_Sensor_State("pass", 0), E_FAILURE);
	cr_assert_eq(Event_Sensor_State(NULL, E_ACTIVE), E_FAILURE);
	for (x = 1; x <= 3; x++) {
		EVENT_SENSOR("dorm", c, E_POINT, &x, &d);
		EVENT_SENSOR("pass", c, E_POINT, &x, &p);
		EVENT_SENSOR("other", c, E_POINT, &x, &o);
	}
	cr_assert_eq(Event_Sensor_Get_State(d), E_DORMANT);
	cr_assert_eq(Event_Sensor_Get_State(p), E_PASSIVE);
	cr_assert_eq(Event_Sensor_Get_State(o), E_ACTIVE);
	cr_assert_eq(Event_Sensor_Get_State(1), E_FAILURE);
	cr_assert(types[d - GMI_SENSOR_BASE].defined);
	cr_assert_eq(count(p), 0);
	cr_assert_eq(count(o), 3);
	cr_assert_eq(count(d), 3);
	r = rec_of(d, 2);
	cr_assert(r->dormant && r->f[0].v.i == 3);
	/* Switched from outside (grmctl): gmi says it is off. */
	eid_off[o - GMI_SENSOR_BASE] = 1;
	cr_assert_eq(Event_Sensor_Get_State(o), E_PASSIVE);
	cr_assert_eq(Event_Sensor_State("pass", E_ACTIVE), E_SUCCESS);
	EVENT_SENSOR("pass", c, E_POINT, &x, &p);
	cr_assert_eq(count(p), 1);
	cr_assert_eq(rec_of(p, 0)->dormant, 0);
}

Test(states, delete_class)
{
	int one = 1, c = Event_Register_Class("E_DEL", "%d", sizeof one);

	EVENT("d", c, E_POINT, &one);
	cr_assert_eq(Event_Delete(E_EVENT), E_FAILURE);
	cr_assert_eq(Event_Delete(c), E_SUCCESS);
	cr_assert_eq(Event_Delete(c), E_FAILURE);
	EVENT("d", c, E_POINT, &one);
	cr_assert_eq(count(eid_of("d", E_POINT)), 1);
	cr_assert_neq(Event_Register_Class("E_DEL", "%d", sizeof one), c);
}

/* ---- aggregation ---- */

struct num {
	int		i;
	double		d;
	const char	*s;
};

static void
num(int cls, int i, double d, const char *s)
{
	struct num n = { i, d, s };

	Event_Sensor("n", cls, E_POINT, &n, NULL);
}

static int
numclass(void)
{
	struct num n;

	return Event_Register_Class("E_NUM", "%d %lf %s", sizeof n);
}

Test(aggregate, add_by_events)
{
	int c = numclass(), agg, i;
	const struct srec *r;

	cr_assert_eq(Event_Handle_Rate(c, 3, E_ADD, E_HANDLE_BY_EVENTS),
	    E_SUCCESS);
	for (i = 1; i <= 7; i++)
		num(c, i, i * 0.25, i == 3 ? "three" : "x");
	agg = eid_of("n", E_AGGREGATE);
	cr_assert_str_eq(types[agg - GMI_SENSOR_BASE].fmt,
	    "E_POINT count=%lu sum=%ld sum=%f latest=%s");
	cr_assert_eq(types[agg - GMI_SENSOR_BASE].cls, c);
	cr_assert_eq(count(eid_of("n", E_POINT)), 0);
	cr_assert_eq(count(agg), 2);
	r = rec_of(agg, 0);
	cr_assert(r->f[0].v.u == 3 && r->f[1].v.i == 6);
	cr_assert_float_eq(r->f[2].v.d, 1.5, 1e-12);
	cr_assert_str_eq(r->str[3], "three");
	r = rec_of(agg, 1);
	cr_assert(r->f[0].v.u == 3 && r->f[1].v.i == 15);
	cr_assert_eq(Event_Finalize(NULL), E_SUCCESS);
	cr_assert_eq(count(agg), 3);
	r = rec_of(agg, 2);
	cr_assert(r->f[0].v.u == 1 && r->f[1].v.i == 7);
	cr_assert_eq(Event_Finalize(NULL), E_SUCCESS);
	cr_assert_eq(count(agg), 3);
}

Test(aggregate, mean_and_latest)
{
	int c = numclass(), agg, i;
	const struct srec *r;

	cr_assert_eq(Event_Handle_Rate(c, 4, E_MEAN, E_HANDLE_BY_EVENTS),
	    E_SUCCESS);
	for (i = 1; i <= 4; i++)
		num(c, i, -i, "m");
	agg = eid_of("n", E_AGGREGATE);
	cr_assert_str_eq(types[agg - GMI_SENSOR_BASE].fmt,
	    "E_POINT count=%lu mean=%f mean=%f latest=%s");
	r = rec_of(agg, 0);
	cr_assert_eq(r->f[1].kind, REC_K_DOUBLE);
	cr_assert_float_eq(r->f[1].v.d, 2.5, 1e-12);
	cr_assert_float_eq(r->f[2].v.d, -2.5, 1e-12);
	/* A new mode: a new aggregate type. */
	cr_assert_eq(Event_Handle_Rate(c, 2, E_LATEST, E_HANDLE_BY_EVENTS),
	    E_SUCCESS);
	num(c, 10, 1, "a");
	num(c, 20, 2, "b");
	cr_assert_eq(nrec, 2);
	r = &recs[1];
	cr_assert_neq(r->eid, agg);
	cr_assert_str_eq(types[r->eid - GMI_SENSOR_BASE].fmt,
	    "E_POINT count=%lu latest=%ld latest=%f latest=%s");
	cr_assert(r->f[0].v.u == 2 && r->f[1].v.i == 20);
	cr_assert_str_eq(r->str[3], "b");
}

Test(aggregate, by_time)
{
	struct timespec ts = { 1, 50000000 };
	int c = numclass(), agg;

	cr_assert_eq(Event_Handle_Rate(c, 1, E_ADD, E_HANDLE_BY_TIME),
	    E_SUCCESS);
	num(c, 1, 0, "");
	num(c, 2, 0, "");
	agg = eid_of("n", E_AGGREGATE);
	cr_assert_eq(count(agg), 0);
	nanosleep(&ts, NULL);
	num(c, 3, 0, "");
	cr_assert_eq(count(agg), 1);
	cr_assert(rec_of(agg, 0)->f[0].v.u == 3 &&
	    rec_of(agg, 0)->f[1].v.i == 6);
	num(c, 4, 0, "");
	cr_assert_eq(count(agg), 1);
}

Test(aggregate, rate_change_flushes)
{
	int c = numclass(), agg;

	cr_assert_eq(Event_Handle_Rate(c, 10, E_ADD, E_HANDLE_BY_EVENTS),
	    E_SUCCESS);
	num(c, 1, 0, "");
	num(c, 2, 0, "");
	agg = eid_of("n", E_AGGREGATE);
	cr_assert_eq(Event_Handle_Rate(E_ALL, 1, E_LATEST, E_HANDLE_IMM),
	    E_SUCCESS);
	cr_assert_eq(count(agg), 1);
	cr_assert_eq(rec_of(agg, 0)->f[1].v.i, 3);
	num(c, 5, 0, "");
	cr_assert_eq(count(eid_of("n", E_POINT)), 1);
}

Test(aggregate, bad_rates)
{
	struct { int a[16]; } big;
	int c = numclass(), b;

	(void)big;
	b = Event_Register_Class("E_BIG",
	    "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", sizeof big);
	cr_assert_gt(b, 0);
	cr_assert_eq(Event_Handle_Rate(c, 0, E_ADD, E_HANDLE_BY_EVENTS),
	    E_FAILURE);
	cr_assert_eq(Event_Handle_Rate(c, 1, 3, E_HANDLE_BY_EVENTS),
	    E_FAILURE);
	cr_assert_eq(Event_Handle_Rate(c, 1, E_ADD, 3), E_FAILURE);
	cr_assert_eq(Event_Handle_Rate(99, 1, E_ADD, E_HANDLE_BY_EVENTS),
	    E_FAILURE);
	cr_assert_eq(Event_Handle_Rate(b, 1, E_ADD, E_HANDLE_BY_EVENTS),
	    E_FAILURE);
	cr_assert_eq(Event_Handle_Rate(E_ALL, 1, E_ADD, E_HANDLE_BY_EVENTS),
	    E_FAILURE);
	cr_assert_eq(Event_Handle_Rate(b, 0, E_ADD, E_HANDLE_IMM), E_SUCCESS);
	cr_assert_eq(Event_Handle_Rate(E_USER, 1, E_ADD, E_HANDLE_BY_EVENTS),
	    E_FAILURE);
}

Test(aggregate, passive_not_counted)
{
	int c = numclass(), agg;

	cr_assert_eq(Event_Handle_Rate(c, 2, E_ADD, E_HANDLE_BY_EVENTS),
	    E_SUCCESS);
	num(c, 1, 0, "");
	Event_Sensor_Control(c, FALSE);
	num(c, 100, 0, "");
	Event_Sensor_Control(c, TRUE);
	num(c, 2, 0, "");
	agg = eid_of("n", E_AGGREGATE);
	cr_assert_eq(count(agg), 1);
	cr_assert_eq(rec_of(agg, 0)->f[1].v.i, 3);
}

static int mtcls;

static void *
adder(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 10000; i++)
		num(mtcls, 1, 1, "t");
	return NULL;
}

Test(aggregate, threads)
{
	pthread_t th[4];
	uint64_t events = 0;
	int agg, i;

	mtcls = numclass();
	cr_assert_eq(Event_Handle_Rate(mtcls, 1000, E_ADD,
	    E_HANDLE_BY_EVENTS), E_SUCCESS);
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, adder, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	agg = eid_of("n", E_AGGREGATE);
	cr_assert_eq(count(agg), 40);
	for (i = 0; i < nrec; i++) {
		cr_assert_eq(recs[i].f[0].v.u, 1000);
		cr_assert_eq(recs[i].f[1].v.i, 1000);
		events += recs[i].f[0].v.u;
	}
	cr_assert_eq(events, 40000);
}

/* The child of a fork does not report its parent's pending events. */
Test(aggregate, fork_child_starts_empty)
{
	int c = numclass(), agg, st;
	pid_t pid;

	cr_assert_eq(Event_Handle_Rate(c, 10, E_ADD, E_HANDLE_BY_EVENTS),
	    E_SUCCESS);
	num(c, 1, 0, "");
	num(c, 2, 0, "");
	agg = eid_of("n", E_AGGREGATE);
	pid = fork();
	if (pid == 0) {
		bee_agg_flush(E_ALL);
		_exit(count(agg) == 0 ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	bee_agg_flush(E_ALL);
	cr_assert_eq(count(agg), 1);
	cr_assert_eq(rec_of(agg, 0)->f[1].v.i, 3);
}
