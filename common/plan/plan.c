/* SPDX-License-Identifier: MIT */
/* plan.c: the plan language's lexer, parser and canonical printer
 * (doc/plans.md).  Input is hostile: every length is bounded before use,
 * nothing is allocated, every error names its line and column. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "plan/plan.h"
#include "rec/rec.h"
#include "util/num.h"

/* ---- tokens ---- */

enum tk { T_END, T_WORD, T_NUM, T_STR, T_FIELD, T_OP, T_COMMA };

struct tok {
	uint8_t		kind;		/* enum tk */
	uint16_t	off, len;	/* in the rule's text */
	uint8_t		op;		/* T_OP: enum plan_op */
};

/* What a parse works on: the rule's text, its tokens, the one being
 * looked at, and where an error goes. */
struct ps {
	const char	*s;
	size_t		len;
	struct tok	t[PLAN_RULE_MAX + 1];
	unsigned	nt, i;
	struct plan_rule *r;
	struct plan_err	*e;
};

static int
fail_at(struct ps *p, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail_at(struct ps *p, size_t off, const char *fmt, ...)
{
	va_list ap;

	p->e->line = 1;
	p->e->col = (unsigned)off + 1;
	va_start(ap, fmt);
	vsnprintf(p->e->msg, sizeof p->e->msg, fmt, ap);
	va_end(ap);
	return -1;
}

/* Fails at the current token (its start, or the end of the text). */
#define FAIL(p, ...) fail_at((p), (p)->t[(p)->i].off, __VA_ARGS__)

static int
is_wordc(int c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    (!first && ((c >= '0' && c <= '9') || c == '.' || c == ':' ||
	    c == '-'));
}

static int
is_numc(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || c == '.' || c == ':' || c == '/';
}

/* Cuts the rule into tokens; a '#' outside a string ends it. */
static int
lex(struct ps *p)
{
	const char *s = p->s;
	size_t i = 0, n = p->len, b;
	struct tok *t;
	static const struct { const char *s; uint8_t op; } ops[] = {
		{ "==", PLAN_EQ }, { "!=", PLAN_NE }, { "<=", PLAN_LE },
		{ ">=", PLAN_GE }, { "<", PLAN_LT }, { ">", PLAN_GT },
	};
	unsigned k;

	p->nt = 0;
	for (;;) {
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		t = &p->t[p->nt];
		t->off = (uint16_t)i;
		t->len = 0;
		if (i == n || s[i] == '#') {
			t->kind = T_END;
			return 0;
		}
		b = i;
		if (s[i] == '"') {
			for (i++; i < n && s[i] != '"'; i++)
				if (s[i] == '\\' && i + 1 < n)
					i++;
			if (i == n)
				return fail_at(p, b, "a string without its "
				    "closing quote");
			t->kind = T_STR;
			i++;
		} else if (s[i] == '$') {
			for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
				;
			if (i == b + 1)
				return fail_at(p, b, "expected a field number "
				    "after '$' ($1 to $%d)", PLAN_FIELDS_MAX);
			t->kind = T_FIELD;
		} else if (s[i] == ',') {
			t->kind = T_COMMA;
			i++;
		} else if ((s[i] >= '0' && s[i] <= '9') || (s[i] == '-' &&
		    i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9')) {
			for (i++; i < n && is_numc((unsigned char)s[i]); i++)
				;
			t->kind = T_NUM;
		} else if (is_wordc((unsigned char)s[i], 1)) {
			for (i++; i < n && is_wordc((unsigned char)s[i], 0);
			    i++)
				;
			t->kind = T_WORD;
		} else {
			for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
				if (i + strlen(ops[k].s) <= n &&
				    memcmp(s + i, ops[k].s,
				    strlen(ops[k].s)) == 0)
					break;
			if (k == sizeof ops / sizeof ops[0]) {
				if ((unsigned char)s[i] < 0x20 ||
				    (unsigned char)s[i] >= 0x7f)
					return fail_at(p, b, "unexpected byte "
					    "0x%02x", (unsigned char)s[i]);
				return fail_at(p, b, "unexpected '%c'", s[i]);
			}
			t->kind = T_OP;
			t->op = ops[k].op;
			i += strlen(ops[k].s);
		}
		t->len = (uint16_t)(i - b);
		p->nt++;
	}
}

static const struct tok *
cur(const struct ps *p)
{
	return &p->t[p->i];
}

/* 1 if token t is the word w (keywords: any case). */
static int
tok_is(const struct ps *p, const struct tok *t, const char *w)
{
	return t->kind == T_WORD && t->len == strlen(w) &&
	    strncasecmp(p->s + t->off, w, t->len) == 0;
}

static int
at_word(const struct ps *p, const char *w)
{
	return tok_is(p, cur(p), w);
}

static int
accept(struct ps *p, const char *w)
{
	if (!at_word(p, w))
		return 0;
	p->i++;
	return 1;
}

/* ---- values ---- */

/* Adds bytes to the rule's pool; -1 if it is full (cannot be: the pool
 * is as long as a rule). */
static int
pool_add(struct ps *p, const char *b, size_t n, struct plan_str *out)
{
	struct plan_rule *r = p->r;

	if (n > PLAN_STR_MAX || r->pool_len + n > sizeof r->pool)
		return -1;
	memcpy(r->pool + r->pool_len, b, n);
	out->off = r->pool_len;
	out->len = (uint16_t)n;
	r->pool_len = (uint16_t)(r->pool_len + n);
	return 0;
}

/* The current string token, unescaped into the pool. */
static int
string_val(struct ps *p, struct plan_str *out)
{
	const struct tok *t = cur(p);
	const char *s = p->s + t->off + 1;
	size_t n = t->len - 2, i, k = 0;
	char buf[PLAN_RULE_MAX];
	int h, l;

	for (i = 0; i < n; i++) {
		if (s[i] != '\\') {
			if ((unsigned char)s[i] < 0x20)
				return fail_at(p, t->off + 1 + i, "a control "
				    "character in a string (write \\xHH)");
			buf[k++] = s[i];
			continue;
		}
		switch (s[++i]) {
		case '\\': buf[k++] = '\\'; break;
		case '"': buf[k++] = '"'; break;
		case 'n': buf[k++] = '\n'; break;
		case 't': buf[k++] = '\t'; break;
		case 'x':
			if (i + 2 >= n + 0 || (h = num_hexdigit(s[i + 1])) < 0 ||
			    (l = num_hexdigit(s[i + 2])) < 0)
				return fail_at(p, t->off + i, "expected two hex "
				    "digits after '\\x'");
			if (h == 0 && l == 0)
				return fail_at(p, t->off + i, "a NUL byte in a "
				    "string");
			buf[k++] = (char)(h * 16 + l);
			i += 2;
			break;
		default:
			return fail_at(p, t->off + i, "unknown escape '\\%c' "
			    "(\\\\, \\\", \\n, \\t, \\xHH)", s[i]);
		}
	}
	if (k > PLAN_STR_MAX)
		return FAIL(p, "a string longer than %d bytes", PLAN_STR_MAX);
	if (pool_add(p, buf, k, out) != 0)
		return FAIL(p, "a string longer than %d bytes", PLAN_STR_MAX);
	p->i++;
	return 0;
}

/* Words that end a name's place: a bare name cannot be one of them (a
 * string can). */
static const char *const reserved[] = { "when", "do", "in", "where", "and",
	"longer", "for", "until", "once", "always", "times", "interval" };

/* A name: a word (not reserved) or a string, not empty.  what says what,
 * for errors. */
static int
name_val(struct ps *p, const char *what, const char *after,
	 struct plan_str *out)
{
	const struct tok *t = cur(p);
	unsigned k;

	for (k = 0; k < sizeof reserved / sizeof reserved[0]; k++)
		if (at_word(p, reserved[k]))
			return FAIL(p, "expected %s after '%s'", what, after);

	if (t->kind == T_STR) {
		if (t->len == 2)
			return FAIL(p, "an empty name after '%s'", after);
		return string_val(p, out);
	}
	if (t->kind != T_WORD && t->kind != T_NUM)
		return FAIL(p, "expected %s after '%s'", what, after);
	if (t->len > PLAN_STR_MAX || pool_add(p, p->s + t->off, t->len,
	    out) != 0)
		return FAIL(p, "a name longer than %d bytes", PLAN_STR_MAX);
	p->i++;
	return 0;
}

/* Reads the integer token t into *v (decimal or 0x hex, optional '-').
 * 0; -1 if it is out of [lo, hi]; -2 if it is not an integer. */
static int
int_of(const struct ps *p, const struct tok *t, int64_t lo, int64_t hi,
       int64_t *v)
{
	const char *s = p->s + t->off;
	size_t i = 0, n = t->len;
	uint64_t x = 0, lim;
	int neg = 0, base = 10, d;

	if (t->kind != T_NUM)
		return -2;
	if (s[0] == '-') {
		neg = 1;
		i++;
	}
	if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
	}
	if (i == n)
		return -2;
	for (d = (int)i; (size_t)d < n; d++)
		if (num_hexdigit((unsigned char)s[d]) < 0 || num_hexdigit((unsigned char)
		    s[d]) >= base)
			return -2;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		d = num_hexdigit((unsigned char)s[i]);
		if (x > (lim - (uint64_t)d) / (uint64_t)base)
			return -1;
		x = x * (uint64_t)base + (uint64_t)d;
	}
	if (neg)
		*v = x == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x;
	else
		*v = (int64_t)x;
	return *v < lo || *v > hi ? -1 : 0;
}

