/* SPDX-License-Identifier: MIT */
/* ex_otf2_def.c: prove export --to otf2: the global definitions, written
 * once the events are (ex_otf2.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex_otf2.h"

/* ---- definitions ---- */

static int
region_name(struct ox *o, const struct region *g, uint32_t *ref)
{
	const uint64_t *bn;
	const char *s;
	size_t len;

	switch (g->range) {
	case REGION_PHASE:
		return ox_sref_f(o, ref, "collection phase (processes stopped)");
	case 1:
		if ((s = pv_str(&o->names, (uint64_t)g->id, &len)) != NULL)
			return ox_sref(o, s, len, ref);
		return ox_sref_f(o, ref, "range %" PRId64, g->id);
	default:
		if ((bn = pv_map_find(&o->bnames, (uint64_t)g->id, 0)) !=
		    NULL) {
			*ref = (uint32_t)(*bn - 1);
			return 0;
		}
		return ox_sref_f(o, ref, "block %" PRId64, g->id);
	}
}

static int
group_name(struct ox *o, const struct proc *p, uint32_t *ref)
{
	const struct pv_proc *pp = pv_proc(&o->msgs, p->node, p->pid);

	if (p->pid == 0)
		return ox_sref_f(o, ref, "local monitor node %" PRIu32, p->node);
	if (pp != NULL && pp->has_rank)
		return ox_sref_f(o, ref, "%.*s rank %" PRId64 " (node %" PRIu32
		    " pid %" PRIu32 ")", pp->name != NULL ? (int)pp->name_len :
		    0, pp->name != NULL ? pp->name : "", pp->rank, p->node,
		    p->pid);
	if (pp != NULL && pp->prog != NULL)
		return ox_sref_f(o, ref, "%.*s (node %" PRIu32 " pid %" PRIu32
		    ")", (int)pp->prog_len, pp->prog, p->node, p->pid);
	return ox_sref_f(o, ref, "node %" PRIu32 " pid %" PRIu32, p->node,
	    p->pid);
}

static int
by_ref(const void *a, const void *b)
{
	const struct mclass *x = *(const struct mclass *const *)a;
	const struct mclass *y = *(const struct mclass *const *)b;

	return (x->ref > y->ref) - (x->ref < y->ref);
}


