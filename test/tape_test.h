/* SPDX-License-Identifier: MIT */
/* tape_test.h: what the trace file tests share (test_tape.c,
 * test_beefmt.c, test_trace.c): a scratch folder, files in it, fields,
 * and reading with the public reader, <grm/trace.h>. */
#ifndef GRM_TAPE_TEST_H
#define GRM_TAPE_TEST_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <grm/trace.h>

#include "tape.h"

static char dir[PATH_MAX];

static inline void
setup(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(dir, sizeof dir, "%s/test_tape.XXXXXX",
	    t != NULL && *t != '\0' ? t : "/tmp");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

static inline void
teardown(void)
{
	char p[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* The path of name in the test directory (the last four stay valid). */
static inline const char *
path(const char *name)
{
	static char p[4][PATH_MAX + 64];
	static unsigned i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
	return p[i];
}

static inline const char *
put_file(const char *text, size_t len)
{
	const char *p = path("in.trace");
	FILE *f;

	cr_assert_not_null(f = fopen(p, "w"));
	cr_assert_eq(fwrite(text, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
	return p;
}

/* Short names of the field constructors (rec.h), for tables of samples. */
#define fi(v)		rec_fi(v)
#define fu(v)		rec_fu(v)
#define fd(v)		rec_fd(v)
#define fs(s, len)	rec_fs(s, len)

/* Opens p with the public reader, for records only (meta lines as asked
 * for with grmtrace_select); NULL with a reason in *why. */
static inline struct grmtrace *
topen(const char *p, const char **why)
{
	static char e[512];
	struct grmtrace *r = grmtrace_open(p, e, sizeof e);

	*why = e;
	if (r != NULL)
		cr_assert_eq(grmtrace_select(r, 0), 0);
	return r;
}

/* A field written (a) and read back (b). */
static inline void
same_field(const struct rec_field *a, const struct grmtrace_field *b)
{
	cr_assert_eq((int)a->kind, b->type);
	switch (a->kind) {
	case REC_K_INT:
		cr_assert_eq(a->v.i, b->v.i, "%lld != %lld",
		    (long long)a->v.i, (long long)b->v.i);
		break;
	case REC_K_UINT:
		cr_assert_eq(a->v.u, b->v.u);
		break;
	case REC_K_DOUBLE:
		if (isnan(a->v.d))
			cr_assert(isnan(b->v.d));
		else
			cr_assert_eq(memcmp(&a->v.d, &b->v.d, 8), 0,
			    "%a != %a", a->v.d, b->v.d);
		break;
	case REC_K_STR:
		cr_assert_eq(a->v.s.len, b->v.s.len);
		cr_assert_eq(memcmp(a->v.s.p, b->v.s.p, a->v.s.len), 0);
		break;
	}
}

/* Opens text as a trace and reads it to the end; returns the last result.
 * *err: the error, or at the end the warning (grmtrace_warning) if any. */
static inline int
read_text(const char *text, size_t len, const char **err, unsigned *nrec)
{
	static char e[256];
	const char *why;
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	int rc;

	*nrec = 0;
	if ((r = topen(put_file(text, len), &why)) == NULL) {
		*err = why;
		return -2;
	}
	while ((rc = grmtrace_next(r, &ev)) == 1)
		(*nrec)++;
	snprintf(e, sizeof e, "%s", rc == 0 && grmtrace_warning(r) != NULL ?
	    grmtrace_warning(r) : grmtrace_error(r));
	cr_assert_eq(grmtrace_next(r, &ev), rc, "sticky result");
	grmtrace_close(r);
	*err = e;
	return rc;
}

/* Reads text; the result must be want, and the error say reason. */
static inline void
bad_text(const char *text, int want, const char *reason)
{
	const char *err;
	unsigned n;
	int rc;

	rc = read_text(text, strlen(text), &err, &n);
	cr_assert_eq(rc, want, "[%s]: got %d (%s)", text, rc, err);
	cr_assert_not_null(strstr(err, reason), "[%s]: %s", text, err);
}

#endif /* GRM_TAPE_TEST_H */
