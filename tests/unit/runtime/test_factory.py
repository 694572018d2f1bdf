"""The factory shares one informer per (kind, namespace, selectors, metadata-only)."""

from __future__ import annotations

from crdkit.client import Client, ClientConfig, GroupVersionKind
from crdkit.resources import ConfigMap, Pod
from crdkit.runtime.events import EventRecorder
from crdkit.runtime.factory import SharedInformerFactory
from crdkit.runtime.store import NAMESPACE_INDEX


def factory() -> SharedInformerFactory:
    return SharedInformerFactory(Client(ClientConfig(server="https://127.0.0.1:1")))


def test_same_request_same_informer() -> None:
    shared = factory()
    pods = shared.informer(Pod)
    assert shared.informer(Pod) is pods
    assert shared.informer(Pod, label_selector="") is pods  # empty selector means none
    assert shared.informer(Pod, namespace="a") is not pods
    assert shared.informer(Pod, label_selector="app=x") is not pods
    assert shared.informer(Pod, field_selector="spec.nodeName=n") is not pods
    assert shared.informer(ConfigMap) is not pods
    assert shared.metadata_informer(Pod) is shared.metadata_informer(Pod)
    assert shared.metadata_informer(Pod) is not pods
    gvk = GroupVersionKind("", "v1", "Pod")
    assert shared.informer(gvk) is shared.informer(GroupVersionKind("", "v1", "Pod"))
    assert len(shared.informers) == 7


def test_informers_come_with_a_namespace_index() -> None:
    assert NAMESPACE_INDEX in factory().informer(Pod).store.indexer_names


def test_informers_report_refused_objects_with_the_factorys_recorder() -> None:
    client = Client(ClientConfig(server="https://127.0.0.1:1"))
    recorder = EventRecorder(client, reporting_controller="x.io/test", reporting_instance="me")
    shared = SharedInformerFactory(client, event_recorder=recorder)
    assert shared.informer(Pod).event_recorder is recorder
    assert shared.metadata_informer(ConfigMap).event_recorder is recorder
    assert factory().informer(Pod).event_recorder is None  # standalone: logs and counts only
