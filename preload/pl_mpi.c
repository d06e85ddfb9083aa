/* SPDX-License-Identifier: MIT */
/* pl_mpi.c: the MPI wrappers (libgrm-mpi-openmpi.so, libgrm-mpi-mpich.so:
 * this file compiled once per implementation, with its mpi.h): through
 * the PMPI interface, MPI_Init names the process by its world rank,
 * point-to-point operations become message send and receive records
 * (world ranks, tag, bytes), collectives become named blocks, and
 * MPI_Finalize flushes.
 *
 * grm-run puts the library in LD_PRELOAD beside libgrm-preload.so.  It is
 * not linked with the MPI library, so that it can be inherited by every
 * process of a job (mpirun, its daemons, shells) and do nothing where MPI
 * is not loaded: every MPI symbol it uses is a weak reference, resolved
 * to the program's MPI library when there is one.
 *
 * Sends are recorded when posted (Isend too), receives when they complete:
 * a receive's source and tag come from its status (MPI_ANY_SOURCE,
 * MPI_ANY_TAG), its size from the bytes received.  Posted MPI_Irecv
 * requests are kept in a table by handle until a Wait or Test completes
 * them.  Not covered: Fortran bindings, MPI-IO, one-sided operations,
 * persistent requests (MPI_Send_init, MPI_Recv_init, MPI_Start), probes,
 * non-blocking collectives, and MPI_Cancel (a cancelled Irecv completes
 * with no record).
 *
 * Failure: the wrappers never change what MPI returns or does; a record
 * that cannot be written is lost as libgrm counts it; a full request
 * table (PLM_REQ_MAX posted receives) drops the extra receives' records
 * with one line under GRM_DEBUG.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "grm.h"

#define PLM_API __attribute__((visibility("default")))

#define PLM_REQ_MAX	4096	/* posted receives tracked at once */
#define PLM_COMM_MAX	64	/* communicators whose ranks are cached */
#define PLM_STACK	64	/* statuses kept on the stack */
#define PLM_BID		0x4d504900	/* collectives' block ids: "MPI" */

/* Everything of MPI this file uses, as weak references (see above). */
#pragma weak PMPI_Init
#pragma weak PMPI_Init_thread
#pragma weak PMPI_Finalize
#pragma weak PMPI_Comm_rank
#pragma weak PMPI_Comm_size
#pragma weak PMPI_Comm_group
#pragma weak PMPI_Comm_remote_group
#pragma weak PMPI_Comm_test_inter
#pragma weak PMPI_Comm_free
#pragma weak PMPI_Group_translate_ranks
#pragma weak PMPI_Group_free
#pragma weak PMPI_Group_size
#pragma weak PMPI_Type_size
#pragma weak PMPI_Get_count
#pragma weak PMPI_Test_cancelled
#pragma weak PMPI_Send
#pragma weak PMPI_Ssend
#pragma weak PMPI_Bsend
#pragma weak PMPI_Rsend
#pragma weak PMPI_Isend
#pragma weak PMPI_Issend
#pragma weak PMPI_Ibsend
#pragma weak PMPI_Irsend
#pragma weak PMPI_Recv
#pragma weak PMPI_Irecv
#pragma weak PMPI_Sendrecv
#pragma weak PMPI_Sendrecv_replace
#pragma weak PMPI_Wait
#pragma weak PMPI_Waitall
#pragma weak PMPI_Waitany
#pragma weak PMPI_Waitsome
#pragma weak PMPI_Test
#pragma weak PMPI_Testall
#pragma weak PMPI_Testany
#pragma weak PMPI_Testsome
#pragma weak PMPI_Request_free
#pragma weak PMPI_Barrier
#pragma weak PMPI_Bcast
#pragma weak PMPI_Reduce
#pragma weak PMPI_Allreduce
#pragma weak PMPI_Gather
#pragma weak PMPI_Gatherv
#pragma weak PMPI_Scatter
#pragma weak PMPI_Scatterv
#pragma weak PMPI_Allgather
#pragma weak PMPI_Allgatherv
#pragma weak PMPI_Alltoall
#pragma weak PMPI_Alltoallv
#pragma weak PMPI_Reduce_scatter
#pragma weak PMPI_Scan
#ifdef OMPI_MAJOR_VERSION
/* Open MPI's predefined handles are addresses of its objects. */
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_request_null
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_group_null
#endif

