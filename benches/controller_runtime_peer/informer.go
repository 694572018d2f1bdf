package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// runInformer is the controller-runtime side of informer_bench.py: the cache a Manager would
// build for one namespace (cache.New with DefaultNamespaces and the typed BenchJob), its
// informer started the way the Manager starts it, timed from asking for the informer (which
// maps the kind through discovery) to HasSynced; then every object must have reached an event
// handler, one stored object must be the expected one, and one patched object must come back
// through the watch. The memory figures are read after a garbage collection, as the Python
// workers do: VmRSS and VmHWM of this process and VmRSS before the cache existed.
func runInformer(fs *flag.FlagSet, args []string) error {
	namespace := fs.String("namespace", "", "the namespace holding the objects (required)")
	objects := fs.Int("objects", 0, "how many objects the namespace holds (required)")
	touched := fs.String("touched", "job-00000", "the object patched to prove the watch")
	group := fs.String("group", "bench.crdkit.dev", "the custom resource's API group")
	version := fs.String("api-version", "v1", "the custom resource's API version")
	kind := fs.String("kind", "BenchJob", "the custom resource's kind")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *namespace == "" || *objects < 1 {
		return errors.New("--namespace and --objects are required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	gvk := schema.GroupVersionKind{Group: *group, Version: *version, Kind: *kind}
	scheme := newScheme(gvk, &BenchJob{}, &BenchJobList{})
	config, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	writer, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	jobs, err := cache.New(config, cache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]cache.Config{*namespace: {}},
	})
	if err != nil {
		return err
	}
	rssBefore, err := procStatusMB("VmRSS")
	if err != nil {
		return err
	}

	mark := fmt.Sprintf("controller-runtime-%d", time.Now().UnixNano())
	seen := make(chan struct{})
	var once sync.Once
	var added atomic.Int64
	started := time.Now()
	informer, err := jobs.GetInformer(ctx, &BenchJob{}, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	handler, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { added.Add(1) },
		UpdateFunc: func(_, obj any) {
			job, ok := obj.(*BenchJob)
			if ok && job.Name == *touched && job.Labels["touched"] == mark {
				once.Do(func() { close(seen) })
			}
		},
	})
	if err != nil {
		return err
	}
	failed := make(chan error, 1)
	go func() { failed <- jobs.Start(ctx) }()
	select {
	case <-informer.HasSyncedChecker().Done():
	case err := <-failed:
		return fmt.Errorf("the cache stopped before it synced: %w", err)
	case <-ctx.Done():
		return errors.New("the cache did not sync within 10 minutes")
	}
	syncS := time.Since(started).Seconds()

	select {
	case <-handler.HasSyncedChecker().Done():
	case <-ctx.Done():
		return errors.New("the handler did not receive the initial objects")
	}
	if got := added.Load(); got != int64(*objects) {
		return fmt.Errorf("controller-runtime stored %d objects, expected %d", got, *objects)
	}
	var sample BenchJob
	if err := jobs.Get(ctx, types.NamespacedName{Namespace: *namespace, Name: *touched}, &sample); err != nil {
		return err
	}
	if containers := sample.Spec.Template.Spec.Containers; len(containers) == 0 || containers[0].Name != "trainer" {
		return fmt.Errorf("controller-runtime stored an unexpected object: %+v", sample.Spec)
	}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{"touched":%q}}}`, mark)
	if err := writer.Patch(ctx, &sample, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return err
	}
	select {
	case <-seen:
	case <-time.After(60 * time.Second):
		return errors.New("the patched object did not come back through the watch within 60 s")
	}

	runtime.GC()
	rss, err := procStatusMB("VmRSS")
	if err != nil {
		return err
	}
	peak, err := procStatusMB("VmHWM")
	if err != nil {
		return err
	}
	var memory runtime.MemStats
	runtime.ReadMemStats(&memory)
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"sync_s":        syncS,
		"rss_mb":        rss,
		"peak_rss_mb":   peak,
		"rss_before_mb": rssBefore,
		"heap_inuse_mb": float64(memory.HeapInuse) / (1 << 20),
	})
}
