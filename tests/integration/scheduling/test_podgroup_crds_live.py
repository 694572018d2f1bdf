"""Installing the shipped PodGroup CRDs on the real apiserver: served afterwards, and an
install over existing CRDs creates nothing and changes nothing."""

from __future__ import annotations

import pytest

from crdkit.client import Client, GroupVersionKind
from crdkit.scheduling.groups.crds import install_pod_group_crds, pod_group_crds

pytestmark = pytest.mark.integration

CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")


async def test_the_shipped_podgroup_crds_install_and_existing_ones_are_left_alone(
    crdkit_client: Client,
) -> None:
    names = {crd["metadata"]["name"] for crd in pod_group_crds()}
    created = await install_pod_group_crds(crdkit_client, ["coscheduling", "volcano"])
    assert set(created) <= names
    versions = {
        name: (await crdkit_client.get(CRD, name))["metadata"]["resourceVersion"] for name in names
    }
    assert await install_pod_group_crds(crdkit_client, ["coscheduling", "volcano"]) == []
    for name in names:
        stored = await crdkit_client.get(CRD, name)
        assert stored["metadata"]["resourceVersion"] == versions[name]  # untouched
    for group, version in (
        ("scheduling.x-k8s.io", "v1alpha1"),
        ("scheduling.volcano.sh", "v1beta1"),
    ):
        await crdkit_client.list(GroupVersionKind(group, version, "PodGroup"))
