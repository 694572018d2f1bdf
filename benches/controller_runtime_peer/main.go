// Command controller_runtime_peer is the controller-runtime peer of crdkit's runtime and
// informer benchmarks (benches/runtime_bench.py, benches/informer_bench.py): the same work done
// the way a kubebuilder project does it, with sigs.k8s.io/controller-runtime at the version
// pinned in go.mod and its defaults unless a flag says otherwise.
//
//	controller_runtime_peer operator --kubeconfig FILE --namespace NS \
//	    --max-concurrent-reconciles 32 --health-probe-bind-address 127.0.0.1:PORT
//	controller_runtime_peer informer --kubeconfig FILE --namespace NS --objects N
//	controller_runtime_peer version
//
// operator runs a Manager with one controller for RuntimeBenchItem that writes
// status.observed = spec.value through the status subresource, once per object (operator.go).
// informer syncs a controller-runtime cache of N BenchJob objects, proves one watch event and
// prints its sync time and memory as JSON (informer.go). version prints the module versions
// this binary was built with, as JSON. The group, version and kind of both resources are
// flags whose defaults are the Python benches' CRDs.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: controller_runtime_peer operator|informer|version [flags]")
		os.Exit(2)
	}
	// The subcommand's flags go on the default FlagSet, which already has controller-runtime's
	// --kubeconfig (registered by its config package), as in a kubebuilder main.go.
	var err error
	switch command, args := os.Args[1], os.Args[2:]; command {
	case "operator":
		err = runOperator(flag.CommandLine, args)
	case "informer":
		err = runInformer(flag.CommandLine, args)
	case "version":
		err = json.NewEncoder(os.Stdout).Encode(versions())
	default:
		err = fmt.Errorf("unknown command %q (operator, informer or version)", command)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "controller_runtime_peer: %v\n", err)
		os.Exit(1)
	}
}

// versions reports what this binary was built from.
func versions() map[string]any {
	out := map[string]any{"go": runtime.Version(), "gomaxprocs": runtime.GOMAXPROCS(0)}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			switch dep.Path {
			case "sigs.k8s.io/controller-runtime":
				out["controller_runtime"] = dep.Version
			case "k8s.io/client-go":
				out["client_go"] = dep.Version
			}
		}
	}
	return out
}

// procStatusMB reads one of /proc/self/status's kB fields (VmRSS, VmHWM) in MB.
func procStatusMB(field string) (float64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("%s in /proc/self/status: %w", field, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}
