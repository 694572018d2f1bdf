"""Unit tests of the Manager's construction-time checks (running it needs a cluster: see the
integration tests)."""

from __future__ import annotations

import pytest
from examples.hello.operator import HelloReconciler
from prometheus_client import CollectorRegistry

from crdkit import Manager
from crdkit.runtime.leader import LeaderElectionConfig
from crdkit.runtime.manager import INFORMER_REPORTING_CONTROLLER


def manager(**options: object) -> Manager:
    return Manager(None, registry=CollectorRegistry(), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"max_concurrent_reconciles": 0}, "max_concurrent_reconciles"),
        ({"graceful_shutdown_timeout": -1}, "graceful_shutdown_timeout"),
        ({"metrics_bind_address": "8080"}, "metrics_bind_address"),
        ({"health_probe_bind_address": "x:y"}, "health_probe_bind_address"),
        ({"leader_election": True, "renew_deadline": 20.0}, "lease_duration"),
    ],
)
def test_bad_options_name_the_field(options: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        manager(**options)


def test_controllers_are_unique_and_added_before_run() -> None:
    mgr = manager()
    controller = mgr.add(HelloReconciler())
    assert controller.name == "hello"
    assert controller.workers == 1
    with pytest.raises(ValueError, match="already added"):
        mgr.add(HelloReconciler())
    # The primary kind in full and the owned kind metadata-only, one informer each.
    shapes = sorted((key.resource.__name__, key.metadata_only) for key in mgr.informers.informers)
    assert shapes == [("ConfigMap", True), ("Hello", False)]


def test_the_managers_informers_record_events_about_objects_they_refuse() -> None:
    mgr = manager(identity="pod-7")
    mgr.add(HelloReconciler())
    recorders = {informer.event_recorder for informer in mgr.informers.informers.values()}
    [recorder] = recorders  # one, shared by every informer
    assert recorder is not None
    assert recorder.reporting_controller == INFORMER_REPORTING_CONTROLLER
    assert recorder.reporting_instance == "pod-7"


async def test_run_with_nothing_to_run_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="nothing to run"):
        await manager().run()


async def test_run_with_a_client_never_opened_fails_at_once() -> None:
    from crdkit.client import Client, ClientConfig

    mgr = Manager(Client(ClientConfig(server="https://127.0.0.1:1")), registry=CollectorRegistry())
    mgr.add(HelloReconciler())
    with pytest.raises(RuntimeError, match=r"client is not open: use it inside `async with"):
        await mgr.run()


@pytest.mark.parametrize(
    ("timings", "field"),
    [
        ((15, 10, 0), "retry_period"),
        ((15, 2, 2), "renew_deadline"),
        ((10, 10, 2), "lease_duration"),
    ],
)
def test_leader_election_timings_are_checked(
    timings: tuple[float, float, float], field: str
) -> None:
    with pytest.raises(ValueError, match=field):
        LeaderElectionConfig("lease", "ns", "me", *timings)
    assert LeaderElectionConfig("lease", "ns").identity.count("_") >= 1
