/* SPDX-License-Identifier: MIT */
/* pv_serve.c: prove serve, a local web application on the traces given:
 * the page built into the program, and a JSON API on each trace's index
 * (libevent's evhttp, one thread). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "pv_idx.h"
#include "pv_live.h"
#include "pv_sum.h"

/* Limits of what a client may ask. */
#define SRV_WIDTH_MAX	16384		/* pixels of a view */
#define SRV_ROWS_MAX	4096		/* rows of a view */
#define SRV_HEADERS_MAX	8192		/* bytes of request line + headers */
#define SRV_TIMEOUT_S	20		/* an idle or slow connection */
#define SRV_JOBS	2		/* BEE's views computed at once */
#define SRV_MEMO	8		/* BEE's views kept, the latest */
#define SRV_MEMO_MAX	(4u << 20)	/* bytes of one kept, at most */
#define SRV_STOP_MS	500		/* a stop waits this long for the
					   index builder, then exits */

/* A file opened with its summary sidecar: answered from it until the
 * full index, built by a thread, is ready (then idx[i] is the thread's no
 * more: ready is set with release, read with acquire). */
struct srv_sum {
	struct pv_sum	sum;
	int		ready;		/* atomic */
	uint64_t	progress;	/* atomic: records read */
};

/* BEE's views of a selection read from the files again (/api/bee with
 * ref=1, or without memory for the index's tables), prove stats'
 * numbers: seconds on a big trace.  Each is computed by a worker
 * thread of its own, SRV_JOBS at most at once, so that the loop answers
 * the views meanwhile; the thread writes the job's address on a pipe when
 * done and the loop sends the answer (a browser that left meanwhile: its
 * request freed by that, as libevent does for a request not yet answered
 * on a connection that closed).  The thread touches only the job: its
 * own copy of the file names (kept by the index until it is freed), its
 * selection and its answer. */
struct srv_job {
	struct srv		*s;
	struct evhttp_request	*req;
	pthread_t		th;
	const char		**path;
	struct pv_files		fs;
	struct pv_sel		sel;
	unsigned		load_n;
	/* A page of the tracer (a file's: its index does not change) in
	 * place of BEE's numbers: x, match (a copy), skip, n. */
	const struct pv_idx	*x;
	char			*match;
	uint64_t		skip;
	unsigned		n;
	struct evbuffer		*out;
	int			rc;
	char			err[256];
	char			*key;		/* of its memo */
	LIST_ENTRY(srv_job)	next;
};

/* The answers of BEE's views last computed, by selection and the state
 * of the index (records, files, limit: a followed job's new records make
 * a new key): the same selection asked again (another page, back in the
 * browser's history) answered at once. */
struct srv_memo {
	char		*key;
	struct evbuffer	*b;
};

struct srv {
	struct pv_idx	*idx;
	size_t		n;
	char		**path;		/* the files, as given */
	struct srv_sum	*sum;		/* by file: sum.g NULL if none */
	pthread_t	bg;		/* builds the indexes of those */
	int		bg_on;
	int		stop;		/* atomic: the thread is to stop */
	int		bg_done;	/* atomic: it returned */
	pid_t		stats_pid;	/* atomic: its prove stats child, not
					   yet reaped (0: none) */
	int		sum_only;	/* --summary-only: no such thread */
	/* prove serve ID: the job followed, into idx[0] */
	const char	*liveid;
	struct pv_live	*live;
	unsigned	every_s;
	unsigned	window_s;
	/* BEE's views being computed (struct srv_job) */
	LIST_HEAD(, srv_job) jobs;
	unsigned	njobs;
	int		jobfd[2];	/* done: the threads write, the loop
					   reads */
	struct event	*jobev;
	struct srv_memo	memo[SRV_MEMO];
	unsigned	memo_next;
};

static void
reply(struct evhttp_request *req, int code, const char *reason,
      const char *type, struct evbuffer *body)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);

	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(h, "Content-Security-Policy", "default-src 'self'; "
	    "img-src 'self' data:; frame-ancestors 'none'");
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_send_reply(req, code, reason, body);
}

/* An error the client caused, said as JSON. */
static void
fail(struct evhttp_request *req, int code, const char *reason,
     const char *msg)
{
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		evhttp_send_error(req, 500, "Out of memory");
		return;
	}
	evbuffer_add_printf(b, "{\"error\":");
	pv_json_str(b, msg, strlen(msg));
	evbuffer_add_printf(b, "}\n");
	reply(req, code, reason, "application/json", b);
	evbuffer_free(b);
}

/* A decimal number of at most 19 digits, nothing else. */
static int
num(const char *s, uint64_t *v)
{
	size_t i;

	*v = 0;
	if (s == NULL || s[0] == '\0' || strlen(s) > 19)
		return -1;
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return 0;
}

/* Parameter name of q as a number: 0, 1 if absent (*v = dflt), -1 if not
 * a number (said in err). */
