/* SPDX-License-Identifier: MIT */
/* bee_app.c: a program instrumented with every BEE sensor and function
 * that grm/bee.h implements, for test/bee.sh.  It checks what it can see
 * itself (return values, names) and leaves the trace to the script.
 *
 * usage: bee_app INFO_FILE HALF_FILE GO_FILE
 * It writes "name number" lines (classes, event ids) to INFO_FILE, runs
 * its first half, creates HALF_FILE and waits for GO_FILE (the script
 * probes and switches a class off from outside meanwhile), then runs the
 * second half. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <grm/bee.h>

#define THREADS		4
#define THREAD_EVENTS	1000

static FILE *info;
static int failed;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "bee_app:%d: check failed: %s\n",	\
		    __LINE__, #cond);					\
		failed = 1;						\
	}								\
} while (0)

/* The variant of class E_SAMPLE: every kind of field. */
struct sample {
	int		i;
	double		d;
	const char	*s;
	char		c;
	short		h;
	float		f;
	long		l;
	unsigned	u;
	char		tag[8];
};
#define SAMPLE_TYPE	"%d %lf %s %c %hd %f %ld %u %8s"

/* Class of the aggregated sensors. */
struct num {
	int		i;
	double		d;
	const char	*s;
};
#define NUM_TYPE	"%d %lf %s"

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	nanosleep(&ts, NULL);
}

/* BEGIN/END with RETURN, RET, and falling off the end. */
static int
work(int k)
BEGIN(work)
	BEGIN_PROCEDURE("inner");
	k *= 2;
	END_PROCEDURE("inner");
	RETURN(k);
END(work)

static void
idle(int early)
BEGIN("idle")
	if (early)
		RET;
	sleep_ms(0);
	RET;
END("idle")

static void
fall(void)
BEGIN(fall)
	sleep_ms(0);
END(fall)

static void
procedures(void)
{
	int i, sum = 0;

	for (i = 0; i < 10; i++)
		sum += work(i);
	CHECK(sum == 90);
	for (i = 0; i < 5; i++)
		idle(i % 2);
	for (i = 0; i < 3; i++)
		fall();
	BEGIN_EVENT("phase");
	for (i = 0; i < 7; i++)
		POINT_EVENT("tick");
	END_EVENT("phase");
	BEGIN_EVENT("phase");
	END_EVENT("phase");
}

static void
variants(void)
{
	struct sample v;
	int c, i;

	c = Event_Register_Class("E_SAMPLE", SAMPLE_TYPE, sizeof v);
	CHECK(c >= E_CLASS_USER_MIN && c <= E_CLASS_USER_MAX);
	CHECK(Event_Register_Class("E_SAMPLE", SAMPLE_TYPE, sizeof v) == c);
	CHECK(Event_Register_Class("E_SAMPLE", "%d", 4) == E_FAILURE);
	CHECK(Event_Register_Class("E_BAD", "%d %lf", 12) == E_FAILURE);
	CHECK(Event_Register_Class("E_BAD", "%d %n", 8) == E_FAILURE);
	CHECK(Event_Class_ID("E_SAMPLE") == c);
	CHECK(strcmp(Event_Class_Name(c), "E_SAMPLE") == 0);
	CHECK(Event_Class_ID("E_PROCEDURE") == E_PROCEDURE);
	CHECK(strcmp(Event_Class_Name(E_STRING), "E_STRING") == 0);
	CHECK(Event_Class_ID("E_NONE") == -1);
	CHECK(strcmp(Event_Class_Name(200), "") == 0);
	fprintf(info, "E_SAMPLE %d\n", c);
	for (i = 0; i < 3; i++) {
		memset(&v, 0, sizeof v);
		v.i = -7 * i;
		v.d = 0.5 + i;
		v.s = i == 2 ? NULL : "text";
		v.c = 'A' + (char)i;
		v.h = (short)(-300 - i);
		v.f = 0.25f * (float)i;
		v.l = 5000000000L + i;
		v.u = 4000000000u + (unsigned)i;
		snprintf(v.tag, sizeof v.tag, "tag%d", i);
		if (i == 1)
			memcpy(v.tag, "12345678", 8);	/* no NUL */
		EVENT("sample", c, E_POINT, &v);
	}
	EVENT("msg", E_STRING, E_POINT, "hello bee");
}

