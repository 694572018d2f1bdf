"""Client CRUD against the real apiserver: typed custom resources, built-in kinds, untyped
dicts, every patch flavour, the status subresource, delete options, and error mapping."""

from __future__ import annotations

import asyncio
import ssl
import time
from datetime import UTC, datetime

import pytest
from pydantic import Field

from crdkit.client import (
    AlreadyExists,
    Client,
    ClientConfig,
    Conflict,
    Forbidden,
    GroupVersionKind,
    Invalid,
    NotFound,
    PatchType,
    Preconditions,
    PropagationPolicy,
    StaticCredentials,
    Unauthorized,
)
from crdkit.resources import (
    ApiModel,
    ConfigMap,
    CustomResource,
    Event,
    Lease,
    Namespace,
    Node,
    Pod,
    Secret,
)
from crdkit.testing import ControlPlane, crd_manifest

pytestmark = pytest.mark.integration

GROUP = "client.test.crdkit.dev"
WIDGET_CRD = crd_manifest(
    GROUP,
    "Widget",
    {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer", "minimum": 0},
                    "color": {"type": "string"},
                },
            },
            "status": {
                "type": "object",
                "properties": {"ready": {"type": "boolean"}},
            },
        },
    },
    status_subresource=True,
)


class WidgetSpec(ApiModel):
    size: int = 0
    color: str | None = None


class WidgetStatus(ApiModel):
    ready: bool = False


class Widget(CustomResource, group=GROUP, version="v1", kind="Widget"):
    spec: WidgetSpec = Field(default_factory=WidgetSpec)
    status: WidgetStatus | None = None


WIDGET_GVK = GroupVersionKind(GROUP, "v1", "Widget")


@pytest.fixture
async def widgets(crdkit_client: Client) -> None:
    """Install the Widget CRD through the client itself and wait until discovery serves it."""
    await crdkit_client.apply(WIDGET_CRD, field_manager="crdkit-tests", force=True)
    deadline = time.monotonic() + 30
    while True:
        crdkit_client.discovery.invalidate()
        try:
            await crdkit_client.resolve(WIDGET_GVK)
            return
        except NotFound:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


def widget(namespace: str, name: str, size: int = 1, **labels: str) -> Widget:
    return Widget.model_validate(
        {
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"size": size},
        }
    )


@pytest.mark.usefixtures("widgets")
async def test_custom_resource_crud(crdkit_client: Client, namespace: str) -> None:
    created = await crdkit_client.create(widget(namespace, "w1", 3, team="a"))
    assert isinstance(created, Widget)
    assert created.metadata.uid
    assert created.spec.size == 3

    got = await crdkit_client.get(Widget, "w1", namespace=namespace)
    assert got.metadata.resource_version == created.metadata.resource_version

    got.spec.color = "red"
    replaced = await crdkit_client.replace(got)
    assert replaced.spec.color == "red"

    with pytest.raises(Conflict):  # ``got`` carries the old resourceVersion now
        await crdkit_client.replace(got)

    merged = await crdkit_client.patch(Widget, "w1", {"spec": {"size": 5}}, namespace=namespace)
    assert (merged.spec.size, merged.spec.color) == (5, "red")

    to_blue = [{"op": "replace", "path": "/spec/color", "value": "blue"}]
    json_patched = await crdkit_client.patch(
        Widget, "w1", to_blue, namespace=namespace, patch_type=PatchType.JSON
    )
    assert json_patched.spec.color == "blue"

    deleted = await crdkit_client.delete(Widget, "w1", namespace=namespace)
    assert deleted is None or deleted.metadata.name == "w1"
    with pytest.raises(NotFound):
        await crdkit_client.get(Widget, "w1", namespace=namespace)


@pytest.mark.usefixtures("widgets")
async def test_list_pages_and_selectors(crdkit_client: Client, namespace: str) -> None:
    for i in range(7):
        await crdkit_client.create(widget(namespace, f"w{i}", i, parity=str(i % 2)))
    everything = await crdkit_client.list(Widget, namespace=namespace, page_size=2)
    assert sorted(w.metadata.name or "" for w in everything.items) == [f"w{i}" for i in range(7)]
    assert everything.resource_version

    odd = await crdkit_client.list(Widget, namespace=namespace, label_selector="parity=1")
    assert sorted(w.spec.size for w in odd.items) == [1, 3, 5]

    by_name = await crdkit_client.list(
        Widget, namespace=namespace, field_selector="metadata.name=w4"
    )
    assert [w.spec.size for w in by_name.items] == [4]


