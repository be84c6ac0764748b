/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/kcmctl.c: `kcmctl`, the operator's read-only window on a running kcmd.
 *
 *   kcmctl [--pid PID] cache stats                      arena totals and every resource type
 *   kcmctl [--pid PID] cache list RES [-n NS] [--owner UID]
 *                                                       objects of a type (RES: plural[.group])
 *   kcmctl [--pid PID] cache get RES [NS/]NAME | --uid UID
 *                                                       one object: metadata, labels, owners
 *   kcmctl [--pid PID] queues                           every work queue's counters
 *   kcmctl [--pid PID] parked                           the parked keys of every queue
 *   kcmctl [--pid PID] status                           leader, processes (pid, restarts, uptime),
 *                                                       queue depths, cache counts
 *   kcmctl [--pid PID] top [--once] [-o json]           a live view (manager/top.c)
 *
 * How it finds things: the kcmd manager process (the only process named "kcmd", or --pid) holds
 * the arena and the queues as memfds; /proc/<pid>/fd/<n> opens them (same user or root: the
 * memfds are reachable only by kcmd's own user). Everything is mapped read-only; kcmctl never
 * writes shared memory and never blocks kcmd.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <time.h>

#include "ipc/queue.h"
#include "lib/log.h"
#include "manager/kcmctl.h"
#include "manager/scaffold.h"
#include "manager/status.h"
#include "shm/arena.h"

#define S kcmctl_safe

/* kcmctl.h */
const char *kcmctl_safe(const char *s)
{
	static char buf[8][1024];
	static unsigned k;
	char *b = buf[k++ % 8];
	return kclog_safe(b, sizeof(buf[0]), s);
}

static int usage(void)
{
	fprintf(stderr, "usage: kcmctl [--pid PID] cache stats\n"
	                "       kcmctl [--pid PID] cache list RESOURCE[.GROUP] [-n NAMESPACE] "
	                "[--owner UID]\n"
	                "       kcmctl [--pid PID] cache get RESOURCE[.GROUP] [NAMESPACE/]NAME | "
	                "--uid UID\n"
	                "       kcmctl [--pid PID] queues\n"
	                "       kcmctl [--pid PID] parked\n"
	                "       kcmctl [--pid PID] status\n"
	                "       kcmctl [--pid PID] top [--once] [-o json] [--interval SECONDS]\n"
	                "       kcmctl new-controller NAME [DIR]   (an out-of-tree controller "
	                "project)\n");
	return 2;
}

static pid_t find_kcmd(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char path[300], comm[64] = "";
		FILE *f;
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		if (fgets(comm, sizeof(comm), f) && strcmp(comm, "kcmd\n") == 0) {
			found = (pid_t)strtol(e->d_name, NULL, 10);
			n++;
		}
		fclose(f);
	}
	closedir(d);
	if (n > 1)
		return -EEXIST;
	return n ? found : -ESRCH;
}

int kcmctl_each_memfd(pid_t pid, const char *prefix,
                      int (*fn)(const char *path, const char *name, void *ud), void *ud)
{
	char dir[64], link[512], path[600];
	DIR *d;
	struct dirent *e;
	int found = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	if (!(d = opendir(dir)))
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		/* "/memfd:kcmd-arena (deleted)" */
		const char *name = strncmp(link, "/memfd:", 7) == 0 ? link + 7 : NULL;
		if (!name || strncmp(name, prefix, strlen(prefix)) != 0)
			continue;
		char *sp = strstr(link, " (deleted)");
		if (sp)
			*sp = 0;
		found++;
		int r = fn(path, name, ud);
		if (r < 0) {
			closedir(d);
			return r;
		}
	}
	closedir(d);
	return found;
}

int kcmctl_open_arena_cb(const char *path, const char *name, void *ud)
{
	struct shm_arena **a = ud;
	int fd, r;

	(void)name;
	if (*a)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = shm_reader_open(fd, a);
	close(fd); /* the mapping stays */
	return r;
}

