"""The webhook server over real TLS on loopback: reviews answered, 404/405/400 for what is not
a review, and close() answering the request in flight before it returns; the certificate in
use changes at the next handshake after its files do."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import socket
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from cryptography import x509

from crdkit import CustomResource
from crdkit._pki import CertificateAuthority, write_cert, write_key
from crdkit.runtime import AdmissionContext, Validator, Webhook
from crdkit.webhook.certs import CertWatcher, write_self_signed
from crdkit.webhook.server import WebhookServer


class Thing(CustomResource, group="things.example.com", version="v1", kind="Thing"):
    pass


class Gate(Validator[Thing]):
    """Holds each call until ``release`` is set, so a test can have one in flight."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()

    async def validate_create(self, ctx: AdmissionContext, obj: Thing) -> list[str] | None:
        self.entered.set()
        await self.release.wait()
        return None


PATH = "/validate-things-example-com-v1-thing"


def _review(uid: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "operation": "CREATE",
            "name": "t",
            "namespace": "ns",
            "object": {"apiVersion": "things.example.com/v1", "kind": "Thing", "metadata": {}},
        },
    }


@pytest.fixture
async def served(tmp_path: Path) -> Any:
    write_self_signed(tmp_path, ["127.0.0.1"])
    gate = Gate()
    server = WebhookServer([Webhook(Thing, validator=gate)], CertWatcher(tmp_path).context)
    await server.start("127.0.0.1", 0)
    client_ssl = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
    try:
        yield server, gate, client_ssl
    finally:
        await server.close()


async def _post(
    port: int, context: ssl.SSLContext, path: str, body: Any, method: str = "POST"
) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.request(
            method, f"https://127.0.0.1:{port}{path}", json=body, ssl=context
        ) as response,
    ):
        return response.status, await response.text()


async def test_a_review_is_answered(served: Any) -> None:
    server, _, context = served
    status, text = await _post(server.port, context, PATH, _review())
    assert status == 200
    assert '"allowed": true' in text
    assert server.requests == 1


@pytest.mark.parametrize(
    ("path", "body", "method", "status"),
    [
        ("/validate-other", _review(), "POST", 404),
        (PATH, _review(), "PUT", 405),
        (PATH, "not a review", "POST", 400),
        (PATH, {"kind": "Pod"}, "POST", 400),
    ],
)
async def test_what_is_not_a_review_gets_a_clear_status(
    served: Any, path: str, body: Any, method: str, status: int
) -> None:
    server, _, context = served
    assert (await _post(server.port, context, path, body, method))[0] == status
    assert server.requests == 0


async def test_convert_is_served_only_with_conversions(tmp_path: Path) -> None:
    from examples.conversion.boxes import BOX_CONVERSION

    write_self_signed(tmp_path, ["127.0.0.1"])
    context = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
    watcher = CertWatcher(tmp_path)
    plain = WebhookServer([Webhook(Thing, validator=Gate())], watcher.context)
    converting = WebhookServer([], watcher.context, conversions=[BOX_CONVERSION])
    await plain.start("127.0.0.1", 0)
    await converting.start("127.0.0.1", 0)
    try:
        assert (await _post(plain.port, context, "/convert", {}))[0] == 404
        status, text = await _post(converting.port, context, "/convert", {"kind": "Pod"})
        assert status == 400
        assert "not a ConversionReview" in text
        review = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "u", "desiredAPIVersion": "boxes.example.com/v2", "objects": []},
        }
        status, text = await _post(converting.port, context, "/convert", review)
        assert status == 200
        assert '"status": "Success"' in text
    finally:
        await plain.close()
        await converting.close()


async def test_invalid_json_is_400(served: Any) -> None:
    server, _, context = served
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"https://127.0.0.1:{server.port}{PATH}", data=b"{", ssl=context) as response,
    ):
        assert response.status == 400
        assert "not an AdmissionReview" in await response.text()


async def test_close_answers_the_request_in_flight(served: Any) -> None:
    server, gate, context = served
    port = server.port
    gate.release.clear()
    call = asyncio.create_task(_post(server.port, context, PATH, _review()))
    await gate.entered.wait()
    closing = asyncio.create_task(server.close())
    await asyncio.sleep(0)
    assert not closing.done()  # waiting for the call in flight
    gate.release.set()
    await closing
    assert (await call)[0] == 200
    with pytest.raises(aiohttp.ClientConnectionError):  # no longer listening
        await _post(port, context, PATH, _review())


async def _served_serial(port: int, context: ssl.SSLContext) -> int:
    _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    writer.close()
    await writer.wait_closed()
    return int(x509.load_der_x509_certificate(der).serial_number)


def _issue(ca: CertificateAuthority, directory: Path) -> int:
    cert, key = ca.serving("webhook", ["127.0.0.1"])
    write_key(directory / "tls.key", key)
    write_cert(directory / "tls.crt", cert)
    return int(cert.serial_number)


async def test_the_next_handshake_meets_the_rotated_certificate(tmp_path: Path) -> None:
    ca = CertificateAuthority("test-ca", validity=dt.timedelta(days=1))
    write_cert(tmp_path / "ca.crt", ca.cert)
    first = _issue(ca, tmp_path)
    server = WebhookServer([Webhook(Thing, validator=Gate())], CertWatcher(tmp_path).context)
    await server.start("127.0.0.1", 0)
    context = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
    try:
        assert await _served_serial(server.port, context) == first
        second = _issue(ca, tmp_path)
        assert await _served_serial(server.port, context) == second
    finally:
        await server.close()


async def test_a_replacement_in_the_process_takes_over_the_listening_socket(
    tmp_path: Path,
) -> None:
    # Two sockets on one port (SO_REUSEPORT) would each have a queue, and closing the old one
    # resets what reached its queue after its last accept. Sharing the socket leaves nothing
    # to reset: the connections queued when the old server stops are the new one's.
    write_self_signed(tmp_path, ["127.0.0.1"])
    context = CertWatcher(tmp_path).context
    old = WebhookServer([Webhook(Thing, validator=Gate())], context)
    await old.start("127.0.0.1", 0)
    new = WebhookServer([Webhook(Thing, validator=Gate())], context)
    try:
        await new.start("127.0.0.1", old.port)
        port = old.port
        assert new.port == port
        [old_socket], [new_socket] = old.sockets, new.sockets
        assert os.fstat(old_socket.fileno()).st_ino == os.fstat(new_socket.fileno()).st_ino
        # Connected while nobody accepts (no await in between), then the old one stops.
        queued = [socket.create_connection(("127.0.0.1", old.port)) for _ in range(5)]
        await old.close()
        client_ssl = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
        answers = await asyncio.gather(*(_answer_on(sock, client_ssl) for sock in queued))
        assert all(answer.startswith(b"HTTP/1.1 200") for answer in answers)
        assert new.requests == 5
        assert old.requests == 0
        # The socket outlived the old server and closes with the last one.
        status, _ = await _post(new.port, client_ssl, PATH, _review())
        assert status == 200
    finally:
        await old.close()
        await new.close()
    assert new.sockets == ()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


async def _answer_on(sock: socket.socket, context: ssl.SSLContext) -> bytes:
    sock.setblocking(False)
    reader, writer = await asyncio.open_connection(
        sock=sock, ssl=context, server_hostname="127.0.0.1"
    )
    body = json.dumps(_review()).encode()
    writer.write(
        f"POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    answer = await reader.read()
    writer.close()
    await writer.wait_closed()
    return answer