static int
param(const struct evkeyvalq *q, const char *name, uint64_t dflt,
      uint64_t *v, char *err, size_t errlen)
{
	const char *s = evhttp_find_header(q, name);

	*v = dflt;
	if (s == NULL)
		return 1;
	if (num(s, v) != 0) {
		snprintf(err, errlen, "%s: not a number of at most 19 digits",
		    name);
		return -1;
	}
	return 0;
}

static int
view_query(const struct pv_idx *x, const struct evkeyvalq *q,
	   struct pv_q *v, char *err, size_t errlen)
{
	uint64_t from, to, w, r0 = 0, r1 = x->nrow;
	const char *rows = evhttp_find_header(q, "rows"), *dash;
	char a[24];

	if (param(q, "from", x->first, &from, err, errlen) < 0 ||
	    param(q, "to", x->tend + 1, &to, err, errlen) < 0 ||
	    param(q, "width", 1000, &w, err, errlen) < 0)
		return -1;
	if (from >= to) {
		snprintf(err, errlen, "from must be less than to");
		return -1;
	}
	if (w < 1 || w > SRV_WIDTH_MAX) {
		snprintf(err, errlen, "width must be 1 to %d pixels",
		    SRV_WIDTH_MAX);
		return -1;
	}
	if (rows != NULL) {
		if ((dash = strchr(rows, '-')) == NULL ||
		    (size_t)(dash - rows) >= sizeof a) {
			snprintf(err, errlen, "rows: FIRST-END, not %.40s",
			    rows);
			return -1;
		}
		memcpy(a, rows, (size_t)(dash - rows));
		a[dash - rows] = '\0';
		if (num(a, &r0) != 0 || num(dash + 1, &r1) != 0 || r0 > r1 ||
		    r1 > x->nrow) {
			snprintf(err, errlen, "rows: FIRST-END with FIRST <= "
			    "END <= %zu", x->nrow);
			return -1;
		}
	}
	if (r1 - r0 > SRV_ROWS_MAX) {
		snprintf(err, errlen, "at most %d rows at a time",
		    SRV_ROWS_MAX);
		return -1;
	}
	*v = (struct pv_q){ from, to, (unsigned)w, (size_t)r0, (size_t)r1 };
	return 0;
}

/* A selection of records: from, to (ns; default: all) and rows, a list of
 * row indexes and ranges FIRST-END (END not included), by commas. */
static int
sel_query(const struct pv_idx *x, const struct evkeyvalq *q,
	  struct pv_sel *sel, char *err, size_t errlen)
{
	const char *rows = evhttp_find_header(q, "rows"), *p, *e, *dash;
	uint64_t a, b, i;
	char w[48];

	if (param(q, "from", 0, &sel->from, err, errlen) < 0 ||
	    param(q, "to", UINT64_MAX, &sel->to, err, errlen) < 0)
		return -1;
	if (sel->from >= sel->to) {
		snprintf(err, errlen, "from must be less than to");
		return -1;
	}
	for (p = rows; p != NULL && *p != '\0'; p = *e ? e + 1 : e) {
		e = p + strcspn(p, ",");
		if ((size_t)(e - p) >= sizeof w)
			goto bad;
		memcpy(w, p, (size_t)(e - p));
		w[e - p] = '\0';
		if ((dash = strchr(w, '-')) != NULL) {
			w[dash - w] = '\0';
			if (num(w, &a) != 0 || num(dash + 1, &b) != 0)
				goto bad;
		} else if (num(w, &a) != 0)
			goto bad;
		else
			b = a + 1;
		if (a >= b || b > x->nrow)
			goto bad;
		if (sel->nspec + (b - a) > SRV_ROWS_MAX) {
			snprintf(err, errlen, "at most %d rows at a time",
			    SRV_ROWS_MAX);
			return -1;
		}
		for (i = a; i < b; i++)
			if (pv_sel_add(sel, x->row[i].node, x->row[i].pid,
			    x->row[i].tid) != 0) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
	}
	if (rows != NULL && sel->nspec == 0)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "rows: ROW or FIRST-END (END not included), by "
	    "commas, with ROW < %zu", x->nrow);
	return -1;
}

/* The memo of key, or NULL. */
static struct srv_memo *
memo_find(struct srv *s, const char *key)
{
	unsigned i;

	for (i = 0; i < SRV_MEMO; i++)
		if (s->memo[i].key != NULL && strcmp(s->memo[i].key, key) == 0)
			return &s->memo[i];
	return NULL;
}

/* Keeps a copy of b as the answer of key (*key taken), in place of the
 * oldest; nothing if too large or out of memory. */
static void
memo_keep(struct srv *s, char **key, struct evbuffer *b)
{
	struct srv_memo *m = &s->memo[s->memo_next];
	struct evbuffer *c;
	size_t n = evbuffer_get_length(b);

	if (n > SRV_MEMO_MAX || (c = evbuffer_new()) == NULL)
		return;
	if (evbuffer_add(c, evbuffer_pullup(b, -1), n) != 0) {
		evbuffer_free(c);
		return;
	}
	free(m->key);
	if (m->b != NULL)
		evbuffer_free(m->b);
	m->key = *key;
	m->b = c;
	*key = NULL;
	s->memo_next = (s->memo_next + 1) % SRV_MEMO;
}