@pytest.mark.usefixtures("widgets")
async def test_server_side_apply_and_field_managers(crdkit_client: Client, namespace: str) -> None:
    desired = Widget.model_validate(
        {"metadata": {"name": "sa", "namespace": namespace}, "spec": {"size": 2}}
    )
    applied = await crdkit_client.apply(desired, field_manager="alpha")
    assert applied.spec.size == 2

    rival = Widget.model_validate(
        {"metadata": {"name": "sa", "namespace": namespace}, "spec": {"size": 9}}
    )
    with pytest.raises(Conflict) as conflict:
        await crdkit_client.apply(rival, field_manager="beta")
    assert "spec.size" in str(conflict.value)

    forced = await crdkit_client.apply(rival, field_manager="beta", force=True)
    assert forced.spec.size == 9

    with pytest.raises(ValueError, match="field_manager"):
        await crdkit_client.patch(
            Widget, "sa", {"spec": {}}, namespace=namespace, patch_type=PatchType.APPLY
        )


@pytest.mark.usefixtures("widgets")
async def test_status_subresource(crdkit_client: Client, namespace: str) -> None:
    created = await crdkit_client.create(widget(namespace, "st", 1))
    created.status = WidgetStatus(ready=True)
    created.spec.size = 100  # ignored by the status endpoint
    updated = await crdkit_client.replace_status(created)
    assert updated.status is not None
    assert updated.status.ready
    assert updated.spec.size == 1

    patched = await crdkit_client.patch(
        Widget, "st", {"status": {"ready": False}}, namespace=namespace, subresource="status"
    )
    assert patched.status is not None
    assert patched.status.ready is False


@pytest.mark.usefixtures("widgets")
async def test_delete_preconditions_and_propagation(crdkit_client: Client, namespace: str) -> None:
    created = await crdkit_client.create(widget(namespace, "del", 1))
    with pytest.raises(Conflict):
        await crdkit_client.delete(
            Widget, "del", namespace=namespace, preconditions=Preconditions(uid="not-the-uid")
        )
    await crdkit_client.delete(
        Widget,
        "del",
        namespace=namespace,
        preconditions=Preconditions(
            uid=created.metadata.uid, resource_version=created.metadata.resource_version
        ),
        propagation_policy=PropagationPolicy.FOREGROUND,
    )
    # Foreground deletion leaves the object with a finalizer (no garbage collector here),
    # so it either is gone or is marked for deletion.
    try:
        left = await crdkit_client.get(Widget, "del", namespace=namespace)
    except NotFound:
        return
    assert left.metadata.deletion_timestamp is not None


@pytest.mark.usefixtures("widgets")
async def test_untyped_by_group_version_kind(crdkit_client: Client, namespace: str) -> None:
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": "raw", "namespace": namespace},
        "spec": {"size": 4, "color": "green"},
    }
    created = await crdkit_client.create(body)
    assert isinstance(created, dict)
    assert created["metadata"]["uid"]
    got = await crdkit_client.get(WIDGET_GVK, "raw", namespace=namespace)
    assert got["spec"] == {"size": 4, "color": "green"}
    listed = await crdkit_client.list(WIDGET_GVK, namespace=namespace)
    assert [o["metadata"]["name"] for o in listed.items] == ["raw"]
    patched = await crdkit_client.patch(
        WIDGET_GVK, "raw", {"spec": {"size": 6}}, namespace=namespace
    )
    assert patched["spec"]["size"] == 6
    applied = await crdkit_client.apply(
        {**body, "spec": {"size": 7}}, field_manager="raw-manager", force=True
    )
    assert applied["spec"]["size"] == 7
    core = await crdkit_client.list(GroupVersionKind("", "v1", "ConfigMap"), namespace=namespace)
    assert isinstance(core.items, list)
    with pytest.raises(NotFound, match="NoSuchKind"):
        await crdkit_client.get(GroupVersionKind(GROUP, "v1", "NoSuchKind"), "x", namespace="y")


