/* SPDX-License-Identifier: MIT */
/* test_plan.c: the plan language (common/plan/plan.c, doc/plans.md):
 * every construct parsed, printed canonically and parsed back equal;
 * every error with its exact message and column; the limits. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

static struct plan_rule r, r2;
static struct plan_err e;
static char buf[PLAN_PRINT_MAX];

/* Parses s; it must parse, print as canon, and canon parse back equal. */
static void
ok(const char *s, const char *canon)
{
	int rc = plan_parse_rule(s, strlen(s), &r, &e);

	cr_assert_eq(rc, 0, "%s: %u:%u: %s", s, e.line, e.col, e.msg);
	plan_print(&r, buf, sizeof buf);
	cr_expect_str_eq(buf, canon, "%s", s);
	cr_assert_eq(plan_parse_rule(buf, strlen(buf), &r2, &e), 0,
	    "%s: %s", buf, e.msg);
	cr_expect(plan_equal(&r, &r2), "round trip: %s", buf);
}

/* s must fail at column col with msg, exactly. */
static void
bad(const char *s, unsigned col, const char *msg)
{
	cr_assert_eq(plan_parse_rule(s, strlen(s), &r, &e), -1, "%s", s);
	cr_expect_eq(e.line, 1);
	cr_expect_eq(e.col, col, "%s: column %u, not %u (%s)", s, e.col, col,
	    e.msg);
	cr_expect_str_eq(e.msg, msg, "%s", s);
}

/* ---- triggers ---- */

Test(plan, event_with_predicates)
{
	ok("when event 7 do mark", "when event 7 do mark");
	ok("when event 7 where $2 > 1000 do mark",
	    "when event 7 where $2 > 1000 do mark");
	ok("when event -1 where $1 == 3 and $2 != -4 and $3 < 0x10 and "
	    "$4 <= 5 and $5 >= 6 and $16 == \"a b\" do mark",
	    "when event -1 where $1 == 3 and $2 != -4 and $3 < 16 and "
	    "$4 <= 5 and $5 >= 6 and $16 == \"a b\" do mark");
	cr_expect_eq(r.when.kind, PLAN_W_EVENT);
	cr_expect_eq(r.when.eid, -1);
	cr_expect_eq(r.when.npred, 6);
	cr_expect_eq(r.when.pred[2].op, PLAN_LT);
	cr_expect_eq(r.when.pred[2].num, 16);
	cr_expect_eq(r.when.pred[5].is_str, 1);
	cr_expect_eq(r.when.pred[5].str.len, 3);
	ok("when event 1 where $1 == -9223372036854775808 do mark",
	    "when event 1 where $1 == -9223372036854775808 do mark");
	ok("when event 1 where $1 != \"\" do mark",
	    "when event 1 where $1 != \"\" do mark");
}

Test(plan, block_rate_abnormal_loss_at_every)
{
	ok("when block solve longer 50ms do snapshot",
	    "when block \"solve\" longer 50ms do snapshot before 10s after 1s");
	ok("when block \"my block\" longer 1.5s do mark",
	    "when block \"my block\" longer 1500ms do mark");
	ok("when rate 7 > 100k/s do mark", "when rate 7 > 100k/s do mark");
	cr_expect_eq(r.when.rate, 100000);
	ok("when rate 7 > 1500/s do mark", "when rate 7 > 1500/s do mark");
	ok("when rate 7 > 2M/s do mark", "when rate 7 > 2M/s do mark");
	ok("when rate 7 > 1G/s do mark", "when rate 7 > 1G/s do mark");
	ok("when abnormal end do snapshot before 30s after 0s",
	    "when abnormal end do snapshot before 30s after 0s");
	ok("when loss do rotate", "when loss do rotate");
	ok("when at 12:00 do rotate", "when at 12:00 do rotate");
	cr_expect_eq(r.when.at, 12 * 3600);
	ok("when at 23:59:59 do rotate", "when at 23:59:59 do rotate");
	ok("when every 10s do mark", "when every 10s do mark");
	ok("when every 90s do mark", "when every 90s do mark");
	ok("when every 120s do mark", "when every 2m do mark");
	ok("when every 1h do mark", "when every 1h do mark");
	ok("when every 250us do mark", "when every 250us do mark");
	ok("when every 1ns do mark", "when every 1ns do mark");
	ok("when every 0.000000001s do mark", "when every 1ns do mark");
	ok("when every 720h do mark", "when every 720h do mark");
	/* Fractions of the large units, to the nanosecond. */
	ok("when every 1.999999999h do mark",
	    "when every 7199999996400ns do mark");
	cr_expect_eq(r.when.ns, 7199999996400ull);
	ok("when every 0.5m do mark", "when every 30s do mark");
	ok("when every 2.5ms do mark", "when every 2500us do mark");
}

