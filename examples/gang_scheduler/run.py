"""Running the operator (the Job controller and its gang scheduler): in-process, or as a command.

:func:`running_operator` starts a Manager with the Job reconciler added (which adds the
`crdkit.scheduling.GangScheduler`) and returns once its caches have synced; leaving the block
stops it gracefully. :func:`load_topology` reads the tier labels from flags or from a ConfigMap
in the cluster.

As a command (``python -m examples.gang_scheduler``)::

    python -m examples.gang_scheduler [--kubeconfig FILE] [--namespace NS]
        [--tier-label KEY ... | --topology-configmap NS/NAME]
        [--scheduler-name NAME] [--node-selector SELECTOR | --no-scheduler]
        [--leader-elect] [--metrics-bind-address ADDR] [--health-probe-bind-address ADDR]

``--no-scheduler`` leaves placing to a scheduler that runs elsewhere, named by
``--scheduler-name`` (``crdkit scheduler --name NAME``): one scheduler for every controller's
jobs on the same nodes (docs/guides/recipes/volcano-jobs.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence

from crdkit.client import Client
from crdkit.resources import ConfigMap
from crdkit.runtime import Manager, Runnable
from examples.gang_scheduler.operator import POD_SCHEDULER_NAME, VolcanoJobReconciler
from examples.gang_scheduler.topology import TopologyConfig


async def load_topology(
    client: Client, tier_labels: Sequence[str], config_map: str | None
) -> TopologyConfig:
    """Tier labels from ``--tier-label`` flags, or from the ConfigMap ``namespace/name``."""
    if config_map is None:
        return TopologyConfig.from_flags(tier_labels)
    if tier_labels:
        raise ValueError("--tier-label and --topology-configmap: give one or the other")
    namespace, _, name = config_map.partition("/")
    if not namespace or not name:
        raise ValueError(f"--topology-configmap: {config_map!r} is not NAMESPACE/NAME")
    found = await client.get(ConfigMap, name, namespace=namespace)
    return TopologyConfig.from_config_map_data(found.data, source=f"ConfigMap {config_map}")


@contextlib.asynccontextmanager
async def running_operator(
    client: Client,
    topology: TopologyConfig,
    *,
    namespace: str | None = None,
    node_selector: str | None = None,
    pod_scheduler_name: str = POD_SCHEDULER_NAME,
    run_scheduler: bool = True,
    sync_timeout_s: float = 60.0,
    beside: Callable[[VolcanoJobReconciler], Sequence[Runnable]] = lambda _: (),
) -> AsyncIterator[VolcanoJobReconciler]:
    """A Manager running the operator (no metrics or probe servers) until the block ends; the
    reconciler's ``scheduler`` is the running `GangScheduler`. It places the pods of every
    namespace that name ``pod_scheduler_name``: operators sharing an apiserver (tests) each
    need a name of their own. Without ``run_scheduler`` there is none, and the pods wait for
    a scheduler of that name running elsewhere. ``beside(reconciler)`` gives more runnables
    for the same manager (the demo's page of the scheduler's view)."""
    manager = Manager(
        client, namespace=namespace, metrics_bind_address="0", health_probe_bind_address="0"
    )
    reconciler = VolcanoJobReconciler(
        topology,
        node_selector=node_selector,
        pod_scheduler_name=pod_scheduler_name,
        run_scheduler=run_scheduler,
    )
    manager.add(reconciler)
    for runnable in beside(reconciler):
        manager.add_runnable(runnable)
    task = asyncio.create_task(manager.run())
    try:
        async with asyncio.timeout(sync_timeout_s):
            try:
                await manager.wait_ready()
            except RuntimeError:
                if task.done():
                    task.result()  # raises what stopped it
                raise
        yield reconciler
    finally:
        manager.stop()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m examples.gang_scheduler",
        description="Run the Volcano Job controller and its gang scheduler against a cluster.",
    )
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster or ~/.kube)")
    parser.add_argument("--namespace", help="only Jobs of this namespace (default: all)")
    parser.add_argument("--tier-label", action="append", default=[], metavar="KEY")
    parser.add_argument("--topology-configmap", metavar="NS/NAME")
    parser.add_argument(
        "--scheduler-name",
        default=POD_SCHEDULER_NAME,
        metavar="NAME",
        help=f"the pods' spec.schedulerName (default: {POD_SCHEDULER_NAME}); Jobs naming it "
        "are this controller's too",
    )
    parser.add_argument("--node-selector", help="label selector of the nodes to place on")
    parser.add_argument(
        "--no-scheduler",
        dest="run_scheduler",
        action="store_false",
        help="run no scheduler in process: a scheduler named --scheduler-name that runs "
        "elsewhere (crdkit scheduler --name NAME) places the pods",
    )
    parser.add_argument("--leader-elect", action="store_true")
    parser.add_argument("--metrics-bind-address", default=":8080")
    parser.add_argument("--health-probe-bind-address", default=":8081")
    args = parser.parse_args(argv)
    if not args.run_scheduler and args.node_selector is not None:
        # The nodes are then the other scheduler's to choose: give it the selector instead.
        parser.error("--node-selector: not with --no-scheduler (give it to the scheduler)")
    return args


async def serve(args: argparse.Namespace) -> None:
    """Run until SIGTERM or SIGINT."""
    client = await (Client.from_kubeconfig(args.kubeconfig) if args.kubeconfig else Client.load())
    async with client:
        topology = await load_topology(client, args.tier_label, args.topology_configmap)
        manager = Manager(
            client,
            namespace=args.namespace,
            leader_election=args.leader_elect,
            metrics_bind_address=args.metrics_bind_address,
            health_probe_bind_address=args.health_probe_bind_address,
        )
        manager.add(
            VolcanoJobReconciler(
                topology,
                node_selector=args.node_selector,
                pod_scheduler_name=args.scheduler_name,
                run_scheduler=args.run_scheduler,
            )
        )
        manager.install_signal_handlers()
        await manager.run()


def main(argv: Sequence[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    asyncio.run(serve(parse_args(argv)))
