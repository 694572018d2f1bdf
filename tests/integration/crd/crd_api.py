"""A blocking client for just enough of the Kubernetes REST API, for hypothesis tests."""

from __future__ import annotations

import http.client
import json
import ssl
import uuid
from typing import Any
from urllib.parse import urlparse

from crdkit.resources import KubernetesObject, resource_info
from crdkit.testing import ControlPlane


def raw_object(
    resource: type[KubernetesObject], metadata: dict[str, Any], **fields: Any
) -> dict[str, Any]:
    """An object of ``resource`` as a plain dict (``fields``: ``spec`` and the like), its
    apiVersion and kind from the model: what the apiserver is sent when pydantic must not see
    it first, or must see exactly what the apiserver sees."""
    info = resource_info(resource)
    return {"apiVersion": info.api_version, "kind": info.kind, "metadata": metadata, **fields}


class BlockingApi:
    """Just enough of the Kubernetes REST API, over one TLS connection per request."""

    def __init__(self, control_plane: ControlPlane) -> None:
        url = urlparse(control_plane.server_url)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 443
        self.context = ssl.create_default_context(cafile=str(control_plane.ca_file))
        self.context.load_cert_chain(
            str(control_plane.client_cert_file), str(control_plane.client_key_file)
        )

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
    ) -> tuple[int, dict[str, Any]]:
        status, data, _ = self.exchange(method, path, body, content_type)
        return status, data

    def exchange(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        accept: str = "application/json",
    ) -> tuple[int, dict[str, Any], http.client.HTTPMessage]:
        """Status, JSON body and headers of one request."""
        connection = http.client.HTTPSConnection(
            self.host, self.port, context=self.context, timeout=30
        )
        try:
            # bytes are sent as they are (YAML, or JSON json.dumps would refuse to write)
            if isinstance(body, bytes):
                payload: bytes | None = body
            else:
                payload = None if body is None else json.dumps(body).encode()
            headers = {"Content-Type": content_type, "Accept": accept}
            connection.request(method, path, body=payload, headers=headers)
            response = connection.getresponse()
            data = response.read()
            return response.status, json.loads(data) if data else {}, response.headers
        finally:
            connection.close()

    def new_namespace(self) -> str:
        name = f"crd-diff-{uuid.uuid4().hex[:10]}"
        status, body = self.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        assert status == 201, body
        return name
