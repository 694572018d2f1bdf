"""An operator's deployment as kustomize bases, the way kubebuilder lays out ``config/``.

::

    config/
      crd/        the CRDs of the kinds the reconcilers reconcile, own and watch (gen-crd)
      rbac/       ServiceAccount, least-privilege roles and bindings (gen-rbac), incl. the
                  namespaced leader-election Role
      manager/    Namespace and the manager Deployment (probes, resources, restricted pod
                  security: non-root, read-only root filesystem, no privilege escalation, no
                  capabilities, seccomp RuntimeDefault)
      metrics/    the Service in front of /metrics
      webhook/, certmanager/   with webhooks or conversions (``crdkit.deploy.webhooks``)
      default/    all of the above: ``kubectl apply -k config/default``

Every object carries its namespace already, and ``default`` sets no ``namespace:``: the roles of
a namespaced operator live in the namespace it watches, which a kustomize namespace override
would move. The Deployment runs ``crdkit run`` with the same options the roles were computed
for, so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crdkit.crd import build_crds
from crdkit.crd.output import crd_file_name
from crdkit.deploy.rbac import rbac_documents, source_class
from crdkit.deploy.webhooks import WebhookManifests
from crdkit.resources import CustomResource, resource_info
from crdkit.runtime.reconciler import Reconciler
from crdkit.runtime.watch import declared_watches

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.deploy.rbac import RbacSource

__all__ = ["ManifestOptions", "crd_classes", "operator_manifests", "run_arguments"]

METRICS_PORT = 8080
SECURE_METRICS_PORT = 8443
PROBE_PORT = 8081
# The uid and gid of the image's unprivileged user (distroless' "nonroot"), also in the Dockerfile.
NONROOT_UID = 65532


@dataclass(frozen=True)
class ManifestOptions:
    """What ``crdkit gen-manifests`` is told; the defaults follow kubebuilder's scaffold."""

    name: str
    image: str
    references: tuple[str, ...]
    namespace: str | None = None
    watch_namespace: str | None = None
    leader_elect: bool = True
    sharded: bool = False
    """Every replica a shard of one ring (``crdkit run --shards``) instead of one leader."""
    replicas: int = 1
    run_options: tuple[str, ...] = ()
    # kubebuilder's scaffold serves metrics over HTTPS to RBAC-authorised tokens by default
    metrics_secure: bool = True
    requests: dict[str, str] = field(default_factory=lambda: {"cpu": "10m", "memory": "128Mi"})
    limits: dict[str, str] = field(default_factory=lambda: {"cpu": "500m", "memory": "512Mi"})

    def __post_init__(self) -> None:
        if self.sharded and self.leader_elect:
            raise ValueError(
                "--shards replaces --leader-elect: each shard holds its own Lease "
                "(give --no-leader-elect)"
            )

    @property
    def operator_namespace(self) -> str:
        return self.namespace or f"{self.name}-system"

    @property
    def service_account(self) -> str:
        return f"{self.name}-controller-manager"

    @property
    def leader_election_id(self) -> str:
        return f"{self.name}-leader"

    @property
    def metrics_port(self) -> int:
        return SECURE_METRICS_PORT if self.metrics_secure else METRICS_PORT


def crd_classes(sources: Sequence[RbacSource]) -> list[type[CustomResource]]:
    """Every version of every custom kind the reconcilers reconcile, own or watch.

    A kind's other versions are the imported ``CustomResource`` classes of the same group and
    kind (``class TrainingJobV1(TrainingJob, version="v1")``): the CRD needs them all.
    """
    wanted: set[tuple[str, str]] = set()
    for source in map(source_class, sources):
        if not (isinstance(source, type) and issubclass(source, Reconciler)):
            continue
        kinds = [source.primary_kind(), *source.owns, *(w.kind for w in declared_watches(source))]
        for kind in kinds:
            if isinstance(kind, type) and issubclass(kind, CustomResource):
                info = resource_info(kind)
                wanted.add((info.group, info.kind))
    found: list[type[CustomResource]] = []
    pending: list[type[CustomResource]] = [CustomResource]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__resource__ is None:
            continue
        info = resource_info(cls)
        if (info.group, info.kind) in wanted and cls not in found:
            found.append(cls)
    return sorted(found, key=lambda cls: (cls.__module__, cls.__qualname__))


