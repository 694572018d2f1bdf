# Sourced by tools/go-bench-build.sh, which every Go build script sources (tools/envtest,
# tools/kube-scheduler, tools/kustomize, tools/podrequests, tools/training-operator,
# tools/kueue-controller and the benches' Go peers): finds the Go toolchain (GO, then PATH,
# then /usr/local/go) into `go_bin`, and pins it and the modules:
# GOTOOLCHAIN=local (never download another Go), GOFLAGS=-mod=readonly (go.sum decides).
# The first argument names the caller in the error message.
go_bin="${GO:-}"
if [[ -z "$go_bin" ]]; then
    if command -v go >/dev/null 2>&1; then
        go_bin="$(command -v go)"
    elif [[ -x /usr/local/go/bin/go ]]; then
        go_bin=/usr/local/go/bin/go
    else
        echo "$1: no Go toolchain found (set GO=/path/to/go)" >&2
        exit 1
    fi
fi
export GOTOOLCHAIN=local
export GOFLAGS=-mod=readonly