Test(plan, keywords_any_case_and_comments)
{
	ok("WHEN Loss DO Rotate   # the file", "when loss do rotate");
	ok("\twhen loss do mark \"# not a comment\"",
	    "when loss do mark \"# not a comment\"");
}

/* ---- scope ---- */

Test(plan, scope)
{
	ok("when loss in host node1 process solver rank 3 pid 42 thread 43 "
	    "do mark", "when loss in host \"node1\" process \"solver\" "
	    "rank 3 pid 42 thread 43 do mark");
	cr_expect_eq(r.scope.has, PLAN_S_HOST | PLAN_S_PROCESS | PLAN_S_RANK |
	    PLAN_S_PID | PLAN_S_THREAD);
	ok("when loss in thread 7 process \"a b\" do mark",
	    "when loss in process \"a b\" thread 7 do mark");
	ok("when loss in host n-1.example.org do mark",
	    "when loss in host \"n-1.example.org\" do mark");
}

/* ---- actions and firing ---- */

Test(plan, actions)
{
	ok("when loss do snapshot before 2s after 500ms",
	    "when loss do snapshot before 2s after 500ms");
	ok("when loss do snapshot after 3s",
	    "when loss do snapshot before 10s after 3s");
	ok("when event 7 where $1 > 100 do enable 8 9 procedure class:7 "
	    "class:8 for 10s",
	    "when event 7 where $1 > 100 do enable 8 9 procedure class:7 "
	    "user for 10s");
	ok("when loss do disable event string message until every 1m",
	    "when loss do disable event string message until every 1m");
	ok("when event 7 do enable 8 until event 9 where $1 == 0",
	    "when event 7 do enable 8 until event 9 where $1 == 0");
	ok("when loss do mark, mark \"x\\ty\\n\\x01\\\"\\\\\"",
	    "when loss do mark, mark \"x\\ty\\n\\x01\\\"\\\\\"");
	ok("when block b longer 1s do stop", "when block \"b\" longer 1s do "
	    "stop");
	ok("when every 1m in pid 4 do continue",
	    "when every 1m in pid 4 do continue");
	ok("when loss do exec \"gdb -p $GRM_PLAN_PID\"",
	    "when loss do exec \"gdb -p $GRM_PLAN_PID\"");
	cr_expect(plan_has_exec(&r));
	ok("when loss do rotate, snapshot, mark",
	    "when loss do rotate, snapshot before 10s after 1s, mark");
	cr_expect(!plan_has_exec(&r));
}

Test(plan, firing)
{
	ok("when loss do mark once", "when loss do mark once");
	cr_expect_eq(r.times, 1);
	ok("when loss do mark 3 times", "when loss do mark 3 times");
	ok("when loss do mark 1 times", "when loss do mark once");
	ok("when loss do mark always", "when loss do mark");
	ok("when loss do mark interval 5s once",
	    "when loss do mark once interval 5s");
	cr_expect_eq(r.interval, 5000000000ull);
	ok("when loss do enable 3 2 times", "when loss do enable 3 2 times");
	cr_expect_eq(r.act[0].ntgt, 1);
	cr_expect_eq(r.times, 2);
}

/* The seed's story: the growth of the concealed stack triggers the
 * excess monitoring, kept for playing back after the collapse. */
Test(plan, seed_story)
{
	ok("when event 12 where $1 > 1000000 do enable procedure 13 14 for "
	    "30s, snapshot before 10s after 5s, mark \"stack grows\" once",
	    "when event 12 where $1 > 1000000 do enable procedure 13 14 for "
	    "30s, snapshot before 10s after 5s, mark \"stack grows\" once");
}

/* ---- errors: exact message and column ---- */