/* An integer in [lo, hi] after the word `after`. */
static int
int_val(struct ps *p, const char *what, const char *after, int64_t lo,
	int64_t hi, int64_t *v)
{
	const struct tok *t = cur(p);
	int rc = int_of(p, t, lo, hi, v);

	if (rc == -2)
		return FAIL(p, "expected %s after '%s'", what, after);
	if (rc != 0)
		return FAIL(p, "%s out of range: '%.*s' (%lld to %lld)", what,
		    (int)t->len, p->s + t->off, (long long)lo, (long long)hi);
	p->i++;
	return 0;
}

static int
eid_val(struct ps *p, const char *after, int32_t *eid)
{
	int64_t v;

	if (int_val(p, "an event type", after, -REC_EID_BIAS,
	    (int64_t)REC_EID_BITS - REC_EID_BIAS - 1, &v) != 0)
		return -1;
	*eid = (int32_t)v;
	return 0;
}

static const struct {
	const char	*name;
	uint64_t	ns;
} units[] = {
	{ "h", 3600000000000ull }, { "m", 60000000000ull },
	{ "s", 1000000000ull }, { "ms", 1000000ull }, { "us", 1000ull },
	{ "ns", 1ull },
};

/*
 * A duration token: digits [. digits] unit.  Into *ns, at most
 * PLAN_DUR_MAX, at least min_ns.
 */
