#!/usr/bin/env bash
# tests/packaging/test-deb.sh: builds the kcmd Debian package (`make deb`) and checks it.
#
# No debootstrap and no systemd as PID 1 are assumed: the package is installed with
# `dpkg --root` into an empty throwaway root (a fresh dpkg database, maintainer scripts run
# chroot-less with DPKG_ROOT, as dpkg's --force-script-chrootless allows; the generated postinst
# passes --root="$DPKG_ROOT" to systemd-sysusers), so the user is created in that root's
# /etc/passwd and the host is not touched. Library dependencies are the host's (--force-depends):
# the binaries run from the root against the host's libraries.
#
# Checks: file layout and modes, conffiles, the unit's key settings, `systemd-analyze verify`
# and `systemd-analyze security` (exposure <= 2.0, printed as `bench: pkg.security_exposure`),
# the sysusers entry and the user it creates, every `kcmd --help` flag documented in
# /etc/default/kcmd and kcmd(8), the documented defaults accepted by kcmd, `kcmd --version` from
# the root, the installed manager finding its children in /usr/libexec/kcmd and stopping them on
# SIGTERM, the installed kcmd against the real test cluster with an sd_notify listener
# (notify-e2e.sh: READY=1, WATCHDOG=1, a ReplicaSet reconciled, STOPPING=1), lintian (no tag
# left unexplained), the swap kcm -> kcmd.service -> kcm under systemd as PID 1 in namespaces
# (systemd-swap.sh: the unit's sandbox for real), and purge.
#
# Exit: 0 pass, 1 fail, 77 skip (a tool it needs is missing and cannot be installed).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi; }

for t in dpkg dpkg-deb systemd-analyze systemd-sysusers; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
done

version=$(sed -n 's/^VERSION *:= *//p' Makefile)
echo "== make deb (version $version)"
mkdir -p build/deb
if ! ${MAKE:-make} -s deb >build/deb/make-deb.log 2>&1; then
	tail -40 build/deb/make-deb.log
	bad "make deb (log: build/deb/make-deb.log)"; exit 1
fi
arch=$(dpkg --print-architecture)
deb=build/deb/kcmd_${version}_${arch}.deb
check "package built: $deb" test -s "$deb"
[ -s "$deb" ] || exit 1

root=$(mktemp -d /tmp/kcmd-pkgroot.XXXXXX)
chmod 0755 "$root" # notify-e2e.sh runs the installed kcmd as nobody
kpid=
cleanup() {
	[ -n "$kpid" ] && kill -KILL "$kpid" 2>/dev/null
	rm -rf "$root" "$root.kubeconfig"
}
trap cleanup EXIT

echo "== dpkg --root $root -i $deb"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc"
: >"$root/var/lib/dpkg/status"
dpk() { dpkg --root="$root" --log=/dev/null --force-script-chrootless --force-depends "$@"; }
if dpk -i "$deb" >"$root.log" 2>&1; then ok "dpkg -i into an empty root"; else cat "$root.log"; bad "dpkg -i"; fi
rm -f "$root.log"
check "dpkg says installed" sh -c "dpkg --root='$root' -s kcmd | grep -q '^Status: install ok installed'"
check "package version is the Makefile's VERSION" sh -c "dpkg --root='$root' -s kcmd | grep -qx 'Version: $version'"

echo "== files"
mode() { stat -c %a "$root$1" 2>/dev/null; }
for f in /usr/bin/kcmd /usr/bin/kcmctl /usr/libexec/kcmd/kcmd-informerd /usr/libexec/kcmd/kcmd-worker \
	/usr/libexec/kcmd/kcmd-dispatcher /usr/libexec/kcmd/kcmd-cachedump /usr/libexec/kcmd/kcmd-vapcheck; do
	check "$f mode 755" test "$(mode "$f")" = 755
