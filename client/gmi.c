/* SPDX-License-Identifier: MIT */
/* gmi.c: the GMI API; GMI_Event's path from arguments to a committed record. */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmi_int.h"
#include "util/clock.h"

/* Event types by REC_EID_BIT(eid).  Written under gmi_def_lock; `st`
 * is stored last with release semantics, so a reader that sees a type
 * defined sees the rest. */
struct gmi_type gmi_types[GMI_NTYPES];
static char *gmi_formats[GMI_NTYPES];
static char *gmi_names[GMI_NTYPES];
static pthread_mutex_t gmi_def_lock = PTHREAD_MUTEX_INITIALIZER;

/* Runtime control: the segment's words as last applied, and this
 * process's own switches (BEE). */
uint32_t gmi_ctl_seen = UINT32_MAX;	/* matches neither constant */
static uint32_t gmi_cls_off_seg[8], gmi_cls_off_local[8];
static uint32_t gmi_watch[REC_EID_BITS / 32];	/* watched by a plan */
static struct gmi_sw gmi_sw;	/* a plan's switches of this process */
_Atomic int64_t gmi_rank = -1;	/* GMI_SetName's (a plan's rank scope) */
static char gmi_filter_seg[SEG_FILTER_MAX], gmi_filter_local[SEG_FILTER_MAX];

/*
 * The word every GMI call checks first, inline in grm.h: until the process
 * is attached, a constant 1 (so the first call attaches); then the
 * segment's ctl word; a constant 0 if the process is not traced.  The
 * fast path compares it with gmi_ctl_seen, the value whose generation was
 * last applied, recording on: anything else takes the slow path.
 */
static const unsigned int gmi_one = 1, gmi_zero;
GRM_API const volatile unsigned int *volatile GMI_on_ = &gmi_one;

void
gmi_set_on_word(int traced)
{
	if (traced > 0 && gmi_seg != NULL)
		GMI_on_ = (const volatile unsigned int *)&gmi_seg->ctl;
	else
		GMI_on_ = traced < 0 ? &gmi_one : &gmi_zero;
}

/* fork: hold the definition lock across it so the child's copy is sane. */
void
gmi_def_lock_fork(int phase)
{
	if (phase == 0)
		pthread_mutex_lock(&gmi_def_lock);
	else
		pthread_mutex_unlock(&gmi_def_lock);
}

/* Whether to record: attaches the process first if need be, and applies
 * control changes. */
static int
slow_traced(void)
{
	int st = atomic_load_explicit(&gmi_state, memory_order_acquire);
	uint32_t w;

	if (st == GMI_UNINIT)
		st = gmi_init();
	if (st != GMI_ON)
		return 0;
	w = atomic_load_explicit(&gmi_seg->ctl, memory_order_acquire);
	if ((w | SEG_CTL_ON) != __atomic_load_n(&gmi_ctl_seen, __ATOMIC_RELAXED))
		gmi_ctl_refresh();
	return (w & SEG_CTL_ON) != 0;
}

/* Recording is on and no control change is pending (the word the
 * caller's inline check read is the one last applied). */
static inline int
ctl_current(void)
{
	return *GMI_on_ == __atomic_load_n(&gmi_ctl_seen, __ATOMIC_RELAXED);
}

static inline int
traced(void)
{
	if (likely(ctl_current()))
		return 1;
	return slow_traced();
}

static int
bit_set(const uint32_t *w, uint32_t b)
{
	return (w[b / 32] >> (b % 32)) & 1;
}

/* What a defined type should do now: record, count, or nothing.  Called
 * with gmi_def_lock held (or before the process is traced). */
