/* gmi.c: the GMI API; GMI_Event's path from arguments to a committed record. */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "gmi_int.h"

#define GRM_API __attribute__((visibility("default")))

/* Event types by id; predefined ones (negative ids) apart.  Written under
 * gmi_def_lock; `defined` is stored last with release semantics, so a
 * reader that sees it set sees the rest. */
static struct gmi_type gmi_types[GRM_EID_MAX];
static struct gmi_type gmi_predef[3];
static char *gmi_formats[GRM_EID_MAX];
static pthread_mutex_t gmi_def_lock = PTHREAD_MUTEX_INITIALIZER;

/* fork: hold the definition lock across it so the child's copy is sane. */
void
gmi_def_lock_fork(int phase)
{
	if (phase == 0)
		pthread_mutex_lock(&gmi_def_lock);
	else
		pthread_mutex_unlock(&gmi_def_lock);
}

static inline struct gmi_type *
type_of(int eid)
{
	if ((unsigned)eid < GRM_EID_MAX)
		return &gmi_types[eid];
	if (eid >= REC_EID_BLOCK_NAME && eid < 0)
		return &gmi_predef[-eid - 1];
	return NULL;
}

static inline int
traced(void)
{
	int st = atomic_load_explicit(&gmi_state, memory_order_acquire);

	if (unlikely(st != GMI_ON)) {
		if (st != GMI_UNINIT || gmi_init() != GMI_ON)
			return 0;
	}
	return atomic_load_explicit(&gmi_seg->enabled, memory_order_relaxed);
}

/* Room for len bytes in the thread's chunk, or NULL (event lost). */
static inline char *
reserve(uint32_t len)
{
	if (likely(gmi_thr.data != NULL && gmi_thr.off + len <= gmi_thr.cap))
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

static inline void
put_hdr(char *p, uint32_t len, const struct gmi_type *ty, int eid,
	uint64_t ts)
{
	struct rec_hdr h;

	h.len = (uint16_t)len;
	h.cls = ty->cls;
	h.attr = ty->attr;
	h.eid = eid;
	h.ts = ts;
	memcpy(p, &h, sizeof h);
}

/* Length of the record for these arguments, or 0 if a string is too long
 * or NULL. */
static uint32_t
record_len(const struct gmi_type *ty, va_list ap)
{
	size_t len = sizeof(struct rec_hdr), sl;
	const char *s;
	unsigned i;

	for (i = 0; i < ty->fmt.n; i++) {
		switch (ty->fmt.va[i]) {
		case REC_VA_INT:
		case REC_VA_UINT:
			(void)va_arg(ap, int);
			len += 8;
			break;
		case REC_VA_LONG:
		case REC_VA_ULONG:
			(void)va_arg(ap, long);
			len += 8;
			break;
		case REC_VA_DOUBLE:
			(void)va_arg(ap, double);
			len += 8;
			break;
		default:
			s = va_arg(ap, const char *);
			if (s == NULL)
				return 0;
			sl = strnlen(s, REC_STR_MAX + 1);
			if (sl > REC_STR_MAX)
				return 0;
			len += rec_str_size(sl);
			break;
		}
	}
	return (uint32_t)len;
}

static void
put_fields(char *p, const struct gmi_type *ty, va_list ap)
{
	const char *s;
	int64_t iv;
	uint64_t uv;
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
		default:
			s = va_arg(ap, const char *);
			sl = (uint32_t)strlen(s);
			memcpy(p, &sl, 4);
			memcpy(p + 4, s, sl);
			memset(p + 4 + sl, 0, rec_str_size(sl) - 4 - sl);
			p += rec_str_size(sl);
			break;
		}
	}
}

static int
emit(int eid, const struct gmi_type *ty, va_list ap)
{
	uint32_t len = ty->fixed_len;
	uint64_t ts;
	va_list cp;
	char *p;

	if (unlikely(ty->has_str)) {
		va_copy(cp, ap);
		len = record_len(ty, cp);
		va_end(cp);
		if (len == 0 || len > REC_MAX)
			return gmi_error(GRM_E2BIG, "event %d: string argument "
			    "NULL or longer than %d bytes", eid, REC_STR_MAX);
	}
	ts = clk_mono_ns();
	p = reserve(len);
	if (unlikely(p == NULL))
		return GRM_ELOST;
	put_hdr(p, len, ty, eid, ts);
	put_fields(p + sizeof(struct rec_hdr), ty, ap);
	commit(len);
	return GRM_OK;
}

/* Emits with the fields given as varargs. */
static int
emitf(int eid, const struct gmi_type *ty, ...)
{
	va_list ap;
	int r;

	va_start(ap, ty);
	r = emit(eid, ty, ap);
	va_end(ap);
	return r;
}

GRM_API int
GMI_Event(int eid, ...)
{
	const struct gmi_type *ty;
	va_list ap;
	int r;

	if (unlikely(!traced()))
		return GRM_OK;
	if (unlikely((unsigned)eid >= GRM_EID_MAX))
		return gmi_error(GRM_EINVAL, "GMI_Event: event id %d out of "
		    "range 0..%d", eid, GRM_EID_MAX - 1);
	ty = &gmi_types[eid];
	if (unlikely(!__atomic_load_n(&ty->defined, __ATOMIC_ACQUIRE)))
		return gmi_error(GRM_EUNDEF, "GMI_Event: event %d used before "
		    "GMI_DefineEvent", eid);
	va_start(ap, eid);
	r = emit(eid, ty, ap);
	va_end(ap);
	return r;
}

