/* SPDX-License-Identifier: MIT */
/* mpi_app.c: an MPI program built without libgrm for test/mpi.sh (with
 * each implementation's mpicc), with message counts the test knows:
 *
 *	mpi_app ROUNDS
 *
 * For each of ROUNDS rounds: a ring (blocking: rank 0 sends a 4-byte
 * token with MPI_Send to rank 1, each rank passes it on, MPI_Ssend from
 * odd ranks, rank 0 receives it back with MPI_ANY_SOURCE), tag 1; then an
 * all-to-all by point-to-point, non-blocking: every rank posts one
 * MPI_Irecv (MPI_ANY_SOURCE) per other rank and MPI_Isend's 64 bytes to
 * each, tag 2, completed by MPI_Waitall (the receives with statuses
 * ignored) or, every other round, by MPI_Waitany and MPI_Testall.  Once:
 * MPI_Sendrecv of 16 bytes, tag 3, with the partner in a communicator of
 * the even or odd ranks (ranks translated), and the collectives Barrier,
 * Bcast, Allreduce, Gather, Scatter, Alltoall.  Rank 0 prints a checksum;
 * exits 0, 1 on a wrong value.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#define NMAX 64

int
main(int argc, char **argv)
{
	MPI_Request reqs[2 * NMAX];
	double out[8], in[NMAX][8];
	int rank, n, rounds, r, i, k, token, done, idx, bad = 0;
	int sub_rank, part[4], got[4], one[NMAX], all[NMAX], sum;
	MPI_Comm sub;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	rounds = argc > 1 ? atoi(argv[1]) : 3;
	if (n < 2 || n > NMAX) {
		if (rank == 0)
			fprintf(stderr, "mpi_app: 2 to %d ranks\n", NMAX);
		MPI_Finalize();
		return 2;
	}
	for (r = 0; r < rounds; r++) {
		/* The ring. */
		if (rank == 0) {
			token = r;
			MPI_Send(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 1,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			bad |= token != r + n - 1;
		} else {
			MPI_Recv(&token, 1, MPI_INT, rank - 1, 1,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			token++;
			if (rank % 2)
				MPI_Ssend(&token, 1, MPI_INT, (rank + 1) % n,
				    1, MPI_COMM_WORLD);
			else
				MPI_Send(&token, 1, MPI_INT, (rank + 1) % n,
				    1, MPI_COMM_WORLD);
		}
		/* All to all, non-blocking. */
		for (i = 0; i < 8; i++)
			out[i] = rank * 100 + r + i;
		k = 0;
		for (i = 0; i < n; i++)
			if (i != rank)
				MPI_Irecv(in[i], 8, MPI_DOUBLE, MPI_ANY_SOURCE,
				    2, MPI_COMM_WORLD, &reqs[k++]);
		for (i = 0; i < n; i++)
			if (i != rank)
				MPI_Isend(out, 8, MPI_DOUBLE, i, 2,
				    MPI_COMM_WORLD, &reqs[k++]);
		if (r % 2 == 0) {
			MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE);
		} else {
			MPI_Waitany(k, reqs, &idx, MPI_STATUS_IGNORE);
			do
				MPI_Testall(k, reqs, &done,
				    MPI_STATUSES_IGNORE);
			while (!done);
		}
		for (i = 0; i < n; i++)
			bad |= i != rank && (int)in[i][7] % 100 != r + 7;
	}
	/* A communicator of the even or odd ranks: a Sendrecv with the
	 * partner in it. */
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
	MPI_Comm_rank(sub, &sub_rank);
	for (i = 0; i < 4; i++)
		part[i] = rank;
	MPI_Comm_size(sub, &k);
	if (k > 1) {
		MPI_Sendrecv(part, 4, MPI_INT, (sub_rank + 1) % k, 3, got, 4,
		    MPI_INT, (sub_rank + k - 1) % k, 3, sub,
		    MPI_STATUS_IGNORE);
		bad |= got[0] % 2 != rank % 2 || got[0] == rank;
	}
	MPI_Comm_free(&sub);
	/* Collectives. */
	MPI_Barrier(MPI_COMM_WORLD);
	token = rank == 0 ? 42 : 0;
	MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
	bad |= token != 42;
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	bad |= sum != n * (n - 1) / 2;
	MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Scatter(all, 1, MPI_INT, &token, 1, MPI_INT, 0, MPI_COMM_WORLD);
	bad |= token != rank;
	for (i = 0; i < n; i++)
		one[i] = rank * n + i;
	MPI_Alltoall(one, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < n; i++)
		bad |= all[i] != i * n + rank;
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR,
	    MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_app: %d ranks, %d rounds, sum %d: %s\n", n, rounds,
		    sum, bad ? "WRONG" : "ok");
	MPI_Finalize();
	return bad ? 1 : 0;
}