static uint8_t
type_state(uint32_t b)
{
	const struct gmi_type *ty = &gmi_types[b];
	const char *name = gmi_names[b] != NULL ? gmi_names[b] : "";
	int eid = (int)b - REC_EID_BIAS;
	int on = bit_set(gmi_sw.eid_on, b) || bit_set(gmi_sw.cls_on, ty->cls);

	/* A plan's switch of this process comes after the control words
	 * (doc/plans.md 4.4): off wins over on. */
	if (bit_set(gmi_sw.eid_off, b) || bit_set(gmi_sw.cls_off, ty->cls) ||
	    bit_set(gmi_cls_off_local, ty->cls))
		return GMI_T_OFF;
	if (!on && bit_set(gmi_cls_off_seg, ty->cls))
		return GMI_T_OFF;
	if (!on && gmi_seg != NULL && (atomic_load_explicit(
	    &gmi_seg->eid_off[b / 32], memory_order_relaxed) >> (b % 32) & 1))
		return GMI_T_OFF;
	/* The filters apply to named types; the predefined ones (blocks,
	 * messages, names) are switched by class or id only. */
	if (eid >= 0 && ((gmi_filter_seg[0] != '\0' &&
	    strstr(name, gmi_filter_seg) == NULL) ||
	    (gmi_filter_local[0] != '\0' &&
	    strstr(name, gmi_filter_local) == NULL)))
		return GMI_T_OFF;
	/* Statistics mode counts events, but names are still recorded. */
	if (gmi_stats_mode && ty->attr != REC_ATTR_NAME)
		return GMI_T_STATS;
	return bit_set(gmi_watch, b) ? GMI_T_CHECK : GMI_T_REC;
}

/* Recomputes every defined type's state; gmi_def_lock held. */
static void
restate_all(void)
{
	uint32_t b;

	for (b = 0; b < GMI_NTYPES; b++)
		if (atomic_load_explicit(&gmi_types[b].st,
		    memory_order_relaxed) != GMI_T_UNDEF)
			atomic_store_explicit(&gmi_types[b].st, type_state(b),
			    memory_order_release);
}

