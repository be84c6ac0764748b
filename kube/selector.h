/* SPDX-License-Identifier: Apache-2.0 */
/* kube/selector.h - label selectors: the string form ("a=b,c in (x,y),!d") and
 * metav1.LabelSelector, with upstream's validation and nil/empty semantics.
 *
 * A struct kube_selector is immutable after construction and may be shared read-only between
 * threads. Three shapes exist, as in apimachinery's labels package:
 *   nothing     matches no label set (a nil LabelSelector)
 *   everything  matches every label set (an empty LabelSelector, or the string "")
 *   requirements, AND-ed, sorted by key (stable)
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "kube/model.h"

struct kube_selector;

/* Parses the string form (labels.Parse). Returns 0, -EINVAL (syntax or validation; a message
 * goes to err if err != NULL), -ENOMEM. */
int kube_selector_parse(const char *s, struct kube_selector **ret, char *err, size_t errlen);

/* metav1.LabelSelectorAsSelector: ls == NULL -> nothing; no matchLabels and no matchExpressions
 * -> everything; otherwise every entry validated as labels.NewRequirement does. -EINVAL with a
 * message on an invalid key, value, operator or value count. */
int kube_selector_from_label_selector(const struct kube_label_selector *ls,
                                      struct kube_selector **ret, char *err, size_t errlen);

/* The same over a LabelSelector as the apiserver's JSON (spec.selector and the like): a NULL or
 * non-object js is a nil selector (nothing). Non-string matchLabels values and values[] entries
 * count as "" (the apiserver never sends them; validation then refuses them). Same returns. */
struct cJSON;
int kube_selector_from_json(const struct cJSON *js, struct kube_selector **ret, char *err,
                            size_t errlen);

bool kube_selector_matches(const struct kube_selector *s, const struct kube_kv *labels, uint32_t n);
/* kube_selector_matches over an object's metadata.labels JSON (NULL or not an object: no
 * labels; non-string values are skipped). false when out of memory. */
bool kube_selector_matches_json(const struct kube_selector *s, const struct cJSON *labels);
bool kube_selector_is_everything(const struct kube_selector *s);
bool kube_selector_is_nothing(const struct kube_selector *s);

/* The canonical string (Selector.String()): requirements by key, set values sorted. Nothing
 * formats as "" too; check kube_selector_is_nothing() first. *ret is malloc'd. */
int kube_selector_format(const struct kube_selector *s, char **ret);

void kube_selector_free(struct kube_selector *s);
static inline void kube_selector_freep(struct kube_selector **s)
{
	kube_selector_free(*s);
}
#define _cleanup_kube_selector_ __attribute__((cleanup(kube_selector_freep)))

/* validation.IsQualifiedName / IsValidLabelValue: 0 or -EINVAL. */
int kube_validate_label_key(const char *k);
int kube_validate_label_value(const char *v);
