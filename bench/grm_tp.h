/* SPDX-License-Identifier: MIT */
/*
 * grm_tp.h: the LTTng-UST tracepoint provider of bench/bench_lttng.c, one
 * event with two int fields, the counterpart of GMI_Event(1, "%d %d").
 * Only bench/lttng.sh builds it; grm itself does not use LTTng.
 */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER grm_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./grm_tp.h"

#if !defined(GRM_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define GRM_TP_H

#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(
	grm_bench,
	two_ints,
	TP_ARGS(int, a, int, b),
	TP_FIELDS(
		ctf_integer(int, a, a)
		ctf_integer(int, b, b)
	)
)

#endif /* GRM_TP_H */

#include <lttng/tracepoint-event.h>