done
for f in /lib/systemd/system/kcmd.service /usr/lib/sysusers.d/kcmd.conf /etc/default/kcmd \
	/usr/share/man/man8/kcmd.8.gz /usr/share/man/man1/kcmctl.1.gz /usr/share/doc/kcmd/copyright /usr/share/doc/kcmd/operations.md.gz \
	/usr/share/bash-completion/completions/kcmd; do
	check "$f mode 644" test "$(mode "$f")" = 644
done
for f in kcmd-informerd kcmd-dispatcher kcmd-worker kcmd-cachedump kcmd-vapcheck; do
	check "$f not in /usr/bin" test ! -e "$root/usr/bin/$f"
done
# test tools are not shipped (issue 21): no bench program, no kubelet simulator compiled in
check "kcmd-bench not shipped" test ! -e "$root/usr/libexec/kcmd/kcmd-bench" -a ! -e "$root/usr/bin/kcmd-bench"
check "no kubelet simulator in kcmd-worker" sh -c "! grep -q kubelet-simulator '$root/usr/libexec/kcmd/kcmd-worker'"
check "no --simulate-kubelet flag in kcmd --help" sh -c "! '$root/usr/bin/kcmd' --help 2>&1 | grep -q simulate-kubelet"
check "the FlowSchemas ship as an example" cmp "$root/usr/share/doc/kcmd/examples/kcmd-flowschema.yaml" packaging/kcmd-flowschema.yaml
check "unit sets LimitNOFILE" grep -qx 'LimitNOFILE=65536' "$root/lib/systemd/system/kcmd.service"
check "kcmctl answers usage errors with status 2" sh -c "'$root/usr/bin/kcmctl' bogus >/dev/null 2>&1; test \$? -eq 2"
check "/etc/default/kcmd is a conffile" sh -c "dpkg-deb -f '$deb' >/dev/null && dpkg-deb -I '$deb' conffiles | grep -qx /etc/default/kcmd"
check "unit is the one in packaging/" cmp "$root/lib/systemd/system/kcmd.service" packaging/kcmd.service
check "sysusers entry is the one in packaging/" cmp "$root/usr/lib/sysusers.d/kcmd.conf" packaging/kcmd.sysusers
check "default file is the one in packaging/" cmp "$root/etc/default/kcmd" packaging/default/kcmd
check "kcmctl's bash completion is kcmd's" test "$(readlink "$root/usr/share/bash-completion/completions/kcmctl")" = kcmd

echo "== the unit"
unit=$root/lib/systemd/system/kcmd.service
for kv in 'Type=notify' 'NotifyAccess=main' 'WatchdogSec=30s' 'Restart=on-failure' 'KillMode=mixed' \
	'EnvironmentFile=-/etc/default/kcmd' 'ExecStart=/usr/bin/kcmd $KCMD_ARGS' 'User=kcmd' \
	'DynamicUser=no' 'RuntimeDirectory=kcmd' 'CapabilityBoundingSet=' 'NoNewPrivileges=yes' \
	'ProtectSystem=strict' 'MemoryDenyWriteExecute=yes' 'SystemCallArchitectures=native' \
	'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' 'SystemCallFilter=@system-service'; do
	check "unit has $kv" grep -qxF "$kv" "$unit"
done
for sc in io_uring_setup io_uring_enter io_uring_register memfd_create pidfd_open futex futex_waitv; do
	check "SystemCallFilter allows $sc" sh -c "grep '^SystemCallFilter=[^~]' '$unit' | grep -qw $sc"
done
# systemd-analyze verify --root reads the unit and resolves ExecStart= inside the root; the units
# it pulls in (sysinit.target, ...) come from the host's systemd, copied into the throwaway root;
# the Documentation=man:kcmd(8) link is resolved against the root's man pages (MANPATH).
cp -rn /lib/systemd/system/. "$root/lib/systemd/system/" 2>/dev/null
if out=$(MANPATH=$root/usr/share/man systemd-analyze verify --root="$root" /lib/systemd/system/kcmd.service 2>&1) &&
	[ -z "$out" ]; then
	ok "systemd-analyze verify --root: clean (no output)"
