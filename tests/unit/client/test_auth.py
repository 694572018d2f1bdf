"""Auth-provider credentials: kubernetes-asyncio does the provider's work, crdkit bounds it in
time and turns its failures into one-line configuration errors."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
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


def test_without_kubernetes_asyncio_an_auth_provider_names_the_extra() -> None:
    # A plain install has no kubernetes-asyncio: the provider's user is told what to install
    # (in a fresh interpreter where importing it fails, as where the extra is absent).
    probe = (
        "import sys, asyncio\n"
        "sys.modules['kubernetes_asyncio'] = None\n"
        "from crdkit.client.auth import AuthProviderCredentials\n"
        "from crdkit.client.errors import ConfigError\n"
        "provider = AuthProviderCredentials({'name': 'oidc', 'config': {}}, where='kubeconfig k')\n"
        "try:\n"
        "    asyncio.run(provider.authorization())\n"
        "except ConfigError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "kubeconfig k: auth-provider 'oidc' needs kubernetes-asyncio: "
        "pip install 'crdkit[auth-provider]' (or use an exec plugin)"
    )
