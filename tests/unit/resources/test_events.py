from datetime import UTC, datetime

from crdkit.resources import Event, ObjectMeta, ObjectReference, resource_info


def test_event_body() -> None:
    event = Event(
        metadata=ObjectMeta(generate_name="job-", namespace="ns"),
        event_time=datetime(2024, 1, 1, tzinfo=UTC),
        reporting_controller="crdkit.io/gang",
        reporting_instance="host_1",
        action="Bind",
        reason="Scheduled",
        regarding=ObjectReference(kind="Pod", name="w-0", namespace="ns"),
        note="bound to n1",
        type="Normal",
    )
    body = event.to_apply()
    assert body["apiVersion"] == "events.k8s.io/v1"
    assert body["eventTime"] == "2024-01-01T00:00:00.000000Z"
    assert body["reportingController"] == "crdkit.io/gang"
    assert resource_info(Event).plural == "events"