static void
memo_free(struct srv *s)
{
	unsigned i;

	for (i = 0; i < SRV_MEMO; i++) {
		free(s->memo[i].key);
		if (s->memo[i].b != NULL)
			evbuffer_free(s->memo[i].b);
		s->memo[i] = (struct srv_memo){ NULL, NULL };
	}
}

static void
job_free(struct srv_job *j)
{
	if (j->out != NULL)
		evbuffer_free(j->out);
	pv_sel_free(&j->sel);
	free(j->path);
	free(j->key);
	free(j->match);
	free(j);
}

static void *
job_run(void *arg)
{
	struct srv_job *j = arg;
	ssize_t k;

	if (j->x != NULL)
		j->rc = pv_tracer(j->x, &j->sel, j->match, j->skip, j->n,
		    j->out, j->err, sizeof j->err);
	else
		j->rc = pv_stats_json(&j->fs, &j->sel, j->load_n, j->out,
		    j->err, sizeof j->err);
	do
		k = write(j->s->jobfd[1], &j, sizeof j);
	while (k < 0 && errno == EINTR);
	return NULL;
}

/* Threads done: their answers sent. */
static void
on_job_done(evutil_socket_t fd, short what, void *arg)
{
	struct srv_job *j;
	ssize_t k;

	(void)what;
	(void)arg;
	while ((k = read(fd, &j, sizeof j)) == (ssize_t)sizeof j) {
		pthread_join(j->th, NULL);
		LIST_REMOVE(j, next);
		j->s->njobs--;
		if (j->rc == 0) {
			if (j->key != NULL)
				memo_keep(j->s, &j->key, j->out);
			reply(j->req, 200, "OK", "application/json", j->out);
		}
		else if (strcmp(j->err, "out of memory") == 0)
			evhttp_send_error(j->req, 500, "Out of memory");
		else
			fail(j->req, 400, "Bad Request", j->err);
		job_free(j);
	}
}

/* A tracer's page asked of a job: its index, filter, skip and n. */
struct srv_page {
	const struct pv_idx	*x;
	const char		*match;
	uint64_t		skip;
	unsigned		n;
};

/* Starts the job of BEE's views of sel (taken) for req, its memo's key
 * *key (taken), or (pg not NULL) of a tracer's page: 0; 1 with err for
 * the client (busy); -1 out of memory. */
static int
job_start(struct srv *s, const struct pv_idx *x, struct evhttp_request *req,
	  struct pv_sel *sel, unsigned load_n, char **key,
	  const struct srv_page *pg, char *err, size_t errlen)
{
	struct pv_files fs = pv_idx_files(x);
	struct srv_job *j;
	int r;

	if (s->njobs >= SRV_JOBS) {
		snprintf(err, errlen, "busy: BEE's views or tracer pages of %u "
		    "other selections are being read; ask again when one is "
		    "done", s->njobs);
		return 1;
	}
	if ((j = calloc(1, sizeof *j)) == NULL ||
	    (j->path = calloc(fs.n, sizeof *j->path)) == NULL ||
	    (j->out = evbuffer_new()) == NULL ||
	    (pg != NULL && pg->match != NULL &&
	    (j->match = strdup(pg->match)) == NULL)) {
		if (j != NULL)
			job_free(j);
		return -1;
	}
	if (pg != NULL) {
		j->x = pg->x;
		j->skip = pg->skip;
		j->n = pg->n;
	}
	memcpy(j->path, fs.path, fs.n * sizeof *j->path);
	j->fs = (struct pv_files){ j->path, fs.n, fs.limit };
	j->s = s;
	j->req = req;
	j->sel = *sel;
	*sel = (struct pv_sel)PV_SEL_ALL;
	j->load_n = load_n;
	if (key != NULL) {
		j->key = *key;
		*key = NULL;
	}
	if ((r = pthread_create(&j->th, NULL, job_run, j)) != 0) {
		snprintf(err, errlen, "cannot start a thread: %s",
		    strerror(r));
		job_free(j);
		return 1;
	}
	LIST_INSERT_HEAD(&s->jobs, j, next);
	s->njobs++;
	return 0;
}

/* /api/bee: prove stats' numbers and the load meter; /api/tracer: a page
 * of records (skip, n, q: what the event type holds).  0, 1 with err for
 * the client (2: busy), -1 out of memory, 3: answered later (a job). */
