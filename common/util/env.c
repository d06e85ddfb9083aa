/* SPDX-License-Identifier: MIT */
/* env.c: the table of environment variables and the functions that read
 * them (env.h).  A change here changes the man pages: `make man-env`
 * writes their ENVIRONMENT sections again, and `make check` fails until
 * it is run (test/manenv.sh). */
#include <stdlib.h>
#include <string.h>

#include "util/cpus.h"
#include "util/env.h"
#include "util/num.h"

#define ENV_NO_MAX	1.8446744073709552e19	/* UINT64_MAX */

const struct env_var env_vars[ENV_COUNT] = {
	[ENV_MM] = { "GRM_MM", ENV_T_TEXT, NULL, NULL, 0, 0,
	    "a main monitor identifier",
	    "The identifier\n.IR host : port : token\nof the Main Monitor, as\n"
	    ".BR mainmon (1)\nprinted it; the token (32 hexadecimal digits) "
	    "is what lets the host's Local\nMonitor in, and is never sent "
	    "over the network.\nUnset or empty: the process is not traced." },
	[ENV_DEBUG] = { "GRM_DEBUG", ENV_T_FLAG, NULL, NULL, 0, 0,
	    "a flag",
	    "If set, not empty and not starting with\n.BR 0 :\n"
	    "in a traced process, errors and the reasons it is not traced "
	    "are printed on\nstandard error; in a daemon, debugging messages "
	    "are, as with\n.BR \\-d ." },
	[ENV_BLOCK_MS] = { "GRM_BLOCK_MS", ENV_T_INT, "2000", NULL, 1,
	    86400000, "a number of milliseconds (1 to 86400000)",
	    "How long, in milliseconds, a thread that needs a new chunk waits "
	    "for one\nwhen the buffer is full before it loses the event "
	    "(policy\n.BR block ).\nA positive integer." },
	[ENV_POLICY] = { "GRM_POLICY", ENV_T_CHOICE, "block",
	    "block discard overwrite", 0, 0,
	    "block, discard or overwrite",
	    ".BR block ,\n.B discard\nor\n.BR overwrite :\n"
	    "what a writer does when the segment is full: wait for a free "
	    "chunk, lose\nthe event (counted), or take back the oldest full "
	    "chunk.\nA Local Monitor writes its own into the segment it "
	    "creates, for the job's\nprocesses that do not set one." },
	[ENV_MODE] = { "GRM_MODE", ENV_T_CHOICE, "trace", "trace stats", 0,
	    0, "trace or stats",
	    ".B stats\nfor statistics mode;\n.BR trace :\nrecord events." },
	[ENV_SIGNALS] = { "GRM_SIGNALS", ENV_T_TEXT, "1", NULL, 0, 0,
	    "0 or 1",
	    ".B 0\nto leave every signal alone; anything else: the library "
	    "reports\nfatal signals to the Local Monitor (see\n"
	    ".BR \"Process exit\"\nin\n.BR grm (3))." },
	[ENV_LOCALMON] = { "GRM_LOCALMON", ENV_T_TEXT, NULL, NULL, 0, 0,
	    "a program",
	    "The program to start as Local Monitor when none is running; "
	    "default, the\n.B localmon\ninstalled with the library." },
	[ENV_SEGSIZE] = { "GRM_SEGSIZE", ENV_T_SIZE, "32M", NULL, 1,
	    536870912, "a size up to 512M (a number, K, M or G after)",
	    "Size of the shared segment in bytes, with an optional suffix\n"
	    ".BR K ,\n.B M\nor\n.B G\n(powers of 1024, either case),\n"
	    "at most 512M: the Main Monitor holds a host's whole collection "
	    "until it is\ncomplete, and takes no more than 2 GiB of it.\n"
	    "The system's limit on one segment\n.RB ( shmmax )\napplies, and "
	    "the segment must hold at least two chunks." },
	[ENV_CHUNKSIZE] = { "GRM_CHUNKSIZE", ENV_T_SIZE, "64K", NULL, 16384,
	    1048576, "a size from 16K to 1M, a multiple of 8",
	    "Size of one chunk, the unit a thread writes into and the Local "
	    "Monitor hands\nover, with the suffixes of\n.BR GRM_SEGSIZE .\n"
	    "From 16K to 1M, a multiple of 8." },
	[ENV_THRESHOLD] = { "GRM_THRESHOLD", ENV_T_PERCENT, "50", NULL, 1,
	    99, "a percentage of free space (1 to 99)",
	    "The push threshold, as a percentage of the segment's chunks, "
	    "from 1 to 99\n(a trailing\n.B %\nis allowed): when fewer chunks "
	    "than that are free, the Local Monitor sends\neverything committed "
	    "to the Main Monitor, or spills the full chunks while\nit has "
	    "none." },
	[ENV_SPILL_MAX] = { "GRM_SPILL_MAX", ENV_T_SIZE, "256M", NULL, 0,
	    ENV_NO_MAX, "a size (a number, K, M or G after)",
	    "The most the spill file may hold, in bytes, with the suffixes "
	    "of\n.BR GRM_SEGSIZE ;\n.B 0\nturns spilling off." },
	[ENV_LM_LINGER] = { "GRM_LM_LINGER", ENV_T_SECONDS, "1", NULL, 0,
	    86400, "a number of seconds (0 to 86400)",
	    "How many seconds a Local Monitor stays once its last traced "
	    "process is gone, as\n.BR \\-\\-linger ,\nwhich it overrides; a "
	    "decimal fraction is allowed, from 0 to 86400." },
	[ENV_LM_MM_TIMEOUT] = { "GRM_LM_MM_TIMEOUT", ENV_T_SECONDS, "30",
	    NULL, 0, 86400, "a number of seconds (0 to 86400)",
	    "How many seconds a Local Monitor whose job is over waits for an "
	    "unreachable\nMain Monitor before it gives up, counted from the "
	    "moment it lost it (or\nfrom its start); a decimal fraction is "
	    "allowed, from 0 to 86400.\nIt then exits, leaving what it could "
	    "keep in the spill file for the next\nLocal Monitor of that Main "
	    "Monitor, and counting the rest as lost." },
	[ENV_LM_SILENT] = { "GRM_LM_SILENT", ENV_T_INT, "5", NULL, 0, 3600,
	    "a number of seconds (0 to 3600)",
	    "How many seconds a Local Monitor waits for a word from its Main "
	    "Monitor\n(which pings it every second) before it takes it for "
	    "gone: hung, stopped,\nor cut off by a link that went silent.  "
	    "It then logs it, keeps what\nits processes write (spilling it if "
	    "need be), connects again with\nback-off, and sends everything "
	    "not acknowledged again; the socket's TCP\nkeepalive and "
	    "user timeout are set to the same bound.\n.B 0\nturns this off "
	    "(only a closed connection is noticed)." },
	[ENV_PUSH_INTERVAL] = { "GRM_PUSH_INTERVAL", ENV_T_SECONDS, "1", NULL,
	    0, 86400, "a number of seconds (0 to 86400)",
	    "How often, at least, a Local Monitor sends its Main Monitor what "
	    "its\nprocesses have committed, chunks still being written "
	    "included, so that a\nslow writer's events reach the trace file "
	    "within seconds; nothing is sent\nwhen nothing new was committed.  "
	    "A decimal fraction is allowed, from 0 to\n86400;\n.B 0\n"
	    "sends only at the push threshold\n.RB ( GRM_THRESHOLD )\n"
	    "and at the end.  Under\n.BR \"mainmon \\-\\-collect=global\" ,\n"
	    "data moves in the global rounds only: at this interval the Local "
	    "Monitor\nasks for a round if anything new was committed, as at "
	    "its threshold." },
	[ENV_HOSTNAME] = { "GRM_HOSTNAME", ENV_T_TEXT, NULL, NULL, 0, 0,
	    "a host name",
	    "The host name a Local Monitor (or\n.BR grmctl )\ngives the Main "
	    "Monitor, instead of the system's\n.RB ( gethostname (2)).\n"
	    "The Main Monitor makes one node of all the Local Monitors that "
	    "give the\nsame name, so set it to tell apart hosts that share a "
	    "name (containers,\nsay), or to give a host the name the trace "
	    "should show." },
	[ENV_LM_CPUS] = { "GRM_LM_CPUS", ENV_T_CPUS, NULL, NULL, 0, 0,
	    "a CPU list such as 0-3,6",
	    "The CPUs a Local Monitor (and its guard and successors) runs on, "
	    "as a list\nof CPU numbers and ranges separated by commas, such "
	    "as\n.BR 0\\-3,6 ;\nthey must be CPUs this host allows it "
	    "(its cgroup's cpuset).\nUnset: a Local Monitor started by a "
	    "traced process runs on the CPUs the\nhost allows less those the "
	    "process was pinned to (all of them if that\nleaves none), so "
	    "that it does not compete with a writer pinned with\n"
	    ".BR taskset (1)\nor\n.BR \"mpirun \\-\\-bind\\-to core\" ;\n"
	    "one started by hand keeps the CPUs it was started with.\n"
	    ".B grmctl status\nshows where each runs." },
	[ENV_RUNDIR] = { "GRM_RUNDIR", ENV_T_TEXT, NULL, NULL, 0, 0,
	    "a folder",
	    "The run folder, where the Local Monitors' sockets, locks and "
	    "spill files are; default\n.IB $TMPDIR /grm\\- uid\n(see\n"
	    ".BR localmon (1))." },
	[ENV_TMPDIR] = { "TMPDIR", ENV_T_TEXT, "/tmp", NULL, 0, 0,
	    "a folder",
	    "Where the default run folder is made." },
	/* the preload library and grm-run */
	[ENV_THREADS] = { "GRM_THREADS", ENV_T_TEXT, "1", NULL, 0, 0,
	    "0 or 1",
	    ".B 0\nfor the preload library to record no thread starts, ends "
	    "and names (as\n.BR \"grm\\-run \\-\\-no\\-threads\" );\n"
	    "anything else: it records them." },
	[ENV_PRELOAD] = { "GRM_PRELOAD", ENV_T_TEXT, NULL, NULL, 0, 0,
	    "a file",
	    "The preload library\n.B grm\\-run\nputs in\n.BR LD_PRELOAD ;\n"
	    "default, the\n.B libgrm\\-preload.so\ninstalled beside libgrm." },
	[ENV_MAINMON] = { "GRM_MAINMON", ENV_T_TEXT, NULL, NULL, 0, 0,
	    "a program",
	    "The program\n.B grm\\-run \\-o\nstarts as its private Main "
	    "Monitor; default, the\n.B mainmon\ninstalled with it." },
	/* function entry and exit (preload/pl_func.c) */
	[ENV_FUNCTIONS] = { "GRM_FUNCTIONS", ENV_T_TEXT, NULL, NULL, 0, 0,
	    "patterns",
	    "The functions whose entry and exit the preload library records "
	    "(programs built\nwith\n.BR \\-finstrument\\-functions ):\n"
	    "shell patterns on symbol names, separated by commas, as\n"
	    ".BR \"grm\\-run \\-\\-functions\" ;\n"
	    "a pattern after\n.B !\nexcludes; the last that matches a name "
	    "decides.\nUnset: every function." },
	[ENV_MIN_DURATION] = { "GRM_MIN_DURATION", ENV_T_SECONDS, "0", NULL,
	    0, 86400, "a number of seconds (0 to 86400)",
	    "Function ranges shorter than this many seconds are not recorded "
	    "(a decimal\nfraction:\n.B 0.00001\nis 10 microseconds), as\n"
	    ".BR \"grm\\-run \\-\\-min\\-duration\" ;\n"
	    ".B 0\nrecords every one." },
	[ENV_CLOCK] = { "GRM_CLOCK", ENV_T_CHOICE, "monotonic",
	    "monotonic tsc", 0, 0, "monotonic or tsc",
	    ".BR monotonic :\nrecords are stamped with the host's\n"
	    ".BR CLOCK_MONOTONIC ;\n.BR tsc :\nwith the CPU's time-stamp "
	    "counter (the\n.B rdtsc\ninstruction), cheaper to read, "
	    "which the Local Monitor calibrates against\n"
	    ".B CLOCK_MONOTONIC\nand the Main Monitor converts to "
	    "nanoseconds (the calibration is\nin the trace,\n"
	    ".BR #TSC ).\nOnly on x86\\-64, where the CPU flags have\n"
	    ".B constant_tsc\nand\n.B nonstop_tsc\nand the kernel still "
	    "offers\n.B tsc\nas a clocksource; elsewhere the Local Monitor "
	    "says why in one line of\nits log and uses\n"
	    ".BR CLOCK_MONOTONIC .\n"
	    "Read by the Local Monitor when it creates its segment: every "
	    "process of the\nsegment uses its clock." },
	[ENV_TSC_CPUINFO] = { "GRM_TSC_CPUINFO", ENV_T_TEXT, NULL, NULL, 0,
	    0, "a file",
	    "For tests: the file read instead of\n.I /proc/cpuinfo\n"
	    "for the CPU flags that\n.B GRM_CLOCK=tsc\nneeds (the kernel's "
	    "clocksources are then not looked at)." },
	[ENV_MM_LINK] = { "GRM_MM_LINK", ENV_T_CHOICE, "tcp", "tcp local",
	    0, 0, "tcp or local",
	    "How a Local Monitor (and\n.BR grmctl )\nreaches its Main "
	    "Monitor.\n.BR tcp :\nby TCP.\n.BR local :\na Main Monitor on "
	    "this host (its identifier names an address of this\nhost's "
	    "network namespace) through its local door, a Unix socket that "
	    "moves\ndata for a quarter of the CPU time of the TCP loopback, "
	    "if it has one and\nruns as this user or as root; otherwise by "
	    "TCP.  A Unix socket has no kernel\ntime stamps: the clock "
	    "exchanges through a door are timed by the monitors,\nand the "
	    "error bound of this host's clock correction is wider (a "
	    "median of\nabout 4 us against 0.7 by TCP, measured with a "
	    "clock under\n.BR libfaketime ).\nOn a host whose Local Monitor "
	    "shares the Main Monitor's clock, that bound\nmatters little, "
	    "and a writer that traces steadily pays up to a tenth less\n"
	    "per record." },
};

