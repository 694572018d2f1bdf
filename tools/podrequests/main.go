// Command podrequests prints the effective resource requests of pods, as kube-scheduler's
// NodeResourcesFit plugin computes them (k8s.io/component-helpers/resource.PodRequests with
// the PodLevelResources feature gate on, its default since Kubernetes v1.34). It is the
// reference side of the differential test of crdkit.scheduling.requests.
//
// Input: one JSON Pod per line on stdin. Output: one JSON object per line, resource name to
// the request in milli-units (Quantity.MilliValue), or {"error": "..."} when a line does not
// decode as a Pod. Each answer is flushed at once, so a caller can ask one pod at a time.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/resource"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var pod v1.Pod
		if err := json.Unmarshal(in.Bytes(), &pod); err != nil {
			_ = enc.Encode(map[string]string{"error": err.Error()})
			flush(out)
			continue
		}
		// The options of kube-scheduler's computePodResourceRequest: a pending pod has no
		// status resources to consider, and pod-level resources count (PodLevelResources on).
		reqs := resource.PodRequests(&pod, resource.PodResourcesOptions{SkipPodLevelResources: false})
		milli := make(map[string]int64, len(reqs))
		for name, q := range reqs {
			milli[string(name)] = q.MilliValue()
		}
		if err := enc.Encode(milli); err != nil {
			fmt.Fprintln(os.Stderr, "podrequests:", err)
			os.Exit(1)
		}
		flush(out)
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "podrequests:", err)
		os.Exit(1)
	}
}

func flush(out *bufio.Writer) {
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "podrequests:", err)
		os.Exit(1)
	}
}