Test(plan, errors_structure)
{
	bad("", 1, "expected 'when' (a rule is: when TRIGGER do ACTION)");
	bad("if loss do mark", 1,
	    "expected 'when' (a rule is: when TRIGGER do ACTION)");
	bad("when", 5, "expected a trigger after 'when' (event, block, rate, "
	    "abnormal end, loss, at, every)");
	bad("when foo do mark", 6, "expected a trigger after 'when' (event, "
	    "block, rate, abnormal end, loss, at, every)");
	bad("when loss", 10, "expected 'do' after the trigger (or 'in' and a "
	    "scope)");
	bad("when loss mark", 11, "expected 'do' after the trigger (or 'in' "
	    "and a scope)");
	bad("when loss in pid 3 mark", 20, "expected 'do' after the trigger "
	    "and its scope");
	bad("when loss do", 13, "expected an action (snapshot, enable, "
	    "disable, mark, stop, continue, exec, rotate)");
	bad("when loss do mark,", 19, "expected an action (snapshot, enable, "
	    "disable, mark, stop, continue, exec, rotate)");
	bad("when loss do mark foo", 19, "unexpected 'foo' after the rule");
	bad("when loss do mark \"a\" \"b\"", 23, "unexpected '\"b\"' after "
	    "the rule (actions are separated by commas)");
	bad("when loss do mark ; rotate", 19, "unexpected ';'");
	bad("when loss do mark \x01", 19, "unexpected byte 0x01");
	bad("when loss\ndo mark", 10,
	    "a rule is one line (no newline or NUL byte in it)");
}

Test(plan, errors_triggers)
{
	bad("when block solve longer do snapshot", 25,
	    "expected a duration after 'longer'");
	bad("when block solve 5s do mark", 18,
	    "expected 'longer' after the block name");
	bad("when block longer 5s do mark", 12,
	    "expected a block name after 'block'");
	bad("when block do mark", 12, "expected a block name after 'block'");
	ok("when block \"do\" longer 1s do mark",
	    "when block \"do\" longer 1s do mark");
	bad("when block \"\" longer 1s do mark", 12, "an empty name after 'block'");
	bad("when event do mark", 12, "expected an event type after 'event'");
	bad("when event x do mark", 12,
	    "expected an event type after 'event'");
	bad("when event 99999999 do mark", 12, "an event type out of range: "
	    "'99999999' (-64 to 69631)");
	bad("when event 7 where do mark", 20,
	    "expected a field ($1 to $16) after 'where'");
	bad("when event 7 where $1 > 1 and do mark", 31,
	    "expected a field ($1 to $16) after 'and'");
	bad("when event 7 where $17 > 1 do mark", 20, "no field $17 ($1 to "
	    "$16)");
	bad("when event 7 where $0 > 1 do mark", 20, "no field $0 ($1 to $16)");
	bad("when event 7 where $ > 1 do mark", 20,
	    "expected a field number after '$' ($1 to $16)");
	bad("when event 7 where $1 1 do mark", 23,
	    "expected a comparison (==, !=, <, <=, >, >=) after '$1'");
	bad("when event 7 where $1 = 1 do mark", 23, "unexpected '='");
	bad("when event 7 where $1 > do mark", 25,
	    "expected a value (an integer or a string) after the comparison");
	bad("when event 7 where $1 < \"x\" do mark", 25,
	    "a string compares with == or != only");
	bad("when event 7 where $1 > 9223372036854775808 do mark", 25,
	    "not a 64-bit integer: '9223372036854775808'");
	bad("when event 7 where $1 > 1 and $1 > 1 and $1 > 1 and $1 > 1 and "
	    "$1 > 1 and $1 > 1 and $1 > 1 and $1 > 1 and $1 > 1 do mark", 108,
	    "more than 8 comparisons");
	bad("when rate 7 100k/s do mark", 13, "expected '>' after the event "
	    "type");
	bad("when rate 7 > do mark", 15,
	    "expected a rate (such as 100k/s) after '>'");
	bad("when rate 7 > 100k do mark", 15, "a rate is a number of events "
	    "per second, such as 100k/s: '100k'");
	bad("when rate 7 > 0/s do mark", 15,
	    "a rate out of range: '0/s' (1/s to 1000G/s)");
	bad("when rate 7 > 2000G/s do mark", 15,
	    "a rate out of range: '2000G/s' (1/s to 1000G/s)");
	bad("when abnormal do mark", 15, "expected 'end' after 'abnormal'");
	bad("when at noon do mark", 9,
	    "expected a time (HH:MM or HH:MM:SS) after 'at'");
	bad("when at 1:00 do mark", 9,
	    "expected a time (HH:MM or HH:MM:SS) after 'at'");
	bad("when at 24:00 do mark", 9, "no such time of day: '24:00'");
	bad("when at 12:60 do mark", 9, "no such time of day: '12:60'");
}