/* Passive sensors: class switches, the filter, sensor states. */
static void
passive(void)
{
	int one = 1, quiet, off, gone, again, i;
	struct num n = { 1, 1.0, "x" };

	quiet = Event_Register_Class("E_QUIET", "%d", sizeof one);
	EVENT("quiet_on", quiet, E_POINT, &one);
	EVENT("quiet_on", quiet, E_POINT, &one);
	Event_Sensor_Control(quiet, FALSE);
	for (i = 0; i < 3; i++) {
		EVENT("quiet_on", quiet, E_POINT, &one);
		EVENT("quiet_off", quiet, E_POINT, &one);
	}
	Event_Sensor_Control(quiet, TRUE);
	EVENT("quiet_on", quiet, E_POINT, &one);

	off = Event_Register_Class("E_OFF", "%d", sizeof one);
	CHECK(Event_Disable(off) == E_SUCCESS);
	EVENT("disabled", off, E_POINT, &one);
	CHECK(Event_Enable(off) == E_SUCCESS);
	EVENT("disabled", off, E_POINT, &one);
	CHECK(Event_Enable(201) == E_FAILURE);

	CHECK(Event_Sensor_Filter(E_ALL, "keep") == E_SUCCESS);
	POINT_EVENT("keep_a");
	POINT_EVENT("keep_a");
	POINT_EVENT("drop_b");
	CHECK(Event_Sensor_Filter(E_ALL, NULL) == E_SUCCESS);
	POINT_EVENT("drop_b");
	CHECK(Event_Sensor_Filter(E_ALL, "?") == E_SUCCESS);
	POINT_EVENT("drop_b");

	CHECK(Event_Sensor_State("muted", E_PASSIVE) == E_SUCCESS);
	for (i = 0; i < 3; i++)
		POINT_EVENT("muted");

	gone = Event_Register_Class("E_GONE", NUM_TYPE, sizeof n);
	EVENT("gone", gone, E_POINT, &n);
	CHECK(Event_Delete(gone) == E_SUCCESS);
	CHECK(Event_Class_ID("E_GONE") == -1);
	EVENT("gone", gone, E_POINT, &n);
	CHECK(Event_Delete(E_EVENT) == E_FAILURE);
	again = Event_Register_Class("E_GONE", NUM_TYPE, sizeof n);
	CHECK(again > 0 && again != gone);
}

static void
naming(void)
{
	Event_id_t id = 0, own = 0;
	int r;

	r = Event_Register_Name("named", &id);
	CHECK(r > 0 && r == id);
	CHECK(strcmp(Event_Sensor_Name(id), "named") == 0);
	CHECK(strcmp(Event_Sensor_Name(12345), "") == 0);
	Event_Generate(E_EVENT, E_POINT, id, NULL);
	Event_Generate(E_EVENT, E_POINT, id, NULL);
	Event_Generate(E_EVENT, E_ACT, id, NULL);
	Event_Generate(E_EVENT, E_TERM, id, NULL);
	Event_Sensor("explicit", E_EVENT, E_POINT, NULL, &own);
	CHECK(own > 0);
	EVENT_SENSOR("explicit", E_EVENT, E_POINT, NULL, &own);
	CHECK(strcmp(Event_Sensor_Name(own), "explicit") == 0);
	CHECK(Event_Sensor_Get_State(own) == E_ACTIVE);
	CHECK(Event_Sensor_Max() == 4096);
	CHECK(strcmp(Event_Client_Name(), "bee_app") == 0);
}

static int
c_num(const char *name)
{
	struct num n;
	int c = Event_Register_Class(name, NUM_TYPE, sizeof n);

	CHECK(c >= E_CLASS_USER_MIN);
	return c;
}

static void
num_event(const char *sensor, int cls, int i, double d)
{
	char s[16];
	struct num n = { i, d, s };

	snprintf(s, sizeof s, "v%d", i);
	/* One call site per sensor name would do; Event_Sensor with a NULL
	 * EID looks the name up each time. */
	Event_Sensor(sensor, cls, E_POINT, &n, NULL);
}

static void *
thread_main(void *arg)
{
	int cls = *(int *)arg, i;

	for (i = 0; i < THREAD_EVENTS; i++) {
		BEGIN_PROCEDURE("thr");
		num_event("mt", cls, 1, 0.5);
		END_PROCEDURE("thr");
	}
	return NULL;
}

