# Sourced by the build.sh of a Go program that the benchmarks or tests run, after it sets `here`
# (the Go module's folder) and `peer` (the binary's name):
#
#   source tools/go-bench-build.sh [PACKAGE [VERSION_MODULE]]
#
# builds PACKAGE of that module (default `.`, the module's main package) into
# ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/$peer and prints the binary's path on the
# last line of stdout (everything else goes to stderr). With VERSION_MODULE (k8s.io/kubernetes)
# the binary is linked with `k8s_ldflags`, so that it reports that module's pinned version. The
# callers: the Go peers of the benchmarks (benches/kueue_tas, benches/controller_runtime_peer),
# the Go references of tests (tools/podrequests, tools/kustomize), tools/kube-scheduler and the
# controllers of the recipe tests (tools/training-operator, tools/kueue-controller); they run
# their build.sh themselves.
#
# `source tools/go-bench-build.sh --functions` only defines the functions below, for a script
# with a flow of its own (tools/envtest/build.sh builds two binaries under one stamp).
#
# Pinned by the module's go.mod/go.sum (GOFLAGS=-mod=readonly: the build never edits them) with
# the local Go toolchain (GOTOOLCHAIN=local), both from tools/go-toolchain.sh. The build is
# skipped when the stamp next to the binary records the same inputs (a hash of go.mod, go.sum,
# the module's *.go files and `go version`); a flock keeps two benches from building it at once.
# Go's module and build caches stay in their default places outside the clone.

# shellcheck source=/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/go-toolchain.sh" "$peer"

# k8s_ldflags DIR MODULE: sets `k8s_version` to the version of MODULE that DIR's go.mod pins and
# `ldflags` to "-s -w" plus the version strings a Kubernetes binary reports in --version and
# /version (without them it claims to be v0.0.0-master).
k8s_ldflags() {
    local major minor pkg
    k8s_version="$(cd "$1" && "$go_bin" list -m -f '{{.Version}}' "$2")"
    major="${k8s_version#v}"; major="${major%%.*}"
    minor="${k8s_version#v*.}"; minor="${minor%%.*}"
    ldflags="-s -w"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
        ldflags+=" -X $pkg.gitTreeState=clean"
    done
}

# already_built LOCK UP_TO_DATE_MESSAGE CONCURRENT_MESSAGE: succeeds, after printing the fitting
# message, when the caller's `up_to_date` holds, before or after taking LOCK (fd 9, held until
# the script exits: two builds racing would waste minutes and could leave half-written files).
already_built() {
    if up_to_date; then
        echo "$2"
        return 0
    fi
    exec 9>"$1"
    if command -v flock >/dev/null 2>&1; then
        flock 9
        if up_to_date; then
            echo "$3"
            return 0
        fi
    fi
    return 1
}

# go_build DIR PACKAGE OUTPUT [LDFLAGS]: builds PACKAGE of the module in DIR into OUTPUT.tmp
# (the caller moves it into place), with go's output on stderr; exits the script if it fails.
go_build() {
    if ! (cd "$1" && nice -n 10 "$go_bin" build -trimpath ${4:+"-ldflags=$4"} -o "$3.tmp" "$2") >&2; then
        rm -f "$3.tmp"
        echo "$peer: go build failed ($("$go_bin" version 2>&1 || echo "$go_bin does not run"))" >&2
        exit 1
    fi
}

if [[ "${1:-}" == --functions ]]; then
    return 0
fi

out="${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}"
binary="$out/$peer"
stamp="$out/.$peer.stamp"

pins() {
    { (cd "$here" && shopt -s nullglob && sha256sum go.mod go.sum *.go); "$go_bin" version; } |
        sha256sum | cut -d' ' -f1
}

up_to_date() {
    [[ -x "$binary" && -f "$stamp" ]] && [[ "$(head -n1 "$stamp")" == "$(pins)" ]]
}

mkdir -p "$out"
if already_built "$out/.$peer.lock" "$peer: $binary is up to date" \
    "$peer: $binary was built by a concurrent run" >&2; then
    echo "$binary"
    exit 0
fi

k8s_version=""
ldflags=""
if [[ -n "${2:-}" ]]; then
    k8s_ldflags "$here" "$2"
fi

start=$SECONDS
echo "$peer: building ${k8s_version:+$k8s_version }into $binary (the first build takes minutes)" >&2
go_build "$here" "${1:-.}" "$binary" "$ldflags"
mv -f "$binary.tmp" "$binary"
# The stamp's first line is what `up_to_date` compares; the second says what was built.
if [[ -n "$k8s_version" ]]; then
    note="$peer $k8s_version"
else
    note="$("$go_bin" version)"
fi
printf '%s\n%s\n' "$(pins)" "$note" >"$stamp"
echo "$peer: built in $((SECONDS - start))s" >&2
echo "$binary"