async def test_built_in_kinds_keep_unknown_fields(crdkit_client: Client, namespace: str) -> None:
    pod = Pod.model_validate(
        {
            "metadata": {"name": "p", "namespace": namespace},
            "spec": {
                "containers": [{"name": "main", "image": "busybox", "workingDir": "/data"}],
                "hostname": "custom-host",  # not modelled by Pod: must survive the round trip
            },
        }
    )
    created = await crdkit_client.create(pod)
    dumped = created.model_dump(by_alias=True)
    assert dumped["spec"]["hostname"] == "custom-host"
    assert dumped["spec"]["containers"][0]["workingDir"] == "/data"
    again = await crdkit_client.replace(created)
    assert again.model_dump(by_alias=True)["spec"]["hostname"] == "custom-host"

    node_name = f"node-{namespace}"
    node = await crdkit_client.create(Node.model_validate({"metadata": {"name": node_name}}))
    assert node.metadata.namespace is None
    assert (await crdkit_client.get(Node, node_name)).metadata.uid == node.metadata.uid
    await crdkit_client.delete(Node, node_name)

    assert (await crdkit_client.get(Namespace, namespace)).metadata.name == namespace
    secret = await crdkit_client.create(
        Secret.model_validate(
            {"metadata": {"name": "s", "namespace": namespace}, "stringData": {"k": "v"}}
        )
    )
    assert secret.model_dump(by_alias=True)["data"] == {"k": "dg=="}
    lease = await crdkit_client.create(
        Lease.model_validate(
            {"metadata": {"name": "l", "namespace": namespace}, "spec": {"holderIdentity": "me"}}
        )
    )
    assert lease.spec is not None
    assert lease.spec.holder_identity == "me"

    event = await crdkit_client.create(
        Event.model_validate(
            {
                "metadata": {"name": "e", "namespace": namespace},
                "eventTime": datetime.now(UTC).isoformat(),
                "reportingController": "crdkit.dev/tests",
                "reportingInstance": "tests-1",
                "action": "Testing",
                "reason": "Created",
                "type": "Normal",
                "note": "hello",
                "regarding": {"kind": "Pod", "name": "p", "namespace": namespace},
            }
        )
    )
    assert event.reason == "Created"
    assert event.event_time is not None


async def test_errors_carry_the_servers_status(crdkit_client: Client, namespace: str) -> None:
    cm = ConfigMap.model_validate({"metadata": {"name": "dup", "namespace": namespace}})
    await crdkit_client.create(cm)
    with pytest.raises(AlreadyExists) as exists:
        await crdkit_client.create(cm)
    assert exists.value.code == 409
    assert "dup" in exists.value.message
    assert isinstance(exists.value, Conflict)

    with pytest.raises(NotFound) as missing:
        await crdkit_client.get(ConfigMap, "absent", namespace=namespace)
    assert missing.value.code == 404
    assert missing.value.reason == "NotFound"

    bad = ConfigMap.model_validate({"metadata": {"name": "Not_Valid", "namespace": namespace}})
    with pytest.raises(Invalid) as invalid:
        await crdkit_client.create(bad)
    assert invalid.value.code == 422
    assert [c.field for c in invalid.value.causes] == ["metadata.name"]


@pytest.mark.usefixtures("widgets")
async def test_invalid_custom_resource_names_the_field(
    crdkit_client: Client, namespace: str
) -> None:
    with pytest.raises(Invalid) as invalid:
        await crdkit_client.create(widget(namespace, "neg", -1))
    assert "spec.size" in [c.field for c in invalid.value.causes]


async def test_anonymous_is_forbidden_and_bad_token_unauthorized(
    control_plane: ControlPlane,
) -> None:
    trust = ssl.create_default_context(cafile=str(control_plane.ca_file))
    anonymous = ClientConfig(server=control_plane.server_url, ssl_context=trust)
    async with Client(anonymous) as client:
        with pytest.raises(Forbidden) as forbidden:
            await client.list(ConfigMap, namespace="default")
    assert forbidden.value.code == 403

    bogus = ClientConfig(
        server=control_plane.server_url,
        ssl_context=trust,
        credentials=StaticCredentials("Bearer not-a-token"),
    )
    async with Client(bogus) as client:
        with pytest.raises(Unauthorized):
            await client.get(ConfigMap, "x", namespace="default")


