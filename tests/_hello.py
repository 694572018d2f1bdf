"""What the tests of the hello example (unit tests on FakeCluster, live tests on a control
plane) check its result with: the greeting ConfigMap and the Ready Hello, and who controls the
ConfigMap. Imported by module name (this folder is on ``sys.path``, through tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterable

from examples.hello.operator import Hello

from crdkit.client import Client, NotFound
from crdkit.resources import ConfigMap, KubernetesObject
from crdkit.runtime import is_condition_true
from crdkit.testing.crashes import History


async def hello_greeted(
    client: Client,
    namespace: str,
    message: str,
    *,
    name: str = "world",
    generation_observed: bool = False,
) -> bool:
    """Whether the hello operator has made the ConfigMap of the Hello ``name`` with ``message``
    and set the Hello Ready (having seen its latest generation, with ``generation_observed``)."""
    try:
        cm = await client.get(ConfigMap, f"{name}-greeting", namespace=namespace)
    except NotFound:
        return False
    hello = await client.get(Hello, name, namespace=namespace)
    return (
        cm.data.get("message") == message
        and hello.status is not None
        and is_condition_true(hello.status.conditions, "Ready")
        and (
            not generation_observed or hello.status.observed_generation == hello.metadata.generation
        )
    )


def controller_of(obj: KubernetesObject) -> tuple[str, str, str | None, bool | None]:
    """The kind, name, uid and controller flag of ``obj``'s one owner reference."""
    [owner] = obj.metadata.owner_references
    return (owner.kind, owner.name, owner.uid, owner.controller)


def all_greeted(history: History) -> Iterable[str]:
    """A crash test's invariant: every Hello of the end state greeted for its generation."""
    for hello in history.end_state:
        if hello.get("kind") != "Hello":
            continue
        status = hello.get("status") or {}
        metadata = hello.get("metadata") or {}
        if status.get("observedGeneration") != metadata.get("generation"):
            yield f"Hello {metadata.get('name')} not greeted for its generation: {status}"
