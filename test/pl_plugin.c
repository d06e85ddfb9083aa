/* SPDX-License-Identifier: MIT */
/* pl_plugin.c: the library test/pl_app dlopens in test/preload.sh. */
int pl_plugin_value(void);

int
pl_plugin_value(void)
{
	return 42;
}
