/* SPDX-License-Identifier: MIT */
/* pv_clock.c: what prove says of the clocks: each host's clock model
 * (offset, drift, bound) and the causality check and correction the
 * reader made (grmtrace_causal, doc/clock-sync.md). */
#include <inttypes.h>
#include <stdio.h>

#include "pv.h"

/* The hosts' latest clock models, as their #SYNC lines say. */
static void
print_hosts(const struct grmtrace *r)
{
	const struct grmtrace_host *h;
	size_t i, n = grmtrace_nhosts(r);

	if (n == 0)
		return;
	printf("\nclocks (host's CLOCK_MONOTONIC - mainmon's, by each host's "
	    "latest model)\n%6s %16s %20s %12s %12s %12s %10s %7s %7s  %s\n",
	    "node", "at(ns)", "offset(ns)", "drift(ppm)", "bound(ns)",
	    "grows(ppm)", "rtt(ns)", "samples", "model", "host");
	for (i = 0; i < n; i++) {
		h = grmtrace_host_at(r, i);
		if (!h->synced) {
			printf("%6" PRIu32 " %16s %20" PRId64 " %12s %12s %12s "
			    "%10s %7s %7s  %s\n", h->node, "-", h->offset_ns,
			    "-", "-", "-", "-", "-", "-", h->hostname);
			continue;
		}
		printf("%6" PRIu32 " %16" PRIu64 " %20" PRId64 " %12.3f %12"
		    PRIu64 " %12.3f %10" PRIu64 " %7" PRIu32 " %7" PRIu32
		    "  %s\n", h->node, h->at_ns, h->sync_offset_ns,
		    h->drift_ppb / 1e3, h->error_ns, h->allow_ppb / 1e3,
		    h->rtt_ns, h->samples, h->model, h->hostname);
	}
	printf("(bound: within the samples' span; it grows by 'grows' "
	    "outside it; every record's own is its bound_ns)\n");
}

static void
print_pair(const struct grmtrace_causal *c)
{
	printf("%8" PRIu32 " %8" PRIu32 " %10" PRIu64 " %10" PRIu64 " %12"
	    PRIu64 " %8" PRIu64 " %12" PRIu64 " %12" PRIu64 " %8" PRIu64
	    " %8" PRIu64 "\n", c->send_node, c->recv_node, c->matched,
	    c->violations, c->worst_ns, c->moved, c->max_shift_ns,
	    c->median_shift_ns, c->capped, c->beyond);
}

int
pv_clock_print(struct grmtrace *r)
{
	const struct grmtrace_causal *c, *p;
	size_t i;

	print_hosts(r);
	if ((c = grmtrace_causal(r, 0)) == NULL)
		return 0;
	printf("\ncausality (receives stamped before their send; moved to "
	    "it, by no more than their bound)\n");
	if (!c->corrected) {
		printf("not checked: raw times, or a trace read from standard "
		    "input\n");
		return 0;
	}
	printf("matched %" PRIu64 ", received before sent %" PRIu64
	    " (worst %" PRIu64 " ns), unchecked %" PRIu64 "\n", c->matched,
	    c->violations, c->worst_ns, c->unchecked);
	printf("receives moved %" PRIu64 " (max %" PRIu64 " ns, median %"
	    PRIu64 " ns), records moved %" PRIu64 " (max %" PRIu64 " ns)\n",
	    c->moved, c->max_shift_ns, c->median_shift_ns, c->records_moved,
	    c->records_max_ns);
	printf("capped %" PRIu64 " (moved by their whole bound, still "
	    "before their send), beyond the bounds %" PRIu64 "\n", c->capped,
	    c->beyond);
	if (c->beyond > 0) {
		printf("WARNING: %" PRIu64 " receives before their send by more "
		    "than the two hosts' bounds (up to %" PRIu64 " ns more): a "
		    "bound was wrong; they are not moved\n", c->beyond,
		    c->beyond_ns);
		fflush(stdout);
		fprintf(stderr, "prove: warning: %" PRIu64 " messages received "
		    "before they were sent by more than the clocks' bounds "
		    "(up to %" PRIu64 " ns more): a bound was wrong\n",
		    c->beyond, c->beyond_ns);
	}
	if (grmtrace_causal(r, 1) == NULL)
		return 0;
	printf("%8s %8s %10s %10s %12s %8s %12s %12s %8s %8s\n", "sender",
	    "receiver", "matched", "before", "worst(ns)", "moved", "max(ns)",
	    "median(ns)", "capped", "beyond");
	for (i = 1; (p = grmtrace_causal(r, i)) != NULL; i++)
		print_pair(p);
	return 0;
}
