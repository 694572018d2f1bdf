// Command kueue_tas times Kueue's own topology-aware scheduling (TAS) on a cluster and gangs
// given in crdkit's placement-io format (docs/reference/placement-io.md), as a peer for
// benches/placer_bench.py.
//
// It imports sigs.k8s.io/kueue (the version pinned in go.mod) and drives its scheduler cache
// through the exported API, the way Kueue's controllers and scheduler do:
//
//   - a Topology (the crdkit levels, plus kubernetes.io/hostname when crdkit's host level is
//     implicit), a ResourceFlavor with spec.topologyName, and one ClusterQueue that uses the
//     flavor, added with Cache.AddOrUpdateTopology / AddOrUpdateResourceFlavor / AddClusterQueue;
//   - one corev1.Node per crdkit node (topology labels, kubernetes.io/hostname = the node name
//     when implicit, status.allocatable, taints, spec.unschedulable, the Ready condition), fed
//     with Cache.TASCache().SyncNode, as Kueue's node reconciler does;
//   - crdkit's "used" capacity as non-TAS usage: one running Pod bound to the node
//     (spec.nodeName) whose single container requests exactly "used", fed with
//     Cache.TASCache().Update, as Kueue's non-TAS pod reconciler does for DaemonSet or other
//     pods that Kueue did not admit. Kueue counts one pod slot per such Pod; when "used" has
//     "pods": P, P Pods are made (the first carries the resources) so the slots match;
//   - the per-cycle snapshot with Cache.Snapshot (which builds the TAS flavor snapshot from the
//     nodes cache and the non-TAS usage, exactly as each scheduling cycle does), and the search
//     with TASFlavorSnapshot.FindTopologyAssignmentsForFlavor on the ClusterQueue snapshot's
//     TAS flavor, the function ClusterQueueSnapshot.FindTopologyAssignmentsForWorkload calls.
//
// Each crdkit task becomes a PodSet whose TopologyRequest is built by Kueue's
// jobframework.NewPodSetTopologyRequest from the annotations kueue.x-k8s.io/podset-required-
// topology, podset-preferred-topology or podset-unconstrained-topology, taken from the task's
// or the gang's topology. Slices and minAvailable < replicas are not mapped (an error per gang).
//
// Usage: kueue_tas INPUT.json  (prints one JSON object on stdout). The input is
//
//	{"cluster": <placement-io cluster>, "gangs": [<placement-io gang>, ...],
//	 "searchRepeats": 100, "snapshotRepeats": 20}
//
// and the output, per gang, the search time alone on one snapshot (searchP50Us, searchP99Us,
// searchRepeats) and the snapshot build plus the search (withSnapshotP50Us, withSnapshotP99Us,
// snapshotRepeats), in microseconds, with what Kueue found (found, reason, level, domain,
// nodesUsed, podsAssigned). A fatal problem prints {"error": "..."} and exits with status 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/resources"
)

const (
	topologyName = "crdkit-bench"
	flavorName   = "crdkit-tas"
	queueName    = "crdkit-bench"
)

// The placement-io input, only the fields this peer maps.
type input struct {
	Cluster         cluster `json:"cluster"`
	Gangs           []gang  `json:"gangs"`
	SearchRepeats   int     `json:"searchRepeats"`
	SnapshotRepeats int     `json:"snapshotRepeats"`
}

type cluster struct {
	Levels []string `json:"levels"`
	Nodes  []node   `json:"nodes"`
}

type node struct {
	Name          string                     `json:"name"`
	Labels        map[string]string          `json:"labels"`
	Allocatable   map[string]json.RawMessage `json:"allocatable"`
	Used          map[string]json.RawMessage `json:"used"`
	Taints        []corev1.Taint             `json:"taints"`
	Unschedulable bool                       `json:"unschedulable"`
	Ready         *bool                      `json:"ready"`
}

type topology struct {
	Mode  string `json:"mode"`
	Level string `json:"level"`
}

