/* SPDX-License-Identifier: MIT */
/* test_num.c: the number parsers (common/util/num.c) and their edges
 * (overflow, sign, trailing garbage), their message, and the table of
 * environment variables (common/util/env.c): defaults, ranges, choices,
 * the defaults the code relies on, and the check of every value; CPU lists
 * (common/util/cpus.c, GRM_LM_CPUS). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/seg.h"
#include "util/cpus.h"
#include "util/env.h"
#include "util/num.h"

Test(num, integers_whole_and_in_range)
{
	uint64_t v = 7;

	cr_expect_eq(num_parse_u64("0", 0, 10, &v), 0);
	cr_expect_eq(v, 0);
	cr_expect_eq(num_parse_u64("10", 0, 10, &v), 0);
	cr_expect_eq(v, 10);
	cr_expect_eq(num_parse_u64("18446744073709551615", 0, UINT64_MAX,
	    &v), 0);
	cr_expect_eq(v, UINT64_MAX);
	v = 7;
	cr_expect_eq(num_parse_u64("11", 0, 10, &v), -1);
	cr_expect_eq(num_parse_u64("0", 1, 10, &v), -1);
	cr_expect_eq(num_parse_u64("", 0, 10, &v), -1);
	cr_expect_eq(num_parse_u64("12x", 0, 100, &v), -1);
	cr_expect_eq(num_parse_u64("-1", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_u64("+1", 0, 10, &v), -1);
	cr_expect_eq(num_parse_u64(" 1", 0, 10, &v), -1);
	cr_expect_eq(num_parse_u64("18446744073709551616", 0, UINT64_MAX,
	    &v), -1);
	cr_expect_eq(v, 7, "left alone on error");
}

Test(num, sizes_take_a_suffix)
{
	uint64_t v;

	cr_expect_eq(num_parse_size("32M", 1, UINT64_MAX, &v), 0);
	cr_expect_eq(v, 32u << 20);
	cr_expect_eq(num_parse_size("16k", 1, UINT64_MAX, &v), 0);
	cr_expect_eq(v, 16u << 10);
	cr_expect_eq(num_parse_size("2G", 1, UINT64_MAX, &v), 0);
	cr_expect_eq(v, 2ull << 30);
	cr_expect_eq(num_parse_size("4096", 1, UINT64_MAX, &v), 0);
	cr_expect_eq(v, 4096);
	cr_expect_eq(num_parse_size("0K", 0, 10, &v), 0);
	cr_expect_eq(v, 0);
	cr_expect_eq(num_parse_size("1KB", 1, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_size("K", 1, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_size("2T", 1, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_size("17179869184G", 1, UINT64_MAX, &v), -1,
	    "overflows");
	cr_expect_eq(num_parse_size("2M", 1, 1 << 20, &v), -1);
}

Test(num, percentages_and_decimals)
{
	uint64_t v;
	double d;

	cr_expect_eq(num_parse_percent("50%", 1, 99, &v), 0);
	cr_expect_eq(v, 50);
	cr_expect_eq(num_parse_percent("7", 1, 99, &v), 0);
	cr_expect_eq(v, 7);
	cr_expect_eq(num_parse_percent("100%", 1, 99, &v), -1);
	cr_expect_eq(num_parse_percent("5%%", 1, 99, &v), -1);
	cr_expect_eq(num_parse_double("0.25", 0, 1, &d), 0);
	cr_expect_float_eq(d, 0.25, 1e-12);
	cr_expect_eq(num_parse_double(".5", 0, 1, &d), 0);
	cr_expect_eq(num_parse_double("1e2", 0, 1000, &d), 0);
	cr_expect_float_eq(d, 100, 1e-9);
	cr_expect_eq(num_parse_double("0.001", 0.01, 1, &d), -1);
	cr_expect_eq(num_parse_double("-1", -5, 5, &d), -1, "no sign");
	cr_expect_eq(num_parse_double("inf", 0, 1e300, &d), -1);
	cr_expect_eq(num_parse_double("nan", 0, 1, &d), -1);
	cr_expect_eq(num_parse_double("1s", 0, 10, &d), -1);
	cr_expect_eq(num_parse_double("", 0, 10, &d), -1);
}

Test(num, one_message_shape)
{
	char buf[NUM_MSG_MAX];

	cr_expect_str_eq(num_msg(buf, sizeof buf, "-m", "12x",
	    "a number of MiB (1 to 1048576)"),
	    "-m 12x: not a number of MiB (1 to 1048576)");
	cr_expect_str_eq(num_msg(buf, sizeof buf, "GRM_THRESHOLD", "120",
	    "a percentage (1 to 99)"),
	    "GRM_THRESHOLD=120: not a percentage (1 to 99)");
	cr_expect_str_eq(num_msg(buf, 8, "-m", "12x", "whatever"), "-m 12x:");
}

Test(env, the_table_is_complete)
{
	unsigned i;

	for (i = 0; i < ENV_COUNT; i++) {
		const struct env_var *e = &env_vars[i];

		cr_assert_not_null(e->name, "entry %u has no name", i);
		cr_expect_not_null(e->meaning, "%s", e->name);
		cr_expect_not_null(e->expected, "%s", e->name);
		cr_expect(e->type != ENV_T_CHOICE ||
		    (e->choices != NULL && e->def != NULL), "%s", e->name);
	}
}

Test(env, defaults_are_what_the_code_had)
{
	uint64_t v;
	double d;
	int ix;

	unsetenv("GRM_SEGSIZE");
	unsetenv("GRM_CHUNKSIZE");
	cr_expect_eq(env_u64(ENV_SEGSIZE, &v), 0);
	cr_expect_eq(v, SEG_SIZE_DEFAULT);
	cr_expect_eq(env_u64(ENV_CHUNKSIZE, &v), 0);
	cr_expect_eq(v, SEG_CHUNK_DEFAULT);
	setenv("GRM_SPILL_MAX", "", 1);		/* empty: unset */
	cr_expect_eq(env_u64(ENV_SPILL_MAX, &v), 0);
	cr_expect_eq(v, 256u << 20);
	unsetenv("GRM_THRESHOLD");
	cr_expect_eq(env_u64(ENV_THRESHOLD, &v), 0);
	cr_expect_eq(v, 50);
	unsetenv("GRM_BLOCK_MS");
	cr_expect_eq(env_u64(ENV_BLOCK_MS, &v), 0);
	cr_expect_eq(v, 2000);
	unsetenv("GRM_LM_MM_TIMEOUT");
	cr_expect_eq(env_seconds(ENV_LM_MM_TIMEOUT, &d), 0);
	cr_expect_float_eq(d, 30, 1e-9);
	unsetenv("GRM_LM_LINGER");
	cr_expect_eq(env_seconds(ENV_LM_LINGER, &d), 0);
	cr_expect_float_eq(d, 1, 1e-9);
	unsetenv("GRM_POLICY");
	cr_expect_eq(env_choice(ENV_POLICY, &ix), 0);
	cr_expect_eq(ix, SEG_POLICY_BLOCK);
}

