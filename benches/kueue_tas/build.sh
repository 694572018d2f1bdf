#!/usr/bin/env bash
# Builds the Kueue TAS peer of benches/placer_bench.py into
# ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/kueue_tas and prints the binary's path on
# the last line of stdout; benches/placer_bench.py runs this itself. The pins, the stamp that
# skips an up-to-date build and the lock are in tools/go-bench-build.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peer=kueue_tas
# shellcheck source=/dev/null
source "$here/../../tools/go-bench-build.sh"
