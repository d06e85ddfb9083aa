/* SPDX-License-Identifier: MIT */
/* gmi_preload.c: libgrm's hooks for its preload library: its event types,
 * in the reserved negative eid space, defined and recorded (gmi_preload.h). */
#include <errno.h>
#include <stdarg.h>

#include "gmi_int.h"
#include "gmi_preload.h"

static int
pl_eid(int eid)
{
	return rec_eid_preload(eid);
}

GRM_API int
GMI_PreloadDefine(int eid, int cls, int attr, const char *format,
		  const char *name)
{
	if (!pl_eid(eid) || cls < 0 || cls > 255 || attr < 0 || attr > 255)
		return gmi_error(GRM_EINVAL, "GMI_PreloadDefine: event %d, "
		    "class %d, attribute %d", eid, cls, attr);
	return gmi_define_type(eid, (uint8_t)cls, (uint8_t)attr, GMI_R_NONE,
	    0, format, name);
}

GRM_API void
GMI_PreloadExit(int status)
{
	int saved = errno;

	if (atomic_load(&gmi_state) == GMI_ON)
		gmi_exit_note(status);
	errno = saved;
}

GRM_API int
GMI_PreloadEvent(int eid, ...)
{
	va_list ap;
	int r, saved = errno;

	if (!pl_eid(eid))
		return gmi_error(GRM_EINVAL, "GMI_PreloadEvent: event %d", eid);
	va_start(ap, eid);
	r = gmi_emit_va(eid, ap);
	va_end(ap);
	errno = saved;
	return r;
}

GRM_API uint64_t
GMI_PreloadNow(void)
{
	return gmi_now();
}

GRM_API int
GMI_PreloadFunc(int eid, uint64_t addr, uint64_t ts)
{
	int saved = errno, r;

	if (eid != REC_EID_FN_ENTER && eid != REC_EID_FN_EXIT)
		return gmi_error(GRM_EINVAL, "GMI_PreloadFunc: event %d", eid);
	r = gmi_emit_word(eid, addr, ts);
	errno = saved;
	return r;
}