static int
dur_val(struct ps *p, const char *after, uint64_t min_ns, uint64_t *ns)
{
	const struct tok *t = cur(p);
	const char *s = p->s + t->off;
	size_t i = 0, n = t->len, u;
	uint64_t whole = 0, frac = 0, scale = 1, unit = 0;
	unsigned k;

	if (t->kind != T_NUM || s[0] == '-')
		return FAIL(p, "expected a duration after '%s'", after);
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (whole > PLAN_DUR_MAX)
			goto range;
		whole = whole * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			if (scale >= 1000000000ull)
				return FAIL(p, "a duration finer than a "
				    "nanosecond: '%.*s'", (int)n, s);
			frac = frac * 10 + (uint64_t)(s[i] - '0');
			scale *= 10;
		}
	}
	u = n - i;
	for (k = 0; k < sizeof units / sizeof units[0]; k++)
		if (strlen(units[k].name) == u && memcmp(s + i, units[k].name,
		    u) == 0)
			unit = units[k].ns;
	if (u == 0)
		return FAIL(p, "a duration needs a unit (h, m, s, ms, us, ns): "
		    "'%.*s'", (int)n, s);
	if (unit == 0)
		return FAIL(p, "unknown unit '%.*s' (h, m, s, ms, us, ns)",
		    (int)u, s + i);
	if (whole > PLAN_DUR_MAX / unit)
		goto range;
	/* frac / scale of a unit, in ns, without overflow: from seconds up
	 * the unit is a multiple of scale (at most 10^9); below, frac * unit
	 * is under 10^15. */
	if (unit % scale == 0)
		frac *= unit / scale;
	else if ((frac * unit) % scale != 0)
		return FAIL(p, "a duration finer than a nanosecond: '%.*s'",
		    (int)n, s);
	else
		frac = frac * unit / scale;
	*ns = whole * unit + frac;
	if (*ns > PLAN_DUR_MAX)
		goto range;
	if (*ns < min_ns)
		return FAIL(p, "a duration of 0 after '%s'", after);
	p->i++;
	return 0;
range:
	return FAIL(p, "a duration longer than 30 days: '%.*s'", (int)n, s);
}

/* A rate: digits [k|M|G] "/s", into events per second. */
static int
rate_val(struct ps *p, const char *after, uint64_t *rate)
{
	const struct tok *t = cur(p);
	const char *s = p->s + t->off;
	size_t i = 0, n = t->len;
	uint64_t v = 0, mul = 1;

	if (t->kind != T_NUM || s[0] == '-')
		return FAIL(p, "expected a rate (such as 100k/s) after '%s'",
		    after);
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > PLAN_RATE_MAX)
			goto range;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n && (s[i] == 'k' || s[i] == 'M' || s[i] == 'G')) {
		mul = s[i] == 'k' ? 1000 : s[i] == 'M' ? 1000000 : 1000000000;
		i++;
	}
	if (n - i != 2 || s[i] != '/' || s[i + 1] != 's')
		return FAIL(p, "a rate is a number of events per second, such "
		    "as 100k/s: '%.*s'", (int)n, s);
	if (v > PLAN_RATE_MAX / mul)
		goto range;
	v *= mul;
	if (v == 0 || v > PLAN_RATE_MAX)
		goto range;
	*rate = v;
	p->i++;
	return 0;
range:
	return FAIL(p, "a rate out of range: '%.*s' (1/s to 1000G/s)", (int)n,
	    s);
}

/* Two digits at s[0..2) into *v: 0 or -1. */
static int
two_digits(const char *s, unsigned *v)
{
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
		return -1;
	*v = (unsigned)(s[0] - '0') * 10 + (unsigned)(s[1] - '0');
	return 0;
}

/* A time of day HH:MM[:SS] into seconds after midnight. */
static int
time_val(struct ps *p, uint32_t *at)
{
	const struct tok *t = cur(p);
	const char *s = p->s + t->off;
	unsigned h, m, sec = 0;

	if (t->kind != T_NUM || (t->len != 5 && t->len != 8) ||
	    two_digits(s, &h) != 0 || s[2] != ':' ||
	    two_digits(s + 3, &m) != 0 || (t->len == 8 && (s[5] != ':' ||
	    two_digits(s + 6, &sec) != 0)))
		return FAIL(p, "expected a time (HH:MM or HH:MM:SS) after 'at'");
	if (h > 23 || m > 59 || sec > 59)
		return FAIL(p, "no such time of day: '%.*s'", (int)t->len, s);
	*at = h * 3600 + m * 60 + sec;
	p->i++;
	return 0;
}

/* ---- the grammar ---- */

