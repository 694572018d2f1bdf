"""``events.k8s.io/v1`` Event: what operators record about the objects they manage."""

from crdkit.resources._model import MicroTime, OpenModel, RawObject, Time
from crdkit.resources.core import ObjectReference
from crdkit.resources.object import KubernetesObject

__all__ = ["Event", "EventSeries"]


class EventSeries(OpenModel):
    count: int
    last_observed_time: MicroTime


class Event(KubernetesObject, group="events.k8s.io", version="v1", kind="Event", plural="events"):
    """An event. ``event_time`` is required on create; events converted from core v1 may lack it."""

    event_time: MicroTime | None = None
    series: EventSeries | None = None
    reporting_controller: str | None = None
    reporting_instance: str | None = None
    action: str | None = None
    reason: str | None = None
    regarding: ObjectReference | None = None
    related: ObjectReference | None = None
    note: str | None = None
    type: str | None = None
    deprecated_source: RawObject | None = None
    deprecated_first_timestamp: Time | None = None
    deprecated_last_timestamp: Time | None = None
    deprecated_count: int | None = None
