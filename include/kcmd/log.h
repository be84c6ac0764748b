/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kcmd/log.h: logging from a controller (part of the public controller API, versioned by
 * KCMD_CONTROLLER_ABI).
 *
 * Lines go where kcmd's own go (klog text on stderr, or journald fields under systemd), tagged
 * with the process (worker-<controller>-0, dispatcher-<controller>) and controller. Verbosity
 * follows klog and --v: kcmd_log_v(N, ...) prints when N <= --v. Never log secrets.
 */
#include <stdbool.h>

enum kcmd_log_level {
	KCMD_LOG_ERROR = 3,
	KCMD_LOG_WARNING = 4,
	KCMD_LOG_INFO = 6,
	KCMD_LOG_DEBUG = 7,
};

void kcmd_log(enum kcmd_log_level level, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* The process's --v. */
int kcmd_log_verbosity(void);

#define kcmd_log_error(...)   kcmd_log(KCMD_LOG_ERROR, __FILE__, __LINE__, __VA_ARGS__)
#define kcmd_log_warning(...) kcmd_log(KCMD_LOG_WARNING, __FILE__, __LINE__, __VA_ARGS__)
#define kcmd_log_info(...)    kcmd_log(KCMD_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define kcmd_log_v(n, ...)                                                                         \
	do {                                                                                       \
		if ((n) <= kcmd_log_verbosity())                                                   \
			kcmd_log((n) > 0 ? KCMD_LOG_DEBUG : KCMD_LOG_INFO, __FILE__, __LINE__,     \
			         __VA_ARGS__);                                                     \
	} while (0)