static int split_resource(const char *arg, char *res, size_t rn, char *group, size_t gn)
{
	const char *dot = strchr(arg, '.');

	if (dot) {
		snprintf(res, rn, "%.*s", (int)(dot - arg), arg);
		snprintf(group, gn, "%s", dot + 1);
	} else {
		snprintf(res, rn, "%s", arg);
		group[0] = 0;
	}
	return res[0] ? 0 : -EINVAL;
}

static int find_type(struct shm_arena *a, const char *arg)
{
	char res[64], group[128];
	struct shm_stats st;

	if (split_resource(arg, res, sizeof(res), group, sizeof(group)) < 0 ||
	    shm_reader_stats(a, &st) < 0)
		return -EINVAL;
	for (uint64_t t = 0; t < st.n_types; t++) {
		struct shm_type_info ti;
		if (shm_reader_type_info(a, (uint16_t)t, &ti) == 0 &&
		    strcmp(ti.resource, res) == 0 && strcmp(ti.group, group) == 0)
			return (int)t;
	}
	return -ENOENT;
}

static int print_row(const struct shm_obj *o, void *ud)
{
	(void)ud;
	const struct shm_owner_ref *c = shm_obj_controller(o);
	printf("%-20s %-50s %-36s %-10s %s\n", o->ns && o->ns[0] ? S(o->ns) : "-", S(o->name),
	       S(o->uid), S(o->rv), c ? S(c->name) : "-");
	return 0;
}

static int print_obj(const struct shm_obj *o)
{
	printf("namespace:       %s\nname:            %s\nuid:             %s\nresourceVersion: "
	       "%s\n",
	       o->ns && o->ns[0] ? S(o->ns) : "-", S(o->name), S(o->uid), S(o->rv));
	printf("labels:\n");
	for (size_t i = 0; i < o->n_labels; i++)
		printf("  %s: %s\n", S(o->labels[i].key), S(o->labels[i].value));
	printf("ownerReferences:\n");
	for (size_t i = 0; i < o->n_owners; i++) {
		const struct shm_owner_ref *w = &o->owners[i];
		printf("  - %s %s %s uid=%s controller=%s blockOwnerDeletion=%s\n",
		       S(w->api_version), S(w->kind), S(w->name), S(w->uid),
		       w->controller < 0 ? "unset"
		       : w->controller   ? "true"
		                         : "false",
		       w->block_owner_deletion < 0 ? "unset"
		       : w->block_owner_deletion   ? "true"
		                                   : "false");
	}
	printf("record:          %zu payload bytes\n", o->payload_len);
	return 0;
}

