#!/usr/bin/env bash
# Re-pins the control plane: tools/envtest/pin.sh v1.37.2 [v3.7.3]
#
# Writes go.mod requiring k8s.io/kubernetes at the given release, with every k8s.io/* staging
# module that release replaces by a path in its source tree mapped to the published v0.X.Y of
# the same release; optionally moves etcd to the given server version; then tidies both
# modules. The next `make envtest` rebuilds because the go.mod/go.sum hashes changed.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 KUBERNETES_VERSION [ETCD_VERSION]   e.g. $0 v1.37.2 v3.7.3" >&2
    exit 2
fi
k8s="$1"
etcd="${2:-}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
go_bin="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
export GOTOOLCHAIN=local

staging="v0.${k8s#v1.}"
gomod="$("$go_bin" mod download -json "k8s.io/kubernetes@$k8s" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
go_version="$(sed -n 's/^go //p' "$gomod")"

{
    echo "// Pins the Kubernetes release whose kube-apiserver the local control plane runs."
    echo "// Every k8s.io/* staging module is mapped to its published v0.X.Y twin, because"
    echo "// k8s.io/kubernetes's own replace directives point into its source tree."
    echo "// Regenerate with tools/envtest/pin.sh rather than by hand."
    echo "module github.com/crdkit/crdkit/tools/envtest"
    echo
    echo "go $go_version"
    echo
    echo "godebug default=go${go_version%.*}"
    echo
    echo "tool k8s.io/kubernetes/cmd/kube-apiserver"
    echo
    echo "require k8s.io/kubernetes $k8s"
    echo
    echo "replace ("
    sed -n '/^replace (/,/^)/p' "$gomod" | awk -v v="$staging" '/=> \.\/staging/ {printf "\t%s => %s %s\n", $1, $1, v}'
    echo ")"
} >"$here/go.mod.new"
mv "$here/go.mod.new" "$here/go.mod"
(cd "$here" && "$go_bin" mod tidy)

if [[ -n "$etcd" ]]; then
    (cd "$here/etcd" && "$go_bin" get "go.etcd.io/etcd/server/v3@$etcd" && "$go_bin" mod tidy)
fi
echo "pinned kube-apiserver $k8s and etcd $(cd "$here/etcd" && "$go_bin" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
