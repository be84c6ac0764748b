/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/dispatcher-main.c: the entry of kcmd-dispatcher, exec'd when the manager does not fork
 * it from the zygote (KCMD_ZYGOTE=0, or the zygote gone; lib/zygote-abi.h).
 */
#include "workers/zygote.h"

int main(int argc, char **argv)
{
	return kcmd_dispatcher_main(argc, argv);
}