static int
pred(struct ps *p, struct plan_pred *q, const char *after)
{
	const struct tok *t = cur(p);
	int64_t f;

	if (t->kind != T_FIELD)
		return FAIL(p, "expected a field ($1 to $%d) after '%s'",
		    PLAN_FIELDS_MAX, after);
	if (int_of(p, &(struct tok){ T_NUM, (uint16_t)(t->off + 1),
	    (uint16_t)(t->len - 1), 0 }, 1, PLAN_FIELDS_MAX, &f) != 0)
		return FAIL(p, "no field %.*s ($1 to $%d)", (int)t->len,
		    p->s + t->off, PLAN_FIELDS_MAX);
	q->field = (uint8_t)f;
	p->i++;
	if (cur(p)->kind != T_OP)
		return FAIL(p, "expected a comparison (==, !=, <, <=, >, >=) "
		    "after '$%d'", (int)f);
	q->op = cur(p)->op;
	p->i++;
	t = cur(p);
	if (t->kind == T_STR) {
		if (q->op != PLAN_EQ && q->op != PLAN_NE)
			return FAIL(p, "a string compares with == or != only");
		q->is_str = 1;
		return string_val(p, &q->str);
	}
	if (t->kind != T_NUM)
		return FAIL(p, "expected a value (an integer or a string) "
		    "after the comparison");
	if (int_of(p, t, INT64_MIN, INT64_MAX, &q->num) != 0)
		return FAIL(p, "not a 64-bit integer: '%.*s'", (int)t->len,
		    p->s + t->off);
	p->i++;
	return 0;
}

static int
trigger(struct ps *p, struct plan_trig *w, const char *after)
{
	memset(w, 0, sizeof *w);
	if (accept(p, "event")) {
		w->kind = PLAN_W_EVENT;
		if (eid_val(p, "event", &w->eid) != 0)
			return -1;
		if (!accept(p, "where"))
			return 0;
		do {
			if (w->npred == PLAN_PREDS_MAX)
				return FAIL(p, "more than %d comparisons",
				    PLAN_PREDS_MAX);
			if (pred(p, &w->pred[w->npred], w->npred == 0 ?
			    "where" : "and") != 0)
				return -1;
			w->npred++;
		} while (accept(p, "and"));
		return 0;
	}
	if (accept(p, "block")) {
		w->kind = PLAN_W_BLOCK;
		if (name_val(p, "a block name", "block", &w->name) != 0)
			return -1;
		if (!accept(p, "longer"))
			return FAIL(p, "expected 'longer' after the block name");
		return dur_val(p, "longer", 0, &w->ns);
	}
	if (accept(p, "rate")) {
		w->kind = PLAN_W_RATE;
		if (eid_val(p, "rate", &w->eid) != 0)
			return -1;
		if (cur(p)->kind != T_OP || cur(p)->op != PLAN_GT)
			return FAIL(p, "expected '>' after the event type");
		p->i++;
		return rate_val(p, ">", &w->rate);
	}
	if (accept(p, "abnormal")) {
		w->kind = PLAN_W_ABNORMAL;
		if (!accept(p, "end"))
			return FAIL(p, "expected 'end' after 'abnormal'");
		return 0;
	}
	if (accept(p, "loss")) {
		w->kind = PLAN_W_LOSS;
		return 0;
	}
	if (accept(p, "at")) {
		w->kind = PLAN_W_AT;
		return time_val(p, &w->at);
	}
	if (accept(p, "every")) {
		w->kind = PLAN_W_EVERY;
		return dur_val(p, "every", 1, &w->ns);
	}
	return FAIL(p, "expected a trigger after '%s' (event, block, rate, "
	    "abnormal end, loss, at, every)", after);
}

static int
scope(struct ps *p)
{
	struct plan_scope *s = &p->r->scope;
	static const struct { const char *w; uint8_t bit; } items[] = {
		{ "host", PLAN_S_HOST }, { "process", PLAN_S_PROCESS },
		{ "rank", PLAN_S_RANK }, { "pid", PLAN_S_PID },
		{ "thread", PLAN_S_THREAD },
	};
	unsigned k, n = 0;
	int64_t v;

	for (;;) {
		for (k = 0; k < sizeof items / sizeof items[0]; k++)
			if (at_word(p, items[k].w))
				break;
		if (k == sizeof items / sizeof items[0])
			break;
		if (s->has & items[k].bit)
			return FAIL(p, "'%s' given twice", items[k].w);
		s->has |= items[k].bit;
		p->i++;
		n++;
		switch (items[k].bit) {
		case PLAN_S_HOST:
			if (name_val(p, "a host name", "host", &s->host) != 0)
				return -1;
			break;
		case PLAN_S_PROCESS:
			if (name_val(p, "a process name", "process",
			    &s->process) != 0)
				return -1;
			break;
		default:
			if (int_val(p, items[k].bit == PLAN_S_RANK ? "a rank" :
			    items[k].bit == PLAN_S_PID ? "a process id" :
			    "a thread id", items[k].w, 0, UINT32_MAX, &v) != 0)
				return -1;
			if (items[k].bit == PLAN_S_RANK)
				s->rank = (uint32_t)v;
			else if (items[k].bit == PLAN_S_PID)
				s->pid = (uint32_t)v;
			else
				s->thread = (uint32_t)v;
		}
	}
	if (n == 0)
		return FAIL(p, "expected a scope after 'in' (host, process, "
		    "rank, pid, thread)");
	return 0;
}