/* The collectives, in the order of their block ids. */
enum {
	C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_GATHERV,
	C_SCATTER, C_SCATTERV, C_ALLGATHER, C_ALLGATHERV, C_ALLTOALL,
	C_ALLTOALLV, C_REDUCE_SCATTER, C_SCAN, C_N
};
static const char *const plm_coll_names[C_N] = {
	"MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce",
	"MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
	"MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv",
	"MPI_Reduce_scatter", "MPI_Scan"
};

/* A posted receive: its request, communicator and whether it was. */
struct plm_req {
	MPI_Request req;
	MPI_Comm comm;
	int used;
};

/* A communicator's ranks in MPI_COMM_WORLD (of its remote group for an
 * intercommunicator). */
struct plm_comm {
	MPI_Comm comm;
	int size;
	int *world;
};

static pthread_mutex_t plm_lock = PTHREAD_MUTEX_INITIALIZER;
static int plm_on;		/* MPI initialised and this process traced */
static int plm_debug;
static struct plm_req plm_reqs[PLM_REQ_MAX];
static int plm_nreq;		/* used entries */
static struct plm_comm plm_comms[PLM_COMM_MAX];
static int plm_ncomm;

static void
plm_say(const char *msg)
{
	if (plm_debug)
		fprintf(stderr, "grm-mpi: %s\n", msg);
}

/* After MPI_Init*: the name, the collectives' block names. */
static void
plm_start(void)
{
	char name[64];
	int rank = 0, i;

	plm_debug = getenv("GRM_DEBUG") != NULL &&
	    strcmp(getenv("GRM_DEBUG"), "0") != 0;
	if (!GMI_Traced())
		return;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	snprintf(name, sizeof name, "MPI rank %d", rank);
	(void)GMI_SetName(rank, name);
	for (i = 0; i < C_N; i++)
		(void)GMI_DefineBlock(PLM_BID + i, plm_coll_names[i]);
	plm_on = 1;
}

/* The world rank of rank in comm (of its remote group if it is an
 * intercommunicator); -1 if it cannot be told.  Caches the communicator's
 * translation (the lock held). */
static int
plm_world_locked(MPI_Comm comm, int rank)
{
	struct plm_comm *c = NULL;
	MPI_Group g, wg;
	int i, inter = 0, *ranks;

	if (comm == MPI_COMM_WORLD)
		return rank;
	for (i = 0; i < plm_ncomm; i++)
		if (plm_comms[i].comm == comm) {
			c = &plm_comms[i];
			break;
		}
	if (c == NULL) {
		if (plm_ncomm == PLM_COMM_MAX) {
			free(plm_comms[0].world);
			memmove(plm_comms, plm_comms + 1,
			    (PLM_COMM_MAX - 1) * sizeof plm_comms[0]);
			plm_ncomm--;
		}
		PMPI_Comm_test_inter(comm, &inter);
		if ((inter ? PMPI_Comm_remote_group(comm, &g) :
		    PMPI_Comm_group(comm, &g)) != MPI_SUCCESS)
			return -1;
		if (PMPI_Comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS) {
			PMPI_Group_free(&g);
			return -1;
		}
		c = &plm_comms[plm_ncomm];
		if (inter)
			PMPI_Group_size(g, &c->size);
		else
			PMPI_Comm_size(comm, &c->size);
		c->world = malloc((size_t)c->size * 2 * sizeof(int));
		if (c->world == NULL) {
			PMPI_Group_free(&g);
			PMPI_Group_free(&wg);
			return -1;
		}
		ranks = c->world + c->size;
		for (i = 0; i < c->size; i++)
			ranks[i] = i;
		PMPI_Group_translate_ranks(g, c->size, ranks, wg, c->world);
		PMPI_Group_free(&g);
		PMPI_Group_free(&wg);
		c->comm = comm;
		plm_ncomm++;
	}
	if (rank < 0 || rank >= c->size)
		return -1;
	return c->world[rank] == MPI_UNDEFINED ? -1 : c->world[rank];
}

