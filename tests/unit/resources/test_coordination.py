from datetime import UTC, datetime

from crdkit.resources import Lease, LeaseSpec, ObjectMeta, resource_info


def test_lease_times_are_micro_time() -> None:
    lease = Lease(
        metadata=ObjectMeta(name="leader", namespace="ns"),
        spec=LeaseSpec(
            holder_identity="host_1",
            lease_duration_seconds=15,
            acquire_time=datetime(2024, 1, 1, tzinfo=UTC),
            renew_time=datetime(2024, 1, 1, 0, 0, 5, 250000, tzinfo=UTC),
            lease_transitions=2,
        ),
    )
    assert lease.to_apply()["spec"] == {
        "holderIdentity": "host_1",
        "leaseDurationSeconds": 15,
        "acquireTime": "2024-01-01T00:00:00.000000Z",
        "renewTime": "2024-01-01T00:00:05.250000Z",
        "leaseTransitions": 2,
    }
    assert resource_info(Lease).api_version == "coordination.k8s.io/v1"


def test_lease_from_apiserver() -> None:
    lease = Lease.model_validate_json(
        b'{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},'
        b'"spec":{"holderIdentity":"h","renewTime":"2024-01-01T00:00:05.250000Z"}}'
    )
    assert lease.spec.renew_time == datetime(2024, 1, 1, 0, 0, 5, 250000, tzinfo=UTC)