static const struct {
	const char	*name;
	int		cls;
} class_names[] = {
	{ "procedure", REC_CLASS_PROCEDURE }, { "event", REC_CLASS_EVENT },
	{ "string", REC_CLASS_STRING }, { "message", REC_CLASS_MESSAGE },
	{ "user", REC_CLASS_USER },
};

/* A target of enable/disable, if the current token is one: 1 read, 0
 * not one (nothing read), -1 error. */
static int
target(struct ps *p, const char *verb, struct plan_target *g)
{
	const struct tok *t = cur(p);
	unsigned k;
	int64_t v;

	if (t->kind == T_NUM) {
		/* "3 times" ends the actions. */
		if (tok_is(p, &p->t[p->i + 1], "times"))
			return 0;
		g->is_class = 0;
		return eid_val(p, verb, &g->value) == 0 ? 1 : -1;
	}
	if (t->kind != T_WORD)
		return 0;
	for (k = 0; k < sizeof class_names / sizeof class_names[0]; k++)
		if (at_word(p, class_names[k].name)) {
			g->is_class = 1;
			g->value = class_names[k].cls;
			p->i++;
			return 1;
		}
	if (t->len > 6 && strncasecmp(p->s + t->off, "class:", 6) == 0) {
		if (int_of(p, &(struct tok){ T_NUM, (uint16_t)(t->off + 6),
		    (uint16_t)(t->len - 6), 0 }, 0, 254, &v) != 0)
			return FAIL(p, "expected a class number (0 to 254) "
			    "after 'class:'");
		g->is_class = 1;
		g->value = (int32_t)v;
		p->i++;
		return 1;
	}
	return 0;
}

static int
action(struct ps *p, struct plan_act *a)
{
	struct plan_rule *r = p->r;
	const char *verb;
	size_t off;
	int n;

	memset(a, 0, sizeof *a);
	if (accept(p, "snapshot")) {
		a->kind = PLAN_D_SNAPSHOT;
		a->before = 10 * 1000000000ull;
		a->after = 1000000000ull;
		if (accept(p, "before") && dur_val(p, "before", 0,
		    &a->before) != 0)
			return -1;
		if (accept(p, "after") && dur_val(p, "after", 0,
		    &a->after) != 0)
			return -1;
		return 0;
	}
	if (at_word(p, "enable") || at_word(p, "disable")) {
		a->kind = at_word(p, "enable") ? PLAN_D_ENABLE :
		    PLAN_D_DISABLE;
		verb = a->kind == PLAN_D_ENABLE ? "enable" : "disable";
		p->i++;
		while ((n = target(p, verb, &a->tgt[a->ntgt])) == 1)
			if (++a->ntgt == PLAN_TARGETS_MAX) {
				off = cur(p)->off;
				if (target(p, verb,
				    &(struct plan_target){ 0, 0 }) != 0)
					return fail_at(p, off, "more than %d "
					    "types or classes",
					    PLAN_TARGETS_MAX);
				break;
			}
		if (n < 0)
			return -1;
		if (a->ntgt == 0)
			return FAIL(p, "expected an event type or a class "
			    "(procedure, event, string, message, user, "
			    "class:N) after '%s'", verb);
		if (accept(p, "for"))
			return dur_val(p, "for", 1, &a->for_ns);
		if (at_word(p, "until")) {
			if (r->has_until)
				return FAIL(p, "only one 'until' in a rule");
			p->i++;
			a->until = 1;
			r->has_until = 1;
			return trigger(p, &r->until, "until");
		}
		return 0;
	}
	if (accept(p, "mark")) {
		a->kind = PLAN_D_MARK;
		if (cur(p)->kind == T_STR)
			return string_val(p, &a->str);
		return 0;
	}
	if (accept(p, "stop")) {
		a->kind = PLAN_D_STOP;
		if (r->when.kind == PLAN_W_ABNORMAL)
			return fail_at(p, p->t[p->i - 1].off, "'stop' needs a "
			    "live process: not after 'abnormal end'");
		return 0;
	}
	if (accept(p, "continue")) {
		a->kind = PLAN_D_CONTINUE;
		return 0;
	}
	if (accept(p, "exec")) {
		a->kind = PLAN_D_EXEC;
		if (cur(p)->kind != T_STR)
			return FAIL(p, "expected a command (a string) after "
			    "'exec'");
		if (cur(p)->len == 2)
			return FAIL(p, "an empty command");
		return string_val(p, &a->str);
	}
	if (accept(p, "rotate")) {
		a->kind = PLAN_D_ROTATE;
		return 0;
	}
	return FAIL(p, "expected an action (snapshot, enable, disable, mark, "
	    "stop, continue, exec, rotate)");
}

/* once | N times | always, interval D: each at most once. */
static int
firing(struct ps *p)
{
	struct plan_rule *r = p->r;
	int count = 0, gap = 0;
	int64_t v;

	for (;;) {
		if (at_word(p, "once") || at_word(p, "always")) {
			if (count++)
				return FAIL(p, "how often is given twice");
			r->times = at_word(p, "once") ? 1 : 0;
			p->i++;
		} else if (cur(p)->kind == T_NUM) {
			if (count++)
				return FAIL(p, "how often is given twice");
			if (int_of(p, cur(p), 1, PLAN_TIMES_MAX, &v) != 0)
				return FAIL(p, "a number of times out of range "
				    "(1 to %d)", PLAN_TIMES_MAX);
			p->i++;
			if (!accept(p, "times"))
				return FAIL(p, "expected 'times' after the "
				    "number");
			r->times = (uint32_t)v;
		} else if (at_word(p, "interval")) {
			if (gap++)
				return FAIL(p, "'interval' given twice");
			p->i++;
			if (dur_val(p, "interval", 1, &r->interval) != 0)
				return -1;
		} else
			return 0;
	}
}

