"""A real control plane on this machine: etcd and kube-apiserver as child processes, built by
``make envtest`` (``tools/envtest``) or found in ``KUBEBUILDER_ASSETS`` or setup-envtest's store.

``control_plane.ControlPlane`` starts and stops them, installs CRDs (``crds.load_crds``), makes
namespaces and users (``users``: restricted kubeconfigs, ServiceAccount tokens); ``cli`` is
``crdkit envtest``. The names users need are exported by :mod:`crdkit.testing` itself.
"""
