# Sourced by the build.sh of a Go peer of the benchmarks (benches/kueue_tas,
# benches/controller_runtime_peer) or of a test's Go reference (tools/podrequests) after it sets
# `here` (the Go module's folder) and `peer` (the binary's name): builds that module's main
# package into ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/$peer and prints the binary's
# path on the last line of stdout (everything else goes to stderr). The benches and that test run
# the build.sh themselves.
#
# Pinned by the module's go.mod/go.sum (GOFLAGS=-mod=readonly: the build never edits them) with
# the local Go toolchain (GOTOOLCHAIN=local), both from tools/go-toolchain.sh. The build is
# skipped when the stamp next to the binary records the same inputs (a hash of go.mod, go.sum,
# the *.go files and `go version`); a flock keeps two benches from building it at once. Go's
# module and build caches stay in their default places outside the clone.

out="${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}"
binary="$out/$peer"
stamp="$out/.$peer.stamp"

# shellcheck source=/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/go-toolchain.sh" "$peer"

pins() {
    { (cd "$here" && sha256sum go.mod go.sum *.go); "$go_bin" version; } | sha256sum | cut -d' ' -f1
}

up_to_date() {
    [[ -x "$binary" && -f "$stamp" ]] && [[ "$(head -n1 "$stamp")" == "$(pins)" ]]
}

mkdir -p "$out"
if up_to_date; then
    echo "$peer: $binary is up to date" >&2
    echo "$binary"
    exit 0
fi

# Two benches building at once would only waste minutes of a shared machine.
exec 9>"$out/.$peer.lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
    if up_to_date; then
        echo "$peer: $binary was built by a concurrent run" >&2
        echo "$binary"
        exit 0
    fi
fi

start=$SECONDS
echo "$peer: building into $binary (the first build takes minutes)" >&2
if ! (cd "$here" && nice -n 10 "$go_bin" build -trimpath -o "$binary.tmp" .) >&2; then
    rm -f "$binary.tmp"
    echo "$peer: go build failed ($("$go_bin" version 2>&1 || echo "$go_bin does not run"))" >&2
    exit 1
fi
mv -f "$binary.tmp" "$binary"
printf '%s\n%s\n' "$(pins)" "$("$go_bin" version)" >"$stamp"
echo "$peer: built in $((SECONDS - start))s" >&2
echo "$binary"