static int
plm_world(MPI_Comm comm, int rank)
{
	int w;

	pthread_mutex_lock(&plm_lock);
	w = plm_world_locked(comm, rank);
	pthread_mutex_unlock(&plm_lock);
	return w;
}

static long
plm_bytes(int count, MPI_Datatype type)
{
	int sz = 0;

	if (PMPI_Type_size(type, &sz) != MPI_SUCCESS)
		return 0;
	return (long)count * sz;
}

/* A send of count × type to dest in comm (MPI_PROC_NULL: none). */
static void
plm_send(int dest, int tag, int count, MPI_Datatype type, MPI_Comm comm)
{
	int w;

	if (!plm_on || dest == MPI_PROC_NULL)
		return;
	if ((w = plm_world(comm, dest)) >= 0)
		(void)GMI_MessageSend(w, tag, plm_bytes(count, type));
}

/* A completed receive in comm, from its status (none for a receive
 * from MPI_PROC_NULL or a cancelled one). */
static void
plm_recv(MPI_Comm comm, const MPI_Status *st)
{
	int n = 0, w, cancelled = 0;

	if (st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0)
		return;
	if (PMPI_Test_cancelled(st, &cancelled) == MPI_SUCCESS && cancelled)
		return;
	if ((w = plm_world(comm, st->MPI_SOURCE)) < 0)
		return;
	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS ||
	    n == MPI_UNDEFINED)
		n = 0;
	(void)GMI_MessageRecv(w, st->MPI_TAG, n);
}

/* Remembers a posted receive. */
static void
plm_track(MPI_Request req, MPI_Comm comm)
{
	int i;

	if (!plm_on || req == MPI_REQUEST_NULL)
		return;
	pthread_mutex_lock(&plm_lock);
	for (i = 0; i < PLM_REQ_MAX && plm_reqs[i].used; i++)
		;
	if (i == PLM_REQ_MAX) {
		pthread_mutex_unlock(&plm_lock);
		plm_say("too many posted receives: one not recorded");
		return;
	}
	plm_reqs[i].req = req;
	plm_reqs[i].comm = comm;
	plm_reqs[i].used = 1;
	plm_nreq++;
	pthread_mutex_unlock(&plm_lock);
}

/* Forgets req if it is a posted receive; its communicator into comm.
 * Returns whether it was one. */
static int
plm_untrack(MPI_Request req, MPI_Comm *comm)
{
	int i, found = 0;

	if (req == MPI_REQUEST_NULL)
		return 0;
	pthread_mutex_lock(&plm_lock);
	for (i = 0; plm_nreq > 0 && i < PLM_REQ_MAX; i++)
		if (plm_reqs[i].used && plm_reqs[i].req == req) {
			*comm = plm_reqs[i].comm;
			plm_reqs[i].used = 0;
			plm_nreq--;
			found = 1;
			break;
		}
	pthread_mutex_unlock(&plm_lock);
	return found;
}

/* Request old completed with status st: a receive record if it was a
 * posted receive. */
static void
plm_done(MPI_Request old, const MPI_Status *st)
{
	MPI_Comm comm;

	if (plm_on && plm_untrack(old, &comm))
		plm_recv(comm, st);
}

/* ---- start and end ---- */

PLM_API int
MPI_Init(int *argc, char ***argv)
{
	int r = PMPI_Init(argc, argv);

	if (r == MPI_SUCCESS)
		plm_start();
	return r;
}

PLM_API int
MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int r = PMPI_Init_thread(argc, argv, required, provided);

	if (r == MPI_SUCCESS)
		plm_start();
	return r;
}

PLM_API int
MPI_Finalize(void)
{
	int r, i;

	r = PMPI_Finalize();
	if (plm_on) {
		plm_on = 0;
		(void)GMI_Flush();
		pthread_mutex_lock(&plm_lock);
		for (i = 0; i < plm_ncomm; i++)
			free(plm_comms[i].world);
		plm_ncomm = 0;
		pthread_mutex_unlock(&plm_lock);
	}
	return r;
}