Test(plan, errors_values)
{
	bad("when every do mark", 12, "expected a duration after 'every'");
	bad("when every 10 do mark", 12,
	    "a duration needs a unit (h, m, s, ms, us, ns): '10'");
	bad("when every 10d do mark", 12,
	    "unknown unit 'd' (h, m, s, ms, us, ns)");
	bad("when every 0s do mark", 12, "a duration of 0 after 'every'");
	bad("when every -1s do mark", 12, "expected a duration after 'every'");
	bad("when every 721h do mark", 12,
	    "a duration longer than 30 days: '721h'");
	bad("when every 99999999999999999999999s do mark", 12,
	    "a duration longer than 30 days: '99999999999999999999999s'");
	bad("when every 1.0000000001s do mark", 12,
	    "a duration finer than a nanosecond: '1.0000000001s'");
	bad("when every 1.5ns do mark", 12,
	    "a duration finer than a nanosecond: '1.5ns'");
	bad("when loss do mark \"abc", 19, "a string without its closing "
	    "quote");
	bad("when loss do mark \"a\\qb\"", 21,
	    "unknown escape '\\q' (\\\\, \\\", \\n, \\t, \\xHH)");
	bad("when loss do mark \"\\x4\"", 20,
	    "expected two hex digits after '\\x'");
	bad("when loss do mark \"\\x00\"", 20, "a NUL byte in a string");
	bad("when loss do mark \"a\tb\"", 21,
	    "a control character in a string (write \\xHH)");
}

Test(plan, errors_scope_actions_firing)
{
	bad("when loss in do mark", 14, "expected a scope after 'in' (host, "
	    "process, rank, pid, thread)");
	bad("when loss in pid 1 pid 2 do mark", 20, "'pid' given twice");
	bad("when loss in pid -1 do mark", 18,
	    "a process id out of range: '-1' (0 to 4294967295)");
	bad("when loss in rank x do mark", 19, "expected a rank after 'rank'");
	bad("when loss in host do mark", 19,
	    "expected a host name after 'host'");
	bad("when loss do enable for 1s", 21, "expected an event type or a "
	    "class (procedure, event, string, message, user, class:N) after "
	    "'enable'");
	bad("when loss do disable 70000", 22, "an event type out of range: "
	    "'70000' (-64 to 69631)");
	bad("when loss do disable 1 0x", 24,
	    "expected an event type after 'disable'");
	bad("when loss do disable class:255", 22,
	    "expected a class number (0 to 254) after 'class:'");
	bad("when loss do enable 1 for 0s", 27, "a duration of 0 after 'for'");
	bad("when loss do enable 1 until every 1s, disable 2 until loss", 49,
	    "only one 'until' in a rule");
	bad("when loss do enable 1 until mark", 29, "expected a trigger after "
	    "'until' (event, block, rate, abnormal end, loss, at, every)");
	bad("when loss do enable 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17",
	    60, "more than 16 types or classes");
	bad("when abnormal end do stop", 22,
	    "'stop' needs a live process: not after 'abnormal end'");
	bad("when loss do exec", 18,
	    "expected a command (a string) after 'exec'");
	bad("when loss do exec gdb", 19,
	    "expected a command (a string) after 'exec'");
	bad("when loss do exec \"\"", 19, "an empty command");
	bad("when loss do snapshot before", 29,
	    "expected a duration after 'before'");
	bad("when loss do mark, mark, mark, mark, mark, mark, mark, mark, "
	    "mark", 62, "more than 8 actions");
	bad("when loss do mark once 2 times", 24, "how often is given twice");
	bad("when loss do mark 0 times", 19,
	    "a number of times out of range (1 to 1000000)");
	bad("when loss do mark 3", 20, "expected 'times' after the number");
	bad("when loss do mark interval 1s interval 2s", 31,
	    "'interval' given twice");
	bad("when loss do mark interval", 27,
	    "expected a duration after 'interval'");
}

/* ---- limits: hostile input ---- */

