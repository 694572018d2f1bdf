"""``make demo``: the gang scheduler on a simulated GPU cluster, served by a local control plane.

    python -m examples.demo [--out DIR] [--timeout SECONDS] [--tier-label KEY ...] [shape flags]
                            [--ui [--ui-address HOST:PORT] [--keep-ui SECONDS]]

1. starts kube-apiserver and etcd, installs the Job and PodGroup CRDs, registers the nodes;
2. runs the operator on crdkit's Manager (the Job controller, which turns each Job into a
   PodGroup and pods, and crdkit.scheduling's GangScheduler, which binds them as gangs), and
   the simulated kubelets;
3. submits the job stream on its schedule and prints every phase change as the API reports it;
4. once the stream has settled, prints the summary table and draws the topology picture (each
   job's GPUs coloured) from the pods the API holds, then stops everything.

With ``--ui`` the scheduler's live page (`crdkit.scheduling.ui`) is served all through the
run, its address printed at the start, and kept up ``--keep-ui`` seconds after the stream
settles (Ctrl-C ends the wait).

Every line it prints comes from the apiserver's answers, never from what was meant to happen.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import time
from pathlib import Path

from crdkit.client import Client
from crdkit.resources import Pod
from crdkit.runtime import Informer, Runnable
from crdkit.scheduling import SchedulerView, ViewServer, pod_requests
from crdkit.testing import ControlPlane
from examples.gang_scheduler.cluster_setup import (
    create_simulated_cluster,
    install_crds,
    read_picture_data,
)
from examples.gang_scheduler.job_stream import StreamEntry, demo_stream
from examples.gang_scheduler.kubelet_sim import SimulatedKubelets
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.operator import VolcanoJobReconciler
from examples.gang_scheduler.picture import render
from examples.gang_scheduler.pods import JOB_NAME_LABEL
from examples.gang_scheduler.report import JobRow, domain_text, progress_line, summary_table
from examples.gang_scheduler.run import running_operator
from examples.gang_scheduler.simulated_cluster import GPU_RESOURCE, ClusterShape
from examples.gang_scheduler.topology import TopologyConfig

NAMESPACE = "training"
NOT_A_TERMINAL_WIDTH = 160
QUIET_SECONDS = 2.0


class Progress:
    """Prints progress lines stamped with the seconds since the demo began."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def say(self, message: str) -> None:
        print(progress_line(self.elapsed(), message), flush=True)


class JobWatch:
    """Follows the Jobs through an informer: prints phase changes, remembers when each was bound
    (when its status first records a placement: its minAvailable pods are bound)."""

    def __init__(self, client: Client, progress: Progress) -> None:
        self.progress = progress
        self.informer: Informer[Job] = Informer(client, Job, namespace=NAMESPACE)
        self.submitted: dict[str, float] = {}
        self.bound: dict[str, float] = {}
        self.last_change = time.monotonic()
        self._said: dict[str, str] = {}
        self.informer.add_event_handler(self._seen, lambda _old, new: self._seen(new), None)

    def _seen(self, job: Job) -> None:
        name = job.metadata.name or "?"
        status = job.status
        if status is None:
            return
        phase = status.state.phase
        detail = ""
        if status.placement is not None and name not in self.bound:
            self.bound[name] = time.monotonic()
        if phase == "Pending":
            detail = next((c.message or "" for c in status.conditions if c.type == "Scheduled"), "")
        elif phase == "Running" and status.placement is not None:
            pods = sum(len(task.nodes) for task in status.placement.tasks)
            detail = f"{pods} pod{'s' if pods != 1 else ''} bound, domain {domain_text(job)}"
        if self._said.get(name) != phase:
            # Only phase changes are printed; the reason a job waits is in the closing table.
            self._said[name] = phase
            self.progress.say(f"{name}: {phase}" + (f" ({detail})" if detail else ""))
        self.last_change = time.monotonic()

    def settled(self, stream: list[StreamEntry]) -> bool:
        """Every job submitted, the finite ones Completed, the rest Running or Pending with a
        reason, and nothing changed for a moment."""
        if len(self.submitted) < len(stream) or time.monotonic() - self.last_change < QUIET_SECONDS:
            return False
        for entry in stream:
            job = self.informer.store.get_by_name(entry.name, NAMESPACE)
            if job is None or job.status is None:
                return False
            phase = job.status.state.phase
            if entry.run_for_s is not None and phase != "Completed":
                return False
            if entry.run_for_s is None and phase not in ("Running", "Pending"):
                return False
        return True


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m examples.demo", description=__doc__.splitlines()[0]
    )
    defaults = ClusterShape()
    parser.add_argument("--out", type=Path, default=Path("demo-output"), help="where the PNG goes")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="give up after this many seconds"
    )
    parser.add_argument("--zones", type=int, default=defaults.zones)
    parser.add_argument("--spines-per-zone", type=int, default=defaults.spines_per_zone)
    parser.add_argument("--leaves-per-spine", type=int, default=defaults.leaves_per_spine)
    parser.add_argument("--nodes-per-leaf", type=int, default=defaults.nodes_per_leaf)
    parser.add_argument(
        "--ui", action="store_true", help="serve the scheduler's live page through the run"
    )
    parser.add_argument(
        "--ui-address", default="127.0.0.1:8090", help="where --ui serves (host:port; port 0: any)"
    )
    parser.add_argument(
        "--keep-ui",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="with --ui, keep the page up this long after the stream settles",
    )
    parser.add_argument(
        "--tier-label",
        action="append",
        default=[],
        metavar="KEY",
        help="node label of tier 1 (leaf), then 2 (spine), then 3 (zone); repeat in that order",
    )
    return parser.parse_args(argv)


