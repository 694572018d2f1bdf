"""The async pytest fixtures behind :mod:`crdkit.testing.pytest_plugin`.

``control_plane`` lives for the whole session in pytest-asyncio's session loop; tests run in
their own loops, which works because ``ControlPlane`` keeps nothing loop-bound between calls.
Per-test fixtures (``namespace``, ``k8s_api_client``) live in the test's loop.
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any

import pytest_asyncio

from crdkit.testing.envtest.control_plane import ControlPlane

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import pytest
    from kubernetes_asyncio.client import ApiClient

    from crdkit.client import Client
    from crdkit.testing.operator import OperatorRunner

__all__ = ["control_plane", "crdkit_client", "k8s_api_client", "namespace", "operator"]


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def control_plane() -> AsyncIterator[ControlPlane]:
    """One real etcd + kube-apiserver for the test session, stopped at its end."""
    async with ControlPlane() as plane:
        yield plane


def _namespace_name(test_name: str) -> str:
    # A DNS label (63 chars at most) that still tells which test made it.
    slug = re.sub(r"[^a-z0-9]+", "-", test_name.lower()).strip("-")[:40].strip("-")
    return f"{slug or 'test'}-{uuid.uuid4().hex[:8]}"


@pytest_asyncio.fixture
async def namespace(
    control_plane: ControlPlane, request: pytest.FixtureRequest
) -> AsyncIterator[str]:
    """A fresh namespace for one test, created through the API; its name is yielded.

    It is deleted afterwards, but with no controller-manager it stays ``Terminating`` and
    its objects stay in etcd: tests must not rely on them being gone.
    """
    name = _namespace_name(request.node.name)
    await control_plane.create_namespace(name)
    yield name
    await control_plane.delete_namespace(name)


@pytest_asyncio.fixture
async def k8s_api_client(control_plane: ControlPlane) -> AsyncIterator[ApiClient]:
    """A kubernetes-asyncio ``ApiClient`` for the admin user, closed after the test."""
    try:
        from kubernetes_asyncio.config import new_client_from_config
    except ImportError as error:
        raise ImportError(
            "the k8s_api_client fixture needs kubernetes-asyncio: pip install 'crdkit[testing]'",
            name="kubernetes_asyncio",
        ) from error

    client: Any = await new_client_from_config(config_file=str(control_plane.kubeconfig_path))
    try:
        yield client
    finally:
        await client.close()


@pytest_asyncio.fixture
async def crdkit_client(control_plane: ControlPlane) -> AsyncIterator[Client]:
    """An open crdkit ``Client`` for the admin user of ``control_plane``, closed afterwards."""
    from crdkit.client import Client

    async with Client.from_control_plane(control_plane) as client:
        yield client


@pytest_asyncio.fixture
async def operator(crdkit_client: Client) -> AsyncIterator[OperatorRunner]:
    """An :class:`~crdkit.testing.operator.OperatorRunner` on ``crdkit_client``; whatever it
    runs is stopped after the test, and a manager that failed fails the test."""
    from crdkit.testing.operator import OperatorRunner

    runner = OperatorRunner(crdkit_client)
    yield runner
    await runner.stop()
