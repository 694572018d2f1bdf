"""``crdkit scheduler`` as a process, with exactly the roles ``crdkit gen-rbac`` prints for
`GangScheduler` and nothing more: a gang is bound, and nothing in its log was refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cluster import LEVELS, POOL, create_job, make_nodes, new_pool, pods_of
from _live import apply_all, crdkit_process, delete_cluster_wide, gen_rbac

from crdkit.client import Client
from crdkit.testing import ControlPlane, eventually
from crdkit.testing.envtest.users import service_account_token, token_kubeconfig

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]


async def test_crdkit_scheduler_binds_a_gang_with_the_generated_role_only(
    scheduling_plane: ControlPlane, tmp_path: Path
) -> None:
    pool = new_pool()
    name = f"sched-{pool}"
    async with Client.from_control_plane(scheduling_plane) as admin:
        await scheduling_plane.create_namespace(pool)
        documents = gen_rbac(
            "crdkit.scheduling:GangScheduler",
            "--name",
            name,
            "--service-account",
            "scheduler",
            "--service-account-namespace",
            pool,
            "--leader-election-id",
            f"{name}-leader",
            "--leader-election-namespace",
            pool,
        )
        await apply_all(admin, documents)
        token = await service_account_token(admin, pool, "scheduler")
        kubeconfig = token_kubeconfig(
            tmp_path / "kubeconfig", scheduling_plane, token, user="scheduler", namespace=pool
        )
        await make_nodes(admin, pool, {"a": 2, "b": 4})
        await create_job(admin, pool, "job", 3, scheduler=name)
        log = tmp_path / "scheduler.log"
        async with crdkit_process(
            log,
            "scheduler",
            "--name",
            name,
            "--levels",
            ",".join(LEVELS),
            "--node-selector",
            f"{POOL}={pool}",
            "--kubeconfig",
            str(kubeconfig),
            "--leader-elect",
            "--leader-election-namespace",
            pool,
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "0",
            "--log-format",
            "text",
        ) as process:

            async def bound() -> bool:
                pods = await pods_of(admin, pool, "job")
                return len(pods) == 4 and all(p.spec.node_name for p in pods)

            await eventually(bound, within=90, what="the gang bound by crdkit scheduler")
            nodes = {p.spec.node_name for p in await pods_of(admin, pool, "job")}
            assert all(f"{pool}-b-" in (node or "") for node in nodes)
        text = log.read_text()
        assert process.returncode == 0, text
        assert "forbidden" not in text.lower(), text
        await delete_cluster_wide(admin, documents)
