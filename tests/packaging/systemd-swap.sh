#!/usr/bin/env bash
# tests/packaging/systemd-swap.sh DEB: docs/operations.md's "systemd-managed kcm and the kcmd
# package" swap, done for real under systemd as PID 1, and back again (issue 19).
#
# The build machine has no systemd as PID 1, so this script boots one: a Debian bookworm root
# made by debootstrap (cached read-only under ~/.cache/kcmd-sysroot; an overlay takes every write
# of a run), with the kcmd package installed by dpkg inside it and upstream kube-controller-manager
# (the test cluster's own build) as a systemd service beside it. systemd runs as PID 1 of new PID,
# mount, UTS and IPC namespaces, chrooted into that root, with its own /run and /tmp (tmpfs),
# /proc/sys and /sys read-only (cgroups stay writable, as systemd-nspawn leaves them), and every
# unit that could touch the host masked (sysctl, udev, modules, time sync, gettys, ...). The network
# namespace is the host's, so the units reach the private test cluster on 127.0.0.1.
#
# The steps are the documented ones, each checked:
#   1. kube-controller-manager.service enabled and started: it takes the Lease
#      kube-system/kube-controller-manager and reconciles a ReplicaSet;
#   2. the swap: kcm's flags copied into KCMD_ARGS in /etc/default/kcmd with
#      --leader-elect-resource-name=kube-controller-manager, the kubeconfig (root's, 0600) handed
#      over with a LoadCredential= drop-in, `systemctl disable --now kube-controller-manager &&
#      systemctl enable --now kcmd`. kcmd must reach READY=1 (Type=notify: `systemctl start`
#      returns only then) inside the unit's full sandbox (seccomp filter, ProtectSystem=strict,
#      namespaces, no capabilities), take the same Lease, reconcile a scale-up, and log no
#      refused system call;
#   3. back: `systemctl disable --now kcmd && systemctl enable --now kube-controller-manager`:
#      kcmd stops cleanly (Result=success), kcm takes the Lease within seconds (kcmd released it)
#      and reconciles a scale-down.
# Prints `bench: pkg.swap_*` lines (time from `systemctl enable --now` to the new Lease holder).
#
# Needs root (namespaces, mounts, chroot), unshare, nsenter, debootstrap (installed with apt-get
# when missing), curl, and Debian's mirror on the first run (the cached root is reused after).
# Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail
deb=${1:?usage: systemd-swap.sh kcmd_VERSION_ARCH.deb}
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
top=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, mounts, chroot)"; exit 77; }
for t in unshare nsenter chroot curl; do
	command -v "$t" >/dev/null || { echo "SKIP: $t not found"; exit 77; }
done
if ! command -v debootstrap >/dev/null; then
	apt-get install -y debootstrap >/dev/null 2>&1 || { echo "SKIP: debootstrap missing and not installable"; exit 77; }
fi

# ---- the cached root: bookworm minbase + systemd + kcmd's runtime libraries --------------------
pkgs=systemd,systemd-sysv,dbus,libcurl4,libcjson1,liburing2,libsystemd0,libmicrohttpd12,libyaml-0-2,ca-certificates
cache=${KCMD_SYSROOT_CACHE:-$HOME/.cache/kcmd-sysroot}
sysroot=$cache/bookworm-$(echo "$pkgs" | cksum | cut -d' ' -f1)
if [ ! -x "$sysroot/lib/systemd/systemd" ]; then
	echo "== debootstrap bookworm into $sysroot (first run on this machine: about 2 minutes)"
	rm -rf "$sysroot.partial"; mkdir -p "$cache"
	if ! debootstrap --variant=minbase --include="$pkgs" bookworm "$sysroot.partial" \
		"${KCMD_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$cache/debootstrap.log" 2>&1; then
		tail -5 "$cache/debootstrap.log"; echo "SKIP: debootstrap failed (log: $cache/debootstrap.log)"
		rm -rf "$sysroot.partial"; exit 77
	fi
	mv "$sysroot.partial" "$sysroot"