PLM_API int
MPI_Comm_free(MPI_Comm *comm)
{
	int i;

	pthread_mutex_lock(&plm_lock);
	for (i = 0; i < plm_ncomm; i++)
		if (plm_comms[i].comm == *comm) {
			free(plm_comms[i].world);
			plm_comms[i] = plm_comms[--plm_ncomm];
			break;
		}
	pthread_mutex_unlock(&plm_lock);
	return PMPI_Comm_free(comm);
}

/* ---- point to point ---- */

#define PLM_SEND(NAME) \
PLM_API int \
MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, \
	   int tag, MPI_Comm comm) \
{ \
	plm_send(dest, tag, count, type, comm); \
	return PMPI_##NAME(buf, count, type, dest, tag, comm); \
}

PLM_SEND(Send)
PLM_SEND(Ssend)
PLM_SEND(Bsend)
PLM_SEND(Rsend)

#define PLM_ISEND(NAME) \
PLM_API int \
MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, \
	   int tag, MPI_Comm comm, MPI_Request *req) \
{ \
	plm_send(dest, tag, count, type, comm); \
	return PMPI_##NAME(buf, count, type, dest, tag, comm, req); \
}

PLM_ISEND(Isend)
PLM_ISEND(Issend)
PLM_ISEND(Ibsend)
PLM_ISEND(Irsend)

PLM_API int
MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
	 MPI_Comm comm, MPI_Status *status)
{
	MPI_Status mine;
	int r;

	if (!plm_on)
		return PMPI_Recv(buf, count, type, source, tag, comm, status);
	r = PMPI_Recv(buf, count, type, source, tag, comm,
	    status == MPI_STATUS_IGNORE ? &mine : status);
	if (r == MPI_SUCCESS)
		plm_recv(comm, status == MPI_STATUS_IGNORE ? &mine : status);
	return r;
}

PLM_API int
MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
	  MPI_Comm comm, MPI_Request *req)
{
	int r = PMPI_Irecv(buf, count, type, source, tag, comm, req);

	if (r == MPI_SUCCESS)
		plm_track(*req, comm);
	return r;
}

PLM_API int
MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
	     int stag, void *rbuf, int rcount, MPI_Datatype rtype, int source,
	     int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int r;

	if (!plm_on)
		return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf,
		    rcount, rtype, source, rtag, comm, status);
	plm_send(dest, stag, scount, stype, comm);
	r = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount,
	    rtype, source, rtag, comm, st);
	if (r == MPI_SUCCESS)
		plm_recv(comm, st);
	return r;
}

PLM_API int
MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest,
		     int stag, int source, int rtag, MPI_Comm comm,
		     MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int r;

	if (!plm_on)
		return PMPI_Sendrecv_replace(buf, count, type, dest, stag,
		    source, rtag, comm, status);
	plm_send(dest, stag, count, type, comm);
	r = PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag,
	    comm, st);
	if (r == MPI_SUCCESS)
		plm_recv(comm, st);
	return r;
}

/* ---- completions ---- */

PLM_API int
MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	MPI_Request old = *req;
	int r;

	if (!plm_on || __atomic_load_n(&plm_nreq, __ATOMIC_RELAXED) == 0)
		return PMPI_Wait(req, status);
	r = PMPI_Wait(req, st);
	if (r == MPI_SUCCESS)
		plm_done(old, st);
	return r;
}

PLM_API int
MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	MPI_Request old = *req;
	int r;

	if (!plm_on || __atomic_load_n(&plm_nreq, __ATOMIC_RELAXED) == 0)
		return PMPI_Test(req, flag, status);
	r = PMPI_Test(req, flag, st);
	if (r == MPI_SUCCESS && *flag)
		plm_done(old, st);
	return r;
}

/* Arrays of count requests and statuses for the calls on many: the
 * old handles, and statuses of our own where the caller ignores them;
 * on the stack when small.  Returns 0, or -1 (no memory: the call is
 * then made without records). */