Test(env, values_are_parsed_by_type)
{
	char msg[NUM_MSG_MAX];
	uint64_t v;
	double d;
	int ix;

	setenv("GRM_SEGSIZE", "1M", 1);
	cr_expect_eq(env_u64(ENV_SEGSIZE, &v), 0);
	cr_expect_eq(v, 1u << 20);
	setenv("GRM_SPILL_MAX", "0", 1);
	cr_expect_eq(env_u64(ENV_SPILL_MAX, &v), 0);
	cr_expect_eq(v, 0);
	setenv("GRM_THRESHOLD", "20%", 1);
	cr_expect_eq(env_u64(ENV_THRESHOLD, &v), 0);
	cr_expect_eq(v, 20);
	setenv("GRM_THRESHOLD", "120", 1);
	cr_expect_eq(env_u64(ENV_THRESHOLD, &v), -1);
	cr_expect_eq(v, 50, "the default, on error");
	cr_expect_str_eq(env_msg(ENV_THRESHOLD, msg, sizeof msg),
	    "GRM_THRESHOLD=120: not a percentage of free space (1 to 99)");
	setenv("GRM_LM_LINGER", "0.2", 1);
	cr_expect_eq(env_seconds(ENV_LM_LINGER, &d), 0);
	cr_expect_float_eq(d, 0.2, 1e-12);
	setenv("GRM_POLICY", "overwrite", 1);
	cr_expect_eq(env_choice(ENV_POLICY, &ix), 0);
	cr_expect_eq(ix, SEG_POLICY_OVERWRITE);
	setenv("GRM_POLICY", "discard", 1);
	cr_expect_eq(env_choice(ENV_POLICY, &ix), 0);
	cr_expect_eq(ix, SEG_POLICY_DISCARD);
	setenv("GRM_POLICY", "disc", 1);
	cr_expect_eq(env_choice(ENV_POLICY, &ix), -1);
	cr_expect_eq(ix, SEG_POLICY_BLOCK);
	setenv("GRM_MODE", "stats", 1);
	cr_expect_eq(env_choice(ENV_MODE, &ix), 0);
	cr_expect_eq(ix, 1);
	setenv("GRM_DEBUG", "0", 1);
	cr_expect_not(env_flag(ENV_DEBUG));
	setenv("GRM_DEBUG", "yes", 1);
	cr_expect(env_flag(ENV_DEBUG));
}

