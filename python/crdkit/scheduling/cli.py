"""``crdkit scheduler``: run `GangScheduler` as a secondary scheduler until SIGTERM or SIGINT.

::

    crdkit scheduler --name crdkit-gang-scheduler \\
        --levels example.com/block,example.com/rack --topology preferred:example.com/rack

Pods that name it in ``spec.schedulerName`` are placed as gangs (by their coscheduling,
Volcano or Kubernetes PodGroup). The PodGroup APIs watched are those the cluster serves (a CRD
installed, or Kubernetes' own turned on), unless ``--pod-groups`` names them (then one not
served is an error).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

import click

from crdkit._addresses import is_loopback, parse_bind_address
from crdkit.client.errors import ConfigError
from crdkit.placer.models import HOSTNAME_LEVEL
from crdkit.runtime.cli_common import (
    connection_options,
    flag_option,
    manager_options,
    run_manager,
)
from crdkit.runtime.logs import configure_logging
from crdkit.runtime.manager_options import ManagerOptions
from crdkit.scheduling.groups import POD_GROUP_APIS, group_api, group_version
from crdkit.scheduling.options import SchedulerOptions, scheduler_flags

if TYPE_CHECKING:
    from pathlib import Path

    from crdkit.client import Client
    from crdkit.runtime.manager import Manager

__all__ = ["DISCOVERY_INTERVAL", "parse_topology", "parse_topology_rule", "scheduler_command"]

DISCOVERY_INTERVAL = 30.0

DEFAULT_UI_ADDRESS = "127.0.0.1:8090"
"""Where ``--ui`` serves unless told: loopback only, as plain metrics are."""
"""Seconds between ``crdkit scheduler``'s looks for a PodGroup CRD installed after it started
(when ``--pod-groups`` does not fix the APIs): at most this long before its gangs are seen."""

log = logging.getLogger("crdkit.scheduler")


def _group_version(api: str) -> tuple[str, str]:
    return group_version(group_api(api, field="--pod-groups"))


def parse_topology(
    text: str | None, levels: list[str], flag: str = "--topology"
) -> dict[str, Any] | None:
    """``required:LEVEL``, ``preferred:LEVEL`` or ``unconstrained`` as the contract's
    ``topology`` (``ValueError`` naming ``flag`` otherwise)."""
    if text is None:
        return None
    mode, _, level = text.partition(":")
    if mode == "unconstrained" and not level:
        return {"mode": "unconstrained"}
    if mode not in ("required", "preferred") or not level:
        raise ValueError(
            f"{flag}: expected required:LEVEL, preferred:LEVEL or unconstrained, got {text!r}"
        )
    if level not in levels and level != HOSTNAME_LEVEL:
        raise ValueError(f"{flag}: level {level!r} is not one of --levels ({', '.join(levels)})")
    return {"mode": mode, "level": level}


def parse_topology_rule(text: str, levels: list[str]) -> tuple[int, dict[str, Any]]:
    """``PODS:required:LEVEL`` (or ``preferred:LEVEL``, ``unconstrained``): the topology of gangs
    of at least ``PODS`` pods (``ValueError`` naming ``--topology-rule`` otherwise)."""
    count, _, topology = text.partition(":")
    if not count.isdigit() or int(count) < 1:
        raise ValueError(
            f"--topology-rule: expected PODS:MODE[:LEVEL] with PODS a number >= 1, got {text!r}"
        )
    parsed = parse_topology(topology, levels, "--topology-rule")
    assert parsed is not None
    return int(count), parsed


async def _pod_group_apis(client: Client, wanted: list[str] | None) -> list[str]:
    from crdkit.scheduling.groups.discovery import served_pod_group_apis

    served: list[str] = list(await served_pod_group_apis(client))
    if wanted is None:
        return served
    missing = [api for api in wanted if api not in served]
    if missing:
        hint = group_api(missing[0]).unserved_hint  # a CRD to install, or gates to turn on
        raise ConfigError(
            f"--pod-groups: the cluster does not serve the {missing[0]} PodGroup API "
            f"({'/'.join(_group_version(missing[0]))}); {hint} or leave it out"
        )
    return wanted


def scheduler_options(command: Any) -> Any:
    """The flags of every `SchedulerOptions` field that has one (read back by field name)."""
    for _, flag, default in reversed(list(scheduler_flags())):
        command = flag_option(flag, default)(command)
    return command


@click.command("scheduler")
@click.option(
    "--name",
    default=None,
    help="The schedulerName pods give to be placed by it (required, but with --print-crds).",
)
@click.option(
    "--levels",
    default="",
    help="Topology node label keys, widest first, comma-separated (Volcano tier 1 is the last).",
)
@click.option(
    "--topology",
    default=None,
    help="Default for gangs that ask for none: required:LEVEL, preferred:LEVEL or unconstrained.",
)
@click.option(
    "--topology-rule",
    "topology_rules",
    multiple=True,
    help="For gangs of at least PODS pods that ask for none, instead of --topology: "
    "PODS:required:LEVEL, PODS:preferred:LEVEL or PODS:unconstrained (repeatable; the largest "
    "PODS a gang reaches wins).",
)
@click.option(
    "--pod-groups",
    default=None,
    help="PodGroup APIs to watch: coscheduling,volcano,kubernetes (default: those the "
    "cluster serves).",
)
@click.option(
    "--install-crds",
    is_flag=True,
    help="Create the upstream PodGroup CRDs (those --pod-groups names, else both), and with "
    "--queues crdkit's Queue CRD, that the cluster lacks before starting; existing ones are "
    "left as they are (kubernetes is built in and has none).",
)
@click.option(
    "--ui",
    is_flag=True,
    help="Serve a live web page of the cluster as the scheduler sees it (the topology with "
    "each job's GPUs and the held nodes, the queue with expected starts, the quotas, a "
    "timeline) at --ui-bind-address.",
)
@click.option(
    "--ui-bind-address",
    default=DEFAULT_UI_ADDRESS,
    show_default=True,
    help="Where --ui serves. On loopback, plain HTTP; any other address is served over "
    "HTTPS to bearer tokens RBAC allows get on the page's paths, as --metrics-secure serves "
    "/metrics (its certificate from --metrics-cert-dir, else self-signed).",
)
@click.option(
    "--publish-queue/--no-publish-queue",
    default=True,
    help="Publish the queue (waiting and running gangs, expected starts, reasons) in the "
    "ConfigMap NAME-queue of the scheduler's namespace when it changes, at most every 2 s, "
    "for crdkit queue.",
)
@click.option(
    "--print-crds",
    is_flag=True,
    help="Print the upstream PodGroup CRDs crdkit ships (those --pod-groups names, else both), "
    "and with --queues crdkit's Queue CRD, as YAML and exit, e.g. for kubectl apply -f -.",
)
@scheduler_options
@connection_options
@manager_options(controllers=False)
def scheduler_command(
    name: str | None,
    levels: str,
    topology: str | None,
    topology_rules: tuple[str, ...],
    pod_groups: str | None,
    kubeconfig: Path | None,
    context: str | None,
    exec_timeout: float,
    event_loop: str,
    log_level: str,
    log_format: str,
    install_crds: bool,
    print_crds: bool,
    ui: bool,
    ui_bind_address: str,
    publish_queue: bool,
    **flags: Any,
) -> None:
    """Run a secondary gang scheduler for pods whose spec.schedulerName is NAME.

    With --leader-elect the Lease is NAME-leader unless --leader-election-id names another
    (give gen-rbac the same: crdkit gen-rbac crdkit.scheduling:GangScheduler
    --leader-election-id NAME-leader).
    """
    configure_logging(log_level, log_format)
    level_list = [level.strip() for level in levels.split(",") if level.strip()]
    try:
        default_topology = parse_topology(topology, level_list)
        by_size = tuple(parse_topology_rule(rule, level_list) for rule in topology_rules)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    wanted = None
    if pod_groups is not None:
        wanted = [api.strip() for api in pod_groups.split(",") if api.strip()]
        for api in wanted:
            try:
                group_api(api, field="--pod-groups")
            except ValueError as error:
                raise click.UsageError(str(error)) from None
    if print_crds:
        from crdkit.scheduling.groups.crds import pod_group_crd_text, queue_crd_text, with_crds

        texts = []
        for api in wanted or with_crds(POD_GROUP_APIS):
            if not with_crds([api]):  # on stderr: stdout stays YAML for kubectl apply -f -
                click.echo(f"# {api}: no CRD, {group_api(api).unserved_hint}", err=True)
                continue
            texts.append(pod_group_crd_text(api))
        if flags.get("queues"):
            texts.append(queue_crd_text())
        for text in texts:
            click.echo(
                text if text.startswith("---") else f"---\n{text}", nl=not text.endswith("\n")
            )
        return
    chosen = {field: flags.pop(flag.parameter) for field, flag, _ in scheduler_flags()}
    try:
        scheduling = SchedulerOptions(
            default_topology=default_topology,
            topology_by_size=by_size,
            pod_groups=tuple(wanted) if wanted is not None else None,
            **chosen,
        )
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    if name is None:
        raise click.UsageError("Missing option '--name': the schedulerName pods give")
    try:
        ui_address = parse_bind_address(ui_bind_address, field="--ui-bind-address")
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    options = ManagerOptions.from_flags(flags, controllers=False)
    if options.leader_election.id is None:
        # The scheduler's Lease is named by the scheduler, not by controllers it has none of.
        election = dataclasses.replace(options.leader_election, id=f"{name}-leader")
        options = dataclasses.replace(options, leader_election=election)

    async def build(client: Client) -> Manager:
        from crdkit.runtime.manager import Manager
        from crdkit.scheduling.scheduler import GangScheduler

        if install_crds:
            from crdkit.scheduling.groups.crds import install_pod_group_crds

            created = await install_pod_group_crds(client, wanted or list(POD_GROUP_APIS))
            if scheduling.queues:
                from crdkit.scheduling.groups.crds import install_crds as install
                from crdkit.scheduling.groups.crds import queue_crd

                created += await install(client, [queue_crd()])
            log.info("CRDs installed", extra={"fields": {"created": created}})
        apis = await _pod_group_apis(client, wanted)
        # Without --pod-groups, an API whose CRD comes later is watched from then on.
        later = [api for api in POD_GROUP_APIS if api not in apis] if wanted is None else []
        log.info(
            "watching PodGroups; those not served yet are looked for every 30 s",
            extra={"fields": {"apis": apis, "not_served_yet": later}},
        )
        watched = dataclasses.replace(
            scheduling,
            pod_groups=tuple(apis),
            pod_group_discovery=DISCOVERY_INTERVAL if later else None,
        )
        manager = Manager(client, options)
        scheduler = GangScheduler(name, level_list, watched)
        manager.add_runnable(scheduler)
        if ui or publish_queue:
            from crdkit.scheduling.view.snapshot import SchedulerView

            view = SchedulerView(scheduler, publish=publish_queue)
            manager.add_runnable(view)
            if ui:
                from crdkit.scheduling.ui.server import ViewServer

                # Open to the network, the page is served as secure metrics are.
                secure = ui_address is not None and not is_loopback(ui_address[0])
                server = ViewServer(
                    view, ui_bind_address, secure=secure, cert_dir=options.metrics.cert_dir
                )
                manager.add_runnable(server)
        return manager

    connection = {"context": context, "exec_timeout": exec_timeout}
    run_manager("scheduler", kubeconfig, connection, build, event_loop=event_loop)
