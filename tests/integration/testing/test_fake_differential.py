"""The fake cluster against the real apiserver: one scripted sequence of calls, both answers.

Each step's outcome (the object written or read, or the error raised) is normalised (uids,
timestamps and managedFields dropped, resourceVersions replaced by their rank among those the
script saw) and the two transcripts must be equal, step by step.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from crdkit.client import ApiError, Client, GroupVersionKind, PatchType, Preconditions
from crdkit.client.codec import ListPage
from crdkit.client.watch import BOOKMARK
from crdkit.testing import ControlPlane, FakeCluster, FakeKind
from crdkit.testing.fake.kinds import KindRegistry

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

HELLO_CRD = Path(__file__).resolve().parents[3] / "examples/hello/hello.example.com_hellos.yaml"
HELLO = GroupVersionKind("hello.example.com", "v1", "Hello")
CONFIGMAP = GroupVersionKind("", "v1", "ConfigMap")
POD = GroupVersionKind("", "v1", "Pod")
Step = Callable[[], Awaitable[Any]]


def hello(ns: str, name: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "hello.example.com/v1",
        "kind": "Hello",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"greeting": "Hello", "target": "world"},
    }
    body.update(extra)
    return body


class Transcript:
    """Runs steps and records what each returned or raised, normalised."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, Any]] = []
        self.versions: list[str] = []

    async def run(self, label: str, step: Step, *, defaulted: bool = False) -> Any:
        """``defaulted``: the kind's defaulting (which the fake leaves out) fills spec and
        status; compare the metadata and the fields the script set."""
        try:
            value = await step()
        except ApiError as error:
            self.steps.append((label, self._error(error)))
            return None
        outcome = self.normalise(value)
        if defaulted and isinstance(outcome, dict):
            spec = outcome.get("spec") or {}
            status = outcome.get("status") or {}
            outcome = {
                "metadata": outcome["metadata"],
                "nodeName": spec.get("nodeName"),
                "status": {k: status.get(k) for k in ("phase", "qosClass", "conditions")},
            }
        self.steps.append((label, outcome))
        return value

    def _error(self, error: ApiError) -> dict[str, Any]:
        details = {k: v for k, v in error.details.items() if k in ("name", "group", "kind")}
        outcome: dict[str, Any] = {
            "error": type(error).__name__,
            "code": error.code,
            "reason": error.reason,
            "details": details,
        }
        if error.reason in ("NotFound", "AlreadyExists", "Conflict"):
            # uids and resourceVersions differ between the two; the wording must not
            outcome["message"] = re.sub(r"[0-9a-f-]{36}|\d+", "<n>", error.message)
        return outcome

    def rank(self, version: str) -> int:
        if version not in self.versions:
            self.versions.append(version)
        return sorted(self.versions, key=int).index(version)

    def normalise(self, value: Any) -> Any:
        if isinstance(value, ListPage):
            assert value.continue_token is None
            items = [self.normalise(item) for item in value.items]
            listed = int(value.resource_version)
            assert all(listed >= int(v) for v in self.versions), "a list older than a write"
            return {"items": items}
        if isinstance(value, list):
            return [self.normalise(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {k: self.normalise(v) for k, v in value.items()}
        metadata = out.get("metadata")
        if isinstance(metadata, dict):
            for volatile in ("uid", "creationTimestamp", "managedFields"):
                metadata.pop(volatile, None)
            if "deletionTimestamp" in metadata:
                metadata["deletionTimestamp"] = "<set>"
            for condition in out.get("status", {}).get("conditions", []) or []:
                if isinstance(condition, dict) and "lastTransitionTime" in condition:
                    condition["lastTransitionTime"] = "<time>"
            if "resourceVersion" in metadata and "items" not in out:
                metadata["resourceVersion"] = self.rank(str(metadata["resourceVersion"]))
            elif "resourceVersion" in metadata:
                metadata["resourceVersion"] = "<list>"
            if "generateName" in metadata and "name" in metadata:
                prefix = metadata["generateName"]
                assert metadata["name"].startswith(prefix)
                assert len(metadata["name"]) == len(prefix) + 5
                metadata["name"] = prefix + "<5>"
            for ref in metadata.get("ownerReferences") or []:
                ref["uid"] = "<uid>"
        return out


async def script(client: Client, ns: str) -> Transcript:
    t = Transcript()
    run = t.run

    # create, AlreadyExists, NotFound, generateName; status is dropped on create
    created = await run("create", lambda: client.create(hello(ns, "a", status={"x": "y"})))
    await run("create again", lambda: client.create(hello(ns, "a")))
    await run("get missing", lambda: client.get(HELLO, "missing", namespace=ns))
    await run(
        "generateName",
        lambda: client.create(
            {**hello(ns, ""), "metadata": {"generateName": "gen-", "namespace": ns}}
        ),
    )
    await run("no name", lambda: client.create({**hello(ns, ""), "metadata": {"namespace": ns}}))

    # updates: generation counts spec changes only; a stale version conflicts
    current = await run("get", lambda: client.get(HELLO, "a", namespace=ns))
    labelled = {**current, "metadata": {**current["metadata"], "labels": {"team": "a"}}}
    labelled = await run("label change", lambda: client.replace(labelled))
    respec = {**labelled, "spec": {"greeting": "Hi", "target": "world"}}
    respec = await run("spec change", lambda: client.replace(respec))
    await run("stale replace", lambda: client.replace(labelled))
    unversioned = {**respec, "metadata": {"name": "a", "namespace": ns}}
    await run("replace without resourceVersion", lambda: client.replace(unversioned))
    with_status = {**respec, "status": {"configMap": "ignored"}}
    await run("status on the main resource", lambda: client.replace(with_status))
    status_write = {
        **respec,
        "spec": {"greeting": "ignored", "target": "x"},
        "status": {"configMap": "cm", "observedGeneration": 2},
    }
    status_write = await run("replace_status", lambda: client.replace_status(status_write))
    await run("stale replace_status", lambda: client.replace_status(respec))
    await run("no-op replace", lambda: client.replace(status_write))

    # patches
    await run(
        "merge patch",
        lambda: client.patch(HELLO, "a", {"spec": {"greeting": "Hey"}}, namespace=ns),
    )
    await run(
        "merge patch removes a label",
        lambda: client.patch(HELLO, "a", {"metadata": {"labels": {"team": None}}}, namespace=ns),
    )
    await run(
        "json patch",
        lambda: client.patch(
            HELLO,
            "a",
            [
                {"op": "test", "path": "/spec/greeting", "value": "Hey"},
                {"op": "replace", "path": "/spec/target", "value": "you"},
            ],
            namespace=ns,
            patch_type=PatchType.JSON,
        ),
    )
    await run(
        "json patch failed test",
        lambda: client.patch(
            HELLO,
            "a",
            [{"op": "test", "path": "/spec/greeting", "value": "nope"}],
            namespace=ns,
            patch_type=PatchType.JSON,
        ),
    )
    await run(
        "status merge patch",
        lambda: client.patch(
            HELLO, "a", {"status": {"configMap": "cm2"}}, namespace=ns, subresource="status"
        ),
    )
    await run(
        "status merge patch naming another uid",
        lambda: client.patch(
            HELLO,
            "a",
            {"metadata": {"uid": "0c2cbd2e-1d7c-4c57-9e0f-7f4a39c1a1a1"}, "status": {}},
            namespace=ns,
            subresource="status",
        ),
    )
    await run(
        "merge patch naming another uid",
        lambda: client.patch(
            HELLO, "a", {"metadata": {"uid": "0c2cbd2e-1d7c-4c57-9e0f-7f4a39c1a1a1"}}, namespace=ns
        ),
    )
    await run(
        "strategic patch on a custom resource",
        lambda: client.patch(
            HELLO, "a", {"spec": {"greeting": "x"}}, namespace=ns, patch_type=PatchType.STRATEGIC
        ),
    )
    await run(
        "patch missing",
        lambda: client.patch(HELLO, "missing", {"spec": {"greeting": "x"}}, namespace=ns),
    )

    # lists and selectors
    await run("list", lambda: client.list(HELLO, namespace=ns))
    await run(
        "field selector", lambda: client.list(HELLO, namespace=ns, field_selector="metadata.name=a")
    )
    await run(
        "field selector !=",
        lambda: client.list(HELLO, namespace=ns, field_selector="metadata.name!=a"),
    )
    await run("label selector", lambda: client.list(HELLO, namespace=ns, label_selector="team"))
    await run(
        "unsupported field selector",
        lambda: client.list(HELLO, namespace=ns, field_selector="spec.target=x"),
    )

    # finalizers and deletion
    await run(
        "add finalizer",
        lambda: client.patch(
            HELLO, "a", {"metadata": {"finalizers": ["example.com/keep"]}}, namespace=ns
        ),
    )
    await run(
        "delete, wrong uid",
        lambda: client.delete(HELLO, "a", namespace=ns, preconditions=Preconditions(uid="nope")),
    )
    await run(
        "delete, wrong version",
        lambda: client.delete(
            HELLO, "a", namespace=ns, preconditions=Preconditions(resource_version="1")
        ),
    )
    await run(
        "delete with a finalizer",
        lambda: client.delete(
            HELLO, "a", namespace=ns, preconditions=Preconditions(uid=created["metadata"]["uid"])
        ),
    )
    deleting = await run("get while deleting", lambda: client.get(HELLO, "a", namespace=ns))
    await run("delete again", lambda: client.delete(HELLO, "a", namespace=ns))
    more = {
        **deleting,
        "metadata": {**deleting["metadata"], "finalizers": ["example.com/keep", "x.io/more"]},
    }
    await run("new finalizer while deleting", lambda: client.replace(more))
    await run(
        "spec change while deleting",
        lambda: client.patch(HELLO, "a", {"spec": {"greeting": "late"}}, namespace=ns),
    )
    latest = await client.get(HELLO, "a", namespace=ns)
    released = {**latest, "metadata": {**latest["metadata"], "finalizers": []}}
    await run("last finalizer removed", lambda: client.replace(released))
    await run("gone", lambda: client.get(HELLO, "a", namespace=ns))

    # a kind that answers a delete with a Status, and allows unconditional updates
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": ns}}
    await run("configmap create", lambda: client.create({**cm, "data": {"k": "v"}}))
    await run("configmap unconditional", lambda: client.replace({**cm, "data": {"k": "w"}}))
    await run(
        "configmap apply",
        lambda: client.apply({**cm, "data": {"k": "w", "a": "b"}}, field_manager="m"),
    )
    await run(
        "another manager applies",
        lambda: client.apply({**cm, "data": {"z": "1"}}, field_manager="m2"),
    )
    await run(
        "apply drops what its manager stopped applying",
        lambda: client.apply({**cm, "data": {"k": "w"}}, field_manager="m"),
    )
    await run("configmap status", lambda: client.replace_status({**cm, "data": {"k": "x"}}))
    await run("configmap delete", lambda: client.delete(CONFIGMAP, "c", namespace=ns))
    await run(
        "apply creates",
        lambda: client.apply(
            {**cm, "metadata": {**cm["metadata"], "name": "d"}}, field_manager="m"
        ),
    )

    # a pod never scheduled goes at once
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    created_pod = await client.create(pod)
    t.steps.append(("pod generation", created_pod["metadata"].get("generation")))
    deleted_pod = await client.delete(POD, "p", namespace=ns)
    t.steps.append(("pod delete returns it", deleted_pod is not None))
    await run("pod gone", lambda: client.get(POD, "p", namespace=ns))

    # binding, then graceful deletion of a pod on a node (no kubelet: it stays)
    for name, resources in (
        ("burstable", {"requests": {"cpu": "100m"}}),
        ("guaranteed", {"limits": {"cpu": "1", "memory": "1Gi"}}),
    ):
        sized = {
            **pod,
            "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]},
        }
        await run(f"pod {name}", lambda sized=sized: client.create(sized), defaulted=True)
    pod_b = {**pod, "metadata": {"name": "b", "namespace": ns}}
    await run("pod b", lambda: client.create(pod_b), defaulted=True)
    await run("bind", lambda: client.bind("b", "node-1", namespace=ns))
    await run("bound", lambda: client.get(POD, "b", namespace=ns), defaulted=True)
    await run("bind again", lambda: client.bind("b", "node-2", namespace=ns))
    await run(
        "pod status patch naming another uid (a report on a replaced pod)",
        lambda: client.patch(
            POD,
            "b",
            {"metadata": {"uid": "0c2cbd2e-1d7c-4c57-9e0f-7f4a39c1a1a1"}, "status": {}},
            namespace=ns,
            subresource="status",
        ),
    )
    await run("graceful delete", lambda: client.delete(POD, "b", namespace=ns), defaulted=True)
    await run("still there", lambda: client.get(POD, "b", namespace=ns), defaulted=True)
    await run(
        "forced delete",
        lambda: client.delete(POD, "b", namespace=ns, grace_period_seconds=0),
        defaulted=True,
    )
    await run("pod b gone", lambda: client.get(POD, "b", namespace=ns))

    # a terminating pod cannot be bound
    held = {**pod, "metadata": {"name": "h", "namespace": ns, "finalizers": ["x.io/hold"]}}
    await client.create(held)
    await run("delete held pod", lambda: client.delete(POD, "h", namespace=ns), defaulted=True)
    await run("bind terminating", lambda: client.bind("h", "node-1", namespace=ns))
    await client.patch(POD, "h", {"metadata": {"finalizers": None}}, namespace=ns)

    # pages of a list
    for name in ("p1", "p2", "p3"):
        await client.create({**cm, "metadata": {"name": name, "namespace": ns}})
    await run("paged list", lambda: client.list(CONFIGMAP, namespace=ns, page_size=2))
    return t


async def watched(client: Client, ns: str) -> list[tuple[str, str, int | None]]:
    """What a watch from a known version sees of a small history, selectors included."""
    labelled = {"name": "w1", "namespace": ns, "labels": {"x": "1"}}
    first = await client.create(hello(ns, "w1", metadata=labelled))
    start = first["metadata"]["resourceVersion"]
    await client.create(hello(ns, "w2"))
    await client.patch(HELLO, "w1", {"metadata": {"labels": {"x": "2"}}}, namespace=ns)
    await client.patch(HELLO, "w2", {"metadata": {"labels": {"x": "1"}}}, namespace=ns)
    await client.patch(HELLO, "w1", {"metadata": {"labels": {"x": "1"}}}, namespace=ns)
    await client.delete(HELLO, "w2", namespace=ns)
    end = {"name": "end", "namespace": ns, "labels": {"x": "1"}}
    await client.create(hello(ns, "end", metadata=end))
    seen: list[tuple[str, str, int | None]] = []
    async with asyncio.timeout(30):
        async for event in client.watch(
            HELLO, namespace=ns, label_selector="x=1", resource_version=start
        ):
            if event.type == BOOKMARK:
                continue
            obj = event.object
            assert obj is not None
            seen.append((event.type, obj["metadata"]["name"], obj["metadata"].get("generation")))
            if obj["metadata"]["name"] == "end":
                break
    # without a version: the matching objects as ADDED, then what happens next
    async with asyncio.timeout(30):
        events = client.watch(HELLO, namespace=ns, label_selector="x=1")
        for _ in range(2):
            event = await anext(events)
            assert event.object is not None
            seen.append((event.type, event.object["metadata"]["name"], None))
        await events.aclose()  # type: ignore[attr-defined]
    return seen


async def test_the_fake_answers_as_the_apiserver_does(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    real = await script(crdkit_client, namespace)
    real_watch = await watched(crdkit_client, namespace)

    from examples.hello.operator import Hello

    cluster = FakeCluster(kinds=[Hello])
    async with cluster.client() as client:
        fake = await script(client, namespace)
        fake_watch = await watched(client, namespace)

    assert [label for label, _ in fake.steps] == [label for label, _ in real.steps]
    differences = [
        f"step {label!r}: the fake answered\n  {got}\nthe apiserver\n  {want}"
        for (label, want), (_, got) in zip(real.steps, fake.steps, strict=True)
        if got != want
    ]
    assert not differences, "\n".join(differences)
    assert fake_watch == real_watch


def test_registry_knows_hello_from_its_class() -> None:
    from examples.hello.operator import Hello

    registry = KindRegistry()
    registry.register([Hello])
    kind = registry.by_kind("hello.example.com", "v1", "Hello")
    assert isinstance(kind, FakeKind)
    assert kind.status_subresource
    assert kind.qualified_resource == "hellos.hello.example.com"
