/* SPDX-License-Identifier: MIT */
/* pv_svg_txt.c: prove svg: XML text built in fixed buffers, escaped, and
 * durations and times as text. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pv_svg.h"

void
svg_txt_init(struct txt *t, char *b, size_t cap)
{
	t->b = b;
	t->cap = cap;
	t->len = 0;
	t->nch = 0;
	t->cut = 0;
	b[0] = '\0';
}

static int
txt_put(struct txt *t, const char *s, size_t n, size_t nch)
{
	if (t->cut || t->len + n + 4 > t->cap) {
		t->cut = 1;
		return -1;
	}
	memcpy(t->b + t->len, s, n);
	t->len += n;
	t->nch += nch;
	t->b[t->len] = '\0';
	return 0;
}

/* Ends t, with an ellipsis if something did not fit. */
void
svg_txt_done(struct txt *t)
{
	if (t->cut) {
		memcpy(t->b + t->len, "\xe2\x80\xa6", 4);
		t->len += 3;
		t->nch++;
	}
}

/* Appends text that needs no escaping. */
void
svg_txt_printf(struct txt *t, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	txt_put(t, buf, (size_t)n, (size_t)n);
}

/* Length of the UTF-8 sequence of an XML character at s, or 0. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t k, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		k = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		k = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		k = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	if (n < k)
		return 0;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp == 0xfffe || cp == 0xffff)
		return 0;
	return k;
}

/*
 * Appends user data s[0..n) escaped for XML text and attribute values, at
 * most max characters (then an ellipsis): & < > " ' as references, bytes
 * below 0x20 and 0x7f dropped, bytes that are not UTF-8 as U+FFFD.
 */
void
svg_txt_esc(struct txt *t, const char *s, size_t n, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *e = p + n;
	const char *rep;
	size_t k, shown = 0;

	while (p < e) {
		k = 1;
		switch (*p) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				p++;
				continue;
			}
			rep = NULL;
			if (*p >= 0x80 &&
			    (k = utf8_len(p, (size_t)(e - p))) == 0) {
				rep = "\xef\xbf\xbd";
				k = 1;
			}
		}
		if (shown == max) {
			txt_put(t, "\xe2\x80\xa6", 3, 1);
			return;
		}
		if (rep != NULL ? txt_put(t, rep, strlen(rep), 1) :
		    txt_put(t, (const char *)p, k, 1))
			return;
		shown++;
		p += k;
	}
}

/* A duration, 4 significant digits and a unit. */
const char *
svg_dur(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.4g \xc2\xb5s", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.4g ms", (double)ns / 1e6);
	else
		snprintf(buf, n, "%.4g s", (double)ns / 1e9);
	return buf;
}

/* A time since the first record, in seconds to the ns. */
const char *
svg_at(char *buf, size_t n, const struct svg *g, uint64_t ts)
{
	uint64_t d = ts > g->first ? ts - g->first : 0;

	snprintf(buf, n, "%" PRIu64 ".%09" PRIu64 " s", d / 1000000000,
	    d % 1000000000);
	return buf;
}

/* A signed duration. */
const char *
svg_sdur(char *buf, size_t n, uint64_t from, uint64_t to)
{
	if (to >= from)
		return svg_dur(buf, n, to - from);
	buf[0] = '-';
	svg_dur(buf + 1, n - 1, from - to);
	return buf;
}
