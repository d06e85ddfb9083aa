/* SPDX-License-Identifier: MIT */
/* grm-run.c: runs a program traced with no change to it: the preload
 * library in LD_PRELOAD (inherited by everything it starts), the Main
 * Monitor given (-m, GRM_MM) or a private one writing -o FILE, stopped
 * once the program is over; exits with the program's status (grm-run(1)). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "net/mmid.h"
#include "plan/plan.h"
#include "shm/rundir.h"
#include "util/env.h"

#ifndef GRM_PRELOAD_PATH
#define GRM_PRELOAD_PATH "/usr/local/lib/libgrm-preload.so"
#endif
#ifndef GRM_MAINMON_PATH
#define GRM_MAINMON_PATH "/usr/local/bin/mainmon"
#endif

#define MM_START_MS	10000	/* longest wait for mainmon's identifier */

static int debug;
static volatile sig_atomic_t child_pid;

static void
usage(FILE *f)
{
	fprintf(f, "usage: grm-run [-m ID|@FILE | -o FILE [-f tape|bin|bee] "
	    "[--force]] "
	    "[--no-threads]\n"
	    "               [--mpi[=openmpi|mpich]] "
	    "[--policy=block|discard|overwrite] [--debug]\n"
	    "               [--functions=PATTERN[,PATTERN...]] "
	    "[--min-duration=TIME]\n"
	    "               [--plan=FILE [--allow-exec]] "
	    "-- PROGRAM [ARG...]\n");
}

/* --min-duration: a number with ns (the default), us, ms or s after, as
 * the seconds GRM_MIN_DURATION takes, in buf; -1 if it is not one. */
static int
min_duration(const char *arg, char *buf, size_t cap)
{
	static const struct { const char *u; double f; } units[] = {
		{ "", 1e-9 }, { "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 },
		{ "s", 1 } };
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || !(v >= 0) || arg[0] == '-')
		return -1;
	for (i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcmp(end, units[i].u) == 0) {
			v *= units[i].f;
			if (v > 86400)
				return -1;
			snprintf(buf, cap, "%.9f", v);
			return 0;
		}
	return -1;
}

static void
say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
say(const char *fmt, ...)
{
	va_list ap;

	fputs("grm-run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int
one_of(const char *v, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(v, *list) == 0)
			return 1;
	return 0;
}

/* PROGRAM as execvp would find it, into out; -1 if it is not found. */
static int
find_program(const char *prog, char *out, size_t cap)
{
	const char *path = getenv("PATH"), *p, *e;
	size_t n;

	if (strchr(prog, '/') != NULL) {
		snprintf(out, cap, "%s", prog);
		return access(out, X_OK);
	}
	for (p = path != NULL ? path : "/usr/local/bin:/usr/bin:/bin";
	    ; p = e + 1) {
		e = strchr(p, ':');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (snprintf(out, cap, "%.*s/%s", (int)n, n > 0 ? p : ".",
		    prog) < (int)cap && access(out, X_OK) == 0)
			return 0;
		if (e == NULL)
			return -1;
	}
}

/* With --debug: says so when PROGRAM is a program the preload library
 * cannot see into (static, setuid or setgid). */
static void
check_program(const char *prog)
{
	char path[4096];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	struct stat st;
	int fd, i, interp = 0;

	if (!debug || find_program(prog, path, sizeof path) != 0)
		return;
	if (stat(path, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)))
		say("%s is setuid or setgid: the loader ignores LD_PRELOAD for "
		    "it, so it is not traced (what it starts may be)", path);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64) {
		for (i = 0; i < eh.e_phnum; i++)
			if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff +
			    (uint64_t)i * eh.e_phentsize)) ==
			    (ssize_t)sizeof ph && ph.p_type == PT_INTERP)
				interp = 1;
		if (!interp)
			say("%s is statically linked: the preload library "
			    "cannot be loaded into it, so it is not traced "
			    "(what it starts may be)", path);
	}
	close(fd);
}

