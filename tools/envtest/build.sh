#!/usr/bin/env bash
# Builds kube-apiserver and etcd for the local control plane (crdkit.testing) from the Go
# modules pinned in this folder, into ${KUBEBUILDER_ASSETS:-<repo>/.envtest/bin}.
#
# The build is skipped when the stamp file in the output folder records the same pins (a hash
# of the go.mod/go.sum files and the etcd main) and both binaries exist. Go's module and build
# caches stay in their default places outside the clone. The lock, the version strings and the
# go build itself are the functions of tools/go-bench-build.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${KUBEBUILDER_ASSETS:-$repo/.envtest/bin}"
stamp="$out/.crdkit-envtest.stamp"
peer=envtest

# shellcheck source=/dev/null
source "$here/../go-bench-build.sh" --functions

pins() {
    (cd "$here" && sha256sum go.mod go.sum etcd/go.mod etcd/go.sum etcd/main.go) | sha256sum | cut -d' ' -f1
}

up_to_date() {
    [[ -x "$out/kube-apiserver" && -x "$out/etcd" && -f "$stamp" ]] &&
        [[ "$(head -n1 "$stamp")" == "$(pins)" ]]
}

mkdir -p "$out"
if already_built "$out/.build.lock" "envtest: binaries in $out are up to date" \
    "envtest: binaries in $out were built by a concurrent run"; then
    exit 0
fi

k8s_ldflags "$here" k8s.io/kubernetes
etcd_version="$(cd "$here/etcd" && "$go_bin" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"

start=$SECONDS
echo "envtest: building kube-apiserver $k8s_version and etcd $etcd_version into $out"
go_build "$here" k8s.io/kubernetes/cmd/kube-apiserver "$out/kube-apiserver" "$ldflags"
go_build "$here/etcd" . "$out/etcd" "-s -w"
mv -f "$out/kube-apiserver.tmp" "$out/kube-apiserver"
mv -f "$out/etcd.tmp" "$out/etcd"
printf '%s\nkube-apiserver %s\netcd %s\n' "$(pins)" "$k8s_version" "$etcd_version" >"$stamp"
echo "envtest: built in $((SECONDS - start))s"