static int
bee(struct srv *s, const struct pv_idx *x, struct evhttp_request *req,
    const char *name, const struct evkeyvalq *q, struct evbuffer *b,
    char *err, size_t errlen)
{
	struct pv_sel sel = PV_SEL_ALL;
	struct srv_page pg;
	const struct srv_memo *m;
	const char *rows;
	struct pv_files fs;
	char *key = NULL;
	uint64_t n, skip;
	int rc = 1;

	if (sel_query(x, q, &sel, err, errlen) != 0)
		goto out;
	if (name[0] == 'b') {
		if (param(q, "load", 100, &n, err, errlen) < 0)
			goto out;
		if (n < 1 || n > SRV_WIDTH_MAX) {
			snprintf(err, errlen, "load must be 1 to %d buckets",
			    SRV_WIDTH_MAX);
			goto out;
		}
		/* From the index's tables (a file's, or a followed job's
		 * grown at each collection), unless ref=1 asks for the
		 * files read again (the reference, for tests). */
		if (x->bee && evhttp_find_header(q, "ref") == NULL) {
			rc = pv_bee_json(x, &sel, (unsigned)n, b) == 0 ? 0 :
			    -1;
			goto out;
		}
		fs = pv_idx_files(x);
		rows = evhttp_find_header(q, "rows");
		if (asprintf(&key, "%p %" PRIu64 " %" PRIu64 " %" PRIu64
		    " %zu %" PRIu64 " %" PRIu64 " %s", (const void *)x,
		    sel.from, sel.to, x->records, fs.n, fs.limit, n,
		    rows != NULL ? rows : "") < 0) {
			key = NULL;
			rc = -1;
			goto out;
		}
		if ((m = memo_find(s, key)) != NULL) {
			rc = evbuffer_add(b, evbuffer_pullup(m->b, -1),
			    evbuffer_get_length(m->b)) == 0 ? 0 : -1;
			goto out;
		}
		rc = job_start(s, x, req, &sel, (unsigned)n, &key, NULL, err,
		    errlen);
		rc = rc == 0 ? 3 : rc == 1 ? 2 : -1;
	} else {
		if (param(q, "skip", 0, &skip, err, errlen) < 0 ||
		    param(q, "n", 100, &n, err, errlen) < 0)
			goto out;
		if (n < 1 || n > PV_TRACER_MAX) {
			snprintf(err, errlen, "n must be 1 to %d records",
			    PV_TRACER_MAX);
			goto out;
		}
		/* A page may read much of a big file (a filter that few
		 * records match, a large skip): a file's in a worker thread;
		 * a followed job's index changes under the loop, so here. */
		if (s->live == NULL) {
			pg = (struct srv_page){ x, evhttp_find_header(q, "q"),
			    skip, (unsigned)n };
			rc = job_start(s, x, req, &sel, 0, NULL, &pg, err,
			    errlen);
			rc = rc == 0 ? 3 : rc == 1 ? 2 : -1;
		} else
			rc = pv_tracer(x, &sel, evhttp_find_header(q, "q"),
			    skip, (unsigned)n, b, err, errlen) == 0 ? 0 : 1;
	}
out:
	free(key);
	pv_sel_free(&sel);
	return rc;
}

static pid_t stats_start(const char *path, int *fd);
static void stats_end(struct pv_idx *x, pid_t pid, int fd);

/* Whether file f's answers come from its index (built, or never from a
 * summary). */
static int
srv_ready(const struct srv *s, uint64_t f)
{
	return s->sum == NULL || s->sum[f].sum.g == NULL ||
	    __atomic_load_n(&s->sum[f].ready, __ATOMIC_ACQUIRE);
}

/* The answers of file f from its summary: 0; 1 with err for the client
 * (a bad request), 2 (not until the index is built); -1 out of memory. */
static int
sum_api(struct srv *s, uint64_t f, const char *name,
	const struct evkeyvalq *q, struct evbuffer *b, char *err,
	size_t errlen)
{
	const struct pv_sum *m = &s->sum[f].sum;
	double p = m->in.records == 0 ? 0 : (double)__atomic_load_n(
	    &s->sum[f].progress, __ATOMIC_RELAXED) / (double)m->in.records;
	struct pv_idx v = { .first = m->in.first, .tend = m->in.last,
	    .nrow = m->nrow };
	struct pv_q vq;
	int rc;

	p = p > 1 ? 1 : p;
	if (strcmp(name, "meta") == 0)
		return pv_sum_meta(m, s->path[f], p, b);
	if (strcmp(name, "stats") == 0)
		return pv_sum_stats(m, b);
	if (strcmp(name, "view") == 0) {
		if (view_query(&v, q, &vq, err, errlen) != 0)
			return 1;
		/* Finer than a bucket: that range read from the file. */
		if ((double)(vq.to - vq.from) / vq.width <
		    (double)m->in.width_ns &&
		    (rc = pv_sum_range(m, s->path[f], &vq, p, b)) <= 0)
			return rc;
		return pv_sum_view(m, &vq, p, b);
	}
	if (s->sum_only)
		snprintf(err, errlen, "served from its summary only "
		    "(--summary-only): meta, stats and view");
	else
		snprintf(err, errlen, "the index of this file is being built "
		    "(%.0f%% read); until then only meta, stats and view are "
		    "answered, from its summary", p * 100);
	return 2;
}