/* Writes the definition record of ty into the stream. */
static int
emit_define(int eid, const struct gmi_type *ty, const char *format,
	    const char *dsc)
{
	char buf[REC_MAX];
	size_t len;
	char *p;

	len = rec_build_define(buf, eid, ty->cls, ty->attr, format, dsc,
	    clk_mono_ns());
	if (len == 0)
		return gmi_error(GRM_E2BIG, "event %d: format or description "
		    "too long", eid);
	p = reserve((uint32_t)len);
	if (p == NULL)
		return GRM_ELOST;
	memcpy(p, buf, len);
	commit((uint32_t)len);
	return GRM_OK;
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
		    "\"%.64s\" (supported: %%d %%i %%u %%x %%o %%c %%f %%g "
		    "%%e %%s with l/ll/h/z modifiers, at most %d fields)",
		    eid, format, REC_ARGS_MAX);
	ty->cls = cls;
	ty->attr = attr;
	ty->fixed_len = sizeof(struct rec_hdr);
	for (i = 0; i < ty->fmt.n; i++) {
		if (ty->fmt.kind[i] == REC_K_STR)
			ty->has_str = 1;
		else
			ty->fixed_len += 8;
	}
	return GRM_OK;
}

GRM_API int
GMI_DefineEvent(int eid, const char *format, const char *dsc)
{
	struct gmi_type *ty, nt;
	int r;

	if (!traced())
		return GRM_OK;
	if (eid < 0 || eid >= GRM_EID_MAX)
		return gmi_error(GRM_EINVAL, "GMI_DefineEvent: event id %d out "
		    "of range 0..%d", eid, GRM_EID_MAX - 1);
	if (format == NULL)
		return gmi_error(GRM_EINVAL, "GMI_DefineEvent: event %d: NULL "
		    "format", eid);
	r = make_type(&nt, eid, REC_CLASS_USER, REC_ATTR_POINT, format);
	if (r != GRM_OK)
		return r;
	ty = &gmi_types[eid];
	pthread_mutex_lock(&gmi_def_lock);
	if (ty->defined) {
		r = strcmp(gmi_formats[eid], format) == 0 ? GRM_OK :
		    gmi_error(GRM_EREDEF, "GMI_DefineEvent: event %d already "
		    "defined with format \"%.64s\"", eid, gmi_formats[eid]);
		pthread_mutex_unlock(&gmi_def_lock);
		return r;
	}
	gmi_formats[eid] = strdup(format);
	if (gmi_formats[eid] == NULL) {
		pthread_mutex_unlock(&gmi_def_lock);
		return gmi_error(GRM_EINVAL, "GMI_DefineEvent: out of memory");
	}
	r = emit_define(eid, &nt, format, dsc);
	if (r == GRM_OK) {
		nt.defined = 0;
		*ty = nt;
		__atomic_store_n(&ty->defined, 1, __ATOMIC_RELEASE);
	} else {
		free(gmi_formats[eid]);
		gmi_formats[eid] = NULL;
	}
	pthread_mutex_unlock(&gmi_def_lock);
	return r;
}

/* Defines the predefined types once per process; called by gmi_init
 * before the state turns GMI_ON, so no lock. */
void
gmi_define_predefined(void)
{
	static const struct {
		int		eid;
		uint8_t		attr;
		const char	*format;
		const char	*dsc;
	} pd[] = {
		{ REC_EID_BLOCK_BEGIN, REC_ATTR_ACT, "%d", "block begin" },
		{ REC_EID_BLOCK_END, REC_ATTR_TERM, "%d", "block end" },
		{ REC_EID_BLOCK_NAME, REC_ATTR_NAME, "%d %s", "block name" },
	};
	struct gmi_type *ty;
	size_t i;

	for (i = 0; i < sizeof pd / sizeof pd[0]; i++) {
		ty = type_of(pd[i].eid);
		if (make_type(ty, pd[i].eid, REC_CLASS_PROCEDURE, pd[i].attr,
		    pd[i].format) == GRM_OK)
			ty->defined = 1;
	}
}

GRM_API int
GMI_DefineBlock(int bid, const char *name)
{
	if (!traced())
		return GRM_OK;
	if (name == NULL || strlen(name) > REC_STR_MAX)
		return gmi_error(GRM_EINVAL, "GMI_DefineBlock: block %d: "
		    "name NULL or too long", bid);
	return emitf(REC_EID_BLOCK_NAME, type_of(REC_EID_BLOCK_NAME), bid,
	    name);
}

GRM_API int
GMI_BlockBegin(int bid)
{
	if (unlikely(!traced()))
		return GRM_OK;
	return emitf(REC_EID_BLOCK_BEGIN, type_of(REC_EID_BLOCK_BEGIN), bid);
}

GRM_API int
GMI_BlockEnd(int bid)
{
	if (unlikely(!traced()))
		return GRM_OK;
	return emitf(REC_EID_BLOCK_END, type_of(REC_EID_BLOCK_END), bid);
}

GRM_API int
GMI_Traced(void)
{
	int st = atomic_load(&gmi_state);

	if (st == GMI_UNINIT)
		st = gmi_init();
	return st == GMI_ON;
}
