/* SPDX-License-Identifier: MIT */
/* mpi_pingpong.c: the cost of a wrapped MPI call (bench/mpi.sh).  On 2
 * ranks, ranks 0 and 1 pass an 8-byte message back and forth N times
 * (MPI_Send, then MPI_Recv): 4 calls on the critical path per round.  On
 * one rank, it sends the message to itself (MPI_Irecv, MPI_Send,
 * MPI_Wait: 3 calls a round, a send and a receive record, a request
 * tracked, with no other process to wait for).  After
 * 1000 rounds of warm-up, rank 0 prints the mean time of a round in ns.
 * Built with each implementation's mpicc, without libgrm.
 *
 *	mpi_pingpong N
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static void
rounds(int rank, int size, long n)
{
	MPI_Request req;
	double msg = 0, in;
	long i;

	for (i = 0; i < n; i++) {
		if (size == 1) {
			MPI_Irecv(&in, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD,
			    &req);
			MPI_Send(&msg, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
		} else if (rank == 0) {
			MPI_Send(&msg, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
			MPI_Recv(&msg, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(&msg, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE);
			MPI_Send(&msg, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
		}
	}
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	double t0, t1;
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rounds(rank, size, 1000);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	rounds(rank, size, n);
	t1 = MPI_Wtime();
	if (rank == 0)
		printf("%.0f\n", (t1 - t0) * 1e9 / (double)n);
	MPI_Finalize();
	return 0;
}