int
plan_parse_rule(const char *text, size_t len, struct plan_rule *r,
		struct plan_err *e)
{
	static __thread struct ps ps;	/* 12 KiB: off the stack */
	struct ps *p = &ps;
	size_t i, n;

	memset(r, 0, sizeof *r);
	memset(e, 0, sizeof *e);
	p->s = text;
	p->len = len;
	p->r = r;
	p->e = e;
	p->i = 0;
	p->nt = 0;
	p->t[0] = (struct tok){ T_END, 0, 0, 0 };
	if (len > PLAN_RULE_MAX)
		return fail_at(p, PLAN_RULE_MAX, "a rule longer than %d bytes",
		    PLAN_RULE_MAX);
	for (i = 0; i < len; i++)
		if (text[i] == '\n' || text[i] == '\0')
			return fail_at(p, i, "a rule is one line (no newline or "
			    "NUL byte in it)");
	if (lex(p) != 0)
		return -1;
	if (!accept(p, "when"))
		return FAIL(p, "expected 'when' (a rule is: when TRIGGER do "
		    "ACTION)");
	if (trigger(p, &r->when, "when") != 0)
		return -1;
	if (accept(p, "in") && scope(p) != 0)
		return -1;
	if (!accept(p, "do"))
		return FAIL(p, "expected 'do' after the trigger%s",
		    r->scope.has ? " and its scope" : " (or 'in' and a scope)");
	do {
		if (r->nact == PLAN_ACTS_MAX)
			return FAIL(p, "more than %d actions", PLAN_ACTS_MAX);
		if (action(p, &r->act[r->nact++]) != 0)
			return -1;
	} while (cur(p)->kind == T_COMMA && (p->i++, 1));
	if (firing(p) != 0)
		return -1;
	if (cur(p)->kind != T_END)
		return FAIL(p, "unexpected '%.*s' after the rule%s",
		    (int)(cur(p)->len > 40 ? 40 : cur(p)->len),
		    text + cur(p)->off, cur(p)->kind == T_WORD ? "" :
		    " (actions are separated by commas)");
	/* Its canonical form (plan list, the trace's header) must parse
	 * back: no longer than a rule may be. */
	if ((n = plan_print(r, NULL, 0)) > PLAN_RULE_MAX)
		return fail_at(p, 0, "a rule of %zu bytes written canonically, "
		    "over %d (a string's byte outside printable ASCII is "
		    "written \\xNN)", n, PLAN_RULE_MAX);
	return 0;
}

int
plan_parse_file(const char *text, size_t len,
		int (*add)(const struct plan_rule *, unsigned, void *,
			   struct plan_err *),
		void *arg, struct plan_err *e)
{
	static __thread struct plan_rule r;
	size_t b = 0, end, i;
	unsigned line = 0, n = 0;

	memset(e, 0, sizeof *e);
	if (len > PLAN_FILE_MAX) {
		e->line = 1;
		e->col = 1;
		snprintf(e->msg, sizeof e->msg, "a plan file longer than %d "
		    "bytes", PLAN_FILE_MAX);
		return -1;
	}
	while (b < len) {
		line++;
		for (end = b; end < len && text[end] != '\n'; end++)
			;
		for (i = b; i < end && (text[i] == ' ' || text[i] == '\t' ||
		    text[i] == '\r'); i++)
			;
		if (i < end && text[i] != '#') {
			if (n == PLAN_RULES_MAX) {
				e->line = line;
				e->col = (unsigned)(i - b) + 1;
				snprintf(e->msg, sizeof e->msg, "more than %d "
				    "rules", PLAN_RULES_MAX);
				return -1;
			}
			if (plan_parse_rule(text + b, end - b, &r, e) != 0) {
				e->line = line;
				return -1;
			}
			n++;
			if (add != NULL && add(&r, line, arg, e) != 0) {
				e->line = line;
				if (e->col == 0)
					e->col = 1;
				return -1;
			}
		}
		b = end + 1;
	}
	return 0;
}

/* ---- printing ---- */

struct out {
	char	*b;
	size_t	cap, len;
};

static void
put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->len < o->cap ? o->b + o->len : NULL,
	    o->len < o->cap ? o->cap - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static void
put_str(struct out *o, const struct plan_rule *r, struct plan_str s)
{
	const unsigned char *c = (const unsigned char *)r->pool + s.off;
	size_t i;

	put(o, "\"");
	for (i = 0; i < s.len; i++) {
		if (c[i] == '"' || c[i] == '\\')
			put(o, "\\%c", c[i]);
		else if (c[i] == '\n')
			put(o, "\\n");
		else if (c[i] == '\t')
			put(o, "\\t");
		else if (c[i] < 0x20 || c[i] >= 0x7f)
			put(o, "\\x%02x", c[i]);
		else
			put(o, "%c", c[i]);
	}
	put(o, "\"");
}