async def test_watch_streams_changes(crdkit_client: Client, namespace: str) -> None:
    start = await crdkit_client.list(ConfigMap, namespace=namespace)
    await crdkit_client.create(
        ConfigMap.model_validate({"metadata": {"name": "w", "namespace": namespace}})
    )
    await crdkit_client.patch(ConfigMap, "w", {"data": {"a": "b"}}, namespace=namespace)
    await crdkit_client.delete(ConfigMap, "w", namespace=namespace)
    seen: list[tuple[str, dict[str, str]]] = []
    async for event in crdkit_client.watch(
        ConfigMap, namespace=namespace, resource_version=start.resource_version, timeout_seconds=5
    ):
        assert event.object is not None
        seen.append((event.type, dict(event.object.model_dump().get("data") or {})))
        if event.type == "DELETED":
            break
    assert [kind for kind, _ in seen] == ["ADDED", "MODIFIED", "DELETED"]
    assert seen[1][1] == {"a": "b"}


KIND_ONLY = {"apiVersion": f"{GROUP}/v1", "kind": "Widget"}


@pytest.mark.usefixtures("widgets")
@pytest.mark.parametrize(
    "verb",
    ["create", "get", "list", "watch", "patch", "apply", "replace", "replace_status", "delete"],
)
async def test_every_verb_takes_a_dict_as_the_readme_promises(
    crdkit_client: Client, namespace: str, verb: str
) -> None:
    # "Untyped calls take a GroupVersionKind (or a dict with apiVersion and kind)": the dict
    # in the resource position, and for get and delete a whole object naming itself.
    body = {
        **KIND_ONLY,
        "metadata": {"name": "raw", "namespace": namespace},
        "spec": {"size": 4},
    }
    created = await crdkit_client.create(body)
    assert created["metadata"]["name"] == "raw"
    if verb == "create":
        return
    if verb == "get":
        assert (await crdkit_client.get(created))["spec"] == {"size": 4}
        assert (await crdkit_client.get(KIND_ONLY, "raw", namespace=namespace))["spec"] == {
            "size": 4
        }
    elif verb == "list":
        listed = await crdkit_client.list(KIND_ONLY, namespace=namespace)
        assert [o["metadata"]["name"] for o in listed.items] == ["raw"]
    elif verb == "watch":
        seen = []
        async for event in crdkit_client.watch(
            KIND_ONLY, namespace=namespace, resource_version="0", timeout_seconds=5
        ):
            if event.type != "BOOKMARK":
                assert event.object is not None
                seen.append((event.type, event.object["metadata"]["name"]))
                break
        assert seen == [("ADDED", "raw")]
    elif verb == "patch":
        patched = await crdkit_client.patch(
            KIND_ONLY, "raw", {"spec": {"size": 6}}, namespace=namespace
        )
        assert patched["spec"]["size"] == 6
    elif verb == "apply":
        applied = await crdkit_client.apply(
            {**body, "spec": {"size": 7}}, field_manager="raw", force=True
        )
        assert applied["spec"]["size"] == 7
    elif verb == "replace":
        created["spec"]["size"] = 8
        assert (await crdkit_client.replace(created))["spec"]["size"] == 8
    elif verb == "replace_status":
        created["status"] = {"ready": True}
        replaced = await crdkit_client.replace_status(created)
        assert replaced["metadata"]["name"] == "raw"
    elif verb == "delete":
        # controller-runtime's Delete(obj): name and namespace from the object.
        await crdkit_client.delete(created)
        with pytest.raises(NotFound):
            await crdkit_client.get(created)
        with pytest.raises(ValueError, match=r"metadata\.name: the object has no name"):
            await crdkit_client.delete(KIND_ONLY)


async def test_get_and_delete_take_a_typed_object_too(
    crdkit_client: Client, namespace: str
) -> None:
    made = await crdkit_client.create(
        ConfigMap.model_validate({"metadata": {"name": "typed", "namespace": namespace}})
    )
    again = await crdkit_client.get(made)
    assert again.metadata.uid == made.metadata.uid
    await crdkit_client.delete(again)
    with pytest.raises(NotFound):
        await crdkit_client.get(made)
