#!/usr/bin/env bash
# Installs what kcmd needs to build and test on a Debian machine; idempotent and quick when all
# is present. etcd is not taken from Debian: tests/cluster/build.sh builds the version that
# Kubernetes pins. Go comes from the machine, or from the Go module proxy's toolchain module.
set -euo pipefail
debs=(build-essential pkg-config libcurl4-openssl-dev libcjson-dev liburing-dev libsystemd-dev debhelper dpkg-dev lintian
	libcmocka-dev libyaml-dev libmicrohttpd-dev libgnutls28-dev clang libclang-rt-14-dev clang-format python3 curl ca-certificates unzip)
missing=()
for d in "${debs[@]}"; do
	dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q "install ok installed" || missing+=("$d")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps.sh: installing Debian packages: ${missing[*]}" >&2
	sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# Go >= 1.26 for the test cluster (k8s.io/kubernetes v1.37 says go 1.26.0).
want=1.26.8
have_go() {
	command -v go >/dev/null 2>&1 || return 1
	local v; v=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
	[ "$(printf '%s\n1.26.0\n' "$v" | sort -V | head -n1)" = "1.26.0" ]
}
if ! have_go; then
	# The toolchain is itself a module on the Go proxy (golang.org/toolchain).
	root=${KCMD_GO_ROOT:-$HOME/.cache/kcmd-go/go$want}
	if [ ! -x "$root/bin/go" ]; then
		echo "deps.sh: fetching Go $want from the Go module proxy" >&2
		tmp=$(mktemp -d)
		proxy=${GOPROXY:-https://proxy.golang.org}; proxy=${proxy%%,*}
		curl -fsSL -o "$tmp/go.zip" "$proxy/golang.org/toolchain/@v/v0.0.1-go$want.linux-amd64.zip"
		(cd "$tmp" && unzip -q go.zip)
		mkdir -p "$(dirname "$root")"
		mv "$tmp/golang.org/toolchain@v0.0.1-go$want.linux-amd64" "$root"
		chmod +x "$root"/bin/* "$root"/pkg/tool/*/* 2>/dev/null || true
		rm -rf "$tmp"
	fi
	echo "deps.sh: Go is not on PATH; add $root/bin to PATH (make does this for its own recipes)" >&2
fi
