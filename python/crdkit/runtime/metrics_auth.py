"""Who may read ``/metrics``: the caller's bearer token checked with the apiserver, as
controller-runtime's ``filters.WithAuthenticationAndAuthorization`` does.

A request must carry ``Authorization: Bearer <token>``. The token goes to a TokenReview (who is
this?) and the user it names to a SubjectAccessReview for the non-resource URL (``get
/metrics``): RBAC decides, so a Prometheus service account needs a ClusterRole with
``nonResourceURLs: ["/metrics"], verbs: ["get"]`` (``crdkit gen-manifests`` writes one, and the
operator's own role to create TokenReviews and SubjectAccessReviews). No token is 401, a token
the apiserver does not accept is 401, a user RBAC refuses is 403.

Answers are cached per token for ``ttl`` seconds (refusals for less), so a scraper every few
seconds costs two apiserver calls a minute, not two a scrape. A failure to reach the apiserver
refuses (500) and is not cached.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crdkit.client.errors import KubernetesError
from crdkit.runtime.http import Response

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from crdkit.client import Client

__all__ = ["MetricsAuthorizer"]

log = logging.getLogger("crdkit.runtime.metrics")

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
_JSON = "application/json"


@dataclass(frozen=True)
class _Verdict:
    response: Response | None  # None: allowed
    until: float


class MetricsAuthorizer:
    """Decides each request to a protected path; ``await authorizer(headers, path)`` gives
    ``None`` to serve it, or the refusal to send."""

    def __init__(
        self,
        client: Client,
        *,
        ttl: float = 60.0,
        refusal_ttl: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.ttl = ttl
        self.refusal_ttl = refusal_ttl
        self.clock = clock
        self._cache: dict[tuple[str, str], _Verdict] = {}
        self.reviews = 0
        """TokenReviews sent so far (the cache's effect, for tests and curiosity)."""

    async def __call__(self, headers: Mapping[str, str], path: str) -> Response | None:
        token = _bearer(headers.get("authorization", ""))
        if token is None:
            return Response(401, b"Unauthorized: a bearer token is required\n")
        # The cache holds a digest, never the token itself.
        key = (hashlib.sha256(token.encode()).hexdigest(), path)
        now = self.clock()
        cached = self._cache.get(key)
        if cached is not None and cached.until > now:
            return cached.response
        try:
            response = await self._decide(token, path)
        except KubernetesError as error:
            log.warning("metrics: could not review a token: %s", error)
            return Response(500, b"Internal Server Error: could not check the token\n")
        ttl = self.ttl if response is None else self.refusal_ttl
        if len(self._cache) > 1024:  # tokens rotate; drop what expired
            self._cache = {k: v for k, v in self._cache.items() if v.until > now}
        self._cache[key] = _Verdict(response, now + ttl)
        return response

    async def _decide(self, token: str, path: str) -> Response | None:
        self.reviews += 1
        review = await self._post(
            TOKEN_REVIEWS,
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": token},
            },
        )
        status = review.get("status") or {}
        if not status.get("authenticated"):
            return Response(401, b"Unauthorized: the token was not accepted\n")
        user = status.get("user") or {}
        access = await self._post(
            ACCESS_REVIEWS,
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": {
                    "user": user.get("username", ""),
                    "uid": user.get("uid", ""),
                    "groups": user.get("groups", []),
                    "extra": user.get("extra", {}),
                    "nonResourceAttributes": {"path": path, "verb": "get"},
                },
            },
        )
        if not (access.get("status") or {}).get("allowed"):
            name = user.get("username", "?")
            return Response(403, f'Forbidden: {name} may not get "{path}"\n'.encode())
        return None

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = await self.client.transport.request(
            "POST", path, body=json.dumps(body).encode(), content_type=_JSON
        )
        decoded: dict[str, Any] = json.loads(answer)
        return decoded


def _bearer(value: str) -> str | None:
    scheme, _, token = value.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None
