#!/usr/bin/env bash
# Builds kube-scheduler from the k8s.io/kubernetes module pinned in tools/envtest (the same
# module and version as the local control plane's kube-apiserver) into
# ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/kube-scheduler, and prints its path on the
# last line of stdout (everything else goes to stderr). benches/scheduler_compare.py runs it.
# Skipped when the stamp records the same pins (tools/envtest's go.mod/go.sum and `go version`);
# the stamp, the lock and the build are in tools/go-bench-build.sh.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
here="$tools/envtest"
peer=kube-scheduler
# shellcheck source=/dev/null
source "$tools/go-bench-build.sh" k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes
