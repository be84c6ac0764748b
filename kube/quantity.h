/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube/quantity.h - a resource.Quantity's value, for the controllers that only compare or round
 * quantities (the PV binder, the volume expander).
 *
 * The value is a signed count of nano units in 128 bits, as ParseQuantity rounds it (up, to one
 * nano unit); |value| reaches ~1.7e29 nano units, beyond any storage size. Formatting and the
 * canonical text are not here (the quota controller's quantity.h and the HPA's milli helpers do
 * that for their own needs).
 */
#pragma once

/* ParseQuantity(s) in nano units: 0, or -EINVAL for text that is not a quantity or does not
 * fit (nothing is written to *ret then). */
int kube_quantity_nano(const char *s, __int128 *ret);

/* The same, 0 for NULL or text that is not a quantity (Go's zero Quantity). */
__int128 kube_quantity_nano_or_zero(const char *s);