def run_arguments(options: ManifestOptions) -> list[str]:
    """The ``crdkit run`` command line of the manager container."""
    args = ["crdkit", "run", *options.references]
    if options.watch_namespace is not None:
        args += ["--namespace", options.watch_namespace]
    if options.leader_elect:
        args += [
            "--leader-elect",
            "--leader-election-id",
            options.leader_election_id,
            "--leader-election-namespace",
            _lease_namespace(options),
        ]
    if options.sharded:
        # Each pod's shard id is its name (the host name); the ring's Leases sit beside it.
        args += ["--shards", "--leader-election-namespace", _lease_namespace(options)]
    args += ["--metrics-bind-address", f":{options.metrics_port}"]
    if options.metrics_secure:
        args.append("--metrics-secure")
    args += ["--health-probe-bind-address", f":{PROBE_PORT}"]
    for option in options.run_options:
        args += ["--option", option]
    return args


def _lease_namespace(options: ManifestOptions) -> str:
    # as gen-rbac places the leader-election Role: the watched namespace, else the operator's
    return options.watch_namespace or options.operator_namespace


def _labels(options: ManifestOptions) -> dict[str, str]:
    # a new dict each call: a shared one would come out as YAML anchors and aliases
    return {
        "app.kubernetes.io/name": options.name,
        "app.kubernetes.io/component": "controller-manager",
        "app.kubernetes.io/managed-by": "crdkit",
    }


def _namespace(options: ManifestOptions) -> dict[str, Any]:
    # the restricted Pod Security Standard: the manager's pod meets it
    restricted = {"pod-security.kubernetes.io/enforce": "restricted"}
    return _core_object(
        "Namespace", name=options.operator_namespace, labels={**_labels(options), **restricted}
    )


def _core_object(kind: str, **metadata: Any) -> dict[str, Any]:
    """An object of the core API group (v1) with ``metadata``: what the Namespace and the
    ServiceAccount have in common."""
    return {"apiVersion": "v1", "kind": kind, "metadata": metadata}


def _deployment(options: ManifestOptions) -> dict[str, Any]:
    probe = {"port": "probes", "scheme": "HTTP"}
    container = {
        "name": "manager",
        "image": options.image,
        "command": run_arguments(options),
        "env": [
            {
                "name": "POD_NAMESPACE",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
            },
            # a read-only root takes no bytecode caches; /tmp is the one writable place
            {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
        ],
        "ports": [
            {"name": "metrics", "containerPort": options.metrics_port, "protocol": "TCP"},
            {"name": "probes", "containerPort": PROBE_PORT, "protocol": "TCP"},
        ],
        "livenessProbe": {
            "httpGet": {**probe, "path": "/healthz"},
            "initialDelaySeconds": 15,
            "periodSeconds": 20,
        },
        "readinessProbe": {
            "httpGet": {**probe, "path": "/readyz"},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
        },
        "resources": {"requests": dict(options.requests), "limits": dict(options.limits)},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": f"{options.name}-controller-manager",
            "namespace": options.operator_namespace,
            "labels": _labels(options),
        },
        "spec": {
            "replicas": options.replicas,
            "selector": {"matchLabels": _labels(options)},
            "template": {
                "metadata": {
                    "labels": _labels(options),
                    "annotations": {"kubectl.kubernetes.io/default-container": "manager"},
                },
                "spec": {
                    "serviceAccountName": options.service_account,
                    # crdkit run drains in-flight reconciles within 30 s of SIGTERM
                    "terminationGracePeriodSeconds": 40,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": NONROOT_UID,
                        "runAsGroup": NONROOT_UID,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [container],
                    "volumes": [{"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }


def _metrics_service(options: ManifestOptions) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": f"{options.name}-metrics",
            "namespace": options.operator_namespace,
            "labels": _labels(options),
        },
        "spec": {
            "selector": _labels(options),
            "ports": [
                {
                    "name": "https" if options.metrics_secure else "metrics",
                    "port": options.metrics_port,
                    "targetPort": "metrics",
                    "protocol": "TCP",
                }
            ],
        },
    }


def _metrics_auth_roles(options: ManifestOptions) -> list[dict[str, Any]]:
    """What the manager needs to check a scraper's token (``crdkit.runtime.metrics_auth``)."""
    name = f"{options.name}-metrics-auth"
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name, "labels": _labels(options)},
            "rules": [
                {
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["tokenreviews"],
                    "verbs": ["create"],
                },
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["subjectaccessreviews"],
                    "verbs": ["create"],
                },
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": _labels(options)},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": name,
            },
            "subjects": [
                {
                    "kind": "ServiceAccount",
                    "name": options.service_account,
                    "namespace": options.operator_namespace,
                }
            ],
        },
    ]