static void
put_dur(struct out *o, uint64_t ns)
{
	unsigned k;

	for (k = 0; k < sizeof units / sizeof units[0]; k++)
		if (ns % units[k].ns == 0 && (ns != 0 || units[k].ns ==
		    1000000000ull))
			break;
	put(o, "%llu%s", (unsigned long long)(ns / units[k].ns),
	    units[k].name);
}

static const char *const op_names[] = { "==", "!=", "<", "<=", ">", ">=" };

static void
put_trig(struct out *o, const struct plan_rule *r, const struct plan_trig *w)
{
	unsigned i;

	switch (w->kind) {
	case PLAN_W_EVENT:
		put(o, "event %d", (int)w->eid);
		for (i = 0; i < w->npred; i++) {
			put(o, " %s $%u %s ", i == 0 ? "where" : "and",
			    w->pred[i].field, op_names[w->pred[i].op]);
			if (w->pred[i].is_str)
				put_str(o, r, w->pred[i].str);
			else
				put(o, "%lld", (long long)w->pred[i].num);
		}
		break;
	case PLAN_W_BLOCK:
		put(o, "block ");
		put_str(o, r, w->name);
		put(o, " longer ");
		put_dur(o, w->ns);
		break;
	case PLAN_W_RATE:
		put(o, "rate %d > ", (int)w->eid);
		if (w->rate % 1000000000 == 0)
			put(o, "%lluG/s", (unsigned long long)(w->rate /
			    1000000000));
		else if (w->rate % 1000000 == 0)
			put(o, "%lluM/s", (unsigned long long)(w->rate /
			    1000000));
		else if (w->rate % 1000 == 0)
			put(o, "%lluk/s", (unsigned long long)(w->rate / 1000));
		else
			put(o, "%llu/s", (unsigned long long)w->rate);
		break;
	case PLAN_W_ABNORMAL:
		put(o, "abnormal end");
		break;
	case PLAN_W_LOSS:
		put(o, "loss");
		break;
	case PLAN_W_AT:
		put(o, "at %02u:%02u", w->at / 3600, w->at / 60 % 60);
		if (w->at % 60 != 0)
			put(o, ":%02u", w->at % 60);
		break;
	case PLAN_W_EVERY:
		put(o, "every ");
		put_dur(o, w->ns);
		break;
	}
}

static void
put_act(struct out *o, const struct plan_rule *r, const struct plan_act *a)
{
	static const char *const names[] = { "", "snapshot", "enable",
		"disable", "mark", "stop", "continue", "exec", "rotate" };
	unsigned i, k;

	put(o, "%s", names[a->kind]);
	switch (a->kind) {
	case PLAN_D_SNAPSHOT:
		put(o, " before ");
		put_dur(o, a->before);
		put(o, " after ");
		put_dur(o, a->after);
		break;
	case PLAN_D_ENABLE:
	case PLAN_D_DISABLE:
		for (i = 0; i < a->ntgt; i++) {
			if (!a->tgt[i].is_class) {
				put(o, " %d", (int)a->tgt[i].value);
				continue;
			}
			for (k = 0; k < sizeof class_names /
			    sizeof class_names[0]; k++)
				if (class_names[k].cls == a->tgt[i].value)
					break;
			if (k < sizeof class_names / sizeof class_names[0])
				put(o, " %s", class_names[k].name);
			else
				put(o, " class:%d", (int)a->tgt[i].value);
		}
		if (a->for_ns != 0) {
			put(o, " for ");
			put_dur(o, a->for_ns);
		} else if (a->until) {
			put(o, " until ");
			put_trig(o, r, &r->until);
		}
		break;
	case PLAN_D_MARK:
		if (a->str.len > 0) {
			put(o, " ");
			put_str(o, r, a->str);
		}
		break;
	case PLAN_D_EXEC:
		put(o, " ");
		put_str(o, r, a->str);
		break;
	}
}

size_t
plan_print(const struct plan_rule *r, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };
	const struct plan_scope *s = &r->scope;
	unsigned i;

	if (cap > 0)
		buf[0] = '\0';
	put(&o, "when ");
	put_trig(&o, r, &r->when);
	if (s->has) {
		put(&o, " in");
		if (s->has & PLAN_S_HOST) {
			put(&o, " host ");
			put_str(&o, r, s->host);
		}
		if (s->has & PLAN_S_PROCESS) {
			put(&o, " process ");
			put_str(&o, r, s->process);
		}
		if (s->has & PLAN_S_RANK)
			put(&o, " rank %u", s->rank);
		if (s->has & PLAN_S_PID)
			put(&o, " pid %u", s->pid);
		if (s->has & PLAN_S_THREAD)
			put(&o, " thread %u", s->thread);
	}
	put(&o, " do ");
	for (i = 0; i < r->nact; i++) {
		if (i > 0)
			put(&o, ", ");
		put_act(&o, r, &r->act[i]);
	}
	if (r->times == 1)
		put(&o, " once");
	else if (r->times > 1)
		put(&o, " %u times", r->times);
	if (r->interval != 0) {
		put(&o, " interval ");
		put_dur(&o, r->interval);
	}
	return o.len;
}

/* ---- comparing ---- */