static void
aggregates(void)
{
	int add, mean, latest, tm, chg, mt, i;
	pthread_t th[THREADS];

	add = c_num("E_ADD4");
	CHECK(Event_Handle_Rate(add, 4, E_ADD, E_HANDLE_BY_EVENTS) ==
	    E_SUCCESS);
	for (i = 1; i <= 10; i++)
		num_event("sum4", add, i, i * 0.5);	/* 2 pending */

	mean = c_num("E_MEAN3");
	CHECK(Event_Handle_Rate(mean, 3, E_MEAN, E_HANDLE_BY_EVENTS) ==
	    E_SUCCESS);
	for (i = 1; i <= 6; i++)
		num_event("mean3", mean, i, i);

	latest = c_num("E_LATEST5");
	CHECK(Event_Handle_Rate(latest, 5, E_LATEST, E_HANDLE_BY_EVENTS) ==
	    E_SUCCESS);
	for (i = 1; i <= 5; i++)
		num_event("latest5", latest, i, -i);

	tm = c_num("E_TIME1");
	CHECK(Event_Handle_Rate(tm, 1, E_ADD, E_HANDLE_BY_TIME) == E_SUCCESS);
	num_event("time1", tm, 1, 0);
	num_event("time1", tm, 2, 0);
	sleep_ms(1100);
	num_event("time1", tm, 3, 0);		/* dispatches 1+2+3 */
	num_event("time1", tm, 4, 0);		/* pending: Event_Finalize */

	chg = c_num("E_CHANGE");
	CHECK(Event_Handle_Rate(chg, 100, E_ADD, E_HANDLE_BY_EVENTS) ==
	    E_SUCCESS);
	for (i = 1; i <= 3; i++)
		num_event("change", chg, i, 0);
	CHECK(Event_Handle_Rate(chg, 0, E_LATEST, E_HANDLE_IMM) == E_SUCCESS);
	num_event("change", chg, 7, 0);		/* a plain record */

	CHECK(Event_Handle_Rate(chg, 0, E_ADD, E_HANDLE_BY_EVENTS) ==
	    E_FAILURE);
	CHECK(Event_Handle_Rate(chg, 1, 7, E_HANDLE_BY_EVENTS) == E_FAILURE);
	CHECK(Event_Handle_Rate(222, 1, E_ADD, E_HANDLE_BY_EVENTS) ==
	    E_FAILURE);

	/* Ranges and points can be counted too. */
	CHECK(Event_Handle_Rate(E_EVENT, 5, E_LATEST, E_HANDLE_BY_EVENTS) ==
	    E_SUCCESS);
	for (i = 0; i < 10; i++)
		POINT_EVENT("burst");
	CHECK(Event_Handle_Rate(E_EVENT, 1, E_LATEST, E_HANDLE_IMM) ==
	    E_SUCCESS);

	mt = c_num("E_MT");
	CHECK(Event_Handle_Rate(mt, THREAD_EVENTS, E_ADD,
	    E_HANDLE_BY_EVENTS) == E_SUCCESS);
	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, thread_main, &mt);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
}

/* A child does not report the aggregate its parent had pending. */
static void
forked(void)
{
	int cls = c_num("E_FORK");
	pid_t pid;
	int st;

	CHECK(Event_Handle_Rate(cls, 100, E_ADD, E_HANDLE_BY_EVENTS) ==
	    E_SUCCESS);
	num_event("forkagg", cls, 1, 0);
	num_event("forkagg", cls, 2, 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		num_event("forkagg", cls, 100, 0);
		exit(0);	/* the destructor records count 1, sum 100 */
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && st == 0);
}

static void
wait_for(const char *path)
{
	while (access(path, F_OK) != 0)
		sleep_ms(2);
}

int
main(int argc, char **argv)
{
	static Event_id_t level, rem;
	int lvl, remote, x, i;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: bee_app INFO_FILE HALF_FILE GO_FILE\n");
		return 2;
	}
	CHECK(Event_Initialize("bee_app") == E_SUCCESS);
	info = fopen(argv[1], "w");
	if (info == NULL)
		return 2;
	procedures();
	variants();
	passive();
	naming();
	aggregates();
	forked();

	lvl = Event_Register_Class("E_LEVEL", "%d", sizeof x);
	CHECK(Event_Sensor_State("level", E_DORMANT) == E_SUCCESS);
	for (x = 1; x <= 5; x++)
		EVENT_SENSOR("level", lvl, E_POINT, &x, &level);
	CHECK(Event_Sensor_Get_State(level) == E_DORMANT);
	remote = Event_Register_Class("E_REMOTE", "%d", sizeof x);
	fprintf(info, "E_REMOTE %d\n", remote);
	x = 1;
	EVENT_SENSOR("remote", remote, E_POINT, &x, &rem);
	EVENT_SENSOR("remote", remote, E_POINT, &x, &rem);
	CHECK(Event_Sensor_Get_State(rem) == E_ACTIVE);
	fclose(info);

	/* The script probes the dormant sensor and disables E_REMOTE. */
	f = fopen(argv[2], "w");
	if (f == NULL)
		return 2;
	fclose(f);
	wait_for(argv[3]);

	for (x = 6; x <= 9; x++)
		EVENT_SENSOR("level", lvl, E_POINT, &x, &level);
	for (i = 0; i < 3; i++)
		EVENT_SENSOR("remote", remote, E_POINT, &x, &rem);
	CHECK(Event_Sensor_Get_State(level) == E_DORMANT);
	CHECK(Event_Sensor_Get_State(rem) == E_PASSIVE);

	CHECK(Event_Finalize("bee_app") == E_SUCCESS);
	/* Pending at exit: recorded by the library's destructor. */
	x = c_num("E_EXIT");
	CHECK(Event_Handle_Rate(x, 100, E_ADD, E_HANDLE_BY_EVENTS) ==
	    E_SUCCESS);
	num_event("atexit", x, 5, 0);
	num_event("atexit", x, 6, 0);
	return failed;
}
