package main

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The two custom resources of the Python benches, as the tiny typed Go structs a kubebuilder
// project would have (hand-written DeepCopy instead of controller-gen's, same behaviour).
// Their group, version and kind come from flags, so the structs are registered under whatever
// GroupVersionKind the bench created the CRD with.

// Item is runtime_bench.py's RuntimeBenchItem: spec.value, status.observed.
type Item struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ItemSpec    `json:"spec"`
	Status *ItemStatus `json:"status,omitempty"`
}

// ItemSpec is the part the operator reads.
type ItemSpec struct {
	Value int64 `json:"value"`
}

// ItemStatus is the part the operator writes.
type ItemStatus struct {
	Observed *int64 `json:"observed,omitempty"`
}

// ItemList is the list kind the cache lists and watches.
type ItemList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Item `json:"items"`
}

// DeepCopyInto copies every field, pointers included.
func (in *Item) DeepCopyInto(out *Item) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Status != nil {
		status := *in.Status
		if in.Status.Observed != nil {
			observed := *in.Status.Observed
			status.Observed = &observed
		}
		out.Status = &status
	}
}

// DeepCopyObject implements runtime.Object.
func (in *Item) DeepCopyObject() runtime.Object {
	out := new(Item)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *ItemList) DeepCopyObject() runtime.Object {
	out := &ItemList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Item, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// BenchJob is informer_bench.py's BenchJob: a training job with a pod template, typed with
// corev1.PodTemplateSpec as crdkit's side is typed with its PodSpec model.
type BenchJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BenchJobSpec `json:"spec"`
}

// BenchJobSpec mirrors the Python model's fields.
type BenchJobSpec struct {
	MinAvailable int32                  `json:"minAvailable,omitempty"`
	Replicas     int32                  `json:"replicas,omitempty"`
	Queue        string                 `json:"queue,omitempty"`
	Template     corev1.PodTemplateSpec `json:"template"`
}

// BenchJobList is the list kind the cache lists and watches.
type BenchJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []BenchJob `json:"items"`
}

// DeepCopyInto copies every field, the pod template included.
func (in *BenchJob) DeepCopyInto(out *BenchJob) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.Template.DeepCopyInto(&out.Spec.Template)
}

// DeepCopyObject implements runtime.Object.
func (in *BenchJob) DeepCopyObject() runtime.Object {
	out := new(BenchJob)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *BenchJobList) DeepCopyObject() runtime.Object {
	out := &BenchJobList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]BenchJob, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// newScheme registers obj and list under gvk (and gvk.Kind+"List"), with the meta/v1 types
// (ListOptions, WatchEvent, ...) the client needs for that group version.
func newScheme(gvk schema.GroupVersionKind, obj, list runtime.Object) *runtime.Scheme {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(gvk, obj)
	scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), list)
	metav1.AddToGroupVersion(scheme, gvk.GroupVersion())
	return scheme
}
