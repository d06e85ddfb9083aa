/* SPDX-License-Identifier: MIT */
/* gmi_preload.h: the calls libgrm exports for its preload library
 * (libgrm-preload.so, preload/) alone: not in grm.h, not part of the API. */
#ifndef GRM_GMI_PRELOAD_H
#define GRM_GMI_PRELOAD_H

#include <stdint.h>

/*
 * Defines one of the preload library's event types (REC_EID_PL_MIN ..
 * REC_EID_PL_MAX in common/rec/rec.h) in this process image: a definition
 * record, as GMI_DefineEvent writes, with the class and attribute given.
 * Returns GRM_OK (also when the process is not traced) or a GRM_E* code;
 * any other eid is GRM_EINVAL.
 */
int GMI_PreloadDefine(int eid, int cls, int attr, const char *format,
		      const char *name);

/* Records one event of such a type (defined first); same returns as
 * GMI_Event.  Never changes errno. */
int GMI_PreloadEvent(int eid, ...);

/* The process is about to end by _exit or _Exit with status: tells its
 * Local Monitor, as libgrm's on_exit handler does at exit (none runs at
 * _exit), so that the #PROC end line says exit and the status even if
 * the parent reaps the process before the LM can look. */
void GMI_PreloadExit(int status);

/* Records a function's entry or exit (REC_EID_FN_ENTER or _EXIT, defined
 * first): the function's address, at time ts (GMI_PreloadNow's; 0:
 * now).  No allocation, no lock, no system call but when the thread
 * needs a new chunk; same returns as GMI_Event; never changes errno. */
int GMI_PreloadFunc(int eid, uint64_t addr, uint64_t ts);

/* Now on the clock records are stamped with: CLOCK_MONOTONIC ns, or TSC
 * ticks in a segment of GRM_CLOCK=tsc (not a duration's unit then). */
uint64_t GMI_PreloadNow(void);

#endif /* GRM_GMI_PRELOAD_H */