fi
ok "bookworm root with systemd: $sysroot"

kcm_bin=$("$top/tests/cluster/build.sh" 2>/dev/null | tail -1)/kube-controller-manager
[ -x "$kcm_bin" ] || { echo "FAIL upstream kube-controller-manager not built (tests/cluster/build.sh)"; exit 1; }

work=$(mktemp -d /tmp/kcmd-swap.XXXXXX)
cdir=$work/cluster
init=
cleanup() {
	[ -n "$init" ] && kill -KILL "$init" 2>/dev/null # PID 1 of the namespace: its death ends them all
	sleep 0.5
	KCMD_CLUSTER_DIR=$cdir "$top/tests/cluster/cluster" down >/dev/null 2>&1
	umount -l "$work/merged" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

if ! "$top/tests/cluster/cluster" up --dir "$cdir" >"$work/cluster.log" 2>&1; then
	tail -20 "$work/cluster.log"; echo "FAIL cluster up"; exit 1
fi
eval "$(KCMD_CLUSTER_DIR=$cdir "$top/tests/cluster/cluster" env)"
ok "test cluster up: $KCMD_TEST_SERVER"
api() { curl -sS --cacert "$KCMD_TEST_CA" -H "Authorization: Bearer $KCMD_TEST_TOKEN" "$@"; }
jget() { python3 -c 'import json,sys
d=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    d = d.get(k) if isinstance(d, dict) else None
print("" if d is None else d)' "$1"; }

# ---- the boot: an overlay over the cached root, then systemd as PID 1 ---------------------------
mkdir -p "$work/upper" "$work/ovl" "$work/merged"
cp "$deb" "$work/kcmd.deb"
cp "$kcm_bin" "$work/kube-controller-manager"
kcm_port=$((20000 + RANDOM % 20000))
cat >"$work/setup.sh" <<SETUP
#!/bin/sh
# Runs as PID 1 of the new namespaces; ends by exec'ing systemd in the chroot.
set -e
m=$work/merged
mount -t overlay overlay -o lowerdir=$sysroot,upperdir=$work/upper,workdir=$work/ovl \$m
mount -t proc proc \$m/proc
mount --bind \$m/proc/sys \$m/proc/sys && mount -o remount,bind,ro \$m/proc/sys
mount --rbind /sys \$m/sys && mount -o remount,bind,ro \$m/sys
mount --rbind /dev \$m/dev
mount -t tmpfs -o mode=0755 tmpfs \$m/run
mount -t tmpfs -o mode=1777 tmpfs \$m/tmp
hostname kcmd-swap-test
echo kcmd-swap-test > \$m/etc/hostname
# What could touch the host: masked (systemd skips more by itself under container=).
for u in systemd-sysctl.service systemd-modules-load.service systemd-udevd.service \
	systemd-udev-trigger.service systemd-udev-settle.service systemd-timesyncd.service \
	systemd-networkd.service systemd-resolved.service getty@tty1.service console-getty.service \
	serial-getty@.service getty.target systemd-logind.service systemd-binfmt.service \
	proc-sys-fs-binfmt_misc.automount systemd-remount-fs.service systemd-hwdb-update.service \
	systemd-firstboot.service systemd-random-seed.service apt-daily.timer apt-daily-upgrade.timer \
	e2scrub_all.timer fstrim.timer systemd-pstore.service sys-kernel-debug.mount \
	sys-kernel-tracing.mount sys-kernel-config.mount sys-fs-fuse-connections.mount; do
	ln -sf /dev/null \$m/etc/systemd/system/\$u
done
cp $work/kcmd.deb \$m/root/kcmd.deb
install -m 0755 $work/kube-controller-manager \$m/usr/local/bin/kube-controller-manager
chroot \$m dpkg -i /root/kcmd.deb >$work/dpkg.log 2>&1
# kcm's kubeconfig and unit, as a systemd-managed control plane has them.
install -d -m 0755 \$m/etc/kubernetes
cat >\$m/etc/kubernetes/controller-manager.conf <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$KCMD_TEST_SERVER", certificate-authority-data: "$(base64 -w0 "$KCMD_TEST_CA")"}}]
users: [{name: u, user: {token: "$KCMD_TEST_TOKEN"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
KC
chmod 0600 \$m/etc/kubernetes/controller-manager.conf
cat >\$m/etc/default/kube-controller-manager <<EOF
KCM_ARGS="--kubeconfig=/etc/kubernetes/controller-manager.conf --leader-elect=true --bind-address=127.0.0.1 --secure-port=$kcm_port --controllers=*,bootstrapsigner,tokencleaner"
EOF
cat >\$m/etc/systemd/system/kube-controller-manager.service <<EOF
[Unit]
Description=upstream kube-controller-manager (the test cluster's build)
[Service]
EnvironmentFile=/etc/default/kube-controller-manager
ExecStart=/usr/local/bin/kube-controller-manager \\\$KCM_ARGS
Restart=on-failure
[Install]
WantedBy=multi-user.target
EOF
# pivot_root, not chroot: the kernel refuses a new user namespace (PrivateUsers=) to a chrooted
# process.
cd \$m && mkdir -p .oldroot && pivot_root . .oldroot && umount -l /.oldroot && rmdir /.oldroot
export container=kcmd-swap-test
exec /lib/systemd/systemd --system --unit=multi-user.target
SETUP
chmod +x "$work/setup.sh"
unshare --pid --fork --mount --uts --ipc --propagation private "$work/setup.sh" >"$work/boot.log" 2>&1 &
upid=$!
for _ in $(seq 1 100); do
	init=$(pgrep -P "$upid" 2>/dev/null | head -1)
	[ -n "$init" ] && [ "$(readlink "/proc/$init/exe" 2>/dev/null)" != /usr/bin/dash ] &&
		[ "$(cat "/proc/$init/comm" 2>/dev/null)" = systemd ] && break
	sleep 0.2
done
[ "$(cat "/proc/$init/comm" 2>/dev/null)" = systemd ] ||
	{ cat "$work/boot.log" "$work/dpkg.log" 2>/dev/null | tail -20; echo "FAIL systemd did not start as PID 1"; exit 1; }
ins() { timeout 120 nsenter -t "$init" -m -u -i -p -r -w -- "$@"; }
for _ in $(seq 1 150); do
	st=$(ins systemctl is-system-running 2>/dev/null)
	case $st in running | degraded) break ;; esac
	sleep 0.2
done
ok "systemd is PID 1 of the test root ($st)"
[ "$st" = degraded ] && ins systemctl --failed --no-legend --no-pager | sed 's/^/     failed at boot: /'
if ins dpkg -s kcmd >/dev/null 2>&1; then ok "kcmd package installed by dpkg ($(ins dpkg-query -W -f '${Version}' kcmd))"; else bad "dpkg -i kcmd"; tail -20 "$work/dpkg.log"; exit 1; fi
if [ -n "${KCMD_SWAP_HOLD:-}" ]; then # debugging: keep the booted root up until the file is removed
	echo "holding: init pid $init; nsenter -t $init -m -u -i -p -r -w -- CMD; rm $KCMD_SWAP_HOLD to end"
	touch "$KCMD_SWAP_HOLD"; while [ -e "$KCMD_SWAP_HOLD" ]; do sleep 1; done
fi
check_inactive() { [ "$(ins systemctl is-enabled kcmd 2>/dev/null)" != enabled ] && ! ins systemctl is-active -q kcmd; }
if check_inactive; then ok "kcmd.service installed disabled and not running"; else bad "kcmd.service enabled or running after install"; fi

lease() { api "$KCMD_TEST_SERVER/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager" | jget spec.holderIdentity; }
waitfor() { # waitfor SECONDS CMD...
	local end=$((SECONDS + $1)); shift
	while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
	return 1
}
ns=swap-$RANDOM
api -X POST -H 'Content-Type: application/json' "$KCMD_TEST_SERVER/api/v1/namespaces" -d "{\"metadata\":{\"name\":\"$ns\"}}" >/dev/null
rs_body() {
	cat <<EOF
{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs"},"spec":{"replicas":$1,"selector":{"matchLabels":{"app":"swap"}},"template":{"metadata":{"labels":{"app":"swap"}},"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}]}}}}
EOF
}
scale() { api -X PATCH -H 'Content-Type: application/merge-patch+json' "$KCMD_TEST_SERVER/apis/apps/v1/namespaces/$ns/replicasets/rs" -d "{\"spec\":{\"replicas\":$1}}" >/dev/null; }
pods_are() { # live pods (no deletionTimestamp) of the ReplicaSet == $1
	local n
	n=$(api "$KCMD_TEST_SERVER/api/v1/namespaces/$ns/pods" | python3 -c 'import json,sys
print(sum(1 for p in json.load(sys.stdin)["items"] if not p["metadata"].get("deletionTimestamp")))')
	[ "$n" = "$1" ]
}
holder_is_not() { local h; h=$(lease); [ -n "$h" ] && [ "$h" != "$1" ]; }

# ---- 1. kcm under systemd --------------------------------------------------------------------------
ins systemctl enable --now kube-controller-manager >/dev/null 2>&1
if waitfor 60 holder_is_not ""; then kcm_id=$(lease); ok "kube-controller-manager.service holds the Lease ($kcm_id)"; else bad "kcm never took the Lease"; ins journalctl -u kube-controller-manager --no-pager | tail -5; fi
api -X POST -H 'Content-Type: application/json' "$KCMD_TEST_SERVER/apis/apps/v1/namespaces/$ns/replicasets" -d "$(rs_body 2)" >/dev/null
if waitfor 60 pods_are 2; then ok "kcm reconciled the ReplicaSet (2 pods)"; else bad "kcm: the ReplicaSet's 2 pods"; fi

# ---- 2. the swap: the documented steps ------------------------------------------------------------
r=/proc/$init/root # the booted root, as its mount namespace sees it
kcm_args=$(sed -n 's/^KCM_ARGS="\(.*\)"$/\1/p' "$r/etc/default/kube-controller-manager")
kcmd_port=$((kcm_port + 1))
kcmd_args=${kcm_args//--secure-port=$kcm_port/--secure-port=$kcmd_port}
# The kubeconfig (root's, 0600): handed over with LoadCredential= as the doc says, when this
# machine's systemd can do that for a non-root User= at all (checked with a bare transient unit
# first); otherwise the package's default place, /etc/kcmd/kubeconfig owned by kcmd, mode 0600.
kc=/etc/kubernetes/controller-manager.conf
if ins systemd-run --wait --pipe -q -p User=kcmd -p LoadCredential=kc:$kc \
	sh -c 'test -r "$CREDENTIALS_DIRECTORY/kc"' >/dev/null 2>&1; then
	kcmd_args=${kcmd_args//--kubeconfig=$kc/--kubeconfig=\/run\/credentials\/kcmd.service\/kubeconfig}
	mkdir -p "$r/etc/systemd/system/kcmd.service.d"
	printf '[Service]\nLoadCredential=kubeconfig:%s\n' "$kc" >"$r/etc/systemd/system/kcmd.service.d/credentials.conf"
	ok "kubeconfig handed over with LoadCredential="
else
	echo "     note: LoadCredential= gives a User=kcmd unit no read access on this machine (a bare"
	echo "     systemd-run unit neither: the credentials directory stays root 0700), so the"
	echo "     kubeconfig goes to /etc/kcmd/kubeconfig (owner kcmd, 0600), the package's default"
	ins sh -c "install -d -m 0750 -o root -g kcmd /etc/kcmd && install -m 0600 -o kcmd -g kcmd $kc /etc/kcmd/kubeconfig"
	kcmd_args=${kcmd_args//--kubeconfig=$kc/--kubeconfig=\/etc\/kcmd\/kubeconfig}
fi
sed -i "s|^#\{0,1\} *KCMD_ARGS=.*|KCMD_ARGS=\"$kcmd_args --leader-elect-resource-name=kube-controller-manager\"|" "$r/etc/default/kcmd"
grep -q '^KCMD_ARGS=".*--leader-elect-resource-name=kube-controller-manager"' "$r/etc/default/kcmd" ||
	bad "KCMD_ARGS not set in /etc/default/kcmd (the package's file changed?)"
ins systemctl daemon-reload
t0=$SECONDS
ins systemctl disable --now kube-controller-manager >/dev/null 2>&1
if ins systemctl enable --now kcmd >"$work/start.log" 2>&1; then
	ok "systemctl enable --now kcmd returned: READY=1 inside the unit's sandbox after $((SECONDS - t0)) s"
else
	bad "systemctl enable --now kcmd: $(cat "$work/start.log")"
	ins systemctl status kcmd --no-pager -l 2>&1 | tail -20
fi
if waitfor 60 holder_is_not "${kcm_id:-}"; then
	kcmd_id=$(lease)
	ok "kcmd.service holds kcm's Lease ($kcmd_id)"
	echo "bench: pkg.swap_kcm_to_kcmd_s $((SECONDS - t0)) s"
else
	bad "kcmd never took the Lease kube-system/kube-controller-manager"
fi
echo "     kcmd status: $(ins systemctl show kcmd -p StatusText --value)"
scale 4
if waitfor 60 pods_are 4; then ok "kcmd reconciled the scale-up (4 pods)"; else bad "kcmd: the scale-up to 4 pods"; fi
mainpid=$(ins systemctl show kcmd -p MainPID --value)
if [ -n "$mainpid" ] && [ "$mainpid" != 0 ] && ins sh -c "grep -q '^Seccomp:[[:space:]]*2' /proc/$mainpid/status && grep -q '^CapEff:[[:space:]]*0000000000000000' /proc/$mainpid/status"; then
	ok "kcmd runs under the unit's seccomp filter with no effective capability"
else
	bad "kcmd's sandbox: $(ins sh -c "grep -E '^(Seccomp|CapEff):' /proc/$mainpid/status" 2>&1 | tr '\n' ' ')"
fi
children=$(ins sh -c "grep -l '^PPid:[[:space:]]*$mainpid\$' /proc/[0-9]*/status 2>/dev/null |
	while read -r f; do cat \"\${f%/status}/comm\"; done" | sort | uniq -c | tr -s ' ' | tr '\n' ',')
[ -n "$children" ] && ok "kcmd's children run in the unit: $children" || bad "kcmd has no children"
refused=$(ins journalctl -u kcmd --no-pager -o cat | grep -ciE 'operation not permitted|EPERM|permission denied|read-only file system')
if [ "$refused" = 0 ]; then ok "kcmd's journal: no refused system call or file access"; else bad "kcmd's journal: $refused refused calls"; ins journalctl -u kcmd --no-pager -o cat | grep -iE 'operation not permitted|EPERM|permission denied|read-only' | head -5; fi

# ---- 3. back ---------------------------------------------------------------------------------------
t0=$SECONDS
ins systemctl disable --now kcmd >/dev/null 2>&1
res=$(ins systemctl show kcmd -p Result --value)
[ "$res" = success ] && ok "kcmd stopped cleanly (Result=success)" || bad "kcmd stop: Result=$res"
ins systemctl enable --now kube-controller-manager >/dev/null 2>&1
if waitfor 60 holder_is_not "${kcmd_id:-}"; then
	ok "kube-controller-manager.service holds the Lease again ($(lease)) after $((SECONDS - t0)) s"
	echo "bench: pkg.swap_kcmd_to_kcm_s $((SECONDS - t0)) s"
else
	bad "kcm never took the Lease back"
fi
scale 1
if waitfor 60 pods_are 1; then ok "kcm reconciled the scale-down (1 pod)"; else bad "kcm: the scale-down to 1 pod"; fi
if check_inactive; then ok "kcmd.service disabled and stopped"; else bad "kcmd.service still enabled or running"; fi

echo "systemd-swap: $fails failed"
[ "$fails" = 0 ]