const char *
env_get(enum env_id id)
{
	const char *v = getenv(env_vars[id].name);

	return v != NULL && *v != '\0' ? v : NULL;
}

int
env_flag(enum env_id id)
{
	const char *v = env_get(id);

	return v != NULL && *v != '0';
}

/* Parses s as variable e's number; 0 or -1. */
static int
parse_u64(const struct env_var *e, const char *s, uint64_t *v)
{
	uint64_t min = (uint64_t)e->min;
	uint64_t max = e->max >= ENV_NO_MAX ? UINT64_MAX :
	    (uint64_t)e->max;

	switch (e->type) {
	case ENV_T_SIZE:
		return num_parse_size(s, min, max, v);
	case ENV_T_PERCENT:
		return num_parse_percent(s, min, max, v);
	default:
		return num_parse_u64(s, min, max, v);
	}
}

int
env_u64(enum env_id id, uint64_t *v)
{
	const struct env_var *e = &env_vars[id];
	const char *s = env_get(id);

	*v = 0;
	if (e->def != NULL)
		(void)parse_u64(e, e->def, v);
	return s == NULL ? 0 : parse_u64(e, s, v);
}

int
env_seconds(enum env_id id, double *v)
{
	const struct env_var *e = &env_vars[id];
	const char *s = env_get(id);

	*v = 0;
	if (e->def != NULL)
		(void)num_parse_double(e->def, e->min, e->max, v);
	return s == NULL ? 0 : num_parse_double(s, e->min, e->max, v);
}

