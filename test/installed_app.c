/* SPDX-License-Identifier: MIT */
/* installed_app.c: a user's program, built against the installed grm with
 * pkg-config: it defines and emits events, runs a BEE point sensor from the
 * installed <grm/bee.h>, then returns from main. */
#include <grm.h>
#include <grm/bee.h>

int
main(void)
{
	int i;

	for (i = 0; i < 7; i++)
		POINT_EVENT("installed point");
	GMI_DefineEvent(10, "i=%d l=%ld u=%u x=%x f=%f s=%s", "all kinds");
	for (i = 0; i < 1000; i++)
		GMI_Event(10, -i, (long)i * 100000000000L, (unsigned)i,
		    (unsigned)i, i / 4.0, i % 2 ? "odd" : "even");
	return 0;
}