def _metrics_reader_role(options: ManifestOptions) -> dict[str, Any]:
    """Bind this to whatever scrapes the manager (a Prometheus service account)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": f"{options.name}-metrics-reader", "labels": _labels(options)},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
    }


def _service_account(options: ManifestOptions) -> dict[str, Any]:
    return _core_object(
        "ServiceAccount",
        name=options.service_account,
        namespace=options.operator_namespace,
        labels=_labels(options),
    )


def _kustomization(resources: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": resources,
    }


def operator_manifests(
    sources: Sequence[RbacSource], options: ManifestOptions
) -> dict[str, list[dict[str, Any]]]:
    """``config/``'s files (paths relative to it) → the documents each holds, in apply order."""
    webhooks = WebhookManifests(sources, options, labels=lambda: _labels(options))
    files: dict[str, list[dict[str, Any]]] = {}
    crds = sorted(build_crds(crd_classes(sources)), key=crd_file_name)
    for crd in crds:
        webhooks.convert_through(crd)
    crd_files = [f"bases/{crd_file_name(crd)}" for crd in crds]
    for path, crd in zip(crd_files, crds, strict=True):
        files[f"crd/{path}"] = [crd]
    files["crd/kustomization.yaml"] = [_kustomization(crd_files)]

    roles = rbac_documents(
        sources,
        name=options.name,
        namespace=options.watch_namespace,
        service_account=options.service_account,
        service_account_namespace=options.operator_namespace,
        leader_election_id=options.leader_election_id if options.leader_elect else None,
        leader_election_namespace=_lease_namespace(options),
        sharding=options.sharded,
    )
    election = [d for d in roles if d["metadata"]["name"] == f"{options.name}-leader-election"]
    files["rbac/service_account.yaml"] = [_service_account(options)]
    files["rbac/role.yaml"] = [d for d in roles if d not in election]
    rbac_files = ["service_account.yaml", "role.yaml"]
    if options.leader_elect or options.sharded:
        files["rbac/leader_election_role.yaml"] = election
        rbac_files.append("leader_election_role.yaml")
    if options.metrics_secure:
        files["rbac/metrics_auth_role.yaml"] = _metrics_auth_roles(options)
        files["rbac/metrics_reader_role.yaml"] = [_metrics_reader_role(options)]
        rbac_files += ["metrics_auth_role.yaml", "metrics_reader_role.yaml"]
    files["rbac/kustomization.yaml"] = [_kustomization(rbac_files)]

    deployment = _deployment(options)
    if webhooks:
        webhooks.serve_from(deployment)
    files["manager/manager.yaml"] = [_namespace(options), deployment]
    files["manager/kustomization.yaml"] = [_kustomization(["manager.yaml"])]
    files["metrics/service.yaml"] = [_metrics_service(options)]
    files["metrics/kustomization.yaml"] = [_kustomization(["service.yaml"])]
    bases = ["../crd", "../manager", "../rbac", "../metrics"]
    if webhooks:
        extra = webhooks.files()
        files.update(extra)
        for folder in ("certmanager", "webhook"):
            names = [p.split("/", 1)[1] for p in extra if p.startswith(f"{folder}/")]
            files[f"{folder}/kustomization.yaml"] = [_kustomization(names)]
            bases.append(f"../{folder}")
    # CRDs and the Namespace first: kubectl apply -k sorts by kind, a plain apply goes in order
    files["default/kustomization.yaml"] = [_kustomization(bases)]
    return files
