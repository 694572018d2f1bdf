#!/usr/bin/env bash
# Builds kustomize's library (sigs.k8s.io/kustomize/api, the version pinned by go.mod) behind a
# one-argument command into ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/kustomize and
# prints the binary's path on the last line of stdout; the test of `crdkit gen-manifests`
# (tests/integration/deploy) runs this itself. The pins, the stamp that skips an up-to-date
# build and the lock are in tools/go-bench-build.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peer=kustomize
# shellcheck source=/dev/null
source "$here/../go-bench-build.sh"