struct plm_many {
	MPI_Request old_s[PLM_STACK], *old;
	MPI_Status st_s[PLM_STACK], *st;
	int own_st;
};

static int
plm_many_get(struct plm_many *m, int count, MPI_Request *reqs,
	     MPI_Status *statuses)
{
	m->old = count <= PLM_STACK ? m->old_s :
	    malloc((size_t)count * sizeof *m->old);
	if (m->old == NULL)
		return -1;
	m->own_st = statuses == MPI_STATUSES_IGNORE;
	m->st = !m->own_st ? statuses : count <= PLM_STACK ? m->st_s :
	    malloc((size_t)count * sizeof *m->st);
	if (m->st == NULL) {
		if (m->old != m->old_s)
			free(m->old);
		return -1;
	}
	if (count > 0)
		memcpy(m->old, reqs, (size_t)count * sizeof *reqs);
	return 0;
}

static void
plm_many_put(struct plm_many *m)
{
	if (m->old != m->old_s)
		free(m->old);
	if (m->own_st && m->st != m->st_s)
		free(m->st);
}

/* After a call on many that completed n requests (the first n, or
 * those indices names): their receive records; m given back. */
static void
plm_many_done(struct plm_many *m, int n, const int *indices)
{
	int i;

	for (i = 0; i < n; i++)
		plm_done(m->old[indices != NULL ? indices[i] : i], &m->st[i]);
	plm_many_put(m);
}

PLM_API int
MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
	struct plm_many m;
	int r;

	if (!plm_on || __atomic_load_n(&plm_nreq, __ATOMIC_RELAXED) == 0 ||
	    plm_many_get(&m, count, reqs, statuses) != 0)
		return PMPI_Waitall(count, reqs, statuses);
	r = PMPI_Waitall(count, reqs, m.st);
	plm_many_done(&m, r == MPI_SUCCESS ? count : 0, NULL);
	return r;
}

PLM_API int
MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	struct plm_many m;
	int r;

	if (!plm_on || __atomic_load_n(&plm_nreq, __ATOMIC_RELAXED) == 0 ||
	    plm_many_get(&m, count, reqs, statuses) != 0)
		return PMPI_Testall(count, reqs, flag, statuses);
	r = PMPI_Testall(count, reqs, flag, m.st);
	plm_many_done(&m, r == MPI_SUCCESS && *flag ? count : 0, NULL);
	return r;
}

PLM_API int
MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	struct plm_many m;
	int r;

	if (!plm_on || __atomic_load_n(&plm_nreq, __ATOMIC_RELAXED) == 0 ||
	    plm_many_get(&m, count, reqs, MPI_STATUSES_IGNORE) != 0)
		return PMPI_Waitany(count, reqs, index, status);
	r = PMPI_Waitany(count, reqs, index, st);
	if (r == MPI_SUCCESS && *index != MPI_UNDEFINED)
		plm_done(m.old[*index], st);
	plm_many_put(&m);
	return r;
}

PLM_API int
MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag,
	    MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	struct plm_many m;
	int r;

	if (!plm_on || __atomic_load_n(&plm_nreq, __ATOMIC_RELAXED) == 0 ||
	    plm_many_get(&m, count, reqs, MPI_STATUSES_IGNORE) != 0)
		return PMPI_Testany(count, reqs, index, flag, status);
	r = PMPI_Testany(count, reqs, index, flag, st);
	if (r == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
		plm_done(m.old[*index], st);
	plm_many_put(&m);
	return r;
}

PLM_API int
MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
	     MPI_Status statuses[])
{
	struct plm_many m;
	int r;

	if (!plm_on || __atomic_load_n(&plm_nreq, __ATOMIC_RELAXED) == 0 ||
	    plm_many_get(&m, incount, reqs, statuses) != 0)
		return PMPI_Waitsome(incount, reqs, outcount, indices,
		    statuses);
	r = PMPI_Waitsome(incount, reqs, outcount, indices, m.st);
	plm_many_done(&m, r == MPI_SUCCESS && *outcount != MPI_UNDEFINED ?
	    *outcount : 0, indices);
	return r;
}

