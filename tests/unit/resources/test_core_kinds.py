from crdkit.resources import (
    Binding,
    ConfigMap,
    Namespace,
    Node,
    ObjectMeta,
    ObjectReference,
    Pod,
    Secret,
    resource_info,
)

POD = (
    b'{"kind":"Pod","apiVersion":"v1","metadata":{"name":"w-0","namespace":"ns"},'
    b'"spec":{"schedulerName":"gang","nodeName":"n1","priority":100,'
    b'"nodeSelector":{"topology/leaf":"l1"},'
    b'"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}],'
    b'"affinity":{"nodeAffinity":{}},'
    b'"containers":[{"name":"c","image":"img","resources":{"requests":{"cpu":"500m",'
    b'"nvidia.com/gpu":8},"limits":{"nvidia.com/gpu":"8"}},"command":["run"]}]},'
    b'"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False",'
    b'"lastTransitionTime":"2024-01-01T00:00:00Z"}],"qosClass":"Burstable"}}'
)


def test_pod_fields_for_scheduling() -> None:
    pod = Pod.model_validate_json(POD)
    assert pod.spec.scheduler_name == "gang"
    assert pod.spec.node_name == "n1"
    assert pod.spec.priority == 100
    assert pod.spec.node_selector == {"topology/leaf": "l1"}
    assert pod.spec.tolerations[0].key == "nvidia.com/gpu"
    assert pod.spec.affinity == {"nodeAffinity": {}}
    requests = pod.spec.containers[0].resources.requests
    assert requests == {"cpu": "500m", "nvidia.com/gpu": "8"}  # numbers kept as quantity text
    assert pod.status is not None
    assert pod.status.phase == "Pending"
    assert pod.status.conditions[0].type == "PodScheduled"


def test_pod_keeps_unknown_fields() -> None:
    body = Pod.model_validate_json(POD).to_dict()
    assert body["spec"]["containers"][0]["command"] == ["run"]
    assert body["status"]["qosClass"] == "Burstable"


def test_node() -> None:
    node = Node.model_validate_json(
        b'{"metadata":{"name":"n1","labels":{"topology/leaf":"l1"}},'
        b'"spec":{"unschedulable":true,"taints":[{"key":"k","effect":"NoSchedule"}],'
        b'"podCIDR":"10.0.0.0/24"},'
        b'"status":{"capacity":{"nvidia.com/gpu":"8"},"allocatable":{"cpu":"63500m"},'
        b'"conditions":[{"type":"Ready","status":"True"}]}}'
    )
    assert node.metadata.labels["topology/leaf"] == "l1"
    assert node.spec.unschedulable is True
    assert node.spec.taints[0].effect == "NoSchedule"
    assert node.spec.pod_cidr == "10.0.0.0/24"
    assert node.status is not None
    assert node.status.allocatable == {"cpu": "63500m"}
    assert node.status.conditions[0].status == "True"
    assert not resource_info(Node).namespaced


def test_namespace_configmap_secret() -> None:
    assert not resource_info(Namespace).namespaced
    cm = ConfigMap(metadata=ObjectMeta(name="c"), binary_data={"b": "AA=="})
    assert cm.to_dict()["binaryData"] == {"b": "AA=="}
    secret = Secret.model_validate({"type": "Opaque", "data": {"k": "dg=="}})
    assert secret.kind == "Secret"
    assert secret.data == {"k": "dg=="}
    assert resource_info(Secret).plural == "secrets"


def test_binding_targets_a_node() -> None:
    binding = Binding(
        metadata=ObjectMeta(name="w-0", namespace="ns"),
        target=ObjectReference(api_version="v1", kind="Node", name="n1"),
    )
    assert binding.to_dict() == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {
            "name": "w-0",
            "namespace": "ns",
            "labels": {},
            "annotations": {},
            "ownerReferences": [],
            "finalizers": [],
        },
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }
