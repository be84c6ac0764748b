#!/usr/bin/env bash
# tests/packaging/notify-e2e.sh ROOT: runs the kcmd installed under ROOT (by test-deb.sh) against
# the real test cluster (tests/cluster), the way kcmd.service would as far as that is possible
# without systemd as PID 1:
#   - as an unprivileged user (nobody) with no_new_privs, an empty capability bounding set and no
#     inheritable capabilities (setpriv), reading a mode-0600 kubeconfig it owns;
#   - with NOTIFY_SOCKET pointing at a datagram socket this script listens on, and
#     WATCHDOG_USEC/WATCHDOG_PID set as systemd sets them for Type=notify + WatchdogSec=.
# Checks READY=1, STATUS=, WATCHDOG=1 pings, /readyz over HTTPS, one ReplicaSet reconciled (its
# pods created), and on SIGTERM: STOPPING=1, exit 0, the Lease released, no child left.
# Then a second run under strace -f -c: every system call made must pass the unit's
# SystemCallFilter= (filter-allows.py). The unit's sandbox itself (namespaces, the seccomp filter,
# ProtectSystem, ...) is NOT applied here: that needs systemd as PID 1.
# Exit 0 pass, 1 fail, 77 skip.
set -uo pipefail
root=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

command -v setpriv >/dev/null && command -v python3 >/dev/null && command -v curl >/dev/null ||
	{ echo "SKIP: setpriv, python3 or curl missing"; exit 77; }

work=$(mktemp -d /tmp/kcmd-pkge2e.XXXXXX)
chmod 0755 "$work"
cdir=$work/cluster
lpid= kpid=
cleanup() {
	[ -n "$kpid" ] && kill -KILL "$kpid" 2>/dev/null
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null
	KCMD_CLUSTER_DIR=$cdir "$top/tests/cluster/cluster" down >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

if ! "$top/tests/cluster/cluster" up --dir "$cdir" >"$work/cluster.log" 2>&1; then
	tail -20 "$work/cluster.log"; echo "FAIL cluster up"; exit 1
fi
eval "$(KCMD_CLUSTER_DIR=$cdir "$top/tests/cluster/cluster" env)"
ok "test cluster up: $KCMD_TEST_SERVER"
api() { curl -sS --cacert "$KCMD_TEST_CA" -H "Authorization: Bearer $KCMD_TEST_TOKEN" "$@"; }

# A kubeconfig with everything embedded, owned by the service user, mode 0600.
uid=65534 gid=65534
install -d -m 0750 -o root -g "$gid" "$work/etc-kcmd"
cat >"$work/etc-kcmd/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$KCMD_TEST_SERVER", certificate-authority-data: "$(base64 -w0 "$KCMD_TEST_CA")"}}]
users: [{name: u, user: {token: "$KCMD_TEST_TOKEN"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
KC
chown "$uid:$gid" "$work/etc-kcmd/kubeconfig"; chmod 0600 "$work/etc-kcmd/kubeconfig"

# The sd_notify listener: one line per datagram, prefixed with the sender's time.
sock=$work/notify.sock
python3 - "$sock" "$work/notify.log" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777)
with open(sys.argv[2], "a", buffering=1) as f:
    while True:
        d = s.recv(4096).decode(errors="replace")
        for line in d.splitlines():
            f.write("%.3f %s\n" % (time.monotonic(), line))
PY
lpid=$!
for _ in $(seq 1 50); do [ -S "$sock" ] && break; sleep 0.1; done

port=$((20000 + RANDOM % 20000))
setpriv --reuid=$uid --regid=$gid --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all \
	env -i PATH=/usr/bin:/bin NOTIFY_SOCKET="$sock" WATCHDOG_USEC=2000000 \
	sh -c 'WATCHDOG_PID=$$; export WATCHDOG_PID; exec "$0" "$@"' "$root/usr/bin/kcmd" \
	--kubeconfig="$work/etc-kcmd/kubeconfig" --secure-port=$port --bind-address=127.0.0.1 \
	--concurrent-replicaset-syncs=2 >"$work/kcmd.log" 2>&1 &
kpid=$!

waitfor() { # waitfor SECONDS CMD...: polls CMD every 0.2 s
	local n=$(($1 * 5)); shift
	for _ in $(seq 1 $n); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
	return 1
}
if waitfor 60 grep -q ' READY=1$' "$work/notify.log"; then ok "READY=1 received"; else bad "no READY=1 within 60 s"; fi
grep -q ' STATUS=' "$work/notify.log" && ok "STATUS= received: $(grep ' STATUS=' "$work/notify.log" | tail -1 | cut -d' ' -f2-)" ||
	bad "no STATUS="
if waitfor 10 sh -c "test \$(grep -c ' WATCHDOG=1\$' '$work/notify.log') -ge 3"; then
	ok "WATCHDOG=1 pings ($(grep -c ' WATCHDOG=1$' "$work/notify.log") so far, WATCHDOG_USEC=2s)"
else bad "fewer than 3 WATCHDOG=1 pings"; fi
if waitfor 10 sh -c "curl -ks https://127.0.0.1:$port/readyz | grep -qx ok"; then ok "/readyz: ok"; else
	bad "/readyz not ok: $(curl -ks "https://127.0.0.1:$port/readyz?verbose")"; fi
procs=$(ps -o user= -p "$kpid" $(pgrep -P "$kpid") 2>/dev/null | sort -u | tr '\n' ' ')
[ "$procs" = "nobody " ] && ok "manager and children run as nobody" || bad "process users: $procs"
[ "$(awk '/^CapBnd/ {print $2}' /proc/$kpid/status)" = 0000000000000000 ] && ok "empty capability bounding set" ||
	bad "CapBnd $(awk '/^CapBnd/ {print $2}' /proc/$kpid/status)"

# One ReplicaSet: kcmd must create its pods (no scheduler or kubelet here: they stay Pending).
ns=default
api -X POST -H 'Content-Type: application/json' "$KCMD_TEST_SERVER/apis/apps/v1/namespaces/$ns/replicasets" -d '{
  "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "pkgtest"},
  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "pkgtest"}},
    "template": {"metadata": {"labels": {"app": "pkgtest"}},
      "spec": {"containers": [{"name": "c", "image": "registry.invalid/none:1"}]}}}}' >/dev/null