static int
str_eq(const struct plan_rule *a, struct plan_str x,
       const struct plan_rule *b, struct plan_str y)
{
	return x.len == y.len && memcmp(a->pool + x.off, b->pool + y.off,
	    x.len) == 0;
}

static int
trig_eq(const struct plan_rule *a, const struct plan_trig *x,
	const struct plan_rule *b, const struct plan_trig *y)
{
	unsigned i;

	if (x->kind != y->kind || x->npred != y->npred || x->eid != y->eid ||
	    x->ns != y->ns || x->rate != y->rate || x->at != y->at ||
	    !str_eq(a, x->name, b, y->name))
		return 0;
	for (i = 0; i < x->npred; i++)
		if (x->pred[i].field != y->pred[i].field ||
		    x->pred[i].op != y->pred[i].op ||
		    x->pred[i].is_str != y->pred[i].is_str ||
		    x->pred[i].num != y->pred[i].num ||
		    !str_eq(a, x->pred[i].str, b, y->pred[i].str))
			return 0;
	return 1;
}

int
plan_equal(const struct plan_rule *a, const struct plan_rule *b)
{
	const struct plan_act *x, *y;
	unsigned i, k;

	if (!trig_eq(a, &a->when, b, &b->when) || a->nact != b->nact ||
	    a->has_until != b->has_until || a->times != b->times ||
	    a->interval != b->interval || a->scope.has != b->scope.has ||
	    a->scope.rank != b->scope.rank || a->scope.pid != b->scope.pid ||
	    a->scope.thread != b->scope.thread ||
	    !str_eq(a, a->scope.host, b, b->scope.host) ||
	    !str_eq(a, a->scope.process, b, b->scope.process))
		return 0;
	if (a->has_until && !trig_eq(a, &a->until, b, &b->until))
		return 0;
	for (i = 0; i < a->nact; i++) {
		x = &a->act[i];
		y = &b->act[i];
		if (x->kind != y->kind || x->ntgt != y->ntgt ||
		    x->until != y->until || x->before != y->before ||
		    x->after != y->after || x->for_ns != y->for_ns ||
		    !str_eq(a, x->str, b, y->str))
			return 0;
		for (k = 0; k < x->ntgt; k++)
			if (x->tgt[k].is_class != y->tgt[k].is_class ||
			    x->tgt[k].value != y->tgt[k].value)
				return 0;
	}
	return 1;
}

int
plan_has_exec(const struct plan_rule *r)
{
	unsigned i;

	for (i = 0; i < r->nact; i++)
		if (r->act[i].kind == PLAN_D_EXEC)
			return 1;
	return 0;
}

size_t
plan_err_format(const struct plan_err *e, const char *where,
		const char *src, size_t len, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };
	size_t b = 0, end, i;
	unsigned line = 1;

	if (cap > 0)
		buf[0] = '\0';
	if (where == NULL)
		put(&o, "plan: %u:%u: %s", e->line, e->col, e->msg);
	else
		put(&o, "%s:%u:%u: %s", where, e->line, e->col, e->msg);
	if (src == NULL)
		return o.len;
	while (line < e->line && b < len) {
		if (src[b++] == '\n')
			line++;
	}
	for (end = b; end < len && src[end] != '\n' && end - b < 200; end++)
		;
	put(&o, "\n  ");
	for (i = b; i < end; i++)
		put(&o, "%c", (unsigned char)src[i] < 0x20 ||
		    (unsigned char)src[i] >= 0x7f ? '?' : src[i]);
	put(&o, "\n  %*s^", (int)(e->col > 201 ? 200 : e->col - 1), "");
	return o.len;
}

/* ---- plan files ---- */

/* What plan_load gives plan_parse_file's callback. */
struct load {
	int	allow_exec;
	int	(*add)(const struct plan_rule *, unsigned, void *,
		       struct plan_err *);
	void	*arg;
};

static int
load_one(const struct plan_rule *r, unsigned line, void *arg,
	 struct plan_err *e)
{
	const struct load *l = arg;

	if (plan_has_exec(r) && !l->allow_exec) {
		e->col = 1;
		snprintf(e->msg, sizeof e->msg, "a rule with exec is refused: "
		    "mainmon was not started with --allow-exec");
		return -1;
	}
	return l->add != NULL ? l->add(r, line, l->arg, e) : 0;
}

int
plan_load(const char *path, int allow_exec,
	  int (*add)(const struct plan_rule *, unsigned, void *,
		     struct plan_err *),
	  void *arg, char *why, size_t cap)
{
	static __thread char text[PLAN_FILE_MAX + 1];
	struct load l = { allow_exec, add, arg };
	struct plan_err e;
	struct stat st;
	ssize_t got;
	size_t len = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd == -1) {
		snprintf(why, cap, "%s: %s", path, strerror(errno));
		return -2;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(why, cap, "%s: not a regular file", path);
		return -2;
	}
	/* One byte more than a plan may hold: too long is said, not cut. */
	while (len < sizeof text) {
		got = read(fd, text + len, sizeof text - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(why, cap, "%s: %s", path, strerror(errno));
			close(fd);
			return -2;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	rc = plan_parse_file(text, len, load_one, &l, &e);
	if (rc != 0)
		plan_err_format(&e, path, text, len, why, cap);
	return rc;
}
