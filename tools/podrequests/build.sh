#!/usr/bin/env bash
# Builds the reference of crdkit.scheduling.requests (k8s.io/component-helpers' PodRequests
# behind a stdin/stdout loop) into ${CRDKIT_BENCH_BIN:-$HOME/.cache/crdkit/bench-bin}/podrequests
# and prints the binary's path on the last line of stdout; the differential test
# (tests/property/scheduling/test_requests_differential.py) runs this itself. The pins, the stamp that skips
# an up-to-date build and the lock are in tools/go-bench-build.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peer=podrequests
# shellcheck source=/dev/null
source "$here/../go-bench-build.sh"