Test(num, edges_of_the_parsers)
{
	uint64_t v = 7;
	double d = 7;

	/* Overflow, at each unit's boundary. */
	cr_expect_eq(num_parse_size("17179869183G", 0, UINT64_MAX, &v), 0);
	cr_expect_eq(v, 17179869183ull << 30);
	cr_expect_eq(num_parse_size("17179869184G", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_size("17592186044415M", 0, UINT64_MAX, &v), 0);
	cr_expect_eq(num_parse_size("17592186044416M", 0, UINT64_MAX, &v),
	    -1);
	cr_expect_eq(num_parse_size("18014398509481984K", 0, UINT64_MAX, &v),
	    -1);
	cr_expect_eq(num_parse_size("99999999999G", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_size("18446744073709551616", 0, UINT64_MAX,
	    &v), -1);
	cr_expect_eq(num_parse_percent("18446744073709551616", 0, UINT64_MAX,
	    &v), -1);
	cr_expect_eq(num_parse_u64("99999999999999999999999", 0, UINT64_MAX,
	    &v), -1);
	/* Negative, in every form strtoull would take. */
	v = 7;
	cr_expect_eq(num_parse_size("-1", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_size("-16K", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_percent("-5", 0, 99, &v), -1);
	cr_expect_eq(num_parse_u64(" -1", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_u64("\t1", 0, UINT64_MAX, &v), -1);
	/* Trailing garbage, space included. */
	cr_expect_eq(num_parse_size("12Mx", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_size("64Kb", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_size("1.5M", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_size("1M ", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_percent("50%x", 0, 99, &v), -1);
	cr_expect_eq(num_parse_percent("50 %", 0, 99, &v), -1);
	cr_expect_eq(num_parse_u64("10ms", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(num_parse_u64("0x10", 0, UINT64_MAX, &v), -1);
	cr_expect_eq(v, 7, "left alone on every error");
	/* Leading zeros are decimal, not octal. */
	cr_expect_eq(num_parse_u64("010", 0, 100, &v), 0);
	cr_expect_eq(v, 10);
	/* Decimals: overflow, underflow, garbage. */
	cr_expect_eq(num_parse_double("1e999", 0, 1e308, &d), -1);
	cr_expect_eq(num_parse_double("1e-999", 0, 1, &d), -1,
	    "underflow (ERANGE)");
	cr_expect_eq(num_parse_double("0x10", 0, 100, &d), -1,
	    "decimal only (strtod would read hexadecimal)");
	cr_expect_eq(num_parse_double("1.5.", 0, 10, &d), -1);
	cr_expect_eq(num_parse_double(".", 0, 10, &d), -1);
	cr_expect_eq(num_parse_double("1 ", 0, 10, &d), -1);
	cr_expect_eq(num_parse_double("86400.0000001", 0, 86400, &d), -1);
}

Test(env, check_finds_the_first_bad_value)
{
	static const enum env_id some[] = { ENV_BLOCK_MS, ENV_MODE };
	char msg[NUM_MSG_MAX];
	unsigned i;

	for (i = 0; i < ENV_COUNT; i++)
		unsetenv(env_vars[i].name);
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), 0, "all unset");
	setenv("GRM_THRESHOLD", "", 1);
	setenv("GRM_HOSTNAME", "any text", 1);
	setenv("GRM_DEBUG", "whatever", 1);
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), 0,
	    "empty is unset; text and flags take anything");
	setenv("GRM_THRESHOLD", "abc", 1);
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), -1);
	cr_expect_str_eq(msg,
	    "GRM_THRESHOLD=abc: not a percentage of free space (1 to 99)");
	cr_expect_eq(env_check(some, 2, msg, sizeof msg), 0,
	    "only the variables asked for");
	setenv("GRM_MODE", "tracing", 1);
	cr_expect_eq(env_check(some, 2, msg, sizeof msg), -1);
	cr_expect_str_eq(msg, "GRM_MODE=tracing: not trace or stats");
	setenv("GRM_CHUNKSIZE", "8K", 1);
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), -1);
	cr_expect_str_eq(msg, "GRM_MODE=tracing: not trace or stats",
	    "the first bad one in the table's order");
	unsetenv("GRM_MODE");
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), -1);
	cr_expect_str_eq(msg, "GRM_CHUNKSIZE=8K: not a size from 16K to 1M, "
	    "a multiple of 8");
	setenv("GRM_CHUNKSIZE", "1M", 1);
	setenv("GRM_LM_LINGER", "1e999", 1);
	unsetenv("GRM_THRESHOLD");
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), -1);
	cr_expect_str_eq(msg, "GRM_LM_LINGER=1e999: not a number of seconds "
	    "(0 to 86400)");
	unsetenv("GRM_LM_LINGER");
	setenv("GRM_SEGSIZE", "99999999999G", 1);
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), -1);
	unsetenv("GRM_SEGSIZE");
	setenv("GRM_POLICY", "Block", 1);
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), -1);
	unsetenv("GRM_POLICY");
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), 0);
}