void
gmi_ctl_refresh(void)
{
	struct seg_hdr *s = gmi_seg;
	uint32_t gen;
	unsigned i;

	if (s == NULL)
		return;
	pthread_mutex_lock(&gmi_def_lock);
	gen = atomic_load_explicit(&s->ctl, memory_order_acquire) | SEG_CTL_ON;
	if (gen != gmi_ctl_seen) {
		for (i = 0; i < 8; i++)
			gmi_cls_off_seg[i] = atomic_load_explicit(
			    &s->cls_off[i], memory_order_relaxed);
		/* The filter is shared memory: copy, then terminate. */
		memcpy(gmi_filter_seg, s->filter, sizeof gmi_filter_seg);
		gmi_filter_seg[sizeof gmi_filter_seg - 1] = '\0';
		gmi_plan_refresh(s, gmi_watch, &gmi_sw);
		restate_all();
		__atomic_store_n(&gmi_ctl_seen, gen, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&gmi_def_lock);
}

void
gmi_local_class(unsigned cls, int on)
{
	if (cls > 255)
		return;
	pthread_mutex_lock(&gmi_def_lock);
	if (on)
		gmi_cls_off_local[cls / 32] &= ~(1u << (cls % 32));
	else
		gmi_cls_off_local[cls / 32] |= 1u << (cls % 32);
	restate_all();
	pthread_mutex_unlock(&gmi_def_lock);
}

int
gmi_local_filter(const char *substr)
{
	if (substr != NULL && strlen(substr) >= SEG_FILTER_MAX)
		return gmi_error(GRM_EINVAL, "sensor filter longer than %d "
		    "bytes", SEG_FILTER_MAX - 1);
	pthread_mutex_lock(&gmi_def_lock);
	snprintf(gmi_filter_local, sizeof gmi_filter_local, "%s",
	    substr != NULL ? substr : "");
	restate_all();
	pthread_mutex_unlock(&gmi_def_lock);
	return GRM_OK;
}

int
gmi_type_on(int eid)
{
	const struct gmi_type *ty;
	uint8_t st;

	if (!traced() || (ty = gmi_type_of(eid)) == NULL)
		return 0;
	st = atomic_load_explicit(&ty->st, memory_order_acquire);
	return st == GMI_T_REC || st == GMI_T_CHECK || st == GMI_T_STATS;
}

const char *
gmi_type_name(int eid)
{
	uint32_t b = REC_EID_BIT(eid);

	return b < GMI_NTYPES ? gmi_names[b] : NULL;
}

/* Whether the thread's chunk has room for len bytes now. */
static inline int
has_room(uint32_t len)
{
	return gmi_thr.data != NULL && gmi_thr.off + len <= gmi_thr.cap;
}

/* Room for len bytes in the thread's chunk, or NULL (event lost). */
static inline char *
reserve(uint32_t len)
{
	if (likely(has_room(len)))
		return gmi_thr.data + gmi_thr.off;
	return gmi_new_chunk(len);
}

/* Publishes the record just written at the reserved place. */
static inline void
commit(uint32_t len)
{
	gmi_thr.off += len;
	atomic_store_explicit(gmi_thr.committed, gmi_thr.off,
	    memory_order_release);
}

/*
 * Length of the record for these arguments, or 0 if a string is NULL or
 * too long; the strings' lengths go to slen[] (one per %s, in order).
 */
static uint32_t
record_len(const struct gmi_type *ty, va_list ap, uint32_t *slen)
{
	size_t len = sizeof(struct rec_hdr), sl;
	const char *s;
	unsigned i, k = 0;

	for (i = 0; i < ty->fmt.n; i++) {
		switch (ty->fmt.va[i]) {
		case REC_VA_INT:
		case REC_VA_UINT:
			(void)va_arg(ap, int);
			break;
		case REC_VA_LONG:
		case REC_VA_ULONG:
			(void)va_arg(ap, long);
			break;
		case REC_VA_VOIDP:
			(void)va_arg(ap, void *);
			break;
		case REC_VA_DOUBLE:
			(void)va_arg(ap, double);
			break;
		default:
			s = va_arg(ap, const char *);
			if (s == NULL)
				return 0;
			sl = strnlen(s, REC_STR_MAX + 1);
			if (sl > REC_STR_MAX)
				return 0;
			slen[k++] = (uint32_t)sl;
			len += rec_str_size(sl) - 8;
			break;
		}
		len += 8;
	}
	return (uint32_t)len;
}

/*
 * put_fields for n fields that are all ints (the common "%d %d").  Leaves
 * ap anywhere (nothing reads it after).  On x86-64 System V, the integer
 * arguments that came in registers lie side by side in the register save
 * area that va_start filled: read from there, they are independent loads,
 * not a chain of va_arg's stores and reloads of its offset.
 */
static inline void
put_ints(char *p, unsigned n, va_list ap)
{
	int64_t iv;
	unsigned i;

#if defined(__x86_64__) && defined(__GNUC__)
	if (likely(ap[0].gp_offset + 8 * n <= 48)) {	/* 6 registers */
		const char *r = (const char *)ap[0].reg_save_area +
		    ap[0].gp_offset;
		int v;

		for (i = 0; i < n; i++) {
			memcpy(&v, r + 8 * i, sizeof v);
			iv = v;
			memcpy(p + 8 * i, &iv, 8);
		}
		return;
	}
#endif
	for (i = 0; i < n; i++) {
		iv = va_arg(ap, int);
		memcpy(p + 8 * i, &iv, 8);
	}
}

/* Writes the fields; slen[] holds the strings' lengths (record_len). */
static void
put_fields(char *p, const struct gmi_type *ty, va_list ap,
	   const uint32_t *slen)
{
	const char *s;
	int64_t iv;
	uint64_t uv, zero = 0;
	double dv;
	uint32_t sl;
	unsigned i;

	for (i = 0; i < ty->fmt.n; i++) {
		switch (ty->fmt.va[i]) {
		case REC_VA_INT:
			iv = va_arg(ap, int);
			memcpy(p, &iv, 8);
			p += 8;
			break;
		case REC_VA_UINT:
			uv = va_arg(ap, unsigned int);
			memcpy(p, &uv, 8);
			p += 8;
			break;
		case REC_VA_LONG:
			iv = va_arg(ap, long);
			memcpy(p, &iv, 8);
			p += 8;
			break;
		case REC_VA_ULONG:
			uv = va_arg(ap, unsigned long);
			memcpy(p, &uv, 8);
			p += 8;
			break;
		case REC_VA_DOUBLE:
			dv = va_arg(ap, double);
			memcpy(p, &dv, 8);
			p += 8;
			break;
		case REC_VA_VOIDP:
			uv = (uint64_t)(uintptr_t)va_arg(ap, void *);
			memcpy(p, &uv, 8);
			p += 8;
			break;
		default:
			s = va_arg(ap, const char *);
			sl = *slen++;
			/* Zero the slot's last 8 bytes (the padding), then
			 * the length and the bytes over them. */
			memcpy(p + rec_str_size(sl) - 8, &zero, 8);
			memcpy(p, &sl, 4);
			memcpy(p + 4, s, sl);
			p += rec_str_size(sl);
			break;
		}
	}
}

static int
emit(int eid, const struct gmi_type *ty, uint8_t st, va_list ap)
{
	uint32_t len = ty->fixed_len, slen[REC_ARGS_MAX];
	uint64_t ts;
	va_list cp;
	char *p;

	if (unlikely(ty->has_str)) {
		va_copy(cp, ap);
		len = record_len(ty, cp, slen);
		va_end(cp);
		if (len == 0 || len > REC_MAX)
			return gmi_error(GRM_E2BIG, "event %d: string argument "
			    "NULL or longer than %d bytes", eid, REC_STR_MAX);
	}
	/* The time after the room: a writer that waited for a free chunk
	 * commits what it stamps at once, as the order of the trace
	 * assumes (doc/ARCHITECTURE.md, "Global order"). */
	p = reserve(len);
	if (unlikely(p == NULL))
		return GRM_ELOST;
	ts = gmi_now();
	rec_put_hdr(p, len, ty->cls, ty->attr, eid, ts);
	if (likely(ty->ints))
		put_ints(p + sizeof(struct rec_hdr), ty->fmt.n, ap);
	else
		put_fields(p + sizeof(struct rec_hdr), ty, ap, slen);
	commit(len);
	if (unlikely(st == GMI_T_CHECK))
		gmi_plan_check(eid, ty, p, len);
	return GRM_OK;
}

/* The range key of a record of ty whose first field, if any, is key0. */
static inline int64_t
range_key(int eid, const struct gmi_type *ty, int64_t key0)
{
	if (ty->key_field)
		return key0;
	return ty->range == GMI_R_END ? ty->range_eid : eid;
}

/* A type that is not simply on: undefined, off, or counted. */
static int
not_recorded(int eid, const struct gmi_type *ty, uint8_t st, int64_t key0)
{
	if (st == GMI_T_OFF)
		return GRM_OK;
	if (st == GMI_T_STATS)
		return gmi_stats_event(eid, ty, clk_mono_ns(),
		    range_key(eid, ty, key0));
	return gmi_error(GRM_EUNDEF, "event %d used before it was defined",
	    eid);
}

/* The first argument as a range key, for block types in statistics mode. */
static int64_t
first_int(const struct gmi_type *ty, va_list ap)
{
	va_list cp;
	int64_t v = 0;

	if (!ty->key_field)
		return 0;
	va_copy(cp, ap);
	v = va_arg(cp, int);
	va_end(cp);
	return v;
}

int
gmi_emit_va(int eid, va_list ap)
{
	const struct gmi_type *ty;
	uint8_t st;

	if (unlikely(!traced()))
		return GRM_OK;
	if ((ty = gmi_type_of(eid)) == NULL)
		return gmi_error(GRM_EINVAL, "event id %d out of range", eid);
	st = atomic_load_explicit(&ty->st, memory_order_acquire);
	if (st != GMI_T_REC && st != GMI_T_CHECK)
		return not_recorded(eid, ty, st, first_int(ty, ap));
	return emit(eid, ty, st, ap);
}

/* Emits with the fields given as varargs. */
static int
emitf(int eid, ...)
{
	va_list ap;
	int r;

	va_start(ap, eid);
	r = gmi_emit_va(eid, ap);
	va_end(ap);
	return r;
}

/* GMI_Event's every case but its common one (a recorded type of ints
 * only): not traced yet or any more, a control change to apply, a bad id,
 * a type off, counted or watched by a plan, fields other than ints, and,
 * with the TSC clock, a record that needs a new chunk. */
static __attribute__((noinline)) int
event(int eid, va_list ap)
{
	const struct gmi_type *ty;
	uint8_t st;

	if (unlikely(!traced()))
		return GRM_OK;
	if (unlikely((unsigned)eid >= GRM_EID_MAX))
		return gmi_error(GRM_EINVAL, "GMI_Event: event id %d out of "
		    "range 0..%d", eid, GRM_EID_MAX - 1);
	ty = &gmi_types[eid + REC_EID_BIAS];
	st = atomic_load_explicit(&ty->st, memory_order_acquire);
	if (unlikely(st != GMI_T_REC)) {
		if (st == GMI_T_UNDEF)
			return gmi_error(GRM_EUNDEF, "GMI_Event: event %d used "
			    "before GMI_DefineEvent", eid);
		if (st != GMI_T_CHECK)
			return not_recorded(eid, ty, st, 0);
	}
	return emit(eid, ty, st, ap);
}

/* Writes the record of ty, a type of ints only, stamped ts, in the
 * thread's chunk (has_room checked), and publishes it; the offset read
 * once. */
static inline void
put_ints_record(const struct gmi_type *ty, int eid, uint64_t ts, va_list ap)
{
	uint32_t len = ty->fixed_len, off = gmi_thr.off;
	char *p = gmi_thr.data + off;

	rec_put_hdr(p, len, ty->cls, ty->attr, eid, ts);
	put_ints(p + sizeof(struct rec_hdr), ty->fmt.n, ap);
	gmi_thr.off = off + len;
	atomic_store_explicit(gmi_thr.committed, off + len,
	    memory_order_release);
}

/* GMI_Event's common case with CLOCK_MONOTONIC, whose read is a call
 * anyway: one frame around it.  The clock is read before the room is
 * looked at; a record that does not fit goes through emit, which stamps
 * it again once it has a chunk. */
static __attribute__((noinline)) int
event_ints_mono(int eid, const struct gmi_type *ty, va_list ap)
{
	uint64_t ts = clk_mono_ns();

	if (unlikely(!has_room(ty->fixed_len)))
		return emit(eid, ty, GMI_T_REC, ap);
	put_ints_record(ty, eid, ts, ap);
	return GRM_OK;
}

GRM_API int
(GMI_Event)(int eid, ...)
{
	const struct gmi_type *ty;
	va_list ap;
	int r;

	va_start(ap, eid);
	/*
	 * The common case: traced, no control change, a recorded type of
	 * ints only.  With the TSC clock and room in the thread's chunk, it
	 * is written here, inline and without a call, so that no register
	 * is saved; with CLOCK_MONOTONIC, by event_ints_mono.  Everything
	 * else goes through event().
	 */
	if (likely(ctl_current() && (unsigned)eid < GRM_EID_MAX)) {
		ty = &gmi_types[eid + REC_EID_BIAS];
		if (likely(atomic_load_explicit(&ty->st,
		    memory_order_acquire) == GMI_T_REC && ty->ints)) {
			if (!gmi_tsc) {
				r = event_ints_mono(eid, ty, ap);
				va_end(ap);
				return r;
			}
			if (likely(has_room(ty->fixed_len))) {
				put_ints_record(ty, eid, tsc_read(), ap);
				va_end(ap);
				return GRM_OK;
			}
		}
	}
	r = event(eid, ap);
	va_end(ap);
	return r;
}

/*
 * Builds the record of eid from n decoded values into buf (REC_MAX bytes).
 * Returns its length, or 0 (with the reason reported) if the values do
 * not match the type.
 */
size_t
gmi_build_fields(char *buf, int eid, const struct gmi_type *ty, uint8_t attr,
		 const struct rec_field *f, unsigned n, uint64_t ts)
{
	size_t len = sizeof(struct rec_hdr), sl;
	unsigned i;

	if (n != ty->fmt.n) {
		gmi_error(GRM_EINVAL, "event %d: %u values for %u fields", eid,
		    n, ty->fmt.n);
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (f[i].kind != ty->fmt.kind[i]) {
			gmi_error(GRM_EINVAL, "event %d: value %u has the "
			    "wrong kind", eid, i + 1);
			return 0;
		}
		if (f[i].kind != REC_K_STR) {
			memcpy(buf + len, &f[i].v, 8);
			len += 8;
			continue;
		}
		sl = f[i].v.s.len;
		if (f[i].v.s.p == NULL || sl > REC_STR_MAX ||
		    len + rec_str_size(sl) > REC_MAX) {
			gmi_error(GRM_E2BIG, "event %d: string %u NULL or too "
			    "long", eid, i + 1);
			return 0;
		}
		memcpy(buf + len, &f[i].v.s.len, 4);
		memcpy(buf + len + 4, f[i].v.s.p, sl);
		memset(buf + len + 4 + sl, 0, rec_str_size(sl) - 4 - sl);
		len += rec_str_size(sl);
	}
	rec_put_hdr(buf, len, ty->cls, attr, eid, ts);
	return len;
}

/* Copies a record built in buf into the thread's chunk; *at: where. */
static int
put_built(const char *buf, size_t len, const char **at)
{
	int waited = !has_room((uint32_t)len);
	char *p = reserve((uint32_t)len);
	uint64_t ts;

	if (p == NULL)
		return GRM_ELOST;
	memcpy(p, buf, len);
	/* Built before a wait for room: stamped again (see emit). */
	if (waited) {
		ts = gmi_now();
		memcpy(p + offsetof(struct rec_hdr, ts), &ts, sizeof ts);
	}
	commit((uint32_t)len);
	if (at != NULL)
		*at = p;
	return GRM_OK;
}

int
gmi_emit_fields(int eid, const struct rec_field *f, unsigned n)
{
	const struct gmi_type *ty;
	char buf[REC_MAX];
	const char *at;
	size_t len;
	uint8_t st;
	int r;

	if (!traced())
		return GRM_OK;
	if ((ty = gmi_type_of(eid)) == NULL)
		return gmi_error(GRM_EINVAL, "event id %d out of range", eid);
	st = atomic_load_explicit(&ty->st, memory_order_acquire);
	if (st != GMI_T_REC && st != GMI_T_CHECK)
		return not_recorded(eid, ty, st,
		    n > 0 && f[0].kind == REC_K_INT ? f[0].v.i : 0);
	len = gmi_build_fields(buf, eid, ty, ty->attr, f, n, gmi_now());
	if (len == 0)
		return n != ty->fmt.n ? GRM_EINVAL : GRM_E2BIG;
	r = put_built(buf, len, &at);
	if (r == GRM_OK && st == GMI_T_CHECK)
		gmi_plan_check(eid, ty, at, (uint32_t)len);
	return r;
}

/* Writes the definition record of eid into the stream. */
static int
emit_define(int eid, const struct gmi_type *ty, const char *format,
	    const char *dsc)
{
	char buf[REC_MAX];
	size_t len;
	int r;

	len = rec_build_define(buf, eid, ty->cls, ty->attr, format, dsc,
	    gmi_now());
	if (len == 0)
		return gmi_error(GRM_E2BIG, "event %d: format or description "
		    "too long (at most %d and %d bytes)", eid, REC_FMT_MAX - 1,
		    REC_DSC_MAX - 1);
	r = put_built(buf, len, NULL);
	if (r == GRM_OK)
		gmi_carry_defs();
	return r;
}

/* Fills *ty from format; returns 0 or a GRM_E* code. */
static int
make_type(struct gmi_type *ty, int eid, uint8_t cls, uint8_t attr,
	  const char *format)
{
	unsigned i;

	memset(ty, 0, sizeof *ty);
	if (rec_parse_format(format, &ty->fmt) != 0)
		return gmi_error(GRM_EFORMAT, "event %d: cannot parse format "
		    "\"%.64s\" (supported: %%d %%i %%u %%x %%o %%c %%p %%f "
		    "%%g %%e %%s with h/l/ll/z/j/t modifiers, at most %d "
		    "fields, at most %d bytes)", eid, format, REC_ARGS_MAX,
		    REC_FMT_MAX - 1);
	ty->cls = cls;
	ty->attr = attr;
	ty->fixed_len = sizeof(struct rec_hdr);
	ty->ints = 1;
	for (i = 0; i < ty->fmt.n; i++) {
		if (ty->fmt.kind[i] == REC_K_STR)
			ty->has_str = 1;
		else
			ty->fixed_len += 8;
		ty->ints &= ty->fmt.va[i] == REC_VA_INT;
	}
	return GRM_OK;
}

int
gmi_define_type(int eid, uint8_t cls, uint8_t attr, uint8_t range,
		int range_eid, const char *format, const char *name)
{
	struct gmi_type *ty, nt;
	uint32_t b = REC_EID_BIT(eid);
	int r;

	if (!traced())
		return GRM_OK;
	if ((eid < 0 && !rec_eid_preload(eid)) || b >= GMI_NTYPES)
		return gmi_error(GRM_EINVAL, "event id %d out of range 0..%d",
		    eid, GRM_EID_MAX - 1);
	if (format == NULL)
		return gmi_error(GRM_EINVAL, "event %d: NULL format", eid);
	if (name != NULL && strlen(name) >= REC_DSC_MAX)
		return gmi_error(GRM_E2BIG, "event %d: description longer "
		    "than %d bytes", eid, REC_DSC_MAX - 1);
	r = make_type(&nt, eid, cls, attr, format);
	if (r != GRM_OK)
		return r;
	nt.range = range;
	nt.range_eid = range_eid;
	ty = &gmi_types[b];
	pthread_mutex_lock(&gmi_def_lock);
	if (atomic_load_explicit(&ty->st, memory_order_relaxed) !=
	    GMI_T_UNDEF) {
		r = strcmp(gmi_formats[b], format) == 0 ? GRM_OK :
		    gmi_error(GRM_EREDEF, "event %d already defined with "
		    "format \"%.64s\"", eid, gmi_formats[b]);
		pthread_mutex_unlock(&gmi_def_lock);
		return r;
	}
	gmi_formats[b] = strdup(format);
	gmi_names[b] = name != NULL ? strdup(name) : NULL;
	if (gmi_formats[b] == NULL || (name != NULL && gmi_names[b] == NULL)) {
		r = gmi_error(GRM_EINVAL, "event %d: out of memory", eid);
		goto undo;
	}
	r = emit_define(eid, &nt, format, name);
	if (r != GRM_OK)
		goto undo;
	nt.st = GMI_T_UNDEF;
	*ty = nt;
	atomic_store_explicit(&ty->st, type_state(b), memory_order_release);
	pthread_mutex_unlock(&gmi_def_lock);
	return GRM_OK;
undo:
	free(gmi_formats[b]);
	free(gmi_names[b]);
	gmi_formats[b] = gmi_names[b] = NULL;
	pthread_mutex_unlock(&gmi_def_lock);
	return r;
}

GRM_API int
GMI_DefineEvent(int eid, const char *format, const char *dsc)
{
	if (eid < 0 || eid >= GRM_EID_MAX) {
		if (!traced())
			return GRM_OK;
		return gmi_error(GRM_EINVAL, "GMI_DefineEvent: event id %d out "
		    "of range 0..%d", eid, GRM_EID_MAX - 1);
	}
	return gmi_define_type(eid, REC_CLASS_USER, REC_ATTR_POINT,
	    GMI_R_NONE, 0, format, dsc);
}

/* Defines the predefined types once per process; called by gmi_init
 * before the state turns GMI_ON, so no lock. */
void
gmi_define_predefined(void)
{
	const struct rec_predef *pd;
	struct gmi_type *ty;
	uint32_t b;
	size_t i;

	for (i = 0; i < REC_NPREDEF; i++) {
		pd = &rec_predef[i];
		b = REC_EID_BIT(pd->eid);
		ty = &gmi_types[b];
		if (make_type(ty, pd->eid, pd->cls, pd->attr, pd->format) !=
		    GRM_OK)
			continue;
		if (pd->eid == REC_EID_BLOCK_BEGIN ||
		    pd->eid == REC_EID_BLOCK_END) {
			ty->range = pd->eid == REC_EID_BLOCK_BEGIN ?
			    GMI_R_BEGIN : GMI_R_END;
			ty->key_field = 1;
		}
		gmi_names[b] = (char *)pd->dsc;
		atomic_store(&ty->st, type_state(b));
	}
}

GRM_API int
GMI_DefineBlock(int bid, const char *name)
{
	if (!traced())
		return GRM_OK;
	if (name == NULL || strlen(name) > REC_STR_MAX)
		return gmi_error(GRM_EINVAL, "GMI_DefineBlock: block %d: "
		    "name NULL or longer than %d bytes", bid, REC_STR_MAX);
	gmi_plan_block_name(bid, name);
	return emitf(REC_EID_BLOCK_NAME, bid, name);
}

GRM_API int
(GMI_BlockBegin)(int bid)
{
	return emitf(REC_EID_BLOCK_BEGIN, bid);
}

GRM_API int
(GMI_BlockEnd)(int bid)
{
	return emitf(REC_EID_BLOCK_END, bid);
}

/* One end of a message: eid is the send or the receive type. */
static int
message(const char *fn, int eid, int peer, int tag, long size)
{
	if (!traced())
		return GRM_OK;
	if (size < 0)
		return gmi_error(GRM_EINVAL, "%s: negative size %ld", fn,
		    size);
	return emitf(eid, peer, tag, size);
}

GRM_API int
GMI_MessageSend(int peer, int tag, long size)
{
	return message("GMI_MessageSend", REC_EID_MSG_SEND, peer, tag, size);
}

GRM_API int
GMI_MessageRecv(int peer, int tag, long size)
{
	return message("GMI_MessageRecv", REC_EID_MSG_RECV, peer, tag, size);
}

GRM_API int
GMI_SetName(int rank, const char *name)
{
	if (!traced())
		return GRM_OK;
	if (rank < 0)
		return gmi_error(GRM_EINVAL, "GMI_SetName: negative rank %d",
		    rank);
	if (name == NULL || strlen(name) > REC_STR_MAX)
		return gmi_error(GRM_EINVAL, "GMI_SetName: name NULL or "
		    "longer than %d bytes", REC_STR_MAX);
	/* A plan's switch of a rank scope may hold this process now: the
	 * types' states are worked out again at once. */
	if (atomic_exchange(&gmi_rank, rank) != rank && gmi_seg != NULL) {
		pthread_mutex_lock(&gmi_def_lock);
		__atomic_store_n(&gmi_ctl_seen, UINT32_MAX, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&gmi_def_lock);
		gmi_ctl_refresh();
	}
	return emitf(REC_EID_PROC_NAME, rank, name);
}

GRM_API int
GMI_Flush(void)
{
	if (!traced())
		return GRM_OK;
	return gmi_flush_lm(5000);
}

GRM_API int
GMI_Traced(void)
{
	int st = atomic_load(&gmi_state);

	if (st == GMI_UNINIT)
		st = gmi_init();
	return st == GMI_ON;
}

/*
 * One record of eid (a defined type whose one field is a 64-bit word,
 * "%lx") holding v, stamped ts (0: now).  The cheapest record there is:
 * no va_list, no string, a fixed length; for function entry and exit
 * (gmi_preload.c).  Same returns as GMI_Event.
 */
int
gmi_emit_word(int eid, uint64_t v, uint64_t ts)
{
	const struct gmi_type *ty;
	uint32_t len = sizeof(struct rec_hdr) + 8;
	uint8_t st;
	char *p;

	if (unlikely(!traced()))
		return GRM_OK;
	if ((ty = gmi_type_of(eid)) == NULL)
		return gmi_error(GRM_EINVAL, "event id %d out of range", eid);
	st = atomic_load_explicit(&ty->st, memory_order_acquire);
	if (unlikely(st != GMI_T_REC) && st != GMI_T_CHECK)
		return not_recorded(eid, ty, st, (int64_t)v);
	p = reserve(len);
	if (unlikely(p == NULL))
		return GRM_ELOST;
	rec_put_hdr(p, len, ty->cls, ty->attr, eid, ts ? ts : gmi_now());
	memcpy(p + sizeof(struct rec_hdr), &v, 8);
	commit(len);
	if (unlikely(st == GMI_T_CHECK))
		gmi_plan_check(eid, ty, p, len);
	return GRM_OK;
}