npods() { api "$KCMD_TEST_SERVER/api/v1/namespaces/$ns/pods?labelSelector=app%3Dpkgtest" |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))'; }
if waitfor 30 sh -c "test \"\$($(declare -f api npods); npods)\" = 3"; then
	ok "ReplicaSet reconciled: 3 pods created by the packaged kcmd"
else bad "ReplicaSet not reconciled: $(npods) pods"; fi
holder=$(api "$KCMD_TEST_SERVER/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kcmd" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"].get("holderIdentity",""))')
[ -n "$holder" ] && ok "Lease kube-system/kcmd held by $holder" || bad "Lease not held"

kids=$(pgrep -P "$kpid")
kill -TERM "$kpid"
rc=0; wait "$kpid" || rc=$?; kpid=
[ "$rc" = 0 ] && ok "SIGTERM: exit 0" || bad "SIGTERM: exit $rc"
grep -q ' STOPPING=1$' "$work/notify.log" && ok "STOPPING=1 received" || bad "no STOPPING=1"
left=$(for k in $kids; do [ -d /proc/$k ] && echo $k; done)
[ -z "$left" ] && ok "no child left" || bad "children left: $left"
holder=$(api "$KCMD_TEST_SERVER/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kcmd" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"].get("holderIdentity",""))')
[ -z "$holder" ] && ok "Lease released (empty holder)" || bad "Lease still held by $holder"

# Second run under strace: every system call kcmd and its children make while starting, syncing,
# reconciling a scale-up, serving /readyz, /metrics and the GC graph and stopping must pass the unit's
# SystemCallFilter= (as systemd computes it: tests/packaging/filter-allows.py).
if command -v strace >/dev/null 2>&1; then
	port2=$((port + 1))
	install -d -m 0700 -o "$uid" -g "$gid" "$work/strace" # strace runs as the service user
	setpriv --reuid=$uid --regid=$gid --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all \
		env -i PATH=/usr/bin:/bin NOTIFY_SOCKET="$sock" \
		strace -f -qq -c -o "$work/strace/summary.txt" -- "$root/usr/bin/kcmd" \
		--kubeconfig="$work/etc-kcmd/kubeconfig" --secure-port=$port2 --bind-address=127.0.0.1 \
		--authorization-always-allow-paths=/readyz,/metrics,/debug/* \
		--concurrent-replicaset-syncs=2 >"$work/kcmd2.log" 2>&1 &
	spid=$!
	if waitfor 90 sh -c "test \$(grep -c ' READY=1\$' '$work/notify.log') -ge 2"; then
		api -X PATCH -H 'Content-Type: application/merge-patch+json' \
			"$KCMD_TEST_SERVER/apis/apps/v1/namespaces/$ns/replicasets/pkgtest" -d '{"spec":{"replicas":5}}' >/dev/null
		waitfor 30 sh -c "test \"\$($(declare -f api npods); npods)\" = 5" && ok "strace run: scaled to 5 pods" ||
			bad "strace run: scale-up not reconciled ($(npods) pods)"
		curl -ks "https://127.0.0.1:$port2/readyz" >/dev/null; curl -ks "https://127.0.0.1:$port2/metrics" >/dev/null
		# the GC graph renders on the httpd's render thread
		curl -ks "https://127.0.0.1:$port2/debug/controllers/garbage-collector-controller/graph" >/dev/null
	else
		bad "strace run: no READY=1"; tail -5 "$work/kcmd2.log"
	fi
	kill -TERM "$(pgrep -P "$spid" | head -1)" 2>/dev/null
	wait "$spid"
	calls=$(awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { print $NF }' "$work/strace/summary.txt" | sort -u)
	n=$(echo "$calls" | grep -c .)
	if [ "$n" -gt 20 ] && refused=$(python3 "$top/tests/packaging/filter-allows.py" \
		"$root/lib/systemd/system/kcmd.service" $calls); then
		ok "all $n distinct system calls kcmd made pass the unit's SystemCallFilter ($(echo $calls | grep -ow 'io_uring_[a-z]*\|futex[a-z_]*\|memfd_create\|pidfd_open' | tr '\n' ' '))"
	else
		bad "system calls the unit's filter would refuse (EPERM): ${refused:-none parsed ($n)}"
	fi
else
	echo "strace not installed: the syscall-filter check against a real run is skipped"
fi

if [ "$fails" -gt 0 ]; then
	echo "--- kcmd log (tail)"; tail -30 "$work/kcmd.log"; echo "--- notify log"; tail -10 "$work/notify.log"
	exit 1
fi
exit 0
