/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* Tiny check helpers shared by the ipc tests (plain programs: 0 pass, 1 fail, 77 skip). */
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long _a = (long long)(a), _b = (long long)(b);                                \
		if (_a != _b) {                                                                    \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld\n",          \
			        __FILE__, __LINE__, #a, _a, #b, _b);                               \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* Moves a pointer out of a _cleanup_ variable. */
#define TAKE_W(p)                                                                                  \
	({                                                                                         \
		__typeof__(p) _t = (p);                                                            \
		(p) = NULL;                                                                        \
		_t;                                                                                \
	})
