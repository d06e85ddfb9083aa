/* SPDX-License-Identifier: MIT */
/* env_man.c: prints the ENVIRONMENT section of a man page from the table
 * of environment variables (env.c): `env_man localmon.1`.  test/manenv.sh
 * compares the pages with it, and writes them (`make man-env`). */
#include <stdio.h>
#include <string.h>

#include "util/env.h"

struct item {
	enum env_id	id;
	const char	*note;		/* roff after the meaning, or NULL */
};

struct page {
	const char	*name;
	const char	*intro;		/* roff, or NULL */
	struct item	items[ENV_COUNT];
	unsigned	nitems;
	const char	*outro;
};

static const struct page pages[] = {
	{ "grm.3", NULL, {
	    { ENV_MM, "Without a token, or with a malformed one, the process "
		"is not traced either,\nand\n.B GRM_DEBUG\nsays why\n"
		".RI (\\(lq \"GRM_MM: no token: ...: running untraced\" \\(rq).\n"
		"With a wrong token, the program runs to its end untraced: its "
		"Local\nMonitor is refused by the Main Monitor, switches "
		"recording off and says so\nin its log (see\n.BR localmon (1)).\n"
		"Every process of a job must have exactly the same string." },
	    { ENV_DEBUG, NULL },
	    { ENV_BLOCK_MS, NULL },
	    { ENV_POLICY, "Unset: the policy the Local Monitor was started "
		"with (its own\n.BR GRM_POLICY ,\ninherited from the process "
		"that started it), else\n.BR block ." },
	    { ENV_MODE, NULL },
	    { ENV_SIGNALS, NULL },
	    { ENV_LOCALMON, NULL },
	    { ENV_RUNDIR, NULL },
	    { ENV_TMPDIR, NULL },
	    { ENV_THREADS, "Read by the preload library (see\n"
		".BR \"The preload library\" ),\nnot by libgrm." },
	    { ENV_FUNCTIONS, "Read by the preload library (see\n"
		".BR \"Function entry and exit\" )." },
	    { ENV_MIN_DURATION, "Read by the preload library." } }, 12,
	  ".TP\n.BR GRM_SEGSIZE \", \" GRM_CHUNKSIZE \", \" GRM_THRESHOLD "
	  "\", \" GRM_SPILL_MAX \", \" GRM_LM_LINGER \", \" GRM_LM_MM_TIMEOUT "
	  "\", \" GRM_LM_SILENT \", \" GRM_PUSH_INTERVAL "
	  "\", \" GRM_HOSTNAME \", \" GRM_LM_CPUS \", \" GRM_CLOCK \", \" GRM_MM_LINK\nPassed on to a Local "
	  "Monitor the process starts; see\n.BR localmon (1).\n"
	  ".B GRM_HOSTNAME\nsets the host name the trace shows for this host "
	  "(its node).\n.PP\n.BR GRM_MM ,\n.BR GRM_DEBUG ,\n"
	  ".BR GRM_BLOCK_MS ,\n.BR GRM_POLICY ,\n.B GRM_MODE\nand\n"
	  ".B GRM_SIGNALS\nare read at the process's first GMI call.\n"
	  ".PP\nA bad setting is never replaced by the default: a value of\n"
	  ".BR GRM_BLOCK_MS ,\n.B GRM_POLICY\nor\n.B GRM_MODE\n"
	  "that is not one of its type and range (not a number, negative, too "
	  "large,\nor with anything after it) leaves the process untraced "
	  "(the program runs as\nwithout\n.BR GRM_MM ),\nand with\n"
	  ".B GRM_DEBUG\nit says why in one line:\n.RS\n.PP\n"
	  "grm[\\fIpid\\fP]: GRM_BLOCK_MS=10ms: not a number of milliseconds "
	  "(1 to 86400000): running untraced\n.RE\n.PP\n"
	  "A Local Monitor refuses a bad value of its own variables in the same "
	  "way,\nbefore it makes anything: the process learns it at once, not "
	  "after the\nattach deadline, runs untraced, and with\n"
	  ".B GRM_DEBUG\nsays\n.RS\n.PP\n"
	  "grm[\\fIpid\\fP]: local monitor for \\fIhost\\fP:\\fIport\\fP "
	  "refused to start: localmon: GRM_THRESHOLD=abc: not a percentage of "
	  "free space (1 to 99) (\\fIlog\\fP)\n.RE\n.PP\n"
	  "the line the Local Monitor wrote in its log in the run folder.\n" },
	{ "localmon.1", NULL, {
	    { ENV_MM, "Read if\n.B \\-\\-mm\nis not given.\nA Local Monitor "
		"started by a traced process gets it this way, never on its\n"
		"command line." },
	    { ENV_SEGSIZE, NULL },
	    { ENV_CHUNKSIZE, "A value of either variable that is not a "
		"size in its range, a chunk size\nthat is not a multiple of "
		"8, or a segment size that does not hold two chunks\nor is "
		"more than this host's memory stops\n.B localmon\nwith "
		"status 1 before it makes anything.\nA segment size the "
		"system refuses\n.RB ( shmmax )\nstops it too, with "
		"what it made removed.\n"
		"Neither variable applies to a Local Monitor that adopts a "
		"segment (see\n.BR Adoption )." },
	    { ENV_POLICY, "Written into the segment when it is created; "
		"any other value stops\n.B localmon\nwith status 1." },
	    { ENV_THRESHOLD, "Written into the segment when it is created "
		"(at least one chunk); any\nother value stops\n.B localmon\n"
		"with status 1." },
	    { ENV_SPILL_MAX, "Another value that is not a size stops\n"
		".B localmon\nwith status 1." },
	    { ENV_LM_LINGER, NULL },
	    { ENV_LM_MM_TIMEOUT, "See\n.BR Spilling ." },
	    { ENV_LM_SILENT, "See\n.BR \"A silent Main Monitor\" ." },
	    { ENV_PUSH_INTERVAL, NULL },
	    { ENV_HOSTNAME, NULL },
	    { ENV_MM_LINK, "For the connections to the Main Monitor: the "
		"Local Monitor's and its fire\nlink.  Another value stops\n"
		".B localmon\nwith status 1." },
	    { ENV_LM_CPUS, "A value that is not a CPU list, or that names "
		"CPUs the host does not\nallow, stops\n.B localmon\nas "
		"below; see\n.BR \"The Local Monitor's CPUs\" ." },
	    { ENV_RUNDIR, NULL },
	    { ENV_TMPDIR, NULL },
	    { ENV_CLOCK, "Written into the segment when it is created; a "
		"Local Monitor that adopts a\nsegment keeps its clock.  "
		"Another value stops\n.B localmon\nwith status 1." },
	    { ENV_TSC_CPUINFO, NULL },
	    { ENV_DEBUG, NULL } }, 18,
	  ".PP\nA Local Monitor started by a traced process gets that "
	  "process's environment,\nso these variables are best set for the "
	  "whole job.\n"
	  ".PP\nEvery variable above, and every one that\n.BR grm (3)\n"
	  "lists, is checked before\n.B localmon\nmakes anything: a value "
	  "that is not one of its type and range (not a number,\nnegative, "
	  "too large, or with anything after it) is never replaced by the\n"
	  "default; it stops\n.B localmon\nwith status 1 and one line on "
	  "standard error,\n.RS\n.PP\nlocalmon: GRM_THRESHOLD=abc: not a "
	  "percentage of free space (1 to 99)\n.RE\n.PP\n"
	  "leaving no segment, socket, spill or\n.B .pid\nfile.\n"
	  "Started by a traced process, it writes that line in its log, and "
	  "the process\nruns untraced at once.\n" },
	{ "mainmon.1", NULL, {
	    { ENV_DEBUG, NULL } }, 1,
	  ".PP\n.B mainmon\ndoes not read\n.BR GRM_MM ;\nthat variable is "
	  "for the traced programs.\n" },
	{ "grm-run.1", NULL, {
	    { ENV_MM, "Read if neither\n.B \\-m\nnor\n.B \\-o\nis given; "
		"with\n.BR \\-o ,\nthe private Main Monitor's identifier "
		"replaces it for the program." },
	    { ENV_PRELOAD, NULL },
	    { ENV_MAINMON, NULL },
	    { ENV_THREADS, "Set to\n.B 0\nby\n.BR \\-\\-no\\-threads ." },
	    { ENV_FUNCTIONS, "Set by\n.BR \\-\\-functions ." },
	    { ENV_MIN_DURATION, "Set by\n.BR \\-\\-min\\-duration ." },
	    { ENV_DEBUG, "Also makes\n.B grm\\-run\nsay why a program "
		"will not be traced (static, setuid)." } }, 7,
	  ".PP\nThe program gets\n.BR GRM_MM ,\n.B LD_PRELOAD\n(the preload "
	  "library first), and, with the options that set them,\n"
	  ".BR GRM_THREADS ,\n.BR GRM_FUNCTIONS ,\n.BR GRM_MIN_DURATION ,\n"
	  ".B GRM_POLICY\nand\n.BR GRM_DEBUG ;\n"
	  "every other variable of\n.BR grm (3)\napplies to it as to any "
	  "traced program.\n" },
	{ "grmctl.1", ".B grmctl\nuses no environment variable of its own "
	  "but these two:\n", {
	    { ENV_HOSTNAME, "The Main Monitor does nothing with it for a "
		"control client." },
	    { ENV_MM_LINK, NULL } }, 2,
	  ".PP\nThe identifier is usually the one the traced programs have "
	  "in\n.BR GRM_MM ,\nso that\n.B grmctl \\(dq$GRM_MM\\(dq stop\nis a "
	  "common form on a machine of one's own; on a shared one, where\n"
	  ".BR ps (1)\nshows every user the command lines, prefer\n"
	  ".BR \"grmctl @mm.id stop\" ,\nwith the file\n.B \"mainmon \\-i\"\n"
	  "wrote.\n" },
};

static void
put_item(const struct item *it)
{
	const struct env_var *e = &env_vars[it->id];

	printf(".TP\n.B %s\n%s\n", e->name, e->meaning);
	if (it->note != NULL)
		printf("%s\n", it->note);
	if (e->def != NULL)
		printf("Default:\n.BR %s .\n", e->def);
}

int
main(int argc, char **argv)
{
	const struct page *p;
	unsigned i;

	if (argc != 2) {
		fprintf(stderr, "usage: env_man PAGE (grm.3, localmon.1, "
		    "mainmon.1, grmctl.1)\n");
		return 2;
	}
	for (p = pages; p < pages + sizeof pages / sizeof pages[0]; p++) {
		if (strcmp(p->name, argv[1]) != 0)
			continue;
		printf(".SH ENVIRONMENT\n");
		if (p->intro != NULL)
			printf("%s", p->intro);
		for (i = 0; i < p->nitems; i++)
			put_item(&p->items[i]);
		printf("%s", p->outro);
		return fflush(stdout) != 0 ? 1 : 0;
	}
	fprintf(stderr, "env_man: %s: no such page\n", argv[1]);
	return 2;
}
