#!/usr/bin/env bash
# Builds Kueue's controller manager (sigs.k8s.io/kueue, its main package cmd/kueue, unmodified,
# at the version go.mod pins as a tool) into
# ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/kueue-controller and prints the binary's
# path on the last line of stdout; the recipe test (tests/integration/recipes/test_kueue.py)
# runs this itself. The module is only required here, so its dependency versions are the ones
# its own go.mod selects (it has no replace lines); go.sum pins them. The pins, the stamp that
# skips an up-to-date build and the lock are in tools/go-bench-build.sh. (benches/kueue_tas
# links Kueue's TAS packages into a benchmark peer at the same version; this is the controller.)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peer=kueue-controller
# shellcheck source=/dev/null
source "$here/../go-bench-build.sh" sigs.k8s.io/kueue/cmd/kueue
