#!/usr/bin/env bash
# Builds the controller-runtime peer of benches/runtime_bench.py and benches/informer_bench.py
# into ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/controller_runtime_peer and prints the
# binary's path on the last line of stdout; both benches run this themselves. The pins, the
# stamp that skips an up-to-date build and the lock are in tools/go-bench-build.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peer=controller_runtime_peer
# shellcheck source=/dev/null
source "$here/../../tools/go-bench-build.sh"