static int cmd_cache(struct shm_arena *a, int argc, char **argv)
{
	if (argc < 1)
		return usage();
	if (strcmp(argv[0], "stats") == 0) {
		struct shm_stats st;
		if (shm_reader_stats(a, &st) < 0)
			return 1;
		printf("objects %llu, types %llu, arena %llu bytes (max %llu), live %llu, "
		       "quarantine %llu, free %llu, "
		       "writer incarnation %llu, recoveries %llu\n",
		       (unsigned long long)st.objects, (unsigned long long)st.n_types,
		       (unsigned long long)st.size, (unsigned long long)st.max_size,
		       (unsigned long long)st.live_bytes, (unsigned long long)st.quarantine_bytes,
		       (unsigned long long)st.free_bytes, (unsigned long long)st.incarnation,
		       (unsigned long long)st.recoveries);
		printf("%-40s %-8s %-12s %s\n", "RESOURCE", "SYNCED", "RV", "COUNT");
		for (uint64_t t = 0; t < st.n_types; t++) {
			struct shm_type_info ti;
			char name[200];
			if (shm_reader_type_info(a, (uint16_t)t, &ti) < 0)
				continue;
			snprintf(name, sizeof(name), "%s%s%s", ti.resource, ti.group[0] ? "." : "",
			         ti.group);
			printf("%-40s %-8s %-12s %llu\n", S(name), ti.synced ? "yes" : "no",
			       ti.rv[0] ? S(ti.rv) : "-", (unsigned long long)ti.count);
		}
		return 0;
	}
	if (strcmp(argv[0], "list") == 0) {
		const char *ns = NULL, *owner = NULL;
		if (argc < 2)
			return usage();
		for (int i = 2; i < argc; i++) {
			if ((strcmp(argv[i], "-n") == 0 || strcmp(argv[i], "--namespace") == 0) &&
			    i + 1 < argc)
				ns = argv[++i];
			else if (strcmp(argv[i], "--owner") == 0 && i + 1 < argc)
				owner = argv[++i];
			else
				return usage();
		}
		int t = find_type(a, argv[1]);
		if (t < 0) {
			fprintf(stderr,
			        "kcmctl: no resource %s in the cache (see kcmctl cache stats)\n",
			        argv[1]);
			return 1;
		}
		printf("%-20s %-50s %-36s %-10s %s\n", "NAMESPACE", "NAME", "UID", "RV",
		       "CONTROLLER");
		int r = owner ? shm_reader_list_controlled(a, (uint16_t)t, owner, NULL, print_row,
		                                           NULL)
		        : ns  ? shm_reader_list_ns(a, (uint16_t)t, ns, print_row, NULL)
		              : shm_reader_list(a, (uint16_t)t, print_row, NULL);
		return r < 0 ? 1 : 0;
	}
	if (strcmp(argv[0], "get") == 0) {
		struct shm_obj o = SHM_OBJ_INIT;
		int r;
		if (argc == 3 && strcmp(argv[1], "--uid") == 0) {
			r = shm_reader_get_uid(a, argv[2], &o);
		} else if (argc == 3) {
			int t = find_type(a, argv[1]);
			char ns[254] = "";
			const char *name = argv[2], *slash = strchr(argv[2], '/');
			if (t < 0) {
				fprintf(stderr, "kcmctl: no resource %s in the cache\n", argv[1]);
				return 1;
			}
			if (slash) {
				snprintf(ns, sizeof(ns), "%.*s", (int)(slash - argv[2]), argv[2]);
				name = slash + 1;
			}
			r = shm_reader_get(a, (uint16_t)t, ns, name, &o);
		} else {
			return usage();
		}
		if (r < 0) {
			fprintf(stderr, "kcmctl: %s\n",
			        r == -ENOENT ? "not in the cache" : strerror(-r));
			return 1;
		}
		print_obj(&o);
		shm_obj_release(&o);
		return 0;
	}
	return usage();
}

static int print_queue_cb(const char *path, const char *name, void *ud)
{
	struct ipc_queue_metrics m;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	(void)name;
	(void)ud;
	if (fd < 0)
		return 0;
	r = ipc_queue_metrics_read(fd, &m);
	close(fd);
	if (r < 0)
		return 0;
	printf("%-24s %8llu %10llu %8llu %8llu %12llu %10.3f %10.3f\n", m.name,
	       (unsigned long long)m.depth, (unsigned long long)m.adds_total,
	       (unsigned long long)m.retries_total, (unsigned long long)m.parked,
	       (unsigned long long)m.worker_deaths_total, m.unfinished_work_seconds,
	       m.longest_running_processor_seconds);
	return 0;
}

/* The parked keys each queue's owner lists (ipc_queue_parked_read): QUEUE KEY CRASHES PARKS
 * RETRY-IN; a queue with more parked than listed says how many are not shown. */