type task struct {
	Name         string                     `json:"name"`
	Replicas     int32                      `json:"replicas"`
	MinAvailable *int32                     `json:"minAvailable"`
	Requests     map[string]json.RawMessage `json:"requests"`
	NodeSelector map[string]string          `json:"nodeSelector"`
	Tolerations  []corev1.Toleration        `json:"tolerations"`
	Topology     *topology                  `json:"topology"`
	Slice        json.RawMessage            `json:"slice"`
}

type gang struct {
	Name     string    `json:"name"`
	Topology *topology `json:"topology"`
	Tasks    []task    `json:"tasks"`
}

type gangResult struct {
	Gang              string            `json:"gang"`
	Pods              int32             `json:"pods"`
	Error             string            `json:"error,omitempty"`
	Found             bool              `json:"found"`
	Reason            string            `json:"reason,omitempty"`
	Level             *string           `json:"level"`
	Domain            map[string]string `json:"domain"`
	NodesUsed         int               `json:"nodesUsed"`
	PodsAssigned      int32             `json:"podsAssigned"`
	SearchP50Us       float64           `json:"searchP50Us"`
	SearchP99Us       float64           `json:"searchP99Us"`
	SearchRepeats     int               `json:"searchRepeats"`
	WithSnapshotP50Us float64           `json:"withSnapshotP50Us"`
	WithSnapshotP99Us float64           `json:"withSnapshotP99Us"`
	SnapshotRepeats   int               `json:"snapshotRepeats"`
}

type output struct {
	Kueue         string       `json:"kueue"`
	Go            string       `json:"go"`
	GOMAXPROCS    int          `json:"gomaxprocs"`
	Nodes         int          `json:"nodes"`
	NodesInFlavor int          `json:"nodesInFlavor"`
	Levels        []string     `json:"levels"`
	NonTASPods    int          `json:"nonTasPods"`
	SetupMs       float64      `json:"setupMs"`
	SnapshotP50Us float64      `json:"snapshotP50Us"`
	Gangs         []gangResult `json:"gangs"`
}

func quantity(raw json.RawMessage) (resource.Quantity, error) {
	text := strings.TrimSpace(string(raw))
	if strings.HasPrefix(text, `"`) {
		if err := json.Unmarshal(raw, &text); err != nil {
			return resource.Quantity{}, err
		}
	}
	return resource.ParseQuantity(text)
}

func resourceList(in map[string]json.RawMessage, where string) (corev1.ResourceList, error) {
	out := make(corev1.ResourceList, len(in))
	for name, raw := range in {
		q, err := quantity(raw)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", where, name, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// kueueLevels are the Topology levels: crdkit's, plus the hostname level that crdkit adds
// implicitly when its last level is not kubernetes.io/hostname.
func kueueLevels(c *cluster) ([]string, bool) {
	levels := slices.Clone(c.Levels)
	implicitHost := len(levels) == 0 || levels[len(levels)-1] != corev1.LabelHostname
	if implicitHost {
		levels = append(levels, corev1.LabelHostname)
	}
	return levels, implicitHost
}

func toNode(n *node, implicitHost bool) (*corev1.Node, error) {
	allocatable, err := resourceList(n.Allocatable, "nodes["+n.Name+"].allocatable")
	if err != nil {
		return nil, err
	}
	labels := make(map[string]string, len(n.Labels)+1)
	for k, v := range n.Labels {
		labels[k] = v
	}
	if implicitHost {
		labels[corev1.LabelHostname] = n.Name
	}
	ready := corev1.ConditionTrue
	if n.Ready != nil && !*n.Ready {
		ready = corev1.ConditionFalse
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: n.Taints, Unschedulable: n.Unschedulable},
		Status: corev1.NodeStatus{
			Allocatable: allocatable,
			Capacity:    allocatable,
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}},
		},
	}, nil
}

// usedPods expresses a node's "used" as running non-TAS Pods bound to it.
func usedPods(n *node) ([]*corev1.Pod, error) {
	if len(n.Used) == 0 {
		return nil, nil
	}
	used, err := resourceList(n.Used, "nodes["+n.Name+"].used")
	if err != nil {
		return nil, err
	}
	count := int64(1)
	if pods, ok := used[corev1.ResourcePods]; ok {
		count = pods.Value()
		delete(used, corev1.ResourcePods)
	}
	result := make([]*corev1.Pod, 0, count)
	for i := range count {
		requests := corev1.ResourceList{}
		if i == 0 {
			requests = used
		}
		result = append(result, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: fmt.Sprintf("used-%s-%d", n.Name, i)},
			Spec: corev1.PodSpec{
				NodeName:   n.Name,
				Containers: []corev1.Container{{Name: "used", Resources: corev1.ResourceRequirements{Requests: requests}}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		})
	}
	return result, nil
}