/* The tables of BEE's views of a file's index x; without them (out of
 * memory) its views are read from the file, said. */
static void
bee_tables(struct pv_idx *x)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (pv_bee_build(x) != 0) {
		if (x->stop != NULL && __atomic_load_n(x->stop,
		    __ATOMIC_RELAXED))
			return;		/* stopped: dropped by the caller */
		fprintf(stderr, "prove serve: %s: out of memory for the tables "
		    "of BEE's views: they are read from the file\n", x->path);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	x->build_s += (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	fprintf(stderr, "prove serve: %s: BEE tables %zu bytes (%.1f per "
	    "record), made in %.3f s\n", x->path, x->bee_bytes,
	    x->records > 0 ? (double)x->bee_bytes / (double)x->records : 0.0,
	    (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) /
	    1e9);
}

static int
stopped(struct srv *s)
{
	return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
}

/* Builds the full index of each file that has a summary, in turn (a
 * thread, while the event loop answers from the summaries).  A stop
 * (SIGTERM) is seen every 2^16 records read and between the steps (the
 * index, prove stats' text, BEE's tables: each checks it as it goes),
 * the prove stats child killed; what was built is dropped (nothing is
 * written: a summary sidecar is mainmon's or prove index's). */
static void *
bg_build(void *arg)
{
	struct srv *s = arg;
	struct pv_idx x;
	size_t i;
	pid_t pid;
	int fd = -1;

	/* Behind the answers: the lowest nice value, a thread's own on
	 * Linux (and the prove stats child's, forked here), so that the
	 * loop, which answers the views, comes first; not SCHED_IDLE, which
	 * a machine busy with anything else never runs. */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	for (i = 0; i < s->n && !stopped(s); i++) {
		if (s->sum[i].sum.g == NULL)
			continue;
		pid = stats_start(s->path[i], &fd);
		__atomic_store_n(&s->stats_pid, pid > 0 ? pid : 0,
		    __ATOMIC_RELEASE);
		if (pv_idx_build_bg(&x, s->path[i], &s->sum[i].progress,
		    &s->stop) != 0 || stopped(s)) {
			/* A stop: the child killed (by the loop too), nothing
			 * kept. */
			if (pid > 0) {
				kill(pid, SIGKILL);
				close(fd);
				waitpid(pid, NULL, 0);
				__atomic_store_n(&s->stats_pid, 0,
				    __ATOMIC_RELEASE);
			}
			if (x.path != NULL)
				pv_idx_free(&x);
			if (stopped(s))
				break;
			fprintf(stderr, "prove serve: %s: answered from its "
			    "summary only\n", s->path[i]);
			continue;
		}
		if (pid > 0) {
			stats_end(&x, pid, fd);
			__atomic_store_n(&s->stats_pid, 0, __ATOMIC_RELEASE);
		}
		bee_tables(&x);
		if (stopped(s)) {
			pv_idx_free(&x);
			break;
		}
		fprintf(stderr, "prove serve: %s: %" PRIu64 " records, %zu rows, "
		    "index %zu bytes, built in %.3f s (in the background)\n",
		    x.path, x.records, x.nrow, x.bytes, x.build_s);
		s->idx[i] = x;
		__atomic_store_n(&s->sum[i].ready, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&s->bg_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The API: /api/NAME?f=FILE&...; every answer JSON, an error too. */
static void
api(struct srv *s, struct evhttp_request *req, const char *name,
    const struct evkeyvalq *q)
{
	struct evbuffer *b = NULL;
	const struct pv_idx *x;
	uint64_t f, row, ts, eid = 0;
	const char *e = evhttp_find_header(q, "eid");
	struct pv_q v;
	char err[256];
	const char *msg = err;
	int rc, code = 400, has_eid, neg = e != NULL && e[0] == '-';

	if (param(q, "f", 0, &f, err, sizeof err) < 0)
		goto fail;
	if (f >= s->n) {
		code = 404;
		msg = "no such file";
		goto fail;
	}
	x = &s->idx[f];
	if ((b = evbuffer_new()) == NULL)
		goto nomem;
	if (strcmp(name, "files") == 0) {
		evbuffer_add(b, "[", 1);
		for (f = 0; f < s->n; f++) {
			if (f > 0)
				evbuffer_add(b, ",", 1);
			pv_json_str(b, s->path[f], strlen(s->path[f]));
		}
		evbuffer_add(b, "]\n", 2);
		rc = 0;
	} else if (!srv_ready(s, f) && strcmp(name, "follow") != 0 &&
	    strcmp(name, "live") != 0) {
		/* From the summary until the index is built. */
		if ((rc = sum_api(s, f, name, q, b, err, sizeof err)) > 0) {
			code = rc == 2 ? 503 : 400;
			goto fail;
		}
	} else if (strcmp(name, "meta") == 0)
		rc = pv_idx_meta(x, b);
	else if (strcmp(name, "follow") == 0)
		rc = pv_live_state(s->live, b);
	else if (strcmp(name, "live") == 0) {
		if (s->live == NULL) {
			code = 404;
			msg = "not following a job (prove serve ID does)";
			goto fail;
		}
		evbuffer_free(b);
		pv_live_stream(s->live, req);
		return;
	}
	else if (strcmp(name, "stats") == 0)
		rc = pv_idx_stats(x, b);
	else if (strcmp(name, "view") == 0) {
		if (view_query(x, q, &v, err, sizeof err) != 0)
			goto fail;
		rc = pv_idx_view(x, &v, b);
	} else if (strcmp(name, "bee") == 0 || strcmp(name, "tracer") == 0) {
		/* BEE's views, on a selection (the file read again). */
		rc = bee(s, x, req, name, q, b, err, sizeof err);
		if (rc == 3) {
			evbuffer_free(b);
			return;
		}
		if (rc == 2)
			code = 503;
		if (rc > 0)
			goto fail;
	} else if (strcmp(name, "record") == 0) {
		/* eid may be negative: its sign apart, num reads digits. */
		if (param(q, "row", UINT64_MAX, &row, err, sizeof err) != 0 ||
		    param(q, "ts", 0, &ts, err, sizeof err) != 0 ||
		    (has_eid = e == NULL ? 1 : num(e + neg, &eid)) < 0 ||
		    row >= x->nrow || eid > (uint64_t)INT32_MAX + neg) {
			msg = "record: row (0 to rows - 1) and ts needed, eid "
			    "optional";
			goto fail;
		}
		if (pv_idx_record(x, (size_t)row, ts,
		    neg ? (int32_t)-(int64_t)eid : (int32_t)eid,
		    has_eid == 0, b, err, sizeof err) != 0) {
			code = 404;
			goto fail;
		}
		rc = 0;
	} else {
		code = 404;
		msg = "no such API call";
		goto fail;
	}
	if (rc != 0)
		goto nomem;
	reply(req, 200, "OK", "application/json", b);
	evbuffer_free(b);
	return;
fail:
	fail(req, code, code == 404 ? "Not Found" : code == 503 ?
	    "Service Unavailable" : "Bad Request", msg);
	if (b != NULL)
		evbuffer_free(b);
	return;
nomem:
	evhttp_send_error(req, 500, "Out of memory");
	if (b != NULL)
		evbuffer_free(b);
}

static void
handle(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	struct evkeyvalq q = { 0 };
	const struct pv_web *w;
	struct evbuffer *b;
	const char *path, *query;

	TAILQ_INIT(&q);
	if (u == NULL || (path = evhttp_uri_get_path(u)) == NULL) {
		fail(req, 400, "Bad Request", "no path");
		return;
	}
	query = evhttp_uri_get_query(u);
	if (query != NULL && evhttp_parse_query_str(query, &q) != 0) {
		fail(req, 400, "Bad Request", "malformed query");
		return;
	}
	if (strncmp(path, "/api/", 5) == 0) {
		api(arg, req, path + 5, &q);
		evhttp_clear_headers(&q);
		return;
	}
	evhttp_clear_headers(&q);
	/* Only the files built in, by exact name: nothing else is read. */
	for (w = pv_web; w->path != NULL; w++)
		if (strcmp(path, w->path) == 0)
			break;
	if (w->path == NULL) {
		fail(req, 404, "Not Found", "no such page");
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, "Out of memory");
		return;
	}
	evbuffer_add_reference(b, w->data, w->len, NULL, NULL);
	reply(req, 200, "OK", w->type, b);
	evbuffer_free(b);
}

static void
on_signal(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* Starts prove stats on path in a child process, its output on a pipe
 * (*fd), run while the index is built.  Returns the child's pid, or -1
 * (the page then has no text of prove stats). */
static pid_t
stats_start(const char *path, int *fd)
{
	pid_t pid, parent = getpid();
	int p[2];

	if (pipe(p) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		/* Killed with the thread that made it (a SIGTERM before the
		 * loop catches it kills prove serve at once). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
		    getppid() != parent)
			_exit(1);
		close(p[0]);
		if (dup2(p[1], 1) < 0)
			_exit(1);
		/* Forked from a thread of a process with others: only what
		 * is safe after such a fork (a lock another thread held
		 * stays held here), so prove stats is run anew. */
		execl("/proc/self/exe", "prove", "stats", "--", path, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	*fd = p[0];
	return pid;
}

/* Reads the child's output into x->stats (left NULL if the child
 * failed or memory ran out), closes fd and reaps the child. */
static void
stats_end(struct pv_idx *x, pid_t pid, int fd)
{
	char *s = NULL, *ns;
	size_t n = 0, cap = 0;
	ssize_t k;
	int st;

	for (;;) {
		if (n + 4096 > cap) {
			if ((ns = realloc(s, cap + 65536)) == NULL)
				break;
			s = ns;
			cap += 65536;
		}
		if ((k = read(fd, s + n, cap - n - 1)) < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		free(s);
		return;
	}
	if (s != NULL)
		s[n] = '\0';
	x->stats = s;
	x->stats_len = n;
}

static void
usage(void)
{
	fprintf(stderr, "usage: prove serve FILE... [-p PORT] [-b ADDR] "
	    "[--summary-only]\n"
	    "       prove serve HOST:PORT:TOKEN|@IDFILE [-p PORT] [-b ADDR] "
	    "[--every SECONDS] [--window SECONDS]\n");
}

/* Serves until SIGINT or SIGTERM. */
static int
run(struct srv *s, const char *addr, uint16_t port)
{
	struct evhttp_bound_socket *bs;
	struct sockaddr_storage ss;
	struct event *sig[2] = { NULL, NULL };
	struct event_base *base;
	struct evhttp *http = NULL;
	socklen_t sl = sizeof ss;
	char host[INET6_ADDRSTRLEN];
	struct srv_job *j;
	int rc = 1, i;

	if ((base = event_base_new()) == NULL ||
	    (http = evhttp_new(base)) == NULL) {
		fprintf(stderr, "prove serve: out of memory\n");
		goto out;
	}
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(http, SRV_HEADERS_MAX);
	evhttp_set_max_body_size(http, 0);
	evhttp_set_timeout(http, SRV_TIMEOUT_S);
	evhttp_set_gencb(http, handle, s);
	if (pipe(s->jobfd) != 0 || evutil_make_socket_nonblocking(s->jobfd[0])
	    != 0 || (s->jobev = event_new(base, s->jobfd[0], EV_READ |
	    EV_PERSIST, on_job_done, s)) == NULL || event_add(s->jobev, NULL)
	    != 0) {
		fprintf(stderr, "prove serve: cannot make a pipe: %s\n",
		    strerror(errno));
		goto out;
	}
	/* Following a job: its first collection read before the URL is
	 * said (a bad identifier or token fails here). */
	if (s->liveid != NULL && (s->live = pv_live_start(base, s->liveid,
	    &s->idx[0], s->every_s, s->window_s)) == NULL)
		goto out;
	if ((bs = evhttp_bind_socket_with_handle(http, addr, port)) == NULL) {
		fprintf(stderr, "prove serve: cannot listen on %s port %u: %s\n",
		    addr, port, strerror(errno));
		goto out;
	}
	if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss,
	    &sl) != 0) {
		fprintf(stderr, "prove serve: getsockname: %s\n",
		    strerror(errno));
		goto out;
	}
	if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
		    host, sizeof host);
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		printf("http://[%s]:%u/\n", host, port);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr,
		    host, sizeof host);
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		printf("http://%s:%u/\n", host, port);
	}
	if (pv_flush() != 0)
		goto out;
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < 2; i++)
		if ((sig[i] = evsignal_new(base, i ? SIGTERM : SIGINT,
		    on_signal, base)) == NULL || event_add(sig[i], NULL) != 0) {
			fprintf(stderr, "prove serve: cannot catch signals\n");
			goto out;
		}
	if (event_base_dispatch(base) == 0 || event_base_got_break(base))
		rc = 0;
out:
	for (i = 0; i < 2; i++)
		if (sig[i] != NULL)
			event_free(sig[i]);
	pv_live_free(s->live);
	s->live = NULL;
	/* Jobs under way: waited for, their requests left to evhttp_free. */
	while ((j = LIST_FIRST(&s->jobs)) != NULL) {
		pthread_join(j->th, NULL);
		LIST_REMOVE(j, next);
		job_free(j);
	}
	s->njobs = 0;
	memo_free(s);
	if (s->jobev != NULL)
		event_free(s->jobev);
	s->jobev = NULL;
	if (http != NULL)
		evhttp_free(http);
	if (base != NULL)
		event_base_free(base);
	for (i = 0; i < 2; i++)
		if (s->jobfd[i] >= 0)
			close(s->jobfd[i]);
	return rc;
}

/* Stops the builder of indexes: 0 once it returned, -1 if it did not
 * within SRV_STOP_MS (it is then left to end with the process). */
static int
stop_bg(struct srv *s)
{
	struct timespec t;
	pid_t pid;
	int i;

	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	/* At nice 19 a busy machine runs it little: its prove stats child
	 * is killed (the builder reaps it), and the loop waits for it
	 * SRV_STOP_MS at most. */
	if ((pid = __atomic_load_n(&s->stats_pid, __ATOMIC_ACQUIRE)) > 0)
		kill(pid, SIGKILL);
	for (i = 0; i < SRV_STOP_MS && !__atomic_load_n(&s->bg_done,
	    __ATOMIC_ACQUIRE); i++) {
		t = (struct timespec){ 0, 1000000 };
		nanosleep(&t, NULL);
	}
	if (!__atomic_load_n(&s->bg_done, __ATOMIC_ACQUIRE))
		return -1;
	pthread_join(s->bg, NULL);
	return 0;
}

int
pv_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'b' },
		{ "every", required_argument, NULL, 'e' },
		{ "window", required_argument, NULL, 'w' },
		{ "summary-only", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *addr = "127.0.0.1";
	struct srv s = { .every_s = 2, .jobfd = { -1, -1 } };
	uint64_t port = 0, v;
	int c, r, fd = -1, rc = 1;
	size_t i;
	pid_t pid;

	while ((r = pv_getopt(argc, argv, "serve", ":p:b:e:w:Sh", longopts,
	    &c)) > 0) {
		switch (c) {
		case 'p':
			if (num(optarg, &port) != 0 || port > 65535) {
				fprintf(stderr, "prove serve: -p: a port "
				    "number, 0 to 65535\n");
				return 2;
			}
			break;
		case 'b':
			addr = optarg;
			break;
		case 'S':
			s.sum_only = 1;
			break;
		case 'e':
		case 'w':
			if (num(optarg, &v) != 0 || v > 86400 ||
			    (c == 'e' && v == 0)) {
				fprintf(stderr, "prove serve: --%s: seconds, "
				    "%d to 86400\n", c == 'e' ? "every" :
				    "window", c == 'e');
				return 2;
			}
			if (c == 'e')
				s.every_s = (unsigned)v;
			else
				s.window_s = (unsigned)v;
			break;
		default:
			usage();
			return 0;
		}
	}
	if (r < 0 || optind >= argc) {
		usage();
		return 2;
	}
	for (i = (size_t)optind; i < (size_t)argc; i++)
		if (strcmp(argv[i], "-") == 0) {
			fprintf(stderr, "prove serve: cannot serve standard "
			    "input: records are read again from the file\n");
			return 2;
		}
	if ((s.idx = calloc((size_t)(argc - optind), sizeof *s.idx)) == NULL) {
		fprintf(stderr, "prove serve: out of memory\n");
		return 1;
	}
	s.path = argv + optind;
	/* One argument that is no file but an identifier (@FILE, or
	 * HOST:PORT:...): a running job, followed. */
	if (argc - optind == 1 && (argv[optind][0] == '@' ||
	    (strchr(argv[optind], ':') != NULL &&
	    access(argv[optind], F_OK) != 0))) {
		s.liveid = argv[optind];
		s.n = 1;
		rc = run(&s, addr, (uint16_t)port);
		goto out;
	}
	if ((s.sum = calloc((size_t)(argc - optind), sizeof *s.sum)) == NULL) {
		fprintf(stderr, "prove serve: out of memory\n");
		goto out;
	}
	for (i = 0; optind + (int)i < argc; i++) {
		/* A summary: answers at once, the index built meanwhile. */
		if ((r = pv_sum_load(&s.sum[i].sum, argv[optind + i])) < 0)
			goto out;
		if (r == 0) {
			fprintf(stderr, "prove serve: %s: %" PRIu64 " records "
			    "in its summary %s.idx; answering from it%s\n",
			    argv[optind + i], s.sum[i].sum.in.records,
			    argv[optind + i], s.sum_only ? "" :
			    " while the index is built");
			s.n++;
			continue;
		}
		pid = stats_start(argv[optind + i], &fd);
		if (pv_idx_build(&s.idx[i], argv[optind + i]) != 0) {
			if (pid > 0) {
				close(fd);
				waitpid(pid, NULL, 0);
			}
			goto out;
		}
		s.n++;
		if (pid > 0)
			stats_end(&s.idx[i], pid, fd);
		bee_tables(&s.idx[i]);
		fprintf(stderr, "prove serve: %s: %" PRIu64 " records, %zu "
		    "rows, index %zu bytes, built in %.3f s\n",
		    s.idx[i].path, s.idx[i].records, s.idx[i].nrow,
		    s.idx[i].bytes, s.idx[i].build_s);
	}
	for (i = 0; i < s.n && !s.bg_on && !s.sum_only; i++)
		if (s.sum[i].sum.g != NULL) {
			if ((r = pthread_create(&s.bg, NULL, bg_build, &s)) !=
			    0) {
				fprintf(stderr, "prove serve: cannot start a "
				    "thread: %s\n", strerror(r));
				goto out;
			}
			s.bg_on = 1;
		}
	rc = run(&s, addr, (uint16_t)port);
out:
	if (s.bg_on && stop_bg(&s) != 0) {
		/* Still in a step that does not look at the stop (sorting
		 * 10^7 messages): the process ends with it, nothing freed. */
		fprintf(stderr, "prove serve: stopped while an index was "
		    "built\n");
		return rc;
	}
	for (i = 0; i < s.n; i++)
		if (srv_ready(&s, i))
			pv_idx_free(&s.idx[i]);
	for (i = 0; s.sum != NULL && i < s.n; i++)
		pv_sum_free(&s.sum[i].sum);
	free(s.sum);
	free(s.idx);
	return rc;
}