else
	echo "$out"; bad "systemd-analyze verify"
fi
sec=$(systemd-analyze security --offline=yes --root="$root" /lib/systemd/system/kcmd.service 2>&1)
score=$(printf '%s\n' "$sec" | sed -n 's/.*Overall exposure level for kcmd.service: \([0-9.]*\).*/\1/p')
if [ -n "$score" ]; then
	echo "bench: pkg.security_exposure $score score"
	if awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then ok "exposure $score <= 2.0"; else
		printf '%s\n' "$sec" | grep '✗'; bad "exposure $score > 2.0"; fi
else
	printf '%s\n' "$sec" | tail -5; bad "systemd-analyze security printed no score"
fi

echo "== the user"
check "postinst created user kcmd (nologin, home /)" \
	grep -qE '^kcmd:x:[0-9]+:[0-9]+:[^:]*:/:/usr/sbin/nologin$' "$root/etc/passwd"
check "postinst created group kcmd" grep -qE '^kcmd:x:[0-9]+:' "$root/etc/group"
uid=$(awk -F: '$1 == "kcmd" { print $3 }' "$root/etc/passwd")
check "kcmd is a system uid ($uid < 1000)" test "${uid:-1000}" -lt 1000

echo "== flags, default file and man page"
kcmd=$root/usr/bin/kcmd
check "kcmd --version from the root prints 'kcmd $version'" test "$("$kcmd" --version 2>&1)" = "kcmd $version"
helpflags=$("$kcmd" --help | grep -oE '^  --[a-z][a-z0-9-]*' | tr -d ' ' | grep -vxE -- '--(help|version)' | sort)
check "kcmd --help lists flags" test -n "$helpflags"
for f in $helpflags; do
	check "$f documented in /etc/default/kcmd" grep -qE "^# $f(=|\$)" "$root/etc/default/kcmd"
	check "$f documented in kcmd(8)" sh -c "zcat '$root/usr/share/man/man8/kcmd.8.gz' | sed 's/\\\\-/-/g' | grep -q -- '$f'"
done
set -f
defaults=$(grep -E '^# --[a-z][a-z-]*=[^ ]+$' "$root/etc/default/kcmd" | sed 's/^# //')
check "kcmd accepts every documented default ($(echo $defaults | wc -w) flags)" "$kcmd" $defaults --version
args=$(sh -c ". '$root/etc/default/kcmd'; printf '%s' \"\$KCMD_ARGS\"")
check "KCMD_ARGS is '--kubeconfig=/etc/kcmd/kubeconfig' and parses" \
	sh -c "test '$args' = '--kubeconfig=/etc/kcmd/kubeconfig' && '$kcmd' $args --version"
set +f
check "kcmd rejects an unknown flag (exit 2)" sh -c "'$kcmd' --no-such-flag >/dev/null 2>&1; test \$? = 2"
if command -v man >/dev/null 2>&1; then
	check "kcmd(8) renders without groff warnings" sh -c \
		"test -z \"\$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l '$root/usr/share/man/man8/kcmd.8.gz' 2>&1 >/dev/null)\""
fi

echo "== the installed manager starts its children from /usr/libexec/kcmd"
# Nothing listens on 127.0.0.1:1: the manager and its children start and retry; we only look at
# which executables it started and that SIGTERM stops all of them.
cat >"$root.kubeconfig" <<'KC'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
KC
"$kcmd" --kubeconfig="$root.kubeconfig" --secure-port=0 --leader-elect=false --controllers=replicaset-controller \
	--concurrent-replicaset-syncs=2 >"$root.run.log" 2>&1 &
kpid=$!
kids=
for _ in $(seq 1 50); do
	kids=$(pgrep -P "$kpid" || true)
	[ "$(echo "$kids" | grep -c .)" -ge 3 ] && break
	sleep 0.1