func newCache(ctx context.Context, levels []string, coveredResources []corev1.ResourceName) (*schdcache.Cache, error) {
	scheme := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		return nil, err
	}
	// AddClusterQueue lists LocalQueues and Workloads of the queue by these indexes; there are none.
	client := fake.NewClientBuilder().WithScheme(scheme).
		WithIndex(&kueue.LocalQueue{}, indexer.QueueClusterQueueKey, indexer.IndexQueueClusterQueue).
		WithIndex(&kueue.Workload{}, indexer.WorkloadClusterQueueKey, indexer.IndexWorkloadClusterQueue).
		Build()
	cache := schdcache.New(client)
	log := logr.FromContextOrDiscard(ctx)

	topologyLevels := make([]kueue.TopologyLevel, len(levels))
	for i, level := range levels {
		topologyLevels[i] = kueue.TopologyLevel{NodeLabel: level}
	}
	cache.AddOrUpdateTopology(log, &kueue.Topology{
		ObjectMeta: metav1.ObjectMeta{Name: topologyName},
		Spec:       kueue.TopologySpec{Levels: topologyLevels},
	})
	topologyRef := kueue.TopologyReference(topologyName)
	cache.AddOrUpdateResourceFlavor(log, &kueue.ResourceFlavor{
		ObjectMeta: metav1.ObjectMeta{Name: flavorName},
		Spec:       kueue.ResourceFlavorSpec{TopologyName: &topologyRef},
	})
	quotas := make([]kueue.ResourceQuota, len(coveredResources))
	for i, name := range coveredResources {
		quotas[i] = kueue.ResourceQuota{Name: name, NominalQuota: resource.MustParse("1e15")}
	}
	err := cache.AddClusterQueue(ctx, &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: queueName},
		Spec: kueue.ClusterQueueSpec{
			ResourceGroups: []kueue.ResourceGroup{{
				CoveredResources: coveredResources,
				Flavors:          []kueue.FlavorQuotas{{Name: flavorName, Resources: quotas}},
			}},
		},
	})
	return cache, err
}

func flavorSnapshot(ctx context.Context, cache *schdcache.Cache) (*schdcache.TASFlavorSnapshot, error) {
	snap, err := cache.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	cq := snap.ClusterQueue(queueName)
	if cq == nil {
		return nil, errors.New("the ClusterQueue is not active in Kueue's snapshot")
	}
	tas := cq.TASFlavors[flavorName]
	if tas == nil {
		return nil, errors.New("the ClusterQueue snapshot has no TAS flavor snapshot")
	}
	return tas, nil
}

func topologyAnnotations(t *topology) (map[string]string, error) {
	if t == nil || t.Mode == "" || t.Mode == "unconstrained" {
		return map[string]string{kueue.PodSetUnconstrainedTopologyAnnotation: "true"}, nil
	}
	switch t.Mode {
	case "required":
		return map[string]string{kueue.PodSetRequiredTopologyAnnotation: t.Level}, nil
	case "preferred":
		return map[string]string{kueue.PodSetPreferredTopologyAnnotation: t.Level}, nil
	}
	return nil, fmt.Errorf("unknown topology mode %q", t.Mode)
}

