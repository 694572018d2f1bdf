"""``EventRecorder`` on the fake cluster, on a manual clock: a repeat within the series window
patches the Event's series, a repeat after it creates a new Event, and what is remembered is
only what is recent (expired from the oldest end, so an event costs the same however many are
recent)."""

from __future__ import annotations

from crdkit.client import Client
from crdkit.resources import ConfigMap, Event, ObjectMeta
from crdkit.runtime.events import EventRecorder
from crdkit.testing import FakeCluster


async def test_series_within_the_window_and_expiry_from_the_oldest() -> None:
    now = [0.0]
    cluster = FakeCluster()
    async with cluster.client() as client:
        recorder = EventRecorder(
            client,
            reporting_controller="example.com/test",
            reporting_instance="i",
            series_window=60.0,
            clock=lambda: now[0],
        )
        objects = [
            ConfigMap(metadata=ObjectMeta(name=f"c{i}", namespace="ns", uid=f"u{i}"))
            for i in range(50)
        ]
        for obj in objects:
            await recorder.event(obj, "Warning", "Waits", "no room")
        now[0] = 30.0
        repeat = await recorder.event(objects[0], "Warning", "Waits", "no room")
        assert repeat is not None
        assert repeat.series is not None
        assert repeat.series.count == 2  # the same Event, its series bumped
        events = await client.list(Event, namespace="ns")
        assert len(events.items) == 50
        # 61 s after the first round, all but c0 (seen again at 30 s) are forgotten.
        now[0] = 61.0
        await recorder.event(objects[1], "Warning", "Waits", "no room")
        assert len(await _names(client)) == 51  # a new Event for c1: its series ended
        again = await recorder.event(objects[0], "Warning", "Waits", "no room")
        assert again is not None
        assert again.series is not None
        assert again.series.count == 3
        assert recorder.remembered == 2  # c0 and the new c1: the other 49 expired


async def _names(client: Client) -> list[str]:
    page = await client.list(Event, namespace="ns")
    return [e.metadata.name for e in page.items]
