"""The fault proxies in front of the real apiserver, and the client's retries through them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from crdkit.client import Client, NotFound, RetryPolicy, TransportError
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.testing import ControlPlane, HttpFaultProxy, TcpFaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def configmap(namespace: str, name: str) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=namespace), data={"k": "v"})


async def test_http_proxy_kubeconfig_reaches_the_apiserver(
    control_plane: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    async with HttpFaultProxy.for_control_plane(control_plane) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kubeconfig")
        async with await Client.from_kubeconfig(kubeconfig) as client:
            await client.create(configmap(namespace, "via-proxy"))
            got = await client.get(ConfigMap, "via-proxy", namespace=namespace)
            assert got.data == {"k": "v"}
        methods = [(r.method, r.status) for r in proxy.requests()]
        assert ("POST", 201) in methods
        assert ("GET", 200) in methods


async def test_a_get_is_retried_after_resets_and_a_create_is_not(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    await crdkit_client.create(configmap(namespace, "read-me"))
    async with (
        HttpFaultProxy.for_control_plane(control_plane) as proxy,
        Client(proxy.client_config()) as client,
    ):
        await client.get(ConfigMap, "read-me", namespace=namespace)  # a pooled connection
        # Two: aiohttp resends an idempotent request once by itself; the second reset is
        # the client's retry policy's to handle.
        proxy.reset_requests(methods=["GET"], path="/configmaps/read-me$", times=2)
        got = await client.get(ConfigMap, "read-me", namespace=namespace)
        assert got.metadata.name == "read-me"
        reads = [r for r in proxy.requests() if r.path.endswith("/read-me")]
        assert [r.injected for r in reads] == [False, True, True, False]

        proxy.reset_requests(methods=["POST"], times=1)
        with pytest.raises(TransportError):
            await client.create(configmap(namespace, "write-me"))
    # Reset before the apiserver saw it; a client cannot know that, so it must not resend.
    with pytest.raises(NotFound):
        await crdkit_client.get(ConfigMap, "write-me", namespace=namespace)


async def test_a_refused_connection_is_retried_until_the_server_is_back(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    await crdkit_client.create(configmap(namespace, "later"))
    async with TcpFaultProxy.for_control_plane(control_plane) as proxy:
        policy = RetryPolicy(max_retries=8, backoff_initial=0.1, backoff_max=0.5)
        async with Client(proxy.client_config(), retry=policy) as client:
            await client.get(ConfigMap, "later", namespace=namespace)
            proxy.close_connections()  # no pooled connection to fall back on
            proxy.refuse()
            pending = asyncio.create_task(client.get(ConfigMap, "later", namespace=namespace))
            await asyncio.sleep(0.5)
            assert not pending.done()
            accepted = proxy.accepted
            proxy.pass_through()
            got = await asyncio.wait_for(pending, 30)
            assert got.metadata.name == "later"
            assert proxy.accepted > accepted  # it came back on a new connection