/* The index of word s (len bytes) in list; -1 if absent. */
static int
word_index(const char *list, const char *s, size_t len)
{
	const char *p = list, *end;
	int i;

	for (i = 0; *p != '\0'; i++, p = *end != '\0' ? end + 1 : end) {
		end = strchr(p, ' ');
		if (end == NULL)
			end = p + strlen(p);
		if ((size_t)(end - p) == len && memcmp(p, s, len) == 0)
			return i;
	}
	return -1;
}

int
env_choice(enum env_id id, int *ix)
{
	const struct env_var *e = &env_vars[id];
	const char *s = env_get(id);
	int i;

	*ix = word_index(e->choices, e->def, strlen(e->def));
	if (s == NULL)
		return 0;
	if ((i = word_index(e->choices, s, strlen(s))) < 0)
		return -1;
	*ix = i;
	return 0;
}

const char *
env_msg(enum env_id id, char *buf, size_t cap)
{
	const char *v = env_get(id);

	return num_msg(buf, cap, env_vars[id].name, v != NULL ? v : "",
	    env_vars[id].expected);
}

/* Whether variable id's value, if it is set, is one of its type and
 * range.  Text and flags take anything. */
static int
env_ok(enum env_id id)
{
	uint64_t u;
	double d;
	int ix;
	cpu_set_t set;

	switch (env_vars[id].type) {
	case ENV_T_TEXT:
	case ENV_T_FLAG:
		return 1;
	case ENV_T_CPUS:
		return env_get(id) == NULL || cpus_parse(env_get(id),
		    &set) == 0;
	case ENV_T_CHOICE:
		return env_choice(id, &ix) == 0;
	case ENV_T_SECONDS:
		return env_seconds(id, &d) == 0;
	default:
		return env_u64(id, &u) == 0;
	}
}

int
env_check(const enum env_id *ids, size_t n, char *msg, size_t cap)
{
	size_t i;
	enum env_id id;

	for (i = 0; i < (ids != NULL ? n : (size_t)ENV_COUNT); i++) {
		id = ids != NULL ? ids[i] : (enum env_id)i;
		if (!env_ok(id)) {
			env_msg(id, msg, cap);
			return -1;
		}
	}
	return 0;
}