done
exes=$(for k in $kids; do readlink "/proc/$k/exe"; done | sort -u)
# The worker pool starts its first worker with the group and the others on demand
# (docs/manager.md, the worker pool), so an idle manager has 3 children.
check "3 children (informerd + the ReplicaSet dispatcher + the first worker): $(echo $kids)" test "$(echo "$kids" | grep -c .)" -eq 3
check "children run $root/usr/libexec/kcmd/{kcmd-dispatcher,kcmd-informerd,kcmd-worker}" test "$exes" = \
	"$(printf '%s\n' "$root/usr/libexec/kcmd/kcmd-dispatcher" "$root/usr/libexec/kcmd/kcmd-informerd" "$root/usr/libexec/kcmd/kcmd-worker")"
kill -TERM "$kpid"
rc=0; wait "$kpid" || rc=$?
kpid=
check "SIGTERM: manager exits 0 (exit $rc)" test "$rc" = 0
left=$(for k in $kids; do [ -d "/proc/$k" ] && echo "$k"; done)
check "SIGTERM: no child outlives the manager" test -z "$left"
[ "$fails" -gt 0 ] && sed 's/^/    kcmd: /' "$root.run.log" | tail -20
rm -f "$root.run.log"

echo "== the installed kcmd against the real test cluster, with sd_notify (notify-e2e.sh)"
# Slow the first time on a machine (tests/cluster builds etcd and kube-apiserver, 15-30 min);
# KCMD_PKG_E2E=0 leaves it out.
if [ "${KCMD_PKG_E2E:-1}" = 0 ]; then
	echo "skipped (KCMD_PKG_E2E=0)"
else
	tests/packaging/notify-e2e.sh "$root"
	case $? in 0) ok "notify-e2e" ;; 77) echo "notify-e2e skipped" ;; *) bad "notify-e2e" ;; esac
fi

echo "== the swap under systemd as PID 1: kcm -> kcmd.service -> kcm (systemd-swap.sh)"
# Boots systemd in namespaces over a debootstrapped bookworm root (cached; the first run downloads
# it, about 2 minutes); KCMD_PKG_SWAP=0 leaves it out.
if [ "${KCMD_PKG_E2E:-1}" = 0 ] || [ "${KCMD_PKG_SWAP:-1}" = 0 ]; then
	echo "skipped (KCMD_PKG_E2E=0 or KCMD_PKG_SWAP=0)"
else
	tests/packaging/systemd-swap.sh "$deb"
	case $? in 0) ok "systemd-swap" ;; 77) echo "systemd-swap skipped" ;; *) bad "systemd-swap" ;; esac
fi

echo "== lintian"
if command -v lintian >/dev/null 2>&1; then
	tags=$(lintian --pedantic --display-info build/deb/kcmd_"${version}"_"${arch}".changes 2>/dev/null |
		grep -E '^[EWIPX]: ' || true)
	ntags=$(printf '%s' "$tags" | grep -c . || true)
	nover=$(lintian --pedantic --display-info --show-overrides build/deb/kcmd_"${version}"_"${arch}".changes 2>/dev/null |
		grep -c '^O: ' || true)
	echo "bench: pkg.lintian_tags $ntags count"
	echo "lintian: $ntags tags (pedantic, info), $nover overridden with a reason"
	[ -n "$tags" ] && echo "$tags"
	check "lintian: no tag left" test "$ntags" -eq 0
else
	echo "lintian not installed: skipped (tests/deps.sh installs it)"
fi

echo "== purge"
check "dpkg --purge" dpk --purge kcmd
check "purge removed the files" sh -c "test ! -e '$root/usr/bin/kcmd' && test ! -e '$root/usr/libexec/kcmd' && test ! -e '$root/etc/default/kcmd'"
check "purge removed the unit" test ! -e "$root/lib/systemd/system/kcmd.service"

if [ "$fails" -gt 0 ]; then
	echo "test-deb: $fails check(s) FAILED"; exit 1
fi
echo "test-deb: all checks passed"
