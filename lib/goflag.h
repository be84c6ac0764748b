/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/goflag.h: Go-style flag values, written once for every kcmd program (library `kcflag`):
 * strconv.ParseBool, time.ParseDuration (non-negative), and the table of a controller's flag
 * values (`struct kcmd_flag_values` of kcmd/controller.h).
 *
 * Design note.
 *   The manager parses every controller's flags against the descriptors' declarations and
 *   passes each enabled controller its own values as `--name=value` arguments; the worker main
 *   parses them back with the same code (kcmd_flag_values_set), so a value means the same in
 *   every process. A values table holds one string per declared flag (the default until set):
 *   typed getters convert on read, and the parse on set already proved the conversion works.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcmd/controller.h"

/* Go's strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False. 0 or -EINVAL. */
int kcmd_parse_bool(const char *s, bool *ret);
/* A Go duration ("1h2m3.5s", "300ms", "10us", "0"); negative values are refused. 0 or -EINVAL. */
int kcmd_parse_duration(const char *s, uint64_t *ret_us);

/* The values of one controller's declared flags, defaults applied. -ENOMEM, -EINVAL (a default
 * that does not parse: a bug in the descriptor). */
int kcmd_flag_values_new(const struct kcmd_flag *flags, size_t n, struct kcmd_flag_values **ret);
struct kcmd_flag_values *kcmd_flag_values_free(struct kcmd_flag_values *v);
/* The declaration of `name` among v's flags, or NULL. */
const struct kcmd_flag *kcmd_flag_values_find(const struct kcmd_flag_values *v, const char *name);
/* Sets `name` from its text form after checking it against the declared type and range.
 * -ENOENT not declared, -EINVAL bad value (err says why, naming --name), -ENOMEM. */
int kcmd_flag_values_set(struct kcmd_flag_values *v, const char *name, const char *value, char *err,
                         size_t errlen);
/* Whether the flag was set explicitly (not just its default). */
bool kcmd_flag_values_is_set(const struct kcmd_flag_values *v, const char *name);
/* The text form of flag i (i < n), for passing on as --name=value. */
const char *kcmd_flag_values_text(const struct kcmd_flag_values *v, size_t i);
size_t kcmd_flag_values_count(const struct kcmd_flag_values *v);