PLM_API int
MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
	     MPI_Status statuses[])
{
	struct plm_many m;
	int r;

	if (!plm_on || __atomic_load_n(&plm_nreq, __ATOMIC_RELAXED) == 0 ||
	    plm_many_get(&m, incount, reqs, statuses) != 0)
		return PMPI_Testsome(incount, reqs, outcount, indices,
		    statuses);
	r = PMPI_Testsome(incount, reqs, outcount, indices, m.st);
	plm_many_done(&m, r == MPI_SUCCESS && *outcount != MPI_UNDEFINED ?
	    *outcount : 0, indices);
	return r;
}

PLM_API int
MPI_Request_free(MPI_Request *req)
{
	MPI_Comm comm;

	if (__atomic_load_n(&plm_nreq, __ATOMIC_RELAXED) > 0)
		(void)plm_untrack(*req, &comm);
	return PMPI_Request_free(req);
}

/* ---- collectives: named blocks ---- */

#define PLM_COLL(ID, CALL) \
	do { \
		int r_; \
		if (!plm_on) \
			return CALL; \
		GMI_BlockBegin(PLM_BID + (ID)); \
		r_ = CALL; \
		GMI_BlockEnd(PLM_BID + (ID)); \
		return r_; \
	} while (0)

PLM_API int
MPI_Barrier(MPI_Comm comm)
{
	PLM_COLL(C_BARRIER, PMPI_Barrier(comm));
}

PLM_API int
MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	PLM_COLL(C_BCAST, PMPI_Bcast(buf, count, type, root, comm));
}

PLM_API int
MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
	   MPI_Op op, int root, MPI_Comm comm)
{
	PLM_COLL(C_REDUCE, PMPI_Reduce(sbuf, rbuf, count, type, op, root,
	    comm));
}

PLM_API int
MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
	      MPI_Op op, MPI_Comm comm)
{
	PLM_COLL(C_ALLREDUCE, PMPI_Allreduce(sbuf, rbuf, count, type, op,
	    comm));
}

PLM_API int
MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
	   int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	PLM_COLL(C_GATHER, PMPI_Gather(sbuf, scount, stype, rbuf, rcount,
	    rtype, root, comm));
}

PLM_API int
MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
	    const int rcounts[], const int displs[], MPI_Datatype rtype,
	    int root, MPI_Comm comm)
{
	PLM_COLL(C_GATHERV, PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts,
	    displs, rtype, root, comm));
}

PLM_API int
MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
	    int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	PLM_COLL(C_SCATTER, PMPI_Scatter(sbuf, scount, stype, rbuf, rcount,
	    rtype, root, comm));
}

PLM_API int
MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
	     MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
	     int root, MPI_Comm comm)
{
	PLM_COLL(C_SCATTERV, PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf,
	    rcount, rtype, root, comm));
}

PLM_API int
MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
	      int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	PLM_COLL(C_ALLGATHER, PMPI_Allgather(sbuf, scount, stype, rbuf,
	    rcount, rtype, comm));
}

PLM_API int
MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
	       const int rcounts[], const int displs[], MPI_Datatype rtype,
	       MPI_Comm comm)
{
	PLM_COLL(C_ALLGATHERV, PMPI_Allgatherv(sbuf, scount, stype, rbuf,
	    rcounts, displs, rtype, comm));
}

PLM_API int
MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
	     int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	PLM_COLL(C_ALLTOALL, PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount,
	    rtype, comm));
}

PLM_API int
MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
	      MPI_Datatype stype, void *rbuf, const int rcounts[],
	      const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
	PLM_COLL(C_ALLTOALLV, PMPI_Alltoallv(sbuf, scounts, sdispls, stype,
	    rbuf, rcounts, rdispls, rtype, comm));
}

PLM_API int
MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
		   MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	PLM_COLL(C_REDUCE_SCATTER, PMPI_Reduce_scatter(sbuf, rbuf, rcounts,
	    type, op, comm));
}

PLM_API int
MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
	 MPI_Op op, MPI_Comm comm)
{
	PLM_COLL(C_SCAN, PMPI_Scan(sbuf, rbuf, count, type, op, comm));
}
