/* SPDX-License-Identifier: MIT */
/* fuzz_plan.c: libFuzzer target for the plan language (common/plan/plan.c):
 * the input is a plan file, parsed whole, and each of its lines parsed as
 * one rule.  A rule that parses prints canonically within PLAN_PRINT_MAX,
 * and its print parses back to an equal rule that prints the same; an
 * error names a line and a column inside the input, and formats. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "plan/plan.h"

static struct plan_rule r1, r2;
static char p1[PLAN_PRINT_MAX], p2[PLAN_PRINT_MAX], msg[4096];

static void
one_rule(const char *s, size_t n)
{
	struct plan_err e;
	size_t len;

	if (plan_parse_rule(s, n, &r1, &e) != 0) {
		CHECK(e.line == 1 && e.col >= 1 && e.col <= n + 1);
		CHECK(e.msg[0] != '\0');
		plan_err_format(&e, NULL, s, n, msg, sizeof msg);
		return;
	}
	len = plan_print(&r1, p1, sizeof p1);
	CHECK(len < sizeof p1 && len == strlen(p1));
	CHECK(plan_parse_rule(p1, len, &r2, &e) == 0);
	CHECK(plan_equal(&r1, &r2));
	plan_print(&r2, p2, sizeof p2);
	CHECK(strcmp(p1, p2) == 0);
	sink += r1.nact + plan_has_exec(&r1);
}

static int
count(const struct plan_rule *r, unsigned line, void *arg,
      struct plan_err *e)
{
	(void)r;
	(void)e;
	CHECK(line >= 1);
	(*(unsigned *)arg)++;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct plan_err e;
	unsigned n = 0, lines = 1;
	size_t b = 0, i;

	for (i = 0; i < size; i++)
		lines += s[i] == '\n';
	if (plan_parse_file(s, size, count, &n, &e) != 0) {
		CHECK(e.line >= 1 && e.line <= lines && e.col >= 1);
		plan_err_format(&e, "fuzz.plan", s, size, msg, sizeof msg);
	}
	CHECK(n <= PLAN_RULES_MAX);
	for (i = 0; i <= size; i++)
		if (i == size || s[i] == '\n') {
			one_rule(s + b, i - b);
			b = i + 1;
		}
	return 0;
}
