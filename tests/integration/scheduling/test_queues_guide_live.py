"""The platform team's queues of docs/guides/queues.md, live: the guide's manifests
(``docs/guides/queues/``) applied to the real apiserver as they are, and ``crdkit scheduler
--queues`` admitting gangs made from the guide's gang by them, on simulated H100 and A100 nodes
in racks of four:

- team vision borrows what the organisation leaves idle, up to its department's borrowing
  limit, and its next gang waits with the reason;
- team speech fills the rest;
- team serving, under its nominal quota and wanting H100s, reclaims: the youngest of vision's
  borrowing gangs is evicted whole, and serving's gang is bound inside one rack.

The reclaim's timeline (submit, eviction, victims gone, bind) is printed; its seconds are a
benchmark's business, not an assertion's.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from _cluster import BLOCK, POOL, RACK, new_pool, running_scheduler

from crdkit.client import Client, NotFound
from crdkit.resources import Pod, Queue
from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup
from crdkit.scheduling.queues.gate import QUEUE_LABEL
from crdkit.testing import ControlPlane, SimulatedKubelet, create_nodes, eventually, simulated_node

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).parents[3]
GUIDE = ROOT / "docs" / "guides" / "queues"
QUEUE_CRD = ROOT / "python/crdkit/scheduling/queues/crds/scheduling.crdkit.io_queues.yaml"
MODEL = "gpu.example.com/model"


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((GUIDE / name).read_text()) if d]


def gang(pool: str, scheduler: str, name: str, queue: str, pods: int, **spec: Any) -> list[Any]:
    """The guide's gang, renamed, in ``queue``, with ``pods`` pods (and more pod spec)."""
    group, *members = documents("gang.yaml")
    group = copy.deepcopy(group)
    group["metadata"].update(name=name, namespace=pool)
    group["metadata"]["labels"][QUEUE_LABEL] = queue
    group["spec"]["minMember"] = pods
    out: list[Any] = [CoschedulingPodGroup.model_validate(group)]
    for index in range(pods):
        pod = copy.deepcopy(members[0])
        pod["metadata"].update(name=f"{name}-{index}", namespace=pool)
        pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = name
        pod["spec"].update(schedulerName=scheduler, **spec)
        out.append(Pod.model_validate(pod))
    return out


async def nodes_of(client: Client, pool: str, prefix: str) -> list[str | None]:
    pods = (await client.list(Pod, namespace=pool)).items
    return [p.spec.node_name for p in pods if (p.metadata.name or "").startswith(f"{prefix}-")]


async def all_bound(client: Client, pool: str, prefix: str, count: int) -> bool:
    nodes = await nodes_of(client, pool, prefix)
    return len(nodes) == count and None not in nodes


async def test_the_guides_queues_admit_borrow_and_reclaim(scheduling_plane: ControlPlane) -> None:
    await scheduling_plane.install_crds([QUEUE_CRD])
    async with Client.from_control_plane(scheduling_plane) as client:
        for queue in documents("queues.yaml"):  # as kubectl apply would, from scratch
            with contextlib.suppress(NotFound):
                await client.delete(Queue, queue["metadata"]["name"])
            await client.create(queue)
        pool = new_pool()
        await scheduling_plane.create_namespace(pool)
        racks = {"h1": "h100", "h2": "h100", "h3": "h100", "h4": "h100", "a1": "a100"}
        await create_nodes(
            client,
            [
                simulated_node(
                    f"{pool}-{rack}-n{index}",
                    labels={POOL: pool, BLOCK: "b1", RACK: f"{pool}-{rack}", MODEL: model},
                )
                for rack, model in racks.items()
                for index in range(4)
            ],
        )
        name = f"sched-{pool}"
        async with (
            running_scheduler(client, pool, name, queues=True),
            SimulatedKubelet(client, namespace=pool),
        ):
            for index in (1, 2, 3):
                for obj in gang(pool, name, f"vision-{index}", "vision", 4):
                    await client.create(obj)
                await eventually(
                    lambda i=index: all_bound(client, pool, f"vision-{i}", 4),
                    what=f"vision's gang {index} bound",
                )
                # Creation times are whole seconds: the next gang is the younger for sure.
                await asyncio.sleep(1.1)
            for obj in gang(pool, name, "vision-4", "vision", 4):
                await client.create(obj)
            for index in (1, 2):
                for obj in gang(pool, name, f"speech-{index}", "speech", 2):
                    await client.create(obj)
            await eventually(
                lambda: all_bound(client, pool, "speech-1", 2), what="speech's first gang bound"
            )
            await eventually(
                lambda: all_bound(client, pool, "speech-2", 2), what="speech's second gang bound"
            )
            assert None in await nodes_of(client, pool, "vision-4")  # research's limit holds it
            # Every H100 is in use; serving wants four of them, within its own quota.
            submitted = time.time()
            for obj in gang(pool, name, "serving-1", "serving", 4, nodeSelector={MODEL: "h100"}):
                await client.create(obj)
            timeline: dict[str, float] = {}

            async def victims_going() -> bool:
                pods = (await client.list(Pod, namespace=pool)).items
                going = [p for p in pods if p.metadata.deletion_timestamp is not None]
                if going and "evicted" not in timeline:
                    timeline["evicted"] = time.time() - submitted
                return not any((p.metadata.name or "").startswith("vision-3-") for p in pods)

            await eventually(victims_going, what="vision's youngest gang gone whole")
            timeline["victims_gone"] = time.time() - submitted
            await eventually(
                lambda: all_bound(client, pool, "serving-1", 4), what="serving's gang bound"
            )
            timeline["bound"] = time.time() - submitted
            print("reclaim timeline (s after serving's gang was created):", json.dumps(timeline))
            serving_nodes = await nodes_of(client, pool, "serving-1")
            assert len({node.rsplit("-n", 1)[0] for node in serving_nodes if node}) == 1
            assert all(node and "-h" in node for node in serving_nodes)
            for other in ("vision-1", "vision-2"):
                assert await all_bound(client, pool, other, 4)
            for other in ("speech-1", "speech-2"):
                assert await all_bound(client, pool, other, 2)

            async def status_shows() -> bool:
                serving = await client.get(Queue, "serving")
                vision = await client.get(Queue, "vision")
                return (
                    serving.status is not None
                    and serving.status.admitted_gangs == 1
                    and vision.status is not None
                    and vision.status.pending_gangs >= 1
                    and vision.status.flavors[0].resources[0].borrowed == "32"
                )

            await eventually(status_shows, what="the queues' status", within=30)
