/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/hpa/util.h: what the HPA's sync needs of resource.Quantity and metav1.LabelSelector:
 * a quantity's MilliValue(), NewMilliQuantity(v, DecimalSI|BinarySI).String(), a
 * LabelSelector (JSON) as a selector (LabelSelectorAsSelector) and as Go prints it with %+v
 * (upstream's external metric names and messages carry it).
 * Rejected: including the resource quota controller's quantity.h or the disruption
 * controller's selector helpers (workers may not include each other: the layers rule).
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/selector.h"

/* ParseQuantity(s).MilliValue() (rounded up). 0, -EINVAL (not a quantity), -ERANGE. */
int hpa_qty_milli(const char *s, int64_t *ret);
/* resource.NewMilliQuantity(v, binary ? BinarySI : DecimalSI).String() into buf (>= 48 bytes) */
void hpa_qty_format_milli(int64_t v, bool binary, char *buf, size_t len);
/* fmt.Sprintf("%+v", sel) of a *metav1.LabelSelector ("nil" for nil); malloc'd, NULL on ENOMEM */
char *hpa_selector_gostring(const cJSON *sel);