Test(plan, limits)
{
	char big[PLAN_RULE_MAX + 64];
	size_t n;

	/* A rule of exactly PLAN_RULE_MAX bytes parses; one more does not. */
	n = (size_t)snprintf(big, sizeof big, "when loss do mark \"");
	memset(big + n, 'a', PLAN_STR_MAX);
	n += PLAN_STR_MAX;
	n += (size_t)snprintf(big + n, sizeof big - n, "\"");
	memset(big + n, ' ', PLAN_RULE_MAX - n);
	big[PLAN_RULE_MAX] = '\0';
	cr_expect_eq(plan_parse_rule(big, PLAN_RULE_MAX, &r, &e), 0, "%s",
	    e.msg);
	big[PLAN_RULE_MAX] = ' ';
	cr_expect_eq(plan_parse_rule(big, PLAN_RULE_MAX + 1, &r, &e), -1);
	cr_expect_str_eq(e.msg, "a rule longer than 1024 bytes");
	/* A string of PLAN_STR_MAX + 1 bytes. */
	n = (size_t)snprintf(big, sizeof big, "when loss do mark \"");
	memset(big + n, 'a', PLAN_STR_MAX + 1);
	n += PLAN_STR_MAX + 1;
	n += (size_t)snprintf(big + n, sizeof big - n, "\"");
	cr_expect_eq(plan_parse_rule(big, n, &r, &e), -1);
	cr_expect_str_eq(e.msg, "a string longer than 255 bytes");
	cr_expect_eq(e.col, 19);
	/* A rule whose canonical form (each byte outside printable ASCII
	 * as \xNN) would be longer than a rule may be is refused: its
	 * print must parse back (found by fuzz_plan).  250 such bytes
	 * print in 1020 bytes of a 1020-byte rule; 255 would take 1040. */
	n = (size_t)snprintf(big, sizeof big, "when loss do mark \"");
	memset(big + n, 0xff, 250);
	n += 250;
	n += (size_t)snprintf(big + n, sizeof big - n, "\"");
	cr_expect_eq(plan_parse_rule(big, n, &r, &e), 0, "%s", e.msg);
	cr_expect_eq(plan_print(&r, buf, sizeof buf), 1020);
	cr_expect_eq(plan_parse_rule(buf, strlen(buf), &r, &e), 0, "%s",
	    e.msg);
	n = (size_t)snprintf(big, sizeof big, "when loss do mark \"");
	memset(big + n, 0xff, PLAN_STR_MAX);
	n += PLAN_STR_MAX;
	n += (size_t)snprintf(big + n, sizeof big - n, "\"");
	cr_expect_eq(plan_parse_rule(big, n, &r, &e), -1);
	cr_expect_str_eq(e.msg, "a rule of 1040 bytes written canonically, "
	    "over 1024 (a string's byte outside printable ASCII is written "
	    "\\xNN)");
	cr_expect_eq(e.col, 1);
	/* Text not ending in a NUL is read within its length only. */
	memcpy(big, "when loss do mark<", 18);
	cr_expect_eq(plan_parse_rule(big, 17, &r, &e), 0);
	memcpy(big, "when every 5s do", 16);
	cr_expect_eq(plan_parse_rule(big, 13, &r, &e), -1);
	cr_expect_str_eq(e.msg, "expected 'do' after the trigger (or 'in' "
	    "and a scope)");
}

/* The printed form of the longest rules fits PLAN_PRINT_MAX. */
Test(plan, print_bound)
{
	char big[PLAN_RULE_MAX + 1];
	size_t n;

	n = (size_t)snprintf(big, sizeof big, "when loss do mark \"");
	while (n + 5 < PLAN_STR_MAX + 19)
		n += (size_t)snprintf(big + n, sizeof big - n, "\\x01");
	n += (size_t)snprintf(big + n, sizeof big - n, "\"");
	cr_assert_eq(plan_parse_rule(big, n, &r, &e), 0, "%s", e.msg);
	cr_expect_lt(plan_print(&r, buf, sizeof buf), sizeof buf);
	cr_expect_eq(plan_print(&r, NULL, 0), strlen(buf));
	cr_expect_eq(plan_print(&r, buf, 8), strlen("when loss do mark \"") +
	    4 * (size_t)r.act[0].str.len + 1);
	cr_expect_eq(strlen(buf), 7);
}

/* ---- files ---- */

struct got {
	unsigned	n;
	unsigned	lines[8];
	int		refuse_at;
};

static int
add(const struct plan_rule *rule, unsigned line, void *arg,
    struct plan_err *err)
{
	struct got *g = arg;

	(void)rule;
	if ((int)line == g->refuse_at) {
		snprintf(err->msg, sizeof err->msg, "refused");
		return -1;
	}
	g->lines[g->n++] = line;
	return 0;
}