static int print_parked_cb(const char *path, const char *name, void *ud)
{
	struct ipc_queue_metrics m;
	struct ipc_queue_parked_key pk[IPC_QUEUE_PARKED_SHOWN];
	int fd = open(path, O_RDONLY | O_CLOEXEC), r, n;
	uint64_t now = ipc_now_usec();

	(void)name;
	(void)ud;
	if (fd < 0)
		return 0;
	r = ipc_queue_metrics_read(fd, &m);
	n = r < 0 ? r : ipc_queue_parked_read(fd, pk, IPC_QUEUE_PARKED_SHOWN);
	close(fd);
	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++)
		printf("%-24s %-48s %7u %5u %8.0fs\n", m.name, pk[i].key, pk[i].crashes,
		       pk[i].parks,
		       pk[i].unpark_at_usec > now ? (double)(pk[i].unpark_at_usec - now) / 1e6
		                                  : 0.0);
	if (m.parked > (uint64_t)n)
		printf("%-24s (%llu more parked, not listed: see the dispatcher's log)\n", m.name,
		       (unsigned long long)(m.parked - (uint64_t)n));
	return 0;
}

/* ---- status ------------------------------------------------------------------------------ */

void kcmctl_fmt_age(char *buf, size_t n, int64_t usec)
{
	int64_t s = usec / 1000000;

	if (usec <= 0)
		snprintf(buf, n, "-");
	else if (s < 60)
		snprintf(buf, n, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, n, "%lldm%llds", (long long)(s / 60), (long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, n, "%lldh%lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else
		snprintf(buf, n, "%lldd%lldh", (long long)(s / 86400),
		         (long long)(s % 86400 / 3600));
}

static int read_status_cb(const char *path, const char *name, void *ud)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	(void)name;
	if (fd < 0)
		return -errno;
	r = mgr_status_read(fd, ud);
	close(fd);
	return r; /* 0; a second status memfd (none today) would overwrite the first */
}

static int print_depth_cb(const char *path, const char *name, void *ud)
{
	struct ipc_queue_metrics m;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	(void)name;
	(void)ud;
	if (fd < 0)
		return 0;
	r = ipc_queue_metrics_read(fd, &m);
	close(fd);
	if (r == 0)
		printf("  %-28s depth %-8llu parked %-6llu adds %-10llu longest running %.3fs\n",
		       m.name, (unsigned long long)m.depth, (unsigned long long)m.parked,
		       (unsigned long long)m.adds_total, m.longest_running_processor_seconds);
	return 0;
}

static int cmd_status(pid_t pid)
{
	static struct mgr_status st;
	struct timespec ts;
	int64_t now;
	char age[32];
	int r = kcmctl_each_memfd(pid, "kcmd-status", read_status_cb, &st);

	if (r <= 0) {
		fprintf(stderr, "kcmctl: kcmd (pid %d) publishes no status%s%s (an older kcmd?)\n",
		        (int)pid, r < 0 ? ": " : "", r < 0 ? strerror(-r) : "");
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	kcmctl_fmt_age(age, sizeof(age), now - st.manager_started_unix_usec);
	printf("manager:   pid %d, up %s, %s%s\n", (int)st.manager_pid, age,
	       st.stopping  ? "stopping"
	       : st.leading ? "leading"
	                    : "standby",
	       st.ready ? ", ready" : ", not ready (caches syncing)");
	printf("identity:  %s\n", S(st.identity));
	if (st.leader_elect && st.shard_ranges) {
		printf("member:    %s (Lease %s)%s\n",
		       st.holder[0] ? S(st.holder) : "<none observed>", S(st.lease),
		       st.leading ? " — active" : " — not held: no range, no worker");
	} else if (st.leader_elect) {
		printf("leader:    %s (Lease %s)%s\n",
		       st.holder[0] ? S(st.holder) : "<none observed>", S(st.lease),
		       st.leading ? " — this manager" : "");
		printf("term:      %lld (the Lease's leaseTransitions)\n",
		       (long long)st.lease_transitions);
	} else {
		printf("leader:    leader election off (--leader-elect=false): this manager "
		       "reconciles\n");
	}
	if (st.shard_ranges) {
		uint32_t owned = 0;
		char line[1200];
		size_t l = 0;
		line[0] = 0;
		for (uint32_t i = 0; i < st.shard_ranges && i < MGR_STATUS_MAX_RANGES; i++)
			if (st.range_owned[i]) {
				owned++;
				if (l < sizeof(line))
					l += (size_t)snprintf(line + l, sizeof(line) - l, "%s%u",
					                      l ? "," : "", i);
			}
		printf("sharding:  %u ranges (--shard-ranges), this manager owns %u: %s\n",
		       st.shard_ranges, owned, owned ? line : "none");
		printf("members:   %u live\n", st.n_members);
		for (uint32_t k = 0; k < st.n_members && k < MGR_STATUS_MAX_MEMBERS; k++) {
			uint32_t held = 0;
			for (uint32_t i = 0; i < st.shard_ranges && i < MGR_STATUS_MAX_RANGES; i++)
				held += st.range_holder[i] == (int16_t)k;
			printf("  %-60s %u range Lease%s%s\n", S(st.members[k]), held,
			       held == 1 ? "" : "s",
			       !strcmp(st.members[k], st.identity) ? " — this manager" : "");
		}
		printf("ranges:    RANGE HOLDER (the range Lease's holderIdentity as last "
		       "listed)\n");
		for (uint32_t i = 0; i < st.shard_ranges && i < MGR_STATUS_MAX_RANGES; i++) {
			int h = st.range_holder[i];
			printf("  %-5u %s%s\n", i,
			       h >= 0 && h < (int)MGR_STATUS_MAX_MEMBERS ? S(st.members[h])
			       : h == -2                                 ? "<not a live member>"
			                                                 : "<none>",
			       st.range_owned[i] ? " (owned here)" : "");
		}
	}
	printf("\n%-44s %-10s %-8s %-8s %-9s %-8s %s\n", "PROCESS", "GROUP", "STATE", "PID",
	       "RESTARTS", "UPTIME", "LAST-EXIT");
	for (uint32_t i = 0; i < st.n_children; i++) {
		const struct mgr_status_child *c = &st.children[i];
		static const char *const states[] = {"stopped", "running", "backoff"};
		char pidbuf[16], last[48];
		kcmctl_fmt_age(age, sizeof(age), c->state == 1 ? now - c->started_unix_usec : 0);
		snprintf(pidbuf, sizeof(pidbuf), c->pid > 0 ? "%d" : "-", (int)c->pid);
		if (c->last_code == 1) /* CLD_EXITED */
			snprintf(last, sizeof(last), "exit %d", (int)c->last_status);
		else if (c->last_code)
			snprintf(last, sizeof(last), "signal %d", (int)c->last_status);
		else
			snprintf(last, sizeof(last), "-");
		printf("%-44s %-10s %-8s %-8s %-9llu %-8s %s%s\n", c->name, c->group,
		       c->state >= 0 && c->state <= 2 ? states[c->state] : "?", pidbuf,
		       (unsigned long long)c->restarts, age, last,
		       c->crash_looping ? " CRASH-LOOPING" : "");
	}
	printf("\nqueues:\n");
	r = kcmctl_each_memfd(pid, "kcmd-queue-", print_depth_cb, NULL);
	if (r == 0)
		printf("  (none: no controller enabled)\n");
	printf("\ncache:\n");
	struct shm_arena *a = NULL;
	if (kcmctl_each_memfd(pid, "kcmd-arena", kcmctl_open_arena_cb, &a) > 0 && a) {
		struct shm_stats sst;
		if (shm_reader_stats(a, &sst) == 0) {
			printf("  %llu objects, %llu live bytes\n", (unsigned long long)sst.objects,
			       (unsigned long long)sst.live_bytes);
			for (uint64_t t = 0; t < sst.n_types; t++) {
				struct shm_type_info ti;
				char tname[200];
				if (shm_reader_type_info(a, (uint16_t)t, &ti) < 0)
					continue;
				snprintf(tname, sizeof(tname), "%s%s%s", ti.resource,
				         ti.group[0] ? "." : "", ti.group);
				printf("  %-40s %-10llu %s\n", S(tname),
				       (unsigned long long)ti.count,
				       ti.synced ? "synced" : "not synced");
			}
		}
		shm_arena_close(a);
	} else {
		printf("  (no arena: no controller enabled)\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pid = 0;
	int i = 1;

	if (argc >= 3 && argc <= 4 && strcmp(argv[1], "new-controller") == 0) {
		char err[512];
		if (mgr_scaffold_controller(argv[2], argc == 4 ? argv[3] : NULL, err, sizeof(err)) <
		    0) {
			fprintf(stderr, "kcmctl new-controller: %s\n", err);
			return 1;
		}
		return 0;
	}
	if (i + 1 < argc && strcmp(argv[i], "--pid") == 0) {
		pid = (pid_t)strtol(argv[i + 1], NULL, 10);
		i += 2;
	}
	if (i >= argc || (strcmp(argv[i], "cache") != 0 && strcmp(argv[i], "queues") != 0 &&
	                  strcmp(argv[i], "parked") != 0 && strcmp(argv[i], "status") != 0 &&
	                  strcmp(argv[i], "top") != 0))
		return usage();
	if (!pid) {
		pid = find_kcmd();
		if (pid == -EEXIST) {
			fprintf(stderr,
			        "kcmctl: several kcmd processes run; choose one with --pid\n");
			return 1;
		}
		if (pid < 0) {
			fprintf(stderr, "kcmctl: no running kcmd found (is it running as another "
			                "user? try as root)\n");
			return 1;
		}
	}
	if (strcmp(argv[i], "cache") == 0) {
		struct shm_arena *a = NULL;
		int r = kcmctl_each_memfd(pid, "kcmd-arena", kcmctl_open_arena_cb, &a);
		if (r <= 0 || !a) {
			fprintf(stderr, "kcmctl: kcmd (pid %d) holds no readable arena%s%s\n",
			        (int)pid, r < 0 ? ": " : "", r < 0 ? strerror(-r) : "");
			return 1;
		}
		int rc = cmd_cache(a, argc - i - 1, argv + i + 1);
		shm_arena_close(a);
		return rc;
	}
	if (strcmp(argv[i], "status") == 0)
		return argc > i + 1 ? usage() : cmd_status(pid);
	if (strcmp(argv[i], "top") == 0)
		return kcmctl_top(pid, argc - i - 1, argv + i + 1);
	if (strcmp(argv[i], "parked") == 0) {
		if (argc > i + 1)
			return usage();
		printf("%-24s %-48s %7s %5s %9s\n", "QUEUE", "KEY", "CRASHES", "PARKS", "RETRY-IN");
		int r = kcmctl_each_memfd(pid, "kcmd-queue-", print_parked_cb, NULL);
		if (r < 0) {
			fprintf(stderr, "kcmctl: reading kcmd's (pid %d) queues: %s\n", (int)pid,
			        strerror(-r));
			return 1;
		}
		return 0;
	}
	if (strcmp(argv[i], "queues") == 0) {
		printf("%-24s %8s %10s %8s %8s %12s %10s %10s\n", "QUEUE", "DEPTH", "ADDS",
		       "RETRIES", "PARKED", "WORKER-DEATHS", "UNFINISHED", "LONGEST");
		int r = kcmctl_each_memfd(pid, "kcmd-queue-", print_queue_cb, NULL);
		if (r < 0) {
			fprintf(stderr, "kcmctl: reading kcmd's (pid %d) queues: %s\n", (int)pid,
			        strerror(-r));
			return 1;
		}
		return 0;
	}
	return usage();
}