Test(num, hex_digits)
{
	cr_expect_eq(num_hexdigit('0'), 0);
	cr_expect_eq(num_hexdigit('9'), 9);
	cr_expect_eq(num_hexdigit('a'), 10);
	cr_expect_eq(num_hexdigit('F'), 15);
	cr_expect_eq(num_hexdigit('g'), -1);
	cr_expect_eq(num_hexdigit('G'), -1);
	cr_expect_eq(num_hexdigit('/'), -1);
	cr_expect_eq(num_hexdigit(':'), -1);
	cr_expect_eq(num_hexdigit(0xc1), -1);
	cr_expect_eq(num_hexdigit(-1), -1);
}

Test(cpus, lists_parsed_strictly_and_written_back)
{
	static const char *good[][2] = {
		{ "0", "0" }, { "0-3,6", "0-3,6" }, { "6,0-3", "0-3,6" },
		{ "1,2,3", "1-3" }, { "5-5", "5" }, { "0-1,1-2", "0-2" },
		{ "1023", "1023" },
	};
	static const char *bad[] = {
		"", "a", "-1", "1-0", "0-", "0,", ",0", "0,,1", " 0", "0 ",
		"+1", "0x1", "1024", "99999999999999999999", "0-1024", "1--2",
	};
	char buf[CPUS_LIST_MAX];
	cpu_set_t set;
	size_t i;

	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		cr_expect_eq(cpus_parse(good[i][0], &set), 0, "%s", good[i][0]);
		cr_expect_str_eq(cpus_format(&set, buf, sizeof buf),
		    good[i][1], "%s", good[i][0]);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_expect_eq(cpus_parse(bad[i], &set), -1, "'%s'", bad[i]);
		cr_expect_eq(CPU_COUNT(&set), 0, "'%s'", bad[i]);
	}
	CPU_ZERO(&set);
	cr_expect_str_eq(cpus_format(&set, buf, sizeof buf), "");
	/* Cut after the last whole item that fits. */
	cr_expect_eq(cpus_parse("0,2,4,6", &set), 0);
	cr_expect_str_eq(cpus_format(&set, buf, 6), "0,2,4");
}

Test(cpus, the_host_allows_at_least_this_process_s_cpus)
{
	cpu_set_t host, mine, both;

	cpus_host(&host);
	cr_assert_gt(CPU_COUNT(&host), 0);
	cr_assert_eq(sched_getaffinity(0, sizeof mine, &mine), 0);
	CPU_AND(&both, &host, &mine);
	cr_expect(CPU_EQUAL(&both, &mine), "allowed CPUs outside the host's");
}

Test(cpus, grm_lm_cpus_checked_with_the_environment)
{
	char msg[NUM_MSG_MAX];

	setenv("GRM_LM_CPUS", "0-1", 1);
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), 0);
	setenv("GRM_LM_CPUS", "1-0", 1);
	cr_expect_eq(env_check(NULL, 0, msg, sizeof msg), -1);
	cr_expect_str_eq(msg, "GRM_LM_CPUS=1-0: not a CPU list such as 0-3,6");
	unsetenv("GRM_LM_CPUS");
}
