"""Running the gang scheduler: in-process for demos and tests, or as a command.

:func:`running_operator` starts a Manager with the scheduler attached and returns once its caches
have synced; leaving the block stops it gracefully. :func:`load_topology` reads the tier labels
from flags or from a ConfigMap in the cluster.

As a command (``python -m examples.gang_scheduler``)::

    python -m examples.gang_scheduler [--kubeconfig FILE] [--namespace NS]
        [--tier-label KEY ... | --topology-configmap NS/NAME] [--node-selector SELECTOR]
        [--leader-elect] [--metrics-bind-address ADDR] [--health-probe-bind-address ADDR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence

from crdkit.client import Client
from crdkit.resources import ConfigMap
from crdkit.runtime import Manager
from examples.gang_scheduler.operator import GangScheduler
from examples.gang_scheduler.topology import TopologyConfig

READY_POLL_S = 0.05


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
    sync_timeout_s: float = 60.0,
) -> AsyncIterator[GangScheduler]:
    """A Manager running the scheduler (no metrics or probe servers) until the block ends."""
    manager = Manager(
        client, namespace=namespace, metrics_bind_address="0", health_probe_bind_address="0"
    )
    scheduler = GangScheduler(topology, node_selector=node_selector)
    scheduler.attach(manager)
    task = asyncio.create_task(manager.run())
    try:
        async with asyncio.timeout(sync_timeout_s):
            while not manager.ready:
                if task.done():
                    task.result()  # raises what stopped it
                    raise RuntimeError("the manager stopped before its caches synced")
                await asyncio.sleep(READY_POLL_S)
        yield scheduler
    finally:
        manager.stop()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m examples.gang_scheduler",
        description="Run the gang scheduler for Volcano Jobs against a cluster.",
    )
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster or ~/.kube)")
    parser.add_argument("--namespace", help="only Jobs of this namespace (default: all)")
    parser.add_argument("--tier-label", action="append", default=[], metavar="KEY")
    parser.add_argument("--topology-configmap", metavar="NS/NAME")
    parser.add_argument("--node-selector", help="label selector of the nodes to place on")
    parser.add_argument("--leader-elect", action="store_true")
    parser.add_argument("--metrics-bind-address", default=":8080")
    parser.add_argument("--health-probe-bind-address", default=":8081")
    return parser.parse_args(argv)


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
        GangScheduler(topology, node_selector=args.node_selector).attach(manager)
        manager.install_signal_handlers()
        await manager.run()


def main(argv: Sequence[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    asyncio.run(serve(parse_args(argv)))