Test(plan, file)
{
	const char *f = "# a plan\n\nwhen loss do mark\n  # indented\n"
	    "when every 1s do rotate   \r\n   \n";
	const char *g = "when loss do mark\nwhen every do mark\n";
	struct got got = { 0, { 0 }, 0 };
	char msg[1024];

	cr_assert_eq(plan_parse_file(f, strlen(f), add, &got, &e), 0, "%s",
	    e.msg);
	cr_expect_eq(got.n, 2);
	cr_expect_eq(got.lines[0], 3);
	cr_expect_eq(got.lines[1], 5);
	cr_expect_eq(plan_parse_file(g, strlen(g), NULL, NULL, &e), -1);
	cr_expect_eq(e.line, 2);
	cr_expect_eq(e.col, 12);
	plan_err_format(&e, "p.plan", g, strlen(g), msg, sizeof msg);
	cr_expect_str_eq(msg, "p.plan:2:12: expected a duration after "
	    "'every'\n  when every do mark\n             ^");
	plan_err_format(&e, NULL, NULL, 0, msg, sizeof msg);
	cr_expect_str_eq(msg, "plan: 2:12: expected a duration after "
	    "'every'");
	got.n = 0;
	got.refuse_at = 5;
	cr_expect_eq(plan_parse_file(f, strlen(f), add, &got, &e), -1);
	cr_expect_eq(e.line, 5);
	cr_expect_str_eq(e.msg, "refused");
}

Test(plan, file_limits)
{
	static char f[PLAN_FILE_MAX + 2];
	size_t n = 0;
	unsigned i;

	for (i = 0; i < PLAN_RULES_MAX + 1; i++)
		n += (size_t)snprintf(f + n, sizeof f - n, "when loss do "
		    "mark\n");
	cr_expect_eq(plan_parse_file(f, n, NULL, NULL, &e), -1);
	cr_expect_eq(e.line, PLAN_RULES_MAX + 1);
	cr_expect_str_eq(e.msg, "more than 64 rules");
	memset(f, '\n', sizeof f);
	cr_expect_eq(plan_parse_file(f, PLAN_FILE_MAX, NULL, NULL, &e), 0);
	cr_expect_eq(plan_parse_file(f, PLAN_FILE_MAX + 1, NULL, NULL, &e),
	    -1);
	cr_expect_str_eq(e.msg, "a plan file longer than 65536 bytes");
}

/* Random bytes and cut rules never crash, and what parses round-trips. */
Test(plan, random_cuts)
{
	static const char *const rules[] = {
		"when event 7 where $2 > 1000 and $3 == \"x\\\"y\" in process "
		"solver rank 3 do enable 8 procedure for 10s, snapshot before "
		"2s after 1s, mark \"m\", exec \"x\" 3 times interval 1s",
		"when rate 7 > 100k/s in host h pid 1 thread 2 do disable user "
		"until at 12:00:01, stop, continue, rotate once",
	};
	char s[PLAN_RULE_MAX];
	unsigned i, k, len;

	srand(20);
	for (k = 0; k < 2; k++) {
		len = (unsigned)strlen(rules[k]);
		for (i = 0; i <= len; i++) {
			if (plan_parse_rule(rules[k], i, &r, &e) == 0) {
				plan_print(&r, buf, sizeof buf);
				cr_assert_eq(plan_parse_rule(buf, strlen(buf),
				    &r2, &e), 0, "%s", buf);
				cr_assert(plan_equal(&r, &r2), "%s", buf);
			} else
				cr_assert_leq(e.col, i + 1);
		}
	}
	for (i = 0; i < 20000; i++) {
		k = (unsigned)rand() % 2;
		len = (unsigned)strlen(rules[k]);
		memcpy(s, rules[k], len);
		s[(unsigned)rand() % len] = (char)(rand() % 256);
		s[(unsigned)rand() % len] = " $\",#9sk/:"[rand() % 10];
		if (plan_parse_rule(s, len, &r, &e) == 0) {
			plan_print(&r, buf, sizeof buf);
			cr_assert_eq(plan_parse_rule(buf, strlen(buf), &r2, &e),
			    0, "%s -> %s: %s", s, buf, e.msg);
			cr_assert(plan_equal(&r, &r2), "%s", buf);
		} else
			cr_assert(e.col >= 1 && e.col <= len + 1);
	}
}
