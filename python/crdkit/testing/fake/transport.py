"""The REST face of the fake apiserver: what :class:`~crdkit.client.Client` sends, answered.

It implements :class:`crdkit.client.transport.ApiTransport`, so a ``Client`` built on it runs
its real code (paths, codecs, selectors, patch flavours, error mapping, watch parsing) and
only the HTTP round trip is replaced. Paths are parsed as the apiserver's router does; bodies
are JSON; answers are the bytes the apiserver would send.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crdkit.testing.fake.errors import invalid, status_error
from crdkit.testing.fake.kinds import unknown_resource_message
from crdkit.testing.fake.patch import PatchError, apply_json_patch, apply_merge_patch
from crdkit.testing.fake.select import Selection

if TYPE_CHECKING:
    from crdkit.client.config import Timeouts
    from crdkit.client.transport import Params
    from crdkit.testing.fake.kinds import FakeKind, KindRegistry
    from crdkit.testing.fake.server import FakeApiServer, Obj, WatchRecord

__all__ = ["FakeTransport"]

_NO_SUCH_RESOURCE = "the server could not find the requested resource"
_MERGE = "application/merge-patch+json"
_JSON_PATCH = "application/json-patch+json"
_STRATEGIC = "application/strategic-merge-patch+json"
_APPLY = "application/apply-patch+yaml"


@dataclass(frozen=True)
class Route:
    """A parsed request path."""

    kind: FakeKind
    namespace: str | None
    name: str | None
    subresource: str | None


def _dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _params(params: Params | None) -> dict[str, str]:
    if params is None:
        return {}
    if isinstance(params, Mapping):
        return dict(params)
    return dict(params)


def _list_key(obj: Obj) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return (metadata.get("namespace") or "", metadata.get("name") or "")


def _metadata_only(accept: str) -> bool:
    return "as=PartialObjectMetadata" in accept


def _as_metadata(obj: Obj) -> Obj:
    return {
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": obj.get("metadata", {}),
    }


class _WatchStream:
    """The body of one watch: event lines as chunks, ``b""`` once it ends."""

    def __init__(self) -> None:
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()
        self.closed = False

    def put(self, line: bytes) -> None:
        if not self.closed:
            self._chunks.put_nowait(line + b"\n")

    def end(self) -> None:
        if not self.closed:
            self.closed = True
            self._chunks.put_nowait(b"")

    async def readany(self) -> bytes:
        return await self._chunks.get()


class FakeTransport:
    """An :class:`~crdkit.client.transport.ApiTransport` answered by a ``FakeApiServer``."""

    def __init__(self, server: FakeApiServer, kinds: KindRegistry) -> None:
        self._server = server
        self._kinds = kinds
        self._open = False
        self._streams: set[_WatchStream] = set()

    @property
    def is_open(self) -> bool:
        return self._open

    async def open(self) -> None:
        self._open = True

    async def close(self) -> None:
        self._open = False
        self.end_watches()

    def end_watches(self) -> None:
        """End every open watch, as an apiserver does at its timeout (watchers rewatch)."""
        for stream in list(self._streams):
            stream.end()

    def _check_open(self) -> None:
        if not self._open:
            raise RuntimeError("the client is not open: use `async with client:`")

    # -- routing ---------------------------------------------------------------------------

    def _route(self, path: str) -> Route:
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["api"] and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise status_error(404, "NotFound", f"the fake apiserver serves no path {path}")
        namespace: str | None = None
        # /namespaces/{ns}/{plural}/... is namespaced; /namespaces/{name}[/status] is a Namespace.
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise status_error(404, "NotFound", f"the fake apiserver serves no path {path}")
        kind = self._kinds.by_resource(group, version, rest[0])
        if kind is None:
            raise status_error(404, "NotFound", unknown_resource_message(group, version, rest[0]))
        if kind.info.namespaced == (namespace is None) and len(rest) > 1:
            raise status_error(404, "NotFound", f"the fake apiserver serves no path {path}")
        name = rest[1] if len(rest) > 1 else None
        subresource = rest[2] if len(rest) > 2 else None
        return Route(kind, namespace, name, subresource)

    # -- requests --------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = "application/json",
        timeouts: Timeouts | None = None,
    ) -> bytes:
        """Answer one request as the apiserver would, or raise its error."""
        self._check_open()
        await asyncio.sleep(0)  # a real request yields to the event loop; so does this one
        query = _params(params)
        if method == "GET" and (path in ("/api", "/apis") or self._is_discovery(path)):
            return self._discovery(path)
        route = self._route(path)
        data = self._body(body, content_type)
        answer = self._dispatch(method, route, query, data, content_type)
        if _metadata_only(accept):
            if "items" in answer:
                answer = {
                    "apiVersion": "meta.k8s.io/v1",
                    "kind": "PartialObjectMetadataList",
                    "metadata": answer["metadata"],
                    "items": [_as_metadata(item) for item in answer["items"]],
                }
            elif answer.get("kind") != "Status":
                answer = _as_metadata(answer)
        return _dump(answer)

    @staticmethod
    def _body(body: bytes | None, content_type: str | None) -> Any:
        if body is None:
            return None
        try:
            return json.loads(body)
        except ValueError:
            if content_type == _APPLY:
                from crdkit._yaml import load_yaml

                return load_yaml(body.decode())
            raise status_error(400, "BadRequest", "the request body is not JSON") from None

    def _dispatch(
        self, method: str, route: Route, query: dict[str, str], data: Any, content_type: str | None
    ) -> Obj:
        kind, namespace, name, sub = route.kind, route.namespace, route.name, route.subresource
        server = self._server
        if sub is not None and not (
            (sub == "status" and kind.status_subresource)
            or (sub == "binding" and kind.info.kind == "Pod" and method == "POST")
        ):
            raise status_error(404, "NotFound", _NO_SUCH_RESOURCE)
        if name is None:
            if method == "GET":
                return self._list(kind, namespace, query)
            if method == "POST":
                if kind.info.namespaced and namespace is None:
                    raise status_error(405, "MethodNotAllowed", "create needs a namespace")
                return server.create(kind, namespace, self._object(data, kind))
            raise status_error(405, "MethodNotAllowed", f"{method} on a collection")
        if method == "GET":
            return server.get(kind, namespace, name)
        if method == "PUT":
            return server.update(kind, namespace, name, self._object(data, kind), subresource=sub)
        if method == "PATCH":
            return self._patch(route, query, data, content_type)
        if method == "DELETE":
            deleted = server.delete(kind, namespace, name, data or {})
            if kind.returns_deleted_object or deleted["metadata"].get("deletionTimestamp"):
                return deleted
            return self._success(kind, deleted)
        if method == "POST" and sub == "binding":
            return self._bind(route, self._object(data, kind, check_kind=False))
        raise status_error(405, "MethodNotAllowed", f"{method} {kind.info.plural}/{name}")

    @staticmethod
    def _object(data: Any, kind: FakeKind, *, check_kind: bool = True) -> Obj:
        if not isinstance(data, dict):
            raise status_error(400, "BadRequest", "the request body must be a JSON object")
        if check_kind and data.get("kind") not in (None, kind.info.kind):
            raise status_error(
                400,
                "BadRequest",
                f"the kind of the body ({data.get('kind')}) is not {kind.info.kind}",
            )
        return data

    @staticmethod
    def _success(kind: FakeKind, deleted: Obj) -> Obj:
        details: dict[str, Any] = {"name": deleted["metadata"]["name"], "kind": kind.info.plural}
        if kind.info.group:
            details["group"] = kind.info.group
        details["uid"] = deleted["metadata"]["uid"]
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        }

    def _list(self, kind: FakeKind, namespace: str | None, query: dict[str, str]) -> Obj:
        selection = Selection(kind, query.get("labelSelector"), query.get("fieldSelector"))
        items = self._server.list_objects(kind, namespace, selection)
        revision = str(self._server.revision)
        if query.get("resourceVersionMatch") == "Exact" and query.get("resourceVersion"):
            revision = query["resourceVersion"]
            items = self._list_at(kind, namespace, selection, revision)
        start = 0
        token = query.get("continue")
        if token:
            # The token holds the last key served: the next page starts after it, as etcd's
            # range does, so objects deleted meanwhile shift nothing.
            try:
                revision, last_namespace, last_name = json.loads(base64.b64decode(token))
                last = (str(last_namespace), str(last_name))
            except (ValueError, TypeError):
                raise status_error(400, "BadRequest", f"invalid continue token {token!r}") from None
            start = next((i for i, item in enumerate(items) if _list_key(item) > last), len(items))
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            raise status_error(400, "BadRequest", f"invalid limit {query['limit']!r}") from None
        page = items[start : start + limit] if limit else items[start:]
        metadata: dict[str, Any] = {"resourceVersion": revision}
        if limit and start + limit < len(items):
            # Later pages are read from the live store: not the snapshot etcd would keep.
            last_namespace, last_name = _list_key(page[-1])
            metadata["continue"] = base64.b64encode(
                json.dumps([revision, last_namespace, last_name]).encode()
            ).decode()
            metadata["remainingItemCount"] = len(items) - start - limit
        if not kind.typed_list_items:
            for item in page:
                item.pop("apiVersion", None)
                item.pop("kind", None)
        return {
            "apiVersion": kind.info.api_version,
            "kind": kind.info.list_kind,
            "metadata": metadata,
            "items": page,
        }

    def _list_at(
        self, kind: FakeKind, namespace: str | None, selection: Selection, version: str
    ) -> list[Obj]:
        """The objects as they were at ``version`` (``resourceVersionMatch=Exact``): today's,
        with the writes since undone, newest first; 410 Gone past the history."""
        try:
            since = int(version)
        except ValueError:
            raise status_error(400, "BadRequest", f"invalid resourceVersion {version!r}") from None
        objects = {
            _list_key(obj): obj
            for obj in self._server.list_objects(kind, namespace, Selection(kind, None, None))
        }
        for record in reversed(self._server.events_since(since)):
            if record.kind.info != kind.info:
                continue
            key = _list_key(record.obj)
            if namespace is not None and key[0] != namespace:
                continue
            if record.type == "ADDED":
                objects.pop(key, None)
            elif record.type == "MODIFIED" and record.previous is not None:
                objects[key] = copy.deepcopy(record.previous)
            elif record.type == "DELETED":
                objects[key] = copy.deepcopy(record.obj)
        return [objects[key] for key in sorted(objects) if selection.matches(objects[key])]

    def _patch(
        self, route: Route, query: dict[str, str], data: Any, content_type: str | None
    ) -> Obj:
        kind, namespace, name = route.kind, route.namespace, route.name
        assert name is not None
        server = self._server
        if content_type == _STRATEGIC and not kind.strategic_merge_patch:
            raise status_error(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format - accepted media types "
                f"include: {_JSON_PATCH}, {_MERGE}, {_APPLY}",
            )
        if content_type == _APPLY:
            manager = query.get("fieldManager")
            if not manager:
                raise status_error(
                    400,
                    "BadRequest",
                    "PATCH, application/apply-patch+yaml: fieldManager is required",
                )
            return server.apply(
                kind,
                namespace,
                name,
                self._object(data, kind),
                manager=manager,
                subresource=route.subresource,
            )
        current = server.get(kind, namespace, name)
        try:
            if content_type == _JSON_PATCH:
                patched = apply_json_patch(current, data)
            elif content_type in (_MERGE, _STRATEGIC):
                if not isinstance(data, dict):
                    raise PatchError("a merge patch must be a JSON object")
                patched = apply_merge_patch(current, data)
            else:
                raise status_error(
                    415,
                    "UnsupportedMediaType",
                    f"the body of the request was in an unknown format: {content_type}",
                )
        except PatchError as exc:
            raise status_error(422, "Invalid", str(exc)) from exc
        if not isinstance(patched, dict):
            raise status_error(422, "Invalid", "the patched object is not an object", kind, name)
        uid = (patched.get("metadata") or {}).get("uid")
        if uid not in (None, "", current["metadata"]["uid"]):
            if route.subresource == "status" and kind.status_keeps_stored_metadata:
                patched["metadata"]["uid"] = current["metadata"]["uid"]  # dropped, as all else
            else:
                # A patch is not an update with a precondition: the apiserver validates the
                # patched object, whose uid is immutable (a PUT with another uid is a 409).
                raise invalid(
                    kind, name, "metadata.uid", f'Invalid value: "{uid}": field is immutable'
                )
        # A patch that does not set resourceVersion applies to whatever is stored.
        patched.setdefault("metadata", {}).setdefault(
            "resourceVersion", current["metadata"]["resourceVersion"]
        )
        return server.update(kind, namespace, name, patched, subresource=route.subresource)

    def _bind(self, route: Route, binding: Obj) -> Obj:
        assert route.name is not None
        node = (binding.get("target") or {}).get("name")
        if not node:
            raise status_error(400, "BadRequest", "binding.target.name is required")
        uid = (binding.get("metadata") or {}).get("uid")
        self._server.bind(route.kind, route.namespace, route.name, node, uid)
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}

    # -- discovery ---------------------------------------------------------------------------

    def _is_discovery(self, path: str) -> bool:
        parts = [p for p in path.split("/") if p]
        return (parts[:1] == ["api"] and len(parts) == 2) or (
            parts[:1] == ["apis"] and len(parts) == 3
        )

    def _discovery(self, path: str) -> bytes:
        served = self._kinds.served()
        if path == "/api":
            return _dump({"kind": "APIVersions", "versions": ["v1"]})
        if path == "/apis":
            groups: dict[str, set[str]] = {}
            for kind in served:
                if kind.info.group:
                    groups.setdefault(kind.info.group, set()).add(kind.info.version)
            return _dump(
                {
                    "kind": "APIGroupList",
                    "apiVersion": "v1",
                    "groups": [
                        {
                            "name": group,
                            "versions": [
                                {"groupVersion": f"{group}/{v}", "version": v}
                                for v in sorted(versions)
                            ],
                        }
                        for group, versions in sorted(groups.items())
                    ],
                }
            )
        parts = [p for p in path.split("/") if p]
        group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
        resources = []
        for kind in served:
            info = kind.info
            if (info.group, info.version) != (group, version):
                continue
            resources.append(
                {
                    "name": info.plural,
                    "singularName": info.singular,
                    "namespaced": info.namespaced,
                    "kind": info.kind,
                    "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                }
            )
            if kind.status_subresource:
                resources.append(
                    {
                        "name": f"{info.plural}/status",
                        "singularName": "",
                        "namespaced": info.namespaced,
                        "kind": info.kind,
                        "verbs": ["get", "patch", "update"],
                    }
                )
        if not resources:
            raise status_error(404, "NotFound", f"the fake apiserver serves nothing at {path}")
        group_version = f"{group}/{version}" if group else version
        return _dump(
            {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": group_version,
                "resources": resources,
            }
        )

    # -- watch -------------------------------------------------------------------------------

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        accept: str = "application/json",
        idle_timeout: float | None = None,
        connect_timeout: float | None = None,
    ) -> AsyncIterator[_WatchStream]:
        """A watch: past events after ``resourceVersion`` (or ADDED for all objects when it
        is absent or ``"0"``), then every write as it happens, until ``end_watches``. With
        ``sendInitialEvents`` (and ``resourceVersionMatch=NotOlderThan``, as the apiserver
        requires), ADDED for all objects and the bookmark that ends them come first."""
        self._check_open()
        await asyncio.sleep(0)
        query = _params(params)
        if method != "GET" or query.get("watch") not in ("true", "1"):
            raise status_error(405, "MethodNotAllowed", "only GET ...?watch=true streams")
        route = self._route(path)
        if route.name is not None:
            raise status_error(404, "NotFound", "watch a collection, not one object")
        kind, namespace = route.kind, route.namespace
        selection = Selection(kind, query.get("labelSelector"), query.get("fieldSelector"))
        metadata_only = _metadata_only(accept)
        stream = _WatchStream()

        def send(type_: str, obj: Obj) -> None:
            shown = _as_metadata(obj) if metadata_only else obj
            stream.put(_dump({"type": type_, "object": shown}))

        def on_write(record: WatchRecord) -> None:
            if record.kind.info != kind.info:
                return
            if namespace is not None and record.obj["metadata"].get("namespace") != namespace:
                return
            now = selection.matches(record.obj)
            before = record.previous is not None and selection.matches(record.previous)
            if record.type == "MODIFIED":
                if now and before:
                    send("MODIFIED", record.obj)
                elif now:
                    send("ADDED", record.obj)
                elif before:
                    send("DELETED", record.obj)
            elif now:
                send(record.type, record.obj)

        version = query.get("resourceVersion")
        initial = query.get("sendInitialEvents") == "true"
        if initial and query.get("resourceVersionMatch") != "NotOlderThan":
            raise status_error(
                422,
                "Invalid",
                "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
                "resourceVersionMatch to NotOlderThan",
            )
        unsubscribe = self._server.subscribe(on_write)
        self._streams.add(stream)
        try:
            if initial or version in (None, "", "0"):
                for obj in self._server.list_objects(kind, namespace, selection):
                    send("ADDED", obj)
                if initial:  # as the apiserver ends a watch's initial events (WatchList)
                    end: dict[str, Any] = {
                        "resourceVersion": str(self._server.revision),
                        "annotations": {"k8s.io/initial-events-end": "true"},
                    }
                    stream.put(_dump({"type": "BOOKMARK", "object": {"metadata": end}}))
            else:
                try:
                    since = int(version)
                except ValueError:
                    raise status_error(
                        400, "BadRequest", f"invalid resourceVersion {version!r}"
                    ) from None
                try:
                    past = self._server.events_since(since)
                except Exception as gone:
                    # The apiserver reports this inside the stream, as an ERROR event.
                    stream.put(_dump({"type": "ERROR", "object": _status_of(gone)}))
                    stream.end()
                    past = []
                for record in past:
                    on_write(record)
            yield stream
        finally:
            unsubscribe()
            self._streams.discard(stream)
            stream.end()


def _status_of(error: Exception) -> dict[str, Any]:
    status = getattr(error, "status", None)
    if isinstance(status, dict) and status:
        return status
    return {"kind": "Status", "status": "Failure", "code": 500, "message": str(error)}
