#!/usr/bin/env bash
# Builds kube-scheduler from the k8s.io/kubernetes module pinned in tools/envtest (the same
# module and version as the local control plane's kube-apiserver) into
# ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/kube-scheduler, and prints its path on the
# last line of stdout (everything else goes to stderr). benches/scheduler_compare.py runs it.
# Skipped when the stamp records the same pins (tools/envtest's go.mod/go.sum and `go version`).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
module="$here/../envtest"
out="${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}"
binary="$out/kube-scheduler"
stamp="$out/.kube-scheduler.stamp"

# shellcheck source=/dev/null
source "$here/../go-toolchain.sh" kube-scheduler

pins() {
    { (cd "$module" && sha256sum go.mod go.sum); "$go_bin" version; } | sha256sum | cut -d' ' -f1
}

up_to_date() {
    [[ -x "$binary" && -f "$stamp" ]] && [[ "$(head -n1 "$stamp")" == "$(pins)" ]]
}

mkdir -p "$out"
if up_to_date; then
    echo "kube-scheduler: $binary is up to date" >&2
    echo "$binary"
    exit 0
fi

exec 9>"$out/.kube-scheduler.lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
    if up_to_date; then
        echo "$binary"
        exit 0
    fi
fi

version="$(cd "$module" && "$go_bin" list -m -f '{{.Version}}' k8s.io/kubernetes)"
major="${version#v}"; major="${major%%.*}"
minor="${version#v*.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean"
done

start=$SECONDS
echo "kube-scheduler: building $version into $binary (minutes on a cold build cache)" >&2
if ! (cd "$module" && nice -n 10 "$go_bin" build -trimpath -ldflags="$ldflags" \
    -o "$binary.tmp" k8s.io/kubernetes/cmd/kube-scheduler) >&2; then
    rm -f "$binary.tmp"
    echo "kube-scheduler: go build failed" >&2
    exit 1
fi
mv -f "$binary.tmp" "$binary"
printf '%s\nkube-scheduler %s\n' "$(pins)" "$version" >"$stamp"
echo "kube-scheduler: built in $((SECONDS - start))s" >&2
echo "$binary"
