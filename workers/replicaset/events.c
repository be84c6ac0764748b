/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/events.c: upstream's event messages and error texts (see events.h).
 * Formatting with asprintf keeps long apiserver messages whole, as Go's fmt does.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workers/replicaset/events.h"

static char *fmt1(const char *f, const char *a)
{
	char *s;
	return asprintf(&s, f, a ? a : "") < 0 ? NULL : s;
}

char *rs_msg_created(const char *pod_name)
{
	return fmt1("Created pod: %s", pod_name);
}
char *rs_msg_create_failed(const char *err)
{
	return fmt1("Error creating: %s", err);
}
char *rs_msg_deleted(const char *pod_name)
{
	return fmt1("Deleted pod: %s", pod_name);
}
char *rs_msg_delete_failed(const char *err)
{
	return fmt1("Error deleting: %s", err);
}
char *rs_err_unable_to_delete(const char *err)
{
	return fmt1("unable to delete pods: %s", err);
}
char *rs_err_recheck(const char *err)
{
	return fmt1("can't recheck DeletionTimestamp: %s", err);
}

char *rs_err_original_gone(const char *kind, const char *ns, const char *name, const char *got,
                           const char *want)
{
	char *s;
	if (asprintf(&s, "original %s %s/%s is gone: got uid %s, wanted %s", kind, ns, name,
	             got ? got : "", want ? want : "") < 0)
		return NULL;
	return s;
}

int rs_go_time_string(kube_time_t t, char *buf, size_t len)
{
	time_t secs = (time_t)(t / 1000000000);
	long ns = (long)(t % 1000000000);
	if (ns < 0) {
		ns += 1000000000;
		secs--;
	}
	struct tm tm;
	gmtime_r(&secs, &tm);
	char frac[16] = "";
	if (ns) {
		snprintf(frac, sizeof frac, ".%09ld", ns);
		size_t n = strlen(frac);
		while (n > 1 && frac[n - 1] == '0')
			frac[--n] = 0;
	}
	return snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d%s +0000 UTC", tm.tm_year + 1900,
	                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

char *rs_err_just_deleted(const char *ns, const char *name, kube_time_t ts)
{
	char tb[64], *s;
	rs_go_time_string(ts, tb, sizeof tb);
	if (asprintf(&s, "%s/%s has just been deleted at %s", ns ? ns : "", name ? name : "", tb) <
	    0)
		return NULL;
	return s;
}

char *rs_err_cant_adopt(const char *ns, const char *name, const char *uid, const char *err)
{
	char *s;
	if (asprintf(&s, "can't adopt Pod %s/%s (%s): %s", ns ? ns : "", name ? name : "",
	             uid ? uid : "", err ? err : "") < 0)
		return NULL;
	return s;
}

char *rs_aggregate_errors(const char *const *msgs, size_t n)
{
	if (n == 0)
		return strdup("");
	if (n == 1)
		return strdup(msgs[0]);
	size_t cap = 3;
	for (size_t i = 0; i < n; i++)
		cap += strlen(msgs[i]) + 2;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	size_t len = 0, seen = 0;
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j++)
			dup = strcmp(msgs[j], msgs[i]) == 0;
		if (dup)
			continue;
		if (seen++)
			len += (size_t)snprintf(out + len, cap - len, ", ");
		len += (size_t)snprintf(out + len, cap - len, "%s", msgs[i]);
	}
	if (seen == 1)
		return out;
	char *w = malloc(len + 3);
	if (!w) {
		free(out);
		return NULL;
	}
	snprintf(w, len + 3, "[%s]", out);
	free(out);
	return w;
}
