package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// benchReconciler is runtime_bench_operators.py's BenchReconciler: read the object from the
// cache, and unless status.observed already equals spec.value, write it through the status
// subresource (a PUT carrying the resourceVersion, like crdkit's update_status). A conflict is
// returned as an error, so controller-runtime requeues the key with backoff, its idiom.
type benchReconciler struct {
	client client.Client
}

func (r *benchReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var item Item
	if err := r.client.Get(ctx, req.NamespacedName, &item); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if item.Status != nil && item.Status.Observed != nil && *item.Status.Observed == item.Spec.Value {
		return ctrl.Result{}, nil
	}
	observed := item.Spec.Value
	item.Status = &ItemStatus{Observed: &observed}
	return ctrl.Result{}, r.client.Status().Update(ctx, &item)
}

func runOperator(fs *flag.FlagSet, args []string) error {
	namespace := fs.String("namespace", "", "the only namespace watched (required)")
	workers := fs.Int("max-concurrent-reconciles", 1, "reconciles at once (controller-runtime's default is 1)")
	probes := fs.String("health-probe-bind-address", ":8081", "where /healthz and /readyz are served")
	group := fs.String("group", "bench.crdkit.io", "the custom resource's API group")
	version := fs.String("api-version", "v1", "the custom resource's API version")
	kind := fs.String("kind", "RuntimeBenchItem", "the custom resource's kind")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *namespace == "" {
		return errors.New("--namespace is required")
	}
	ctrl.SetLogger(zap.New(zap.Level(zapcore.WarnLevel)))

	gvk := schema.GroupVersionKind{Group: *group, Version: *version, Kind: *kind}
	config, err := ctrl.GetConfig() // --kubeconfig; client-side rate limiting off, the default
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:                 newScheme(gvk, &Item{}, &ItemList{}),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: *probes,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{*namespace: {}}},
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	// Ready once the cache holds the namespace's objects, what crdkit's /readyz reports
	// (kubebuilder's scaffold uses healthz.Ping, which answers as soon as the server listens).
	if err := mgr.AddReadyzCheck("cache-synced", func(req *http.Request) error {
		informer, err := mgr.GetCache().GetInformer(req.Context(), &Item{}, cache.BlockUntilSynced(false))
		if err != nil {
			return err
		}
		if !informer.HasSynced() {
			return errors.New("cache not synced")
		}
		return nil
	}); err != nil {
		return err
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&Item{}).
		Named("runtime-bench").
		WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
		Complete(&benchReconciler{client: mgr.GetClient()})
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
