"""The queue a scheduler publishes for ``crdkit queue``: its snapshot without the nodes and the
timeline, in the ConfigMap `published_name` of its home namespace, written when it changed and
at most every few seconds (as the cluster-autoscaler publishes its status in a ConfigMap).

A ConfigMap holds a MiB: a queue of more rows than `MAX_ROWS` publishes the first ones and how
many it left out (``omitted``); the page serves them all.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from crdkit.client.errors import KubernetesError
from crdkit.scheduling.view.format import PUBLISHED_KEY, published_name

if TYPE_CHECKING:
    from crdkit.client.client import Client
    from crdkit.scheduling.view.format import Snapshot

__all__ = ["MAX_ROWS", "QueuePublisher", "published"]

log = logging.getLogger(__name__)

MAX_ROWS = 2000
"""Rows published at most: about 400 bytes each, well inside a ConfigMap's MiB."""


def published(snapshot: Snapshot) -> dict[str, Any]:
    """What is published of ``snapshot``: all but the nodes and the timeline."""
    shown = {k: v for k, v in snapshot.items() if k not in ("nodes", "timeline")}
    gangs = snapshot["gangs"]
    if len(gangs) > MAX_ROWS:
        shown["gangs"] = gangs[:MAX_ROWS]
        shown["omitted"] = snapshot["omitted"] + len(gangs) - MAX_ROWS
    return shown


def _content(shown: dict[str, Any]) -> str:
    """What changes when the queue does: not the snapshot's number nor its time."""
    return json.dumps({k: v for k, v in shown.items() if k not in ("seq", "time")}, sort_keys=True)


class QueuePublisher:
    """Writes the published queue of scheduler ``scheduler`` to ``namespace``."""

    def __init__(self, client: Client, scheduler: str, namespace: str) -> None:
        self._client = client
        self.name = published_name(scheduler)
        self.namespace = namespace
        self.field_manager = scheduler
        self._last: str | None = None
        self.writes = 0
        self._refused = False

    async def publish(self, snapshot: Snapshot) -> bool:
        """Write ``snapshot``'s queue if it changed since the last write; whether it wrote. A
        refusal is logged (once, with the role it takes) and tried again next time."""
        shown = published(snapshot)
        content = _content(shown)
        if content == self._last:
            return False
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {"app.kubernetes.io/managed-by": "crdkit"},
            },
            "data": {PUBLISHED_KEY: json.dumps(shown, separators=(",", ":"))},
        }
        try:
            await self._client.apply(body, field_manager=self.field_manager, force=True)
        except KubernetesError as error:
            if not self._refused:
                self._refused = True
                log.warning(
                    "could not publish the queue for crdkit queue: %s (the scheduler needs "
                    "get, create and patch on configmaps in %s; crdkit gen-rbac grants them)",
                    error,
                    self.namespace,
                )
            return False
        self._refused = False
        self._last = content
        self.writes += 1
        return True
