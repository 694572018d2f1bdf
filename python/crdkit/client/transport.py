"""The raw request layer: bytes in, bytes out, every answer's status checked.

Everything above this module (typed CRUD, watches, informers) goes through ``Transport``, so
the rules live in one place:

- every request has a connect timeout and a read timeout; nothing waits on a dead socket;
- a non-2xx answer becomes the matching :mod:`crdkit.client.errors` exception;
- 429 (and 5xx carrying ``Retry-After``) is retried after the server's delay, a bounded number
  of times and never longer than ``max_retry_wait`` per wait;
- a 401 makes the credentials refresh once (rotated token, expired exec token) and retries.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import aiohttp

from crdkit.client.errors import (
    RequestTimeout,
    TransportError,
    api_error_from_response,
)

if TYPE_CHECKING:
    from crdkit.client.config import ClientConfig, Timeouts

__all__ = ["Params", "Transport"]

log = logging.getLogger(__name__)

Params = Mapping[str, str] | Sequence[tuple[str, str]]
JSON = "application/json"


def _user_agent() -> str:
    from crdkit import __version__

    return f"crdkit/{__version__}"


def retry_after_seconds(headers: Mapping[str, str], default: float) -> float:
    """The ``Retry-After`` delay in seconds (the apiserver sends whole seconds)."""
    value = headers.get("Retry-After")
    if value is None:
        return default
    try:
        return max(0.0, float(value))
    except ValueError:
        return default


class Transport:
    """An aiohttp session bound to one apiserver. Open it inside the event loop that uses it."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        max_retries: int = 5,
        max_retry_wait: float = 30.0,
        max_connections: int = 100,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.config = config
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None
        self._user_agent = _user_agent()

    async def open(self) -> None:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                ssl=self.config.ssl_context if self.config.ssl_context is not None else True,
                limit=self._max_connections,
            )
            self._session = aiohttp.ClientSession(connector=connector)

    async def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("the client is not open: use `async with Client(...)`")
        return self._session

    async def _headers(self, accept: str, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": accept, "User-Agent": self._user_agent}
        if not self.config.compression:
            headers["Accept-Encoding"] = "identity"
        if content_type is not None:
            headers["Content-Type"] = content_type
        authorization = await self.config.credentials.authorization()
        if authorization:
            headers["Authorization"] = authorization
        return headers

    def _request_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self.config.tls_server_name:
            kwargs["server_hostname"] = self.config.tls_server_name
        if self.config.proxy:
            kwargs["proxy"] = self.config.proxy
        return kwargs

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = JSON,
        timeouts: Timeouts | None = None,
    ) -> bytes:
        """Send one request and return the body of its 2xx answer, or raise."""
        limits = timeouts or self.config.timeouts
        timeout = aiohttp.ClientTimeout(
            total=limits.total, sock_connect=limits.connect, sock_read=limits.read
        )
        url = self.config.server + path
        retries = 0
        refreshed = False
        while True:
            headers = await self._headers(accept, content_type if body is not None else None)
            try:
                async with self.session.request(
                    method,
                    url,
                    params=params,
                    data=body,
                    headers=headers,
                    timeout=timeout,
                    **self._request_kwargs(),
                ) as response:
                    data = await response.read()
                    status = response.status
                    response_headers = response.headers
            except TimeoutError as exc:
                raise RequestTimeout(f"{method} {path}: timed out ({exc or 'no answer'})") from exc
            except aiohttp.ClientError as exc:
                raise TransportError(f"{method} {path}: {exc}") from exc
            if 200 <= status < 300:
                return data
            if status == 401 and not refreshed:
                refreshed = True
                self.config.credentials.invalidate()
                continue
            retryable = status == 429 or (status >= 500 and "Retry-After" in response_headers)
            if retryable and retries < self.max_retries:
                retries += 1
                wait = min(retry_after_seconds(response_headers, 1.0), self.max_retry_wait)
                log.debug("%s %s: %s, retry %d in %.1fs", method, path, status, retries, wait)
                await asyncio.sleep(wait)
                continue
            raise api_error_from_response(status, data)

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        accept: str = JSON,
        idle_timeout: float,
        connect_timeout: float | None = None,
    ) -> AsyncIterator[aiohttp.StreamReader]:
        """Open a long response (a watch) and yield its body stream once the status is 2xx.

        ``idle_timeout`` bounds the silence between two chunks: a connection that died without
        a FIN is noticed then. Reads past it raise ``RequestTimeout``.
        """
        timeout = aiohttp.ClientTimeout(
            total=None,
            sock_connect=connect_timeout or self.config.timeouts.connect,
            sock_read=idle_timeout,
        )
        url = self.config.server + path
        refreshed = False
        while True:
            headers = await self._headers(accept, None)
            try:
                response = await self.session.request(
                    method,
                    url,
                    params=params,
                    headers=headers,
                    timeout=timeout,
                    **self._request_kwargs(),
                )
            except TimeoutError as exc:
                raise RequestTimeout(f"{method} {path}: timed out connecting") from exc
            except aiohttp.ClientError as exc:
                raise TransportError(f"{method} {path}: {exc}") from exc
            if 200 <= response.status < 300:
                break
            try:
                data = await response.read()
            except (TimeoutError, aiohttp.ClientError):
                data = b""
            finally:
                response.close()
            if response.status == 401 and not refreshed:
                refreshed = True
                self.config.credentials.invalidate()
                continue
            raise api_error_from_response(response.status, data)
        try:
            yield response.content
        finally:
            response.close()
