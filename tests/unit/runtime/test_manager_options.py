"""ManagerOptions: each option declared once, and the commands, the keyword shorthand and the
manager all follow from that declaration. The tests walk the fields, so an option added to
``crdkit.runtime.manager_options`` is covered here without a line of its own."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from prometheus_client import CollectorRegistry

from crdkit.client import Client, ClientConfig
from crdkit.resources import ConfigMap
from crdkit.runtime import Context, Reconciler
from crdkit.runtime.cli import run as run_command
from crdkit.runtime.cli_common import manager_options
from crdkit.runtime.manager import Manager
from crdkit.runtime.manager_options import (
    LeaderElectionOptions,
    ManagerOptions,
    MetricsOptions,
    OptionField,
    ShardingOptions,
    WebhookServerOptions,
    option_fields,
)
from crdkit.scheduling.cli import scheduler_command
from crdkit.testing import FakeCluster


def _sample(field: OptionField, tmp_path: Path) -> tuple[list[str], Any]:
    """A non-default command-line spelling of ``field`` and the option value it must give."""
    flag = field.flag
    assert flag is not None
    if flag.type == "switch":
        return [flag.name], True
    if flag.type == "on-off":
        return [flag.name], True
    if flag.type == "seconds":
        return [flag.name, "7.5"], 7.5
    if flag.type == "count":
        return [flag.name, "4"], 4
    if flag.type == "port":
        return [flag.name, "9555"], ":9555"
    if flag.type == "directory":
        return [flag.name, str(tmp_path)], tmp_path
    text = _TEXT_SAMPLES.get(field.path, "127.0.0.1:9999")
    return [flag.name, text], text


# Text options checked for their form: a valid value that is not the default.
_TEXT_SAMPLES = {
    ("sharding", "ring"): "jobs",
    ("sharding", "shard_id"): "web-0",
    ("sharding", "role"): "shard",
}


def _parse(command: click.Command, args: list[str]) -> dict[str, Any]:
    context = command.make_context(command.name, args)
    return dict(context.params)


def test_the_options_and_their_groups_are_public_from_the_runtime_and_the_root() -> None:
    import crdkit
    import crdkit.runtime

    for group in (
        ManagerOptions,
        LeaderElectionOptions,
        MetricsOptions,
        ShardingOptions,
        WebhookServerOptions,
    ):
        assert getattr(crdkit.runtime, group.__name__) is group
        assert getattr(crdkit, group.__name__) is group
        assert group.__name__ in crdkit.runtime.__all__
        assert group.__name__ in crdkit.__all__


def test_every_option_has_a_shorthand_and_every_shorthand_is_unique() -> None:
    fields = option_fields()
    names = [field.shorthand for field in fields]
    assert all(names), [field.path for field in fields if not field.shorthand]
    assert len(names) == len(set(names))
    flags = [field.flag.name for field in fields if field.flag is not None]
    assert len(flags) == len(set(flags))


@pytest.mark.parametrize(
    "field", [f for f in option_fields() if f.flag is not None], ids=lambda f: ".".join(f.path)
)
def test_each_flag_reaches_its_option_on_crdkit_run(field: OptionField, tmp_path: Path) -> None:
    args, expected = _sample(field, tmp_path)
    params = _parse(run_command, ["mod:Class", *args])
    options = ManagerOptions.from_flags(params)
    assert field.value(options) == expected
    # and only that one moved off its default
    for other in option_fields():
        if other.path != field.path:
            assert other.value(options) == other.value(ManagerOptions()), other.path


def test_the_scheduler_has_the_flags_for_commands_without_reconcilers() -> None:
    spelled = {option for param in scheduler_command.params for option in param.opts}
    for field in option_fields():
        if field.flag is None:
            continue
        assert (field.flag.name in spelled) is (not field.flag.controllers_only), field.path


def test_flags_left_out_give_the_defaults() -> None:
    assert ManagerOptions.from_flags(_parse(run_command, ["mod:Class"])) == ManagerOptions()
    assert (
        ManagerOptions.from_flags(_parse(scheduler_command, ["--name", "s"]), controllers=False)
        == ManagerOptions()
    )


def test_a_decorated_command_gets_the_flags_and_builds_the_options() -> None:
    seen: list[ManagerOptions] = []

    @click.command()
    @manager_options(controllers=True)
    def command(log_level: str, log_format: str, **flags: Any) -> None:
        seen.append(ManagerOptions.from_flags(flags))

    result = CliRunner().invoke(command, ["--leader-elect", "--webhook-port", "1234", "-n", "x"])
    assert result.exit_code == 0, result.output
    assert seen == [
        ManagerOptions(
            namespace="x",
            leader_election=LeaderElectionOptions(enabled=True),
            webhook=WebhookServerOptions(bind_address=":1234"),
        )
    ]


def test_shorthand_is_the_same_as_the_nested_options() -> None:
    shorthand = {field.shorthand: field.default for field in option_fields()}
    assert ManagerOptions.from_shorthand(shorthand) == ManagerOptions()
    assert ManagerOptions.from_shorthand(
        {"leader_election": True, "lease_duration": 30.0, "metrics_secure": True}
    ) == ManagerOptions(
        leader_election=LeaderElectionOptions(enabled=True, lease_duration=30.0),
        metrics=MetricsOptions(secure=True),
    )


def test_an_unknown_keyword_is_a_type_error_that_names_it() -> None:
    with pytest.raises(TypeError, match="'leader_elect'"):
        ManagerOptions.from_shorthand({"leader_elect": True})


def test_bad_values_are_refused_with_the_option_named() -> None:
    with pytest.raises(ValueError, match="max_concurrent_reconciles"):
        ManagerOptions(max_concurrent_reconciles=0)
    with pytest.raises(ValueError, match="graceful_shutdown_timeout"):
        ManagerOptions(graceful_shutdown_timeout=-1)


def test_the_metrics_address_defaults_by_security() -> None:
    assert MetricsOptions().address == "127.0.0.1:8080"
    assert MetricsOptions(secure=True).address == ":8443"
    assert MetricsOptions(secure=True, bind_address="0").address == "0"


async def test_the_manager_reads_its_options_and_refuses_both_spellings() -> None:
    client = Client(ClientConfig("https://options.invalid"))
    try:
        options = ManagerOptions(
            namespace="ns",
            max_concurrent_reconciles=3,
            metrics=MetricsOptions(bind_address="0"),
            health_probe_bind_address="0",
        )
        manager = Manager(client, options, registry=CollectorRegistry())
        assert manager.options is options
        assert (manager.namespace, manager.max_concurrent_reconciles) == ("ns", 3)
        same = Manager(
            client,
            namespace="ns",
            max_concurrent_reconciles=3,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            registry=CollectorRegistry(),
        )
        assert same.options == options
        with pytest.raises(TypeError, match="give one"):
            Manager(client, options, namespace="other")
    finally:
        await client.close()


def test_sharding_and_leader_election_are_refused_together_naming_both() -> None:
    both = {"sharding": ShardingOptions(enabled=True)}
    with pytest.raises(ValueError, match=r"sharding and leader_election") as raised:
        ManagerOptions(leader_election=LeaderElectionOptions(enabled=True), **both)
    assert "turn leader_election off" in str(raised.value)
    with pytest.raises(ValueError, match=r"sharding and leader_election"):
        ManagerOptions.from_shorthand({"sharding": True, "leader_election": True})
    # either alone is fine
    assert ManagerOptions(**both).sharding.enabled
    assert ManagerOptions(leader_election=LeaderElectionOptions(enabled=True)).leader_election


class _Sharded(Reconciler[ConfigMap]):
    name = "sharded"

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> None:
        pass


@pytest.mark.parametrize(
    ("names", "field"),
    [
        ({"shard_ring": "Bad Name!"}, "sharding.ring"),
        ({"shard_ring": "-ring"}, "sharding.ring"),
        ({"shard_ring": "ok", "shard_id": "pod/7"}, "sharding.shard_id"),
        ({"shard_id": "x" * 64}, "sharding.shard_id"),
    ],
)
async def test_a_bad_ring_or_shard_name_is_refused_when_the_manager_is_built(
    names: dict[str, str], field: str
) -> None:
    async with FakeCluster().client() as client:
        with pytest.raises(ValueError, match=rf"^{re.escape(field)}: "):
            Manager(client, sharding=True, registry=CollectorRegistry(), **names)


async def test_a_ring_named_by_its_controller_is_checked_when_the_controller_is_added() -> None:
    class BadlyNamed(_Sharded):
        name = "sharded.controller"  # a valid controller name, but no DNS label

    async with FakeCluster().client() as client:
        manager = Manager(client, sharding=True, registry=CollectorRegistry())
        with pytest.raises(ValueError, match=r"^sharding\.ring: "):
            manager.add(BadlyNamed())
        assert manager.shard is None


def test_an_unknown_shard_role_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"^sharding\.role: .*'leader'"):
        ShardingOptions(enabled=True, role="leader")


async def test_the_ring_defaults_to_the_first_controllers_name() -> None:
    async with FakeCluster().client() as client:
        manager = Manager(
            client, sharding=True, shard_id="web-0", namespace="ns", registry=CollectorRegistry()
        )
        manager.add(_Sharded())
        assert manager.shard is not None
        assert (manager.shard.ring, manager.shard.shard) == ("sharded", "web-0")
        assert manager.shard.elector.config.lease_name == "sharded-shard-web-0"
        assert manager.shard.elector.config.lease_namespace == "ns"
        assert manager.controllers[0].admit is not None
