/* SPDX-License-Identifier: MIT */
/* fn_lib.c: a shared library of fn_app's, built with -finstrument-functions:
 * its functions are named from its own symbol table, at its own base. */
static int __attribute__((noinline))
fn_lib_inner(int k)
{
	return k * 3 + 1;
}

int fn_lib_work(int k);

int
fn_lib_work(int k)
{
	return fn_lib_inner(k) - k;
}
