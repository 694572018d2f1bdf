#!/usr/bin/env bash
# Builds kube-apiserver and etcd for the local control plane (crdkit.testing) from the Go
# modules pinned in this folder, into ${KUBEBUILDER_ASSETS:-<repo>/.envtest/bin}.
#
# The build is skipped when the stamp file in the output folder records the same pins (a hash
# of the go.mod/go.sum files and the etcd main) and both binaries exist. Go's module and build
# caches stay in their default places outside the clone.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${KUBEBUILDER_ASSETS:-$repo/.envtest/bin}"
stamp="$out/.crdkit-envtest.stamp"

# shellcheck source=/dev/null
source "$here/../go-toolchain.sh" envtest

pins() {
    (cd "$here" && sha256sum go.mod go.sum etcd/go.mod etcd/go.sum etcd/main.go) | sha256sum | cut -d' ' -f1
}

up_to_date() {
    [[ -x "$out/kube-apiserver" && -x "$out/etcd" && -f "$stamp" ]] &&
        [[ "$(head -n1 "$stamp")" == "$(pins)" ]]
}

mkdir -p "$out"
if up_to_date; then
    echo "envtest: binaries in $out are up to date"
    exit 0
fi

# Two builds racing into one folder would waste minutes and could leave half-written files.
exec 9>"$out/.build.lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
    if up_to_date; then
        echo "envtest: binaries in $out were built by a concurrent run"
        exit 0
    fi
fi

k8s_version="$(cd "$here" && "$go_bin" list -m -f '{{.Version}}' k8s.io/kubernetes)"
etcd_version="$(cd "$here/etcd" && "$go_bin" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
major="${k8s_version#v}"; major="${major%%.*}"
minor="${k8s_version#v*.}"; minor="${minor%%.*}"

# kube-apiserver reports these in /version; without them it claims to be v0.0.0-master.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean"
done

start=$SECONDS
echo "envtest: building kube-apiserver $k8s_version and etcd $etcd_version into $out"
(cd "$here" && "$go_bin" build -trimpath -ldflags="$ldflags" \
    -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
(cd "$here/etcd" && "$go_bin" build -trimpath -ldflags="-s -w" -o "$out/etcd.tmp" .)
mv -f "$out/kube-apiserver.tmp" "$out/kube-apiserver"
mv -f "$out/etcd.tmp" "$out/etcd"
printf '%s\nkube-apiserver %s\netcd %s\n' "$(pins)" "$k8s_version" "$etcd_version" >"$stamp"
echo "envtest: built in $((SECONDS - start))s"
