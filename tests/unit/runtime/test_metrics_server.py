"""The metrics server reads its MetricsOptions whole: the address (checked when it is built),
plain or secure serving, and the self-signed pair it makes without a certificate directory,
which goes away when it closes."""

from __future__ import annotations

import asyncio
import ssl
import tempfile
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter

from crdkit.client import Client, ClientConfig
from crdkit.runtime import MetricsOptions
from crdkit.runtime.metrics_server import MetricsServer


async def _get(port: int, context: ssl.SSLContext | None = None) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
    await writer.drain()
    data = await reader.read()
    writer.close()
    return data


def _registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    Counter("crdkit_probe", "A counter the scrape must show.", registry=registry).inc()
    return registry


async def test_plain_metrics_serve_the_registry_until_closed() -> None:
    async with Client(ClientConfig("https://metrics.invalid")) as client:
        server = MetricsServer(
            MetricsOptions(bind_address="127.0.0.1:0"), client=client, registry=_registry()
        )
        assert server.port is None  # not yet started
        await server.start()
        port = server.port
        assert port is not None
        try:
            answer = await _get(port)
            assert answer.startswith(b"HTTP/1.1 200")
            assert b"crdkit_probe_total 1.0" in answer
        finally:
            await server.close()
        assert server.port is None
        with pytest.raises(ConnectionRefusedError):
            await _get(port)


async def test_metrics_turned_off_serve_nothing() -> None:
    async with Client(ClientConfig("https://metrics.invalid")) as client:
        server = MetricsServer(
            MetricsOptions(bind_address="0"), client=client, registry=CollectorRegistry()
        )
        assert server.address is None
        await server.start()
        assert server.port is None
        await server.close()


@pytest.mark.parametrize("address", ["8080", "host:x", ":70000"])
async def test_a_bad_address_is_refused_when_built(address: str) -> None:
    async with Client(ClientConfig("https://metrics.invalid")) as client:
        with pytest.raises(ValueError, match="metrics_bind_address"):
            MetricsServer(
                MetricsOptions(bind_address=address), client=client, registry=CollectorRegistry()
            )


def test_the_address_follows_security_when_not_given() -> None:
    client = Client(ClientConfig("https://metrics.invalid"))
    plain = MetricsServer(MetricsOptions(), client=client, registry=CollectorRegistry())
    secure = MetricsServer(MetricsOptions(secure=True), client=client, registry=CollectorRegistry())
    assert plain.address == ("127.0.0.1", 8080)
    assert secure.address == ("0.0.0.0", 8443)


async def test_secure_metrics_make_a_self_signed_pair_and_remove_it_on_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = tmp_path / "pair"

    def mkdtemp(prefix: str) -> str:
        assert prefix == "crdkit-metrics-"
        made.mkdir()
        return str(made)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    async with Client(ClientConfig("https://metrics.invalid")) as client:
        server = MetricsServer(
            MetricsOptions(bind_address="127.0.0.1:0", secure=True),
            client=client,
            registry=_registry(),
        )
        await server.start()
        try:
            assert (made / "tls.crt").is_file()
            port = server.port
            assert port is not None
            context = ssl.create_default_context(cafile=made / "ca.crt")
            answer = await _get(port, context)
            assert answer.startswith(b"HTTP/1.1 401")  # no token: RBAC is never asked
        finally:
            await server.close()
    assert not made.exists()


async def test_a_scrape_counts_the_event_loops_tasks() -> None:
    """``crdkit_asyncio_tasks`` is the served loop's unfinished tasks at the scrape: ten more
    sleeping tasks show as ten more (the soak, benches/soak.py, reads it for leaks)."""
    async with Client(ClientConfig("https://metrics.invalid")) as client:
        server = MetricsServer(
            MetricsOptions(bind_address="127.0.0.1:0"), client=client, registry=_registry()
        )
        await server.start()
        assert server.port is not None
        sleepers: list[asyncio.Task[None]] = []
        try:
            before = _tasks_in(await _get(server.port))
            sleepers = [asyncio.create_task(asyncio.sleep(60)) for _ in range(10)]
            assert _tasks_in(await _get(server.port)) == before + 10
        finally:
            for task in sleepers:
                task.cancel()
            await server.close()


def _tasks_in(answer: bytes) -> int:
    (line,) = [x for x in answer.splitlines() if x.startswith(b"crdkit_asyncio_tasks ")]
    return int(float(line.split()[1]))
