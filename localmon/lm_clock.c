/* SPDX-License-Identifier: MIT */
/* lm_clock.c: the clock of the LM's segment (GRM_CLOCK): chosen when the
 * segment is made, the TSC calibrated against CLOCK_MONOTONIC, and the
 * calibration sent to each Main Monitor (WIRE_TSC; doc/clock-sync.md,
 * "The TSC clock"). */
#include <time.h>

#include "lm.h"
#include "net/peer.h"
#include "util/clock.h"
#include "util/log.h"

/* The first calibration's span: the rate is refined at each connection. */
#define LM_TSC_FIRST_NS	20000000u

static uint64_t
lm_tsc_now(void)
{
	return tsc_read();
}

int
lm_clock_start(struct lm *lm, int want_tsc)
{
	struct timespec d = { 0, LM_TSC_FIRST_NS };
	struct tsc_pair b;
	char why[256];

	lm->tsc = 0;
	if (lm->adopted)
		/* The clock its writers stamp with, whatever ours says. */
		want_tsc = lm->seg->clock == SEG_CLOCK_TSC;
	else if (want_tsc && !tsc_usable(why, sizeof why)) {
		log_warn("GRM_CLOCK=tsc refused: %s; records are stamped with "
		    "CLOCK_MONOTONIC", why);
		want_tsc = 0;
	}
	if (want_tsc && !TSC_HAVE) {
		log_warn("segment on the TSC clock, which this host lacks");
		return -1;
	}
	if (!want_tsc) {
		lm->seg->clock = SEG_CLOCK_MONO;
		return 0;
	}
	tsc_pair(&lm->tsc_first);
	nanosleep(&d, NULL);
	tsc_pair(&b);
	if (tsc_calibrate(&lm->tsc_first, &b, &lm->tsc_cal) != 0) {
		log_warn("the TSC did not advance: records are stamped with "
		    "CLOCK_MONOTONIC");
		if (lm->adopted)
			return -1;
		lm->seg->clock = SEG_CLOCK_MONO;
		return 0;
	}
	lm->tsc = 1;
	lm->seg->clock = SEG_CLOCK_TSC;
	log_info("clock: TSC, %.6f ticks per ns (within %llu ppb), "
	    "CLOCK_MONOTONIC read within %llu ns",
	    4294967296.0 / (double)lm->tsc_cal.mult,
	    (unsigned long long)lm->tsc_cal.rate_ppb,
	    (unsigned long long)lm->tsc_cal.err_ns);
	return 0;
}

uint64_t
lm_now(const struct lm *lm)
{
	return lm->tsc ? tsc_read() : clk_mono_ns();
}

uint64_t
lm_clock_dur(const struct lm *lm, uint64_t ns)
{
	return lm->tsc ? tsc_ticks(&lm->tsc_cal, ns) : ns;
}

/*
 * The calibration refreshed (from the first reading to now: the longer
 * the span, the better the rate) and sent; the exchanges that follow read
 * the TSC.  How far the previous calibration had strayed from
 * CLOCK_MONOTONIC is logged.  Nothing on a CLOCK_MONOTONIC segment.
 */
void
lm_clock_send(struct lm *lm)
{
	unsigned char buf[48];
	struct tsc_cal c;
	struct tsc_pair now;
	struct wire_wr w;
	int64_t off;

	if (!lm->tsc)
		return;
	tsc_pair(&now);
	off = (int64_t)(tsc_to_ns(&lm->tsc_cal, now.tick) - now.ns);
	/* The firing thread reads it (a PLAN's durations): under the lock
	 * they share. */
	lm_act_lock(lm);
	if (tsc_calibrate(&lm->tsc_first, &now, &c) == 0 &&
	    c.span_ns > lm->tsc_cal.span_ns)
		lm->tsc_cal = c;
	lm_act_unlock(lm);
	log_debug("TSC calibration refreshed over %.3f s: the previous one "
	    "was off by %lld ns (+- %llu)", (double)lm->tsc_cal.span_ns / 1e9,
	    (long long)off, (unsigned long long)now.half_ns);
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u64(&w, lm->tsc_cal.tick0);
	wire_put_u64(&w, lm->tsc_cal.ns0);
	wire_put_u64(&w, lm->tsc_cal.mult);
	wire_put_u64(&w, lm->tsc_cal.err_ns);
	wire_put_u64(&w, lm->tsc_cal.span_ns);
	wire_put_u64(&w, lm->tsc_cal.rate_ppb);
	peer_send(lm->mm, WIRE_TSC, buf, w.len, NULL, 0);
	peer_set_clock(lm->mm, lm_tsc_now);
}