func tasRequests(g *gang) (schdcache.FlavorTASRequests, int32, error) {
	constrained := g.Topology != nil && g.Topology.Mode != "" && g.Topology.Mode != "unconstrained"
	if constrained && len(g.Tasks) > 1 {
		return nil, 0, errors.New("a gang-level topology over several tasks is not mapped to Kueue")
	}
	result := make(schdcache.FlavorTASRequests, 0, len(g.Tasks))
	total := int32(0)
	for i := range g.Tasks {
		t := &g.Tasks[i]
		if len(t.Slice) > 0 && string(t.Slice) != "null" {
			return nil, 0, errors.New("slices are not mapped to Kueue")
		}
		if t.MinAvailable != nil && *t.MinAvailable != t.Replicas {
			return nil, 0, errors.New("minAvailable < replicas is not mapped to Kueue")
		}
		requests, err := resourceList(t.Requests, "tasks["+t.Name+"].requests")
		if err != nil {
			return nil, 0, err
		}
		topo := t.Topology
		if topo == nil || topo.Mode == "" {
			topo = g.Topology
		}
		annotations, err := topologyAnnotations(topo)
		if err != nil {
			return nil, 0, err
		}
		meta := metav1.ObjectMeta{Annotations: annotations}
		topologyRequest, err := jobframework.NewPodSetTopologyRequest(&meta).Build()
		if err != nil {
			return nil, 0, err
		}
		podSet := &kueue.PodSet{
			Name:  kueue.NewPodSetReference(t.Name),
			Count: t.Replicas,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: meta,
				Spec: corev1.PodSpec{
					NodeSelector: t.NodeSelector,
					Tolerations:  t.Tolerations,
					Containers:   []corev1.Container{{Name: t.Name, Resources: corev1.ResourceRequirements{Requests: requests}}},
				},
			},
			TopologyRequest: topologyRequest,
		}
		result = append(result, schdcache.TASPodSetRequests{
			PodSet:            podSet,
			SinglePodRequests: resources.NewRequests(requests),
			Count:             t.Replicas,
			Flavor:            flavorName,
		})
		total += t.Replicas
	}
	return result, total, nil
}

