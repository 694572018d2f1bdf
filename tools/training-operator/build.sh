#!/usr/bin/env bash
# Builds the Kubeflow training-operator (github.com/kubeflow/training-operator, its main package
# cmd/training-operator.v1, unmodified, at the version go.mod pins as a tool) into
# ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/training-operator and prints the binary's
# path on the last line of stdout; the recipe test (tests/integration/recipes) runs this itself.
# The module is only required here, so its dependency versions are the ones its own go.mod
# selects; go.sum pins them. The pins, the stamp that skips an up-to-date build and the lock are
# in tools/go-bench-build.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peer=training-operator
# shellcheck source=/dev/null
source "$here/../go-bench-build.sh" github.com/kubeflow/training-operator/cmd/training-operator.v1