int
ox_write_defs(struct ox *o, const struct grmtrace *r)
{
	OTF2_GlobalDefWriter *gw;
	OTF2_ErrorCode e;
	const struct grmtrace_host *h;
	struct region **gv = NULL;
	struct mclass **cv = NULL;
	uint64_t *mem = NULL, nev;
	uint32_t s1, s2, s3, s4, empty;
	size_t i, j, n;
	int rc = -1;

	if ((gw = OTF2_Archive_GetGlobalDefWriter(o->ar)) == NULL) {
		fprintf(stderr, "prove: export: otf2: no definition writer\n");
		return -1;
	}
	/* Names first: every string is interned before any is written. */
	if (ox_sref(o, "", 0, &empty) != 0 ||
	    ox_sref_f(o, &s1, "grm trace") != 0 ||
	    ox_sref_f(o, &s2, "machine") != 0 ||
	    ox_sref_f(o, &s3, "node") != 0)
		return -1;
	{
		uint32_t *hn = malloc((o->nhost + 1) * sizeof *hn);
		uint32_t *pn = malloc((o->npr + 1) * sizeof *pn);
		uint32_t *ln = malloc((o->nth + 1) * sizeof *ln);
		uint32_t *rn = malloc((o->nreg + 1) * sizeof *rn);
		uint32_t cw, gl, gg, mpi;

		if (hn == NULL || pn == NULL || ln == NULL || rn == NULL ||
		    (gv = (struct region **)pv_map_values(&o->rx)) == NULL ||
		    (cv = (struct mclass **)pv_map_values(&o->mx)) == NULL ||
		    (mem = malloc((o->nth + o->nranks + 1) *
		    sizeof *mem)) == NULL) {
			ox_oom();
			goto names_out;
		}
		for (i = 0; i < o->nhost; i++) {
			h = grmtrace_host(r, o->hosts[i]);
			if ((h != NULL && h->hostname != NULL ?
			    ox_sref_f(o, &hn[i], "%s (node %" PRIu32 ")",
			    h->hostname, o->hosts[i]) :
			    ox_sref_f(o, &hn[i], "node %" PRIu32, o->hosts[i])) !=
			    0)
				goto names_out;
		}
		for (i = 0; i < o->npr; i++)
			if (group_name(o, o->pr[i], &pn[i]) != 0)
				goto names_out;
		for (i = 0; i < o->nth; i++)
			if (ox_sref_f(o, &ln[i], "thread %" PRIu32,
			    o->th[i]->tid) != 0)
				goto names_out;
		for (i = 0; i < o->nreg; i++)
			if (region_name(o, gv[i], &rn[gv[i]->ref]) != 0)
				goto names_out;
		if (ox_sref_f(o, &cw, "grm ranks") != 0 ||
		    ox_sref_f(o, &gl, "grm ranks' locations") != 0 ||
		    ox_sref_f(o, &gg, "grm ranks' group") != 0 ||
		    ox_sref_f(o, &mpi, "MPI") != 0 ||
		    ox_sref_f(o, &s4, "prove export") != 0)
			goto names_out;
		/* Strings. */
		for (i = 0; i < o->strs.n; i++)
			CK(OTF2_GlobalDefWriter_WriteString(gw, (uint32_t)i,
			    o->strs.v[i].s));
		CK(OTF2_GlobalDefWriter_WriteClockProperties(gw,
		    1000000000ull, 0, o->tmax + 1, o->epoch));
		CK(OTF2_GlobalDefWriter_WriteParadigm(gw, OTF2_PARADIGM_MPI,
		    mpi, OTF2_PARADIGM_CLASS_PROCESS));
		/* System tree: the trace, its hosts. */
		CK(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, s1, s2,
		    OTF2_UNDEFINED_SYSTEM_TREE_NODE));
		for (i = 0; i < o->nhost; i++)
			CK(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw,
			    (uint32_t)(i + 1), hn[i], s3, 0));
		for (i = 0; i < o->npr; i++)
			CK(OTF2_GlobalDefWriter_WriteLocationGroup(gw,
			    (uint32_t)i, pn[i],
			    OTF2_LOCATION_GROUP_TYPE_PROCESS,
			    (uint32_t)o->pr[i]->host,
			    OTF2_UNDEFINED_LOCATION_GROUP));
		for (i = 0; i < o->nth; i++) {
			const struct thr *t = o->th[i];

			for (j = 0; j < o->npr; j++)
				if (o->pr[j]->node == t->node &&
				    o->pr[j]->pid == t->pid)
					break;
			nev = 0;
			if (t->w != NULL)
				OTF2_EvtWriter_GetNumberOfEvents(t->w, &nev);
			CK(OTF2_GlobalDefWriter_WriteLocation(gw, t->loc,
			    ln[i], OTF2_LOCATION_TYPE_CPU_THREAD, nev,
			    (uint32_t)j));
		}
		for (i = 0; i < o->nreg; i++)
			CK(OTF2_GlobalDefWriter_WriteRegion(gw, (uint32_t)i,
			    rn[i], rn[i], empty, OTF2_REGION_ROLE_CODE,
			    OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, empty,
			    0, 0));
		/* Metric classes, each with its own members, in order. */
		n = pv_map_n(&o->mx);
		qsort(cv, n, sizeof *cv, by_ref);
		for (i = 0; i < n; i++) {
			const struct mclass *c = cv[i];
			OTF2_MetricMemberRef mr[GRMTRACE_FIELDS_MAX];
			uint8_t k, nm = c->n == 0 ? 1 : c->n;

			for (k = 0; k < nm; k++) {
				mr[k] = c->member0 + k;
				CK(OTF2_GlobalDefWriter_WriteMetricMember(gw,
				    mr[k], c->mname[k], empty,
				    OTF2_METRIC_TYPE_USER,
				    OTF2_METRIC_ABSOLUTE_POINT,
				    c->n == 0 ? OTF2_TYPE_UINT64 : c->type[k],
				    OTF2_BASE_DECIMAL, 0, empty));
			}
			CK(OTF2_GlobalDefWriter_WriteMetricClass(gw, c->ref,
			    nm, mr, OTF2_METRIC_ASYNCHRONOUS,
			    OTF2_RECORDER_KIND_ABSTRACT));
		}
		/* The ranked processes' communicator: rank i is location i. */
		if (o->nranks > 0) {
			for (i = 0; i < o->nranks; i++)
				mem[i] = i;
			CK(OTF2_GlobalDefWriter_WriteGroup(gw, 0, gl,
			    OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
			    OTF2_GROUP_FLAG_NONE, (uint32_t)o->nranks, mem));
			CK(OTF2_GlobalDefWriter_WriteGroup(gw, 1, gg,
			    OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
			    OTF2_GROUP_FLAG_NONE, (uint32_t)o->nranks, mem));
			CK(OTF2_GlobalDefWriter_WriteComm(gw, 0, cw, 1,
			    OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
		}
		rc = 0;
names_out:
		free(hn);
		free(pn);
		free(ln);
		free(rn);
	}
	free(gv);
	free(cv);
	free(mem);
	return rc;
}