/* Starts mainmon -o file -f fmt [-P plan [--allow-exec]] in its own
 * process group (a ^C is the job's, not the trace's); its identifier into
 * id.  Returns its pid or -1. */
static pid_t
start_mainmon(const char *file, const char *fmt, int force, const char *plan,
	      int allow_exec, char *id, size_t cap)
{
	const char *prog = env_get(ENV_MAINMON);
	char *argv[10] = { (char *)"mainmon", (char *)"-o", (char *)file,
	    (char *)"-f", (char *)fmt };
	int k = 5;
	struct pollfd pfd;
	size_t n = 0;
	ssize_t r;
	pid_t pid;
	int p[2], st, devnull;

	if (force)
		argv[k++] = (char *)"--force";
	if (plan != NULL) {
		argv[k++] = (char *)"-P";
		argv[k++] = (char *)plan;
	}
	if (allow_exec)
		argv[k++] = (char *)"--allow-exec";
	argv[k] = NULL;
	if (prog == NULL)
		prog = GRM_MAINMON_PATH;
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	pid = fork();
	if (pid == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(p[1], 1);
		if (!debug && (devnull = open("/dev/null", O_WRONLY)) != -1)
			dup2(devnull, 2);
		execv(prog, argv);
		fprintf(stderr, "grm-run: %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	while (n + 1 < cap && memchr(id, '\n', n) == NULL) {
		if (poll(&pfd, 1, MM_START_MS) <= 0)
			break;
		r = read(p[0], id + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(p[0]);
	id[n] = '\0';
	if (memchr(id, '\n', n) == NULL) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
		say("%s did not start%s", prog, debug ? "" :
		    " (--debug shows its messages)");
		return -1;
	}
	*strchr(id, '\n') = '\0';
	return pid;
}

/* Stops the private mainmon (SIGTERM: a final collection, the file
 * completed) and waits for it; 0 if it exited 0. */
static int
stop_mainmon(pid_t pid)
{
	int st;

	kill(pid, SIGTERM);
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/*
 * Waits for the Local Monitor of MM id on this host, if one runs, to end:
 * it ends only once it has delivered what its processes wrote (or kept it
 * in its spill file), after its linger (GRM_LM_LINGER).  A short program
 * can end before its LM has even joined the MM: stopping a private mainmon
 * at once would leave that LM with no one to deliver to, and the trace
 * empty.  Waits at most as long as the LM can wait for an MM, and says so
 * after 3 s.
 */
static void
wait_lm(const char *id)
{
	struct mmid m;
	struct timespec tick = { 0, 10 * 1000000 };
	char dir[PATH_MAX], name[256], path[PATH_MAX + 16];
	double linger = 1, mm_timeout = 30;
	const char *why;
	long waited_ms = 0, max_ms;
	int said = 0;

	if (mmid_parse(id, &m, &why) != 0 || rundir_get(dir, sizeof dir) != 0 ||
	    mmid_lm_name(&m, dir, name, sizeof name) != 0 ||
	    rundir_path(path, sizeof path, dir, name, ".pid") != 0)
		return;
	(void)env_seconds(ENV_LM_LINGER, &linger);
	(void)env_seconds(ENV_LM_MM_TIMEOUT, &mm_timeout);
	max_ms = (long)((linger + mm_timeout) * 1000) + 5000;
	for (; waited_ms < max_ms; waited_ms += 10) {
		FILE *f = fopen(path, "re");
		long pid = 0;

		if (f == NULL)
			return;		/* none, or it ended */
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
		if (pid > 0 && kill((pid_t)pid, 0) == -1 && errno == ESRCH)
			return;		/* gone: its successor or the
					   next job delivers the rest */
		if (!said && waited_ms >= 3000) {
			say("waiting for the local monitor (pid %ld) to deliver "
			    "the job's data", pid);
			said = 1;
		}
		nanosleep(&tick, NULL);
	}
	say("the local monitor did not end in %ld s: the trace may be "
	    "incomplete", max_ms / 1000);
}

/* LD_PRELOAD with lib first (kept as it is if lib is in it already). */
static int
set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	int r;

	if (old == NULL || *old == '\0')
		return setenv("LD_PRELOAD", lib, 1);
	if (strstr(old, lib) != NULL)
		return 0;
	if (asprintf(&v, "%s:%s", lib, old) < 0)
		return -1;
	r = setenv("LD_PRELOAD", v, 1);
	free(v);
	return r;
}

/* ---- MPI: the wrapper library of the program's implementation ---- */

/* The implementation whose library an ELF file's DT_NEEDED names
 * (libmpi.so.40 and the like: Open MPI; libmpich, or libmpi.so.12 which
 * is MPICH's other name: MPICH), or whose launcher it is (Open MPI's
 * orterun and its libopen-rte, MPICH's mpiexec.hydra); NULL if none. */
static const char *
mpi_of_file(const char *path)
{
	char real[PATH_MAX], name[256], *base;
	const char *impl = NULL;
	Elf64_Ehdr eh;
	Elf64_Phdr ph, load[16];
	Elf64_Dyn d;
	uint64_t dyn_off = 0, dyn_size = 0, strtab = 0, str_off = 0, o;
	int fd, i, nload = 0;
	ssize_t n;

	if (realpath(path, real) == NULL)
		return NULL;
	base = basename(real);
	if (strcmp(base, "orterun") == 0 || strcmp(base, "prterun") == 0)
		return "openmpi";
	if (strstr(base, "hydra") != NULL)
		return "mpich";
	if ((fd = open(real, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff +
		    (uint64_t)i * eh.e_phentsize)) != (ssize_t)sizeof ph)
			goto out;
		if (ph.p_type == PT_DYNAMIC) {
			dyn_off = ph.p_offset;
			dyn_size = ph.p_filesz;
		} else if (ph.p_type == PT_LOAD && nload < 16) {
			load[nload++] = ph;
		}
	}
	/* The string table's address, as a file offset. */
	for (o = 0; o + sizeof d <= dyn_size; o += sizeof d) {
		if (pread(fd, &d, sizeof d, (off_t)(dyn_off + o)) !=
		    (ssize_t)sizeof d || d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_STRTAB)
			strtab = d.d_un.d_ptr;
	}
	for (i = 0; i < nload; i++)
		if (strtab >= load[i].p_vaddr &&
		    strtab < load[i].p_vaddr + load[i].p_filesz)
			str_off = strtab - load[i].p_vaddr + load[i].p_offset;
	if (str_off == 0)
		goto out;
	for (o = 0; impl == NULL && o + sizeof d <= dyn_size; o += sizeof d) {
		if (pread(fd, &d, sizeof d, (off_t)(dyn_off + o)) !=
		    (ssize_t)sizeof d || d.d_tag == DT_NULL)
			break;
		if (d.d_tag != DT_NEEDED)
			continue;
		n = pread(fd, name, sizeof name - 1,
		    (off_t)(str_off + d.d_un.d_val));
		if (n <= 0)
			continue;
		name[n] = '\0';
		if (strncmp(name, "libmpich", 8) == 0 ||
		    strncmp(name, "libmpi.so.12", 12) == 0)
			impl = "mpich";
		else if (strncmp(name, "libmpi.so", 9) == 0 ||
		    strncmp(name, "libopen-rte.so", 14) == 0)
			impl = "openmpi";
	}
out:
	close(fd);
	return impl;
}

/* The wrapper library of impl beside the preload library lib, into out;
 * -1 if it is not there. */
static int
mpi_lib(const char *lib, const char *impl, char *out, size_t cap)
{
	const char *slash = strrchr(lib, '/');

	snprintf(out, cap, "%.*slibgrm-mpi-%s.so",
	    slash != NULL ? (int)(slash - lib + 1) : 0, lib, impl);
	return access(out, R_OK);
}

/* The MPI wrapper library to preload beside lib, into wrap ("" for
 * none): that of mpi ("openmpi", "mpich"; "" for the one PROGRAM is
 * linked with or launches, or the only one built; NULL for automatic:
 * only if PROGRAM is linked with MPI).  Returns 0, or -1 having said
 * why. */
static int
find_mpi(const char *mpi, const char *prog, const char *lib, char *wrap,
	 size_t cap)
{
	static const char *const impls[] = { "openmpi", "mpich", NULL };
	char path[4096];
	const char *impl = NULL;
	int i, found = 0;

	wrap[0] = '\0';
	if (mpi != NULL && *mpi != '\0')
		impl = mpi;
	else if (find_program(prog, path, sizeof path) == 0)
		impl = mpi_of_file(path);
	if (impl == NULL && mpi == NULL)
		return 0;
	if (impl == NULL) {
		for (i = 0; impls[i] != NULL; i++)
			if (mpi_lib(lib, impls[i], wrap, cap) == 0) {
				impl = impls[i];
				found++;
			}
		if (found != 1) {
			say("--mpi: %s is not an MPI program or launcher that "
			    "grm-run knows: say --mpi=openmpi or --mpi=mpich",
			    prog);
			return -1;
		}
	}
	if (mpi_lib(lib, impl, wrap, cap) != 0) {
		say("%s: %s (grm was built without %s: MPI calls are not "
		    "traced)", wrap, strerror(errno), impl);
		wrap[0] = '\0';
		return mpi != NULL ? -1 : 0;
	}
	if (debug)
		say("MPI (%s): %s", impl, wrap);
	return 0;
}

static void
forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

int
main(int argc, char **argv)
{
	static const char *const formats[] = { "tape", "bin", "bee", NULL };
	static const char *const policies[] = { "block", "discard",
	    "overwrite", NULL };
	static const struct option opts[] = {
		{ "mm", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "no-threads", no_argument, NULL, 'T' },
		{ "policy", required_argument, NULL, 'P' },
		{ "mpi", optional_argument, NULL, 'M' },
		{ "debug", no_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'F' },
		/* function entry and exit */
		{ "functions", required_argument, NULL, 'U' },
		{ "min-duration", required_argument, NULL, 'D' },
		/* the private mainmon's monitoring plan */
		{ "plan", required_argument, NULL, 'L' },
		{ "allow-exec", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *mm = NULL, *out = NULL, *fmt = NULL, *policy = NULL;
	const char *lib, *why, *functions = NULL, *mpi = NULL, *plan = NULL;
	char mindur[32] = "";
	char id[MMID_MAX + 16], wrap[4096];
	struct mmid parsed;
	struct sigaction sa;
	pid_t mm_pid = -1, pid;
	struct stat sb;
	int c, threads = 1, force = 0, allow_exec = 0, st, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+m:o:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': mm = optarg; break;
		case 'o': out = optarg; break;
		case 'f': fmt = optarg; break;
		case 'T': threads = 0; break;
		case 'P': policy = optarg; break;
		case 'M': mpi = optarg != NULL ? optarg : ""; break;
		case 'd': debug = 1; break;
		case 'F': force = 1; break;
		case 'L': plan = optarg; break;
		case 'X': allow_exec = 1; break;
		case 'U': functions = optarg; break;
		case 'D':
			if (min_duration(optarg, mindur, sizeof mindur) != 0) {
				say("--min-duration=%s: not a time (a number, "
				    "ns, us, ms or s after; at most a day)",
				    optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default:
			say("%s: an unknown option, or one without its value",
			    argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		say("no program to run");
		usage(stderr);
		return 2;
	}
	if (mm != NULL && out != NULL) {
		say("-m and -o: -o starts a main monitor of its own");
		return 2;
	}
	if (force && out == NULL) {
		say("--force replaces the file -o writes");
		return 2;
	}
	if (out != NULL && !force && lstat(out, &sb) == 0) {
		say("%s: exists (--force replaces it)", out);
		return 2;
	}
	if ((plan != NULL || allow_exec) && out == NULL) {
		say("--plan and --allow-exec are for the main monitor -o "
		    "starts (a running one: grmctl ID plan add)");
		return 2;
	}
	if (allow_exec && plan == NULL) {
		say("--allow-exec goes with --plan");
		return 2;
	}
	/* The plan's errors are said here, at their line and column: the
	 * private mainmon's messages are not shown. */
	if (plan != NULL && (rc = plan_load(plan, allow_exec, NULL, NULL,
	    wrap, sizeof wrap)) != 0) {
		fprintf(stderr, "grm-run: %s%s\n", rc == -2 ? "--plan " : "",
		    wrap);
		return 2;
	}
	if (fmt != NULL && out == NULL) {
		say("-f is the format of the file -o writes");
		return 2;
	}
	if (fmt != NULL && !one_of(fmt, formats)) {
		say("-f %s: not tape, bin or bee", fmt);
		return 2;
	}
	if (policy != NULL && !one_of(policy, policies)) {
		say("--policy=%s: not block, discard or overwrite", policy);
		return 2;
	}
	debug = debug || env_flag(ENV_DEBUG);
	if (out == NULL && mm == NULL && (mm = env_get(ENV_MM)) == NULL) {
		say("no main monitor: give -m ID|@FILE, set GRM_MM, or -o FILE "
		    "for one of its own");
		return 2;
	}
	if (mm != NULL) {
		if (mmid_read(mm, id, sizeof id, &why) != 0 ||
		    mmid_parse(id, &parsed, &why) != 0) {
			say("%s: %s", mm, why);
			return 2;
		}
	}
	if ((lib = env_get(ENV_PRELOAD)) == NULL)
		lib = GRM_PRELOAD_PATH;
	if (access(lib, R_OK) != 0) {
		say("%s: %s (GRM_PRELOAD names the preload library)", lib,
		    strerror(errno));
		return 2;
	}
	check_program(argv[optind]);
	if (mpi != NULL && *mpi != '\0' && strcmp(mpi, "openmpi") != 0 &&
	    strcmp(mpi, "mpich") != 0) {
		say("--mpi=%s: not openmpi or mpich", mpi);
		return 2;
	}
	if (find_mpi(mpi, argv[optind], lib, wrap, sizeof wrap) != 0)
		return 2;
	if (out != NULL) {
		mm_pid = start_mainmon(out, fmt != NULL ? fmt : "tape", force,
		    plan, allow_exec, id, sizeof id);
		if (mm_pid == -1)
			return 2;
		if (debug)
			say("main monitor %d writes %s", (int)mm_pid, out);
	}
	if (setenv("GRM_MM", id, 1) != 0 ||
	    (wrap[0] != '\0' && set_preload(wrap) != 0) ||
	    set_preload(lib) != 0 ||
	    (!threads && setenv("GRM_THREADS", "0", 1) != 0) ||
	    (policy != NULL && setenv("GRM_POLICY", policy, 1) != 0) ||
	    (debug && setenv("GRM_DEBUG", "1", 1) != 0) ||
	    (functions != NULL && setenv("GRM_FUNCTIONS", functions, 1) != 0) ||
	    (mindur[0] != '\0' && setenv("GRM_MIN_DURATION", mindur, 1) != 0)) {
		say("environment: %s", strerror(errno));
		rc = 2;
		goto stop;
	}
	/* As a shell runs a command: ^C and ^\ are the program's; a
	 * termination asked of grm-run is passed on to it. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_handler = forward;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(argv[optind], argv + optind);
		rc = errno == ENOENT ? 127 : 126;
		fprintf(stderr, "grm-run: %s: %s\n", argv[optind],
		    strerror(errno));
		_exit(rc);
	}
	if (pid == -1) {
		say("fork: %s", strerror(errno));
		rc = 2;
		goto stop;
	}
	child_pid = pid;
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR) {
			st = 0;
			break;
		}
	rc = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	if (mm_pid != -1)
		wait_lm(id);
stop:
	if (mm_pid != -1 && stop_mainmon(mm_pid) != 0)
		say("the main monitor writing %s did not end well: the trace "
		    "may be incomplete", out);
	return rc;
}
