/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/resourcequota/quantity.h: resource.Quantity as the quota controller needs it: parse
 * (ParseQuantity), add (Quantity.Add, with its format rule), compare (Cmp), round up to an
 * integer (RoundUp(0)) and print (String(), the canonical form the apiserver writes back).
 *
 * Design note.
 *   A Go Quantity is an int64 mantissa with a decimal scale, or an inf.Dec when that overflows,
 *   plus a Format; ParseQuantity rounds every value up (away from zero) to a nano unit, so every
 *   value a Quantity can hold is an integer count of nano units. kcmd keeps exactly that: a
 *   signed 128-bit count of nano units and the Format. Sums and comparisons are then exact, and
 *   String() depends only on the value and the Format (the int64 and inf.Dec paths print alike),
 *   so the printed text is Go's. The range is |value| < 1.7e29 (about 170,000 E); a quantity
 *   beyond it is refused with -ERANGE, never wrapped (Go's inf.Dec would carry it on).
 *   Rejected: reusing kube/deephash.c's parser (it rebuilds Go's internal fields for hashing,
 *   has no arithmetic and no printer).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rq_format {
	RQ_DECIMAL_SI = 0, /* the zero value, as resource.Quantity{Format: DecimalSI} */
	RQ_BINARY_SI,
	RQ_DECIMAL_EXPONENT,
};

struct rq_qty {
	__int128 nano; /* the value in units of 1e-9 */
	enum rq_format fmt;
};

/* Longest text rq_qty_format writes, NUL included. */
#define RQ_QTY_STR_MAX 64

/* ParseQuantity(s): 0, -EINVAL (not a quantity), -ERANGE (beyond the representable range). */
int rq_qty_parse(const char *s, struct rq_qty *ret);
/* Quantity.String() into buf (at least RQ_QTY_STR_MAX bytes). Returns the length. */
int rq_qty_format(const struct rq_qty *q, char *buf, size_t len);
/* q.Add(y): a zero q takes y's format. 0, or -ERANGE (q unchanged). */
int rq_qty_add(struct rq_qty *q, const struct rq_qty *y);
/* Quantity.Cmp: -1, 0, 1. */
int rq_qty_cmp(const struct rq_qty *a, const struct rq_qty *b);
bool rq_qty_is_zero(const struct rq_qty *q);
/* q.RoundUp(0): the value rounded away from zero to an integer; returns true when it was one
 * already (nothing changed). */
bool rq_qty_round_up_integer(struct rq_qty *q);
/* resource.NewQuantity(v, DecimalSI) */
struct rq_qty rq_qty_int(int64_t v);