// percentiles as benches/placer_bench.py computes them: the median, and the sample at the
// rounded (half to even) index fraction*(n-1) of the sorted samples.
func p50(samples []float64) float64 {
	s := slices.Clone(samples)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func p99(samples []float64) float64 {
	s := slices.Clone(samples)
	sort.Float64s(s)
	i := int(math.RoundToEven(0.99 * float64(len(s)-1)))
	return s[min(len(s)-1, i)]
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// describe reports what Kueue chose: the lowest domain holding every assigned pod.
func describe(r *gangResult, result schdcache.TASAssignmentsResult, requests schdcache.FlavorTASRequests,
	levels []string, nodeLabels map[string]map[string]string) {
	if failure := result.Failure(); failure != nil {
		r.Reason = failure.Reason
		return
	}
	r.Found = true
	nodes := map[string]bool{}
	var common []string
	first := true
	for _, tr := range requests {
		assignment := result[tr.PodSet.Name].TopologyAssignment
		if assignment == nil {
			continue
		}
		for _, d := range assignment.Domains {
			r.PodsAssigned += d.Count
			// Kueue lists only the hostname when it is the lowest level; recover the full path.
			values := d.Values
			if len(values) < len(levels) {
				labels := nodeLabels[values[len(values)-1]]
				values = make([]string, len(levels))
				for i, level := range levels {
					values[i] = labels[level]
				}
			}
			nodes[values[len(values)-1]] = true
			if first {
				common = slices.Clone(values)
				first = false
				continue
			}
			k := 0
			for k < len(common) && common[k] == values[k] {
				k++
			}
			common = common[:k]
		}
	}
	r.NodesUsed = len(nodes)
	r.Domain = map[string]string{}
	for i, v := range common {
		r.Domain[levels[i]] = v
	}
	if len(common) > 0 {
		level := levels[len(common)-1]
		r.Level = &level
	}
}

func kueueVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "sigs.k8s.io/kueue" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func run(path string) (*output, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var in input
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	in.SearchRepeats = max(in.SearchRepeats, 1)
	in.SnapshotRepeats = max(in.SnapshotRepeats, 1)

	// Kueue logs through controller-runtime's logger; keep it quiet and cheap.
	ctrllog.SetLogger(logr.Discard())
	ctx := logr.NewContext(context.Background(), logr.Discard())
	log := logr.Discard()

	start := time.Now()
	levels, implicitHost := kueueLevels(&in.Cluster)
	nodes := make([]*corev1.Node, 0, len(in.Cluster.Nodes))
	var pods []*corev1.Pod
	covered := map[corev1.ResourceName]bool{}
	nodeLabels := make(map[string]map[string]string, len(in.Cluster.Nodes))
	for i := range in.Cluster.Nodes {
		n, err := toNode(&in.Cluster.Nodes[i], implicitHost)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
		nodeLabels[n.Labels[corev1.LabelHostname]] = n.Labels
		for name := range n.Status.Allocatable {
			if name != corev1.ResourcePods {
				covered[name] = true
			}
		}
		used, err := usedPods(&in.Cluster.Nodes[i])
		if err != nil {
			return nil, err
		}
		pods = append(pods, used...)
	}
	coveredResources := make([]corev1.ResourceName, 0, len(covered))
	for name := range covered {
		coveredResources = append(coveredResources, name)
	}
	slices.Sort(coveredResources)

	cache, err := newCache(ctx, levels, coveredResources)
	if err != nil {
		return nil, err
	}
	tasCache := cache.TASCache()
	for _, n := range nodes {
		tasCache.SyncNode(n)
	}
	for _, p := range pods {
		tasCache.Update(p, log)
	}
	snapshot, err := flavorSnapshot(ctx, cache)
	if err != nil {
		return nil, err
	}
	out := &output{
		Kueue:      kueueVersion(),
		Go:         runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Nodes:      len(nodes),
		Levels:     levels,
		NonTASPods: len(pods),
		SetupMs:    round1(float64(time.Since(start).Microseconds()) / 1e3),
	}
	if free, err := snapshot.SerializeFreeCapacityPerDomain(); err == nil {
		var perDomain map[string]json.RawMessage
		if json.Unmarshal([]byte(free), &perDomain) == nil {
			out.NodesInFlavor = len(perDomain)
		}
	}

	var snapshotOnly []float64
	for _, g := range in.Gangs {
		r := gangResult{Gang: g.Name, Domain: map[string]string{}}
		requests, pods, err := tasRequests(&g)
		r.Pods = pods
		if err != nil {
			r.Error = err.Error()
			out.Gangs = append(out.Gangs, r)
			continue
		}
		// (a) the search alone, on the snapshot built once (warm-up call first).
		result := snapshot.FindTopologyAssignmentsForFlavor(requests)
		describe(&r, result, requests, levels, nodeLabels)
		samples := make([]float64, 0, in.SearchRepeats)
		for range in.SearchRepeats {
			t0 := time.Now()
			snapshot.FindTopologyAssignmentsForFlavor(requests)
			samples = append(samples, micros(time.Since(t0)))
		}
		r.SearchP50Us, r.SearchP99Us, r.SearchRepeats = round1(p50(samples)), round1(p99(samples)), len(samples)

		// (b) the per-cycle snapshot (Cache.Snapshot) plus the search on it.
		samples = samples[:0]
		for range in.SnapshotRepeats {
			t0 := time.Now()
			fresh, err := flavorSnapshot(ctx, cache)
			if err != nil {
				return nil, err
			}
			t1 := time.Now()
			fresh.FindTopologyAssignmentsForFlavor(requests)
			samples = append(samples, micros(time.Since(t0)))
			snapshotOnly = append(snapshotOnly, micros(t1.Sub(t0)))
		}
		r.WithSnapshotP50Us, r.WithSnapshotP99Us, r.SnapshotRepeats = round1(p50(samples)), round1(p99(samples)), len(samples)
		out.Gangs = append(out.Gangs, r)
	}
	if len(snapshotOnly) > 0 {
		out.SnapshotP50Us = round1(p50(snapshotOnly))
	}
	return out, nil
}

func main() {
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	if len(os.Args) != 2 {
		_ = encoder.Encode(map[string]string{"error": "usage: kueue_tas INPUT.json"})
		os.Exit(2)
	}
	// KUEUE_TAS_CPUPROFILE=FILE writes a CPU profile of the whole run, to see where Kueue spends it.
	if path := os.Getenv("KUEUE_TAS_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	out, err := run(os.Args[1])
	if err != nil {
		_ = encoder.Encode(map[string]string{"error": err.Error()})
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	if err := encoder.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
