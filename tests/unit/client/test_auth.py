"""Auth-provider credentials: kubernetes-asyncio does the provider's work, crdkit bounds it in
time and turns its failures into one-line configuration errors."""

from __future__ import annotations

import base64
import json
import time

import pytest

from crdkit.client.auth import AuthProviderCredentials
from crdkit.client.errors import ConfigError


def jwt(claims: dict[str, int]) -> str:
    def part(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part(dict(claims))}.signature"


async def test_an_unexpired_oidc_id_token_is_the_bearer_token() -> None:
    token = jwt({"exp": int(time.time()) + 3600})
    provider = {
        "name": "oidc",
        "config": {"id-token": token, "client-id": "c", "idp-issuer-url": "https://idp"},
    }
    credentials = AuthProviderCredentials(provider)
    assert await credentials.authorization() == f"Bearer {token}"
    provider["config"]["id-token"] = "changed"  # the credentials keep their own copy
    credentials.invalidate()
    assert await credentials.authorization() == f"Bearer {token}"


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        ({"name": "oidc"}, r"^W: auth-provider 'oidc': ValueError: oidc: missing configuration$"),
        (
            {"name": "oidc", "config": {"id-token": "a.b"}},
            r"JWT tokens should contain 3 period-delimited parts",
        ),
        ({"name": "azure", "config": {}}, r"^W: auth-provider 'azure': not supported"),
    ],
)
async def test_a_failing_provider_is_one_config_error(
    provider: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await AuthProviderCredentials(provider, where="W").authorization()
