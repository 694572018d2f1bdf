#!/usr/bin/env bash
# Builds the Kueue TAS peer of benches/placer_bench.py into
# ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/kueue_tas and prints the binary's path on
# the last line of stdout. benches/placer_bench.py runs this itself.
#
# Pinned by go.mod/go.sum (GOFLAGS=-mod=readonly: the build never edits them) with the local
# Go toolchain (GOTOOLCHAIN=local). The build is skipped when the stamp next to the binary
# records the same inputs (a hash of go.mod, go.sum, main.go and `go version`). Go's module and
# build caches stay in their default places outside the clone.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}"
binary="$out/kueue_tas"
stamp="$out/.kueue_tas.stamp"

# shellcheck source=/dev/null
source "$here/../../tools/go-toolchain.sh" kueue_tas

pins() {
    { (cd "$here" && sha256sum go.mod go.sum main.go); "$go_bin" version; } | sha256sum | cut -d' ' -f1
}

up_to_date() {
    [[ -x "$binary" && -f "$stamp" ]] && [[ "$(head -n1 "$stamp")" == "$(pins)" ]]
}

mkdir -p "$out"
if up_to_date; then
    echo "kueue_tas: $binary is up to date" >&2
    echo "$binary"
    exit 0
fi

# Two benches building at once would only waste minutes of a shared machine.
exec 9>"$out/.kueue_tas.lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
    if up_to_date; then
        echo "kueue_tas: $binary was built by a concurrent run" >&2
        echo "$binary"
        exit 0
    fi
fi

start=$SECONDS
echo "kueue_tas: building into $binary (the first build takes minutes)" >&2
if ! (cd "$here" && nice -n 10 "$go_bin" build -trimpath -o "$binary.tmp" .) >&2; then
    rm -f "$binary.tmp"
    echo "kueue_tas: go build failed ($("$go_bin" version 2>&1 || echo "$go_bin does not run"))" >&2
    exit 1
fi
mv -f "$binary.tmp" "$binary"
printf '%s\n%s\n' "$(pins)" "$("$go_bin" version)" >"$stamp"
echo "kueue_tas: built in $((SECONDS - start))s" >&2
echo "$binary"
