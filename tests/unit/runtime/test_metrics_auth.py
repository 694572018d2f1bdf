"""MetricsAuthorizer's decisions and cache, on canned TokenReview/SubjectAccessReview answers
(the real apiserver's are in tests/integration/runtime/test_metrics_secure_live.py)."""

from __future__ import annotations

import json
from typing import Any

from crdkit.client.errors import TransportError
from crdkit.runtime.metrics_auth import ACCESS_REVIEWS, TOKEN_REVIEWS, MetricsAuthorizer


class Transport:
    """Answers reviews: tokens in ``users`` authenticate; users in ``allowed`` may read."""

    def __init__(self, users: dict[str, str], allowed: set[str]) -> None:
        self.users = users
        self.allowed = allowed
        self.calls: list[str] = []
        self.down = False

    async def request(self, method: str, path: str, **kwargs: Any) -> bytes:
        self.calls.append(path)
        if self.down:
            raise TransportError("connection refused")
        body = json.loads(kwargs["body"])
        if path == TOKEN_REVIEWS:
            user = self.users.get(body["spec"]["token"])
            status: dict[str, Any] = {"authenticated": user is not None}
            if user is not None:
                status["user"] = {"username": user, "groups": ["system:authenticated"]}
            return json.dumps({"status": status}).encode()
        assert path == ACCESS_REVIEWS
        assert body["spec"]["nonResourceAttributes"] == {"path": "/metrics", "verb": "get"}
        return json.dumps({"status": {"allowed": body["spec"]["user"] in self.allowed}}).encode()


class FakeClient:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def authorizer() -> tuple[MetricsAuthorizer, Transport, Clock]:
    transport = Transport({"good": "prometheus", "other": "stranger"}, {"prometheus"})
    clock = Clock()
    auth = MetricsAuthorizer(FakeClient(transport), ttl=60, refusal_ttl=10, clock=clock)  # type: ignore[arg-type]
    return auth, transport, clock


async def test_each_kind_of_caller_gets_its_answer() -> None:
    auth, _, _ = authorizer()
    assert await auth({"authorization": "Bearer good"}, "/metrics") is None
    refused = await auth({"authorization": "Bearer other"}, "/metrics")
    assert refused is not None
    assert refused.status == 403
    assert b"stranger may not get" in refused.body
    for headers in ({}, {"authorization": "Basic abc"}, {"authorization": "Bearer "}):
        answer = await auth(headers, "/metrics")
        assert answer is not None
        assert answer.status == 401
    unknown = await auth({"authorization": "Bearer forged"}, "/metrics")
    assert unknown is not None
    assert unknown.status == 401


async def test_answers_are_cached_until_their_ttl() -> None:
    auth, transport, clock = authorizer()
    for _ in range(5):
        assert await auth({"authorization": "bearer good"}, "/metrics") is None
    assert transport.calls == [TOKEN_REVIEWS, ACCESS_REVIEWS]
    clock.now = 59.0
    assert await auth({"authorization": "Bearer good"}, "/metrics") is None
    assert auth.reviews == 1
    clock.now = 61.0
    assert await auth({"authorization": "Bearer good"}, "/metrics") is None
    assert auth.reviews == 2
    # refusals are kept for less
    await auth({"authorization": "Bearer other"}, "/metrics")
    clock.now = 72.0
    await auth({"authorization": "Bearer other"}, "/metrics")
    assert auth.reviews == 4


async def test_an_unreachable_apiserver_refuses_and_is_not_cached() -> None:
    auth, transport, _ = authorizer()
    transport.down = True
    answer = await auth({"authorization": "Bearer good"}, "/metrics")
    assert answer is not None
    assert answer.status == 500
    transport.down = False
    assert await auth({"authorization": "Bearer good"}, "/metrics") is None
