/* SPDX-License-Identifier: MIT */
/* grm_tp.c: the probes of the grm_bench tracepoint provider (grm_tp.h). */
#define TRACEPOINT_CREATE_PROBES
#include "grm_tp.h"