async def submit(
    client: Client, stream: list[StreamEntry], watch: JobWatch, progress: Progress
) -> None:
    """Create each job at its time (seconds after the first)."""
    start = time.monotonic()
    for entry in stream:
        await asyncio.sleep(max(0.0, start + entry.submit_at_s - time.monotonic()))
        manifest = dict(
            entry.manifest, metadata=dict(entry.manifest["metadata"], namespace=NAMESPACE)
        )
        await client.create(manifest)
        watch.submitted[entry.name] = time.monotonic()
        pods = sum(task["replicas"] for task in manifest["spec"]["tasks"])
        progress.say(f"submitted {entry.name} ({pods} pods)")


async def summarize(
    client: Client,
    stream: list[StreamEntry],
    watch: JobWatch,
    shape: ClusterShape,
    topology: TopologyConfig,
    out: Path,
) -> Path:
    """Print the summary table and draw the picture, both from what the API holds now."""
    pods = (await client.list(Pod, namespace=NAMESPACE)).items
    rows = []
    for entry in stream:
        job = await client.get(Job, entry.name, namespace=NAMESPACE)
        gpus = sum(
            task.replicas * pod_requests(task.pod_template().spec).get(GPU_RESOURCE, 0) // 1000
            for task in job.spec.tasks
        )
        bound = sum(
            1
            for pod in pods
            if pod.metadata.labels.get(JOB_NAME_LABEL) == entry.name and pod.spec.node_name
        )
        waited = None
        if entry.name in watch.bound and entry.name in watch.submitted:
            waited = watch.bound[entry.name] - watch.submitted[entry.name]
        rows.append(JobRow(job, gpus, bound, waited))
    print()
    # A placer's reason is a long sentence: on a terminal REASON wraps at its width; into a
    # file or a pipe (no width to keep to) each row stays one line, cut at 160 columns.
    if sys.stdout.isatty():
        print(summary_table(rows, shutil.get_terminal_size().columns))
    else:
        print(summary_table(rows, NOT_A_TERMINAL_WIDTH, wrap=False))
    print()
    cells, usage = await read_picture_data(client, shape, topology, namespace=NAMESPACE)
    jobs = [
        entry.name
        for entry in stream
        if any(u.job == entry.name for us in usage.values() for u in us)
    ]
    title = (
        f"{shape.nodes} nodes, {shape.gpus} GPUs: GPUs held by running jobs at the end of the demo"
    )
    return render(cells, usage, jobs, out / "topology.png", title)


async def run(args: argparse.Namespace) -> int:
    progress = Progress()
    topology = TopologyConfig.from_flags(args.tier_label)
    shape = ClusterShape(
        zones=args.zones,
        spines_per_zone=args.spines_per_zone,
        leaves_per_spine=args.leaves_per_spine,
        nodes_per_leaf=args.nodes_per_leaf,
    )
    stream = demo_stream()
    progress.say("starting the local control plane (etcd + kube-apiserver)")
    async with ControlPlane() as plane, Client.from_control_plane(plane) as client:
        await install_crds(client)
        progress.say(f"control plane ready at {plane.server_url}; Job and PodGroup CRDs installed")
        await plane.create_namespace(NAMESPACE)
        created = await create_simulated_cluster(client, shape, topology)
        progress.say(
            f"registered {created} simulated nodes: {shape.zones} zones x "
            f"{shape.spines_per_zone} spines x {shape.leaves_per_spine} leaves x "
            f"{shape.nodes_per_leaf} nodes x {shape.gpus_per_node} GPUs"
        )
        watch = JobWatch(client, progress)
        run_for = {entry.name: entry.run_for_s for entry in stream}
        pages: list[ViewServer] = []

        def page(reconciler: VolcanoJobReconciler) -> list[Runnable]:
            if not args.ui or reconciler.scheduler is None:
                return []
            view = SchedulerView(reconciler.scheduler, publish=False)
            pages.append(ViewServer(view, args.ui_address))
            return [view, pages[-1]]

        try:
            async with (
                running_operator(client, topology, namespace=NAMESPACE, beside=page),
                SimulatedKubelets(client, NAMESPACE, run_for),
            ):
                await watch.informer.start()
                await watch.informer.wait_for_sync()
                progress.say("gang-scheduler operator and simulated kubelets running")
                for server in pages:
                    async with asyncio.timeout(30):  # it starts with the manager's runnables
                        url = await server.listening()
                    progress.say(f"the scheduler's live page: {url}")
                await submit(client, stream, watch, progress)
                deadline = time.monotonic() + args.timeout
                settled = True
                while not watch.settled(stream):
                    if time.monotonic() > deadline:
                        progress.say(
                            "the stream did not settle in time; this is what the API shows"
                        )
                        settled = False
                        break
                    await asyncio.sleep(0.2)
                path = await summarize(client, stream, watch, shape, topology, args.out)
                progress.say(f"topology picture: {path.resolve()}")
                for server in pages:
                    progress.say(f"the page stays up {args.keep_ui:.0f} s: {server.url}")
                    await asyncio.sleep(args.keep_ui)
                progress.say("stopping the operator and the control plane")
        finally:
            await watch.informer.stop()
    progress.say("everything stopped")
    return 0 if settled else 1


def main(argv: list[str] | None = None) -> int:
    try:
        return asyncio.run(run(parse_args(argv)))
    except KeyboardInterrupt:
        print("interrupted; the control plane was stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
