"""FakeCluster's apiserver rules, through the real Client (no control plane)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from examples.hello.operator import Hello, HelloSpec, HelloStatus

from crdkit.client import (
    AlreadyExists,
    BadRequest,
    Conflict,
    GroupVersionKind,
    Invalid,
    NotFound,
    PatchType,
    Preconditions,
    PropagationPolicy,
    UnsupportedMediaType,
)
from crdkit.resources import (
    ConfigMap,
    CustomResource,
    Deployment,
    Namespace,
    ObjectMeta,
    OwnerReference,
    Pod,
)
from crdkit.testing import FakeCluster, FakeKind, UnknownKind

NS = "ns"


def hello(name: str = "a", **labels: str) -> Hello:
    return Hello(
        metadata=ObjectMeta(name=name, namespace=NS, labels=labels),
        spec=HelloSpec(target="world"),
    )


def configmap(name: str, **data: str) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=NS), data=data)


async def test_create_sets_server_fields_and_one_counter_orders_all_writes() -> None:
    fixed = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    cluster = FakeCluster(kinds=[Hello], clock=lambda: fixed)
    async with cluster.client() as client:
        h = await client.create(hello())
        cm = await client.create(configmap("c"))
    assert h.metadata.uid
    assert cm.metadata.uid
    assert h.metadata.uid != cm.metadata.uid
    assert h.metadata.creation_timestamp == fixed
    assert (h.metadata.resource_version, cm.metadata.resource_version) == ("1", "2")
    assert h.metadata.generation == 1
    assert cm.metadata.generation is None  # ConfigMaps do not track generation
    assert cluster.resource_version == "2"


async def test_create_errors() -> None:
    cluster = FakeCluster([hello()])
    async with cluster.client() as client:
        with pytest.raises(AlreadyExists, match=r'hellos\.hello\.example\.com "a" already exists'):
            await client.create(hello())
        with pytest.raises(Invalid, match="name or generateName is required"):
            await client.create(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": NS}}
            )
        generated = await client.create(
            ConfigMap(metadata=ObjectMeta(generate_name="cm-", namespace=NS))
        )
    assert generated.metadata.name is not None
    assert generated.metadata.name.startswith("cm-")
    assert len(generated.metadata.name) == 8


async def test_get_list_and_selectors() -> None:
    cluster = FakeCluster([hello("a", team="x"), hello("b", team="y"), hello("c")])
    cluster.add(Hello(metadata=ObjectMeta(name="d", namespace="other"), spec=HelloSpec(target="t")))
    async with cluster.client() as client:
        with pytest.raises(NotFound, match=r'hellos\.hello\.example\.com "zz" not found'):
            await client.get(Hello, "zz", namespace=NS)

        async def names(**query: Any) -> list[str]:
            page = await client.list(Hello, **query)
            return [h.metadata.name or "" for h in page.items]

        assert await names(namespace=NS) == ["a", "b", "c"]
        assert await names() == ["a", "b", "c", "d"]  # all namespaces
        assert await names(namespace=NS, label_selector="team") == ["a", "b"]
        assert await names(namespace=NS, label_selector="team notin (x)") == ["b", "c"]
        assert await names(field_selector="metadata.namespace=other") == ["d"]
        assert await names(namespace=NS, field_selector="metadata.name!=b") == ["a", "c"]
        # pages of one list, in order, each from the same list version
        paged = await client.list(Hello, namespace=NS, page_size=2)
        assert [h.metadata.name for h in paged.items] == ["a", "b", "c"]
        assert paged.resource_version == cluster.resource_version
        with pytest.raises(BadRequest, match=r"field label not supported: spec\.target"):
            await client.list(Hello, field_selector="spec.target=world")


async def test_list_pages_continue_after_the_last_key_served() -> None:
    cluster = FakeCluster([configmap(n) for n in ("a", "b", "c", "d")])
    path = "/api/v1/namespaces/ns/configmaps"
    async with cluster.client() as client:
        first = json.loads(await client.transport.request("GET", path, params={"limit": "2"}))
        assert first["metadata"]["remainingItemCount"] == 2
        await client.delete(ConfigMap, "a", namespace=NS)  # already served: shifts nothing
        token = first["metadata"]["continue"]
        second = json.loads(
            await client.transport.request("GET", path, params={"limit": "2", "continue": token})
        )
    assert [item["metadata"]["name"] for item in second["items"]] == ["c", "d"]
    assert "continue" not in second["metadata"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


async def test_pod_field_selectors_beyond_metadata() -> None:
    pods = [
        Pod.model_validate({"metadata": {"name": n, "namespace": NS}, "spec": {"nodeName": node}})
        for n, node in (("p1", "n1"), ("p2", "n2"))
    ]
    cluster = FakeCluster(pods)
    async with cluster.client() as client:
        page = await client.list(Pod, namespace=NS, field_selector="spec.nodeName=n2")
    assert [p.metadata.name for p in page.items] == ["p2"]


async def test_update_conflicts_and_generation_counts_spec_changes_only() -> None:
    cluster = FakeCluster([hello()])
    async with cluster.client() as client:
        first = await client.get(Hello, "a", namespace=NS)
        first.metadata.labels = {"k": "v"}
        labelled = await client.replace(first)
        assert labelled.metadata.generation == 1
        assert int(labelled.metadata.resource_version or 0) > int(
            first.metadata.resource_version or 0
        )
        with pytest.raises(Conflict, match="the object has been modified"):
            await client.replace(first)  # stale
        labelled.spec.greeting = "Hi"
        respec = await client.replace(labelled)
        assert respec.metadata.generation == 2
        # status through the main resource is ignored; the status subresource writes it
        respec.status = HelloStatus(config_map="x")
        ignored = await client.replace(respec)
        assert ignored.status is None
        assert ignored.metadata.resource_version == respec.metadata.resource_version  # no-op
        ignored.status = HelloStatus(config_map="x")
        ignored.spec.greeting = "not through status"
        written = await client.replace_status(ignored)
    assert written.status == HelloStatus(config_map="x")
    assert written.spec.greeting == "Hi"
    assert written.metadata.generation == 2


async def test_custom_resources_need_a_resource_version_to_update() -> None:
    cluster = FakeCluster([hello()])
    async with cluster.client() as client:
        with pytest.raises(Invalid, match="must be specified for an update"):
            await client.replace(hello())
        # a ConfigMap takes an unconditional update
        await client.create(configmap("c", k="1"))
        replaced = await client.replace(configmap("c", k="2"))
    assert replaced.data == {"k": "2"}


async def test_status_subresource_of_kinds_without_one_is_not_found() -> None:
    cluster = FakeCluster([configmap("c")])
    async with cluster.client() as client:
        with pytest.raises(NotFound, match="could not find the requested resource"):
            await client.replace_status(configmap("c"))


async def test_patch_flavours() -> None:
    cluster = FakeCluster([hello(team="x")])
    async with cluster.client() as client:
        merged = await client.patch(
            Hello,
            "a",
            {"metadata": {"labels": {"team": None}}, "spec": {"greeting": "Yo"}},
            namespace=NS,
        )
        assert merged.metadata.labels == {}
        assert (merged.spec.greeting, merged.metadata.generation) == ("Yo", 2)
        patched = await client.patch(
            Hello,
            "a",
            [{"op": "replace", "path": "/spec/target", "value": "you"}],
            namespace=NS,
            patch_type=PatchType.JSON,
        )
        assert patched.spec.target == "you"
        with pytest.raises(Invalid, match="test"):
            await client.patch(
                Hello,
                "a",
                [{"op": "test", "path": "/spec/target", "value": "me"}],
                namespace=NS,
                patch_type=PatchType.JSON,
            )
        with pytest.raises(UnsupportedMediaType):
            await client.patch(
                Hello, "a", {"spec": {}}, namespace=NS, patch_type=PatchType.STRATEGIC
            )
        status = await client.patch(
            Hello, "a", {"status": {"configMap": "cm"}}, namespace=NS, subresource="status"
        )
        assert status.status is not None
        assert status.status.config_map == "cm"
        with pytest.raises(NotFound):
            await client.patch(Hello, "zz", {"spec": {}}, namespace=NS)
        # strategic merge on a built-in kind is served (as a merge patch)
        await client.create(configmap("c", a="1"))
        strategic = await client.patch(
            ConfigMap, "c", {"data": {"b": "2"}}, namespace=NS, patch_type=PatchType.STRATEGIC
        )
    assert strategic.data == {"a": "1", "b": "2"}


async def test_apply_creates_then_merges_the_applied_fields() -> None:
    cluster = FakeCluster()
    async with cluster.client() as client:
        created = await client.apply(configmap("c", a="1"), field_manager="m")
        assert created.data == {"a": "1"}
        await client.patch(ConfigMap, "c", {"data": {"other": "x"}}, namespace=NS)
        applied = await client.apply(configmap("c", a="2"), field_manager="m", force=True)
        unchanged = await client.apply(configmap("c", a="2"), field_manager="m", force=True)
    assert applied.data == {"a": "2", "other": "x"}  # fields of other writers stay
    assert unchanged.metadata.resource_version == applied.metadata.resource_version


async def test_apply_removes_what_its_manager_no_longer_applies() -> None:
    cluster = FakeCluster()
    async with cluster.client() as client:
        await client.apply(configmap("c", a="1", b="2"), field_manager="m")
        await client.apply(configmap("c", z="9"), field_manager="other")
        dropped = await client.apply(configmap("c", a="1"), field_manager="m")
        assert dropped.data == {"a": "1", "z": "9"}  # b was m's alone; z is other's
        cleared = await client.apply(configmap("c"), field_manager="other")
    assert cleared.data == {"a": "1"}


async def test_finalizers_hold_a_deleted_object_until_they_are_removed() -> None:
    kept = hello()
    kept.metadata.finalizers = ["example.com/keep"]
    cluster = FakeCluster([kept])
    async with cluster.client() as client:
        deleting = await client.delete(Hello, "a", namespace=NS)
        assert deleting is not None
        assert deleting.metadata.deletion_timestamp is not None
        assert deleting.metadata.deletion_grace_period_seconds == 0
        assert deleting.metadata.generation == 2  # marking for deletion bumps it
        current = await client.get(Hello, "a", namespace=NS)
        assert current.metadata.deletion_timestamp == deleting.metadata.deletion_timestamp
        current.metadata.finalizers = ["example.com/keep", "example.com/new"]
        with pytest.raises(Invalid, match="no new finalizers"):
            await client.replace(current)
        current.metadata.finalizers = []
        await client.replace(current)
        with pytest.raises(NotFound):
            await client.get(Hello, "a", namespace=NS)


async def test_delete_preconditions_and_answers() -> None:
    cluster = FakeCluster([hello(), configmap("c")])
    async with cluster.client() as client:
        current = await client.get(Hello, "a", namespace=NS)
        with pytest.raises(Conflict, match="UID in the precondition"):
            await client.delete(Hello, "a", namespace=NS, preconditions=Preconditions(uid="x"))
        with pytest.raises(Conflict, match="ResourceVersion in the precondition"):
            await client.delete(
                Hello, "a", namespace=NS, preconditions=Preconditions(resource_version="999")
            )
        deleted = await client.delete(
            Hello,
            "a",
            namespace=NS,
            preconditions=Preconditions(
                uid=current.metadata.uid, resource_version=current.metadata.resource_version
            ),
        )
        assert deleted is not None
        assert deleted.metadata.name == "a"
        # a ConfigMap's delete answers with a Status, as the apiserver's does
        assert await client.delete(ConfigMap, "c", namespace=NS) is None
        with pytest.raises(NotFound):
            await client.delete(ConfigMap, "c", namespace=NS)


def owned(name: str, owner: Hello) -> ConfigMap:
    cm = configmap(name)
    cm.metadata.owner_references = [
        OwnerReference(
            api_version="hello.example.com/v1",
            kind="Hello",
            name=owner.metadata.name or "",
            uid=owner.metadata.uid or "",
        )
    ]
    return cm


async def test_garbage_collection_follows_owner_references() -> None:
    cluster = FakeCluster([hello("bg"), hello("fg"), hello("orphan")])
    async with cluster.client() as client:
        owners = {h.metadata.name: h for h in (await client.list(Hello, namespace=NS)).items}
        for name, owner in owners.items():
            await client.create(owned(f"{name}-child", owner))
        await client.delete(Hello, "bg", namespace=NS)
        fg = await client.delete(
            Hello, "fg", namespace=NS, propagation_policy=PropagationPolicy.FOREGROUND
        )
        assert fg is not None
        assert "foregroundDeletion" in fg.metadata.finalizers
        await client.delete(
            Hello, "orphan", namespace=NS, propagation_policy=PropagationPolicy.ORPHAN
        )
        left = {cm.metadata.name: cm for cm in (await client.list(ConfigMap, namespace=NS)).items}
        hellos = (await client.list(Hello, namespace=NS)).items
    assert list(left) == ["orphan-child"]
    assert not left["orphan-child"].metadata.owner_references
    assert hellos == []  # the foreground owner went once its dependent was gone


async def test_a_dependent_written_after_its_owner_went_is_collected() -> None:
    # Regression (crash tests of the hello example): a reconcile that read its owner just
    # before the owner was deleted applies the child after the collector ran; the real
    # collector finds the owner missing and deletes the child, the fake kept it for good.
    cluster = FakeCluster([hello("o"), hello("kept")])
    async with cluster.client() as client:
        owner = await client.get(Hello, "o", namespace=NS)
        await client.delete(Hello, "o", namespace=NS)
        await client.create(owned("late", owner))
        # An owner this cluster never had is not judged (nor can the real collector resolve it).
        stranger = hello("stranger")
        stranger.metadata.uid = "never-seen"
        await client.create(owned("unknown-owner", stranger))
        kept = await client.get(Hello, "kept", namespace=NS)
        await client.create(owned("live-owner", kept))
        left = sorted(cm.metadata.name or "" for cm in (await client.list(ConfigMap)).items)
    assert left == ["live-owner", "unknown-owner"]


async def test_a_dependent_applied_after_its_owner_went_is_collected_too() -> None:
    # Regression (the sharder's crash tests, in CI): server-side apply made the object, the
    # collector removed it at once, and apply then looked it up to note its field manager: a
    # KeyError inside every such reconcile, retried with backoff until the run's time ran out.
    cluster = FakeCluster([hello("o")])
    async with cluster.client() as client:
        owner = await client.get(Hello, "o", namespace=NS)
        await client.delete(Hello, "o", namespace=NS)
        applied = await client.apply(owned("late", owner), field_manager="hello")
        assert applied.metadata.name == "late"
        assert (await client.list(ConfigMap)).items == []


async def test_dependents_go_when_the_owners_last_finalizer_goes() -> None:
    # Regression: the collector ran after deletes only, not after the update that removes
    # the last finalizer of an owner being deleted, so its dependents stayed.
    kept = hello("o")
    kept.metadata.finalizers = ["example.com/keep"]
    cluster = FakeCluster([kept])
    async with cluster.client() as client:
        owner = await client.get(Hello, "o", namespace=NS)
        await client.create(owned("child", owner))
        await client.delete(Hello, "o", namespace=NS)
        assert [cm.metadata.name for cm in (await client.list(ConfigMap)).items] == ["child"]
        deleting = await client.get(Hello, "o", namespace=NS)
        deleting.metadata.finalizers = []
        await client.replace(deleting)
        assert (await client.list(ConfigMap)).items == []


def test_a_body_in_another_namespace_is_refused() -> None:
    # The Client builds the path from the body, so only a raw request can disagree.
    cluster = FakeCluster()
    stored = cluster.add(configmap("c"))
    stored["metadata"]["namespace"] = "elsewhere"
    kind = cluster.kinds.for_kind("v1", "ConfigMap")
    with pytest.raises(BadRequest, match="namespace of the provided object"):
        cluster.server.update(kind, NS, "c", stored)


async def test_deleting_a_namespace_deletes_what_is_in_it() -> None:
    cluster = FakeCluster([Namespace(metadata=ObjectMeta(name=NS)), configmap("c")])
    async with cluster.client() as client:
        ns = await client.get(Namespace, NS)
        assert ns.metadata.labels == {"kubernetes.io/metadata.name": NS}
        await client.delete(Namespace, NS)
        assert (await client.list(ConfigMap)).items == []


async def test_untyped_calls_use_the_fakes_discovery() -> None:
    cluster = FakeCluster([hello()])
    async with cluster.client() as client:
        got = await client.get(
            GroupVersionKind("hello.example.com", "v1", "Hello"), "a", namespace=NS
        )
        deployments = await client.list(GroupVersionKind("apps", "v1", "Deployment"))
        with pytest.raises(NotFound, match="does not serve kind 'Nope'"):
            await client.get(GroupVersionKind("", "v1", "Nope"), "x", namespace=NS)
    assert got["spec"]["target"] == "world"
    assert deployments.items == []


async def test_metadata_only_reads() -> None:
    cluster = FakeCluster([configmap("c", secret="s")])
    async with cluster.client() as client:
        target = await client.resolve(ConfigMap, metadata_only=True)
        [item] = (await client.list_resolved(target, namespace=NS)).items
    assert item.metadata.name == "c"
    assert "data" not in item.model_dump()


async def test_seeds_keep_the_state_a_test_starts_from() -> None:
    owner = Hello.model_validate(
        {
            "metadata": {"name": "o", "namespace": NS, "uid": "owner-uid", "generation": 3},
            "spec": {"target": "t"},
            "status": {"observedGeneration": 2},
        }
    )
    going = hello("going")
    going.metadata.finalizers = ["example.com/keep"]
    going.metadata.deletion_timestamp = datetime(2030, 1, 1, tzinfo=UTC)
    running = Pod.model_validate(
        {"metadata": {"name": "p", "namespace": NS}, "status": {"phase": "Running"}}
    )
    cluster = FakeCluster([owner, going, running])
    async with cluster.client() as client:
        o = await client.get(Hello, "o", namespace=NS)
        g = await client.get(Hello, "going", namespace=NS)
        p = await client.get(Pod, "p", namespace=NS)
        fresh = await client.create(hello("fresh"))
    assert (o.metadata.uid, o.metadata.generation) == ("owner-uid", 3)
    assert o.status == HelloStatus(observed_generation=2)
    assert g.metadata.deletion_timestamp == datetime(2030, 1, 1, tzinfo=UTC)
    assert g.metadata.deletion_grace_period_seconds == 0
    assert p.status is not None
    assert p.status.phase == "Running"
    assert fresh.metadata.generation == 1  # the API path still sets its own
    gone = hello("gone")
    gone.metadata.deletion_timestamp = datetime(2030, 1, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="deletionTimestamp but no finalizers"):
        cluster.add(gone)


async def test_a_kind_without_status_drops_one_sent_to_it() -> None:
    cluster = FakeCluster()
    async with cluster.client() as client:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": NS}}
        created = await client.create({**body, "status": {"x": 1}})
        replaced = await client.replace({**created, "status": {"x": 2}})
    assert "status" not in created
    assert "status" not in replaced


def test_deployment_tracks_generation_and_configmap_does_not() -> None:
    cluster = FakeCluster()
    deployment = cluster.add(
        Deployment.model_validate({"metadata": {"name": "d", "namespace": NS}, "spec": {}})
    )
    cm = cluster.add(configmap("c"))
    assert deployment["metadata"]["generation"] == 1
    assert "generation" not in cm["metadata"]


async def test_unregistered_kinds_say_how_to_register_them() -> None:
    cluster = FakeCluster()
    with pytest.raises(UnknownKind, match=r"FakeCluster\(kinds=\[Widget\]\)"):
        cluster.add({"apiVersion": "x.io/v1", "kind": "Widget", "metadata": {"name": "w"}})
    async with cluster.client() as client:
        with pytest.raises(
            NotFound,
            match=r"serves no resource 'hellos' in hello\.example\.com/v1: register the kind's "
            r"class with FakeCluster\(kinds=",
        ):
            await client.get(Hello, "a", namespace=NS)
    with pytest.raises(ValueError, match=r"metadata\.namespace"):
        cluster.add(ConfigMap(metadata=ObjectMeta(name="c")))
    with pytest.raises(TypeError, match="kinds: expected"):
        FakeCluster(kinds=["Hello"])  # type: ignore[list-item]


async def test_a_described_kind_is_served() -> None:
    from crdkit.resources import ResourceInfo

    widget = FakeKind(
        ResourceInfo("x.io", "v1", "Widget", "widgets", "widget", namespaced=False),
        status_subresource=False,
        tracks_generation=True,
    )
    cluster = FakeCluster(
        [{"apiVersion": "x.io/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}}],
        kinds=[widget],
    )
    async with cluster.client() as client:
        got = await client.get(GroupVersionKind("x.io", "v1", "Widget"), "w")
    assert got["metadata"]["generation"] == 1


async def test_the_client_must_be_open_and_takes_no_retry_options_with_a_transport() -> None:
    cluster = FakeCluster()
    client = cluster.client()
    with pytest.raises(RuntimeError, match="not open"):
        await client.get(ConfigMap, "c", namespace=NS)
    from crdkit.client import Client, ClientConfig

    with pytest.raises(ValueError, match="retry"):
        Client(ClientConfig(server="https://x"), transport=client.transport, max_retries=1)


class Job(
    CustomResource,
    group="x.io",
    version="v1",
    kind="Job",
    selectable_fields=[".spec.queue"],
):
    spec: dict[str, str]


async def test_a_crds_selectable_fields_are_field_selectors() -> None:
    jobs = [
        Job(metadata=ObjectMeta(name=n, namespace=NS), spec={"queue": q})
        for n, q in (("j1", "a"), ("j2", "b"))
    ]
    cluster = FakeCluster(jobs)
    async with cluster.client() as client:
        page = await client.list(Job, namespace=NS, field_selector="spec.queue=b")
    assert [j.metadata.name for j in page.items] == ["j2"]
