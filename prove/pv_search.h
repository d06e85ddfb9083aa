/* SPDX-License-Identifier: MIT */
/* pv_search.h: searches of sorted arrays by time, for the index of prove
 * serve.  Each takes the array as arg and its times as at(arg, i), in
 * order (equal times allowed), reads nothing outside [lo, hi), and
 * returns the first i in [lo, hi) whose time is at or after t (hi if
 * none): they differ only in where they read. */
#ifndef GRM_PV_SEARCH_H
#define GRM_PV_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* A binary search: the one search of every sorted array of the index
 * (pv_view.c, pv_detail.c, pv_bee.c). */
size_t pv_lb(const void *arg, size_t lo, size_t hi, uint64_t t,
	     uint64_t (*at)(const void *, size_t));

/* For an answer expected near lo: a few reads next to each other when it
 * is. */
size_t pv_gallop(const void *arg, size_t lo, size_t hi, uint64_t t,
		 uint64_t (*at)(const void *, size_t));

/* For an answer expected near the index g (any value: one outside
 * (lo, hi), or not a number, is no guess): a few reads around g when it
 * is right, about twice log2 of how far it is wrong otherwise. */
size_t pv_seek(const void *arg, size_t lo, size_t hi, double g, uint64_t t,
	       uint64_t (*at)(const void *, size_t));

/* Items per ns between indexes a and b at times ta and tb (the slope of
 * a guess for pv_seek), 0 when b <= a or tb <= ta. */
double pv_density(size_t a, size_t b, uint64_t ta, uint64_t tb);

#endif
