"""A tiny blocking JSON-over-HTTP(S) helper for the control plane's own housekeeping (the HTTP
fault proxy takes its client TLS from here too). The standard library only: the control plane
must not need the ``testing`` extra's aiohttp, which only the fault proxies use.

The control plane must work from whichever event loop calls it (pytest-asyncio runs a session
fixture and the tests in different loops), so it keeps no loop-bound connections: each request
is a short blocking call that async code runs in a thread.
"""

from __future__ import annotations

import http.client
import json
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Response", "client_tls", "request"]


@dataclass(frozen=True)
class Response:
    """Status and decoded body (None when the body is empty or not JSON)."""

    status: int
    body: Any
    text: str


def client_tls(ca_file: str, cert_file: str, key_file: str) -> ssl.SSLContext:
    """TLS that trusts only the control plane's CA and presents the admin certificate."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca_file)
    context.load_cert_chain(cert_file, key_file)
    return context


def request(
    method: str,
    url: str,
    *,
    body: Any = None,
    tls: ssl.SSLContext | None = None,
    timeout: float = 10.0,
    content_type: str = "application/json",
) -> Response:
    """Send one request; connection errors propagate as ``OSError``."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=tls)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    payload = None if body is None else json.dumps(body).encode()
    headers = {"Accept": "application/json"}
    if payload is not None:
        headers["Content-Type"] = content_type
    try:
        conn.request(method, path, body=payload, headers=headers)
        raw = conn.getresponse()
        text = raw.read().decode(errors="replace")
        status = raw.status
    finally:
        conn.close()
    try:
        decoded: Any = json.loads(text) if text else None
    except ValueError:
        decoded = None
    return Response(status=status, body=decoded, text=text)
