"""``crdkit envtest``: a local control plane from the command line.

``run -- CMD [ARGS...]`` wraps one command (a test suite, a demo) in a control plane;
``up`` keeps one running for interactive use with kubectl, and with ``--gpu-nodes N
--kubelets`` serves a simulated GPU cluster (`crdkit.testing.GpuClusterShape`) whose kubelets
run the pods a scheduler binds to it.

Bad arguments (unreadable CRDs, a command that is not there, a ``--kubeconfig`` that cannot be
written) are refused before anything starts; they and a control plane that cannot start are
one line on stderr and exit status 2.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from crdkit.client import Client
from crdkit.testing.envtest.control_plane import ControlPlane
from crdkit.testing.envtest.crds import load_crds
from crdkit.testing.envtest.gates import WORKLOAD_API, ApiserverGates, parse_pairs
from crdkit.testing.envtest.kubeconfig import write_private
from crdkit.testing.errors import ControlPlaneError
from crdkit.testing.sim.gpu_cluster import GpuClusterShape, create_gpu_cluster
from crdkit.testing.sim.kubelet import (
    RUN_SECONDS_ANNOTATION,
    SimulatedKubelet,
    annotated_run_time,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["envtest"]

F = TypeVar("F", bound="Callable[..., Any]")


def _exit_status(returncode: int) -> int:
    # A command killed by a signal reports -N; shells report 128+N, and so do we.
    return 128 - returncode if returncode < 0 else returncode


def _plane(gates: ApiserverGates) -> ControlPlane:
    return ControlPlane(
        feature_gates=gates.feature_gates,
        runtime_config=gates.runtime_config,
        disabled_admission_plugins=gates.disabled_admission_plugins,
    )


async def _run(command: Sequence[str], crds: Sequence[Path], gates: ApiserverGates) -> int:
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    # SIGTERM would otherwise kill Python at once, leaving etcd and kube-apiserver behind.
    loop.add_signal_handler(signal.SIGTERM, main.cancel)
    async with _plane(gates) as plane:
        if crds:
            await plane.install_crds(crds)
        env = {**os.environ, "KUBECONFIG": str(plane.kubeconfig_path)}
        try:
            child = await asyncio.create_subprocess_exec(*command, env=env)
        except OSError as exc:
            raise click.ClickException(f"cannot run {command[0]}: {exc}") from exc
        # From now on the command decides how to end; its status is ours.
        loop.add_signal_handler(signal.SIGTERM, child.send_signal, signal.SIGTERM)
        try:
            return await child.wait()
        except asyncio.CancelledError:
            # Ctrl-C: the terminal sent the command SIGINT too. Give it time to wind down,
            # but never leave it behind.
            await _reap(child)
            raise


async def _reap(child: asyncio.subprocess.Process, grace: float = 10.0) -> None:
    for step in ("wait", "terminate", "kill"):
        if step == "terminate":
            child.terminate()
        elif step == "kill":
            child.kill()
        try:
            await asyncio.wait_for(child.wait(), grace)
            return
        except TimeoutError:
            continue


class _KubeconfigPathError(click.ClickException):
    """``--kubeconfig PATH`` cannot be written safely: one line, and the usage error status."""

    exit_code = 2


def _copy_private(source: Path, target: Path) -> None:
    # The kubeconfig holds the admin key: owner-only, replaced whole, never through a link.
    try:
        write_private(target, source.read_bytes())
    except OSError as exc:
        raise _KubeconfigPathError(f"--kubeconfig {target}: {exc.strerror or exc}") from exc


@dataclass(frozen=True)
class _Simulated:
    """What ``up`` simulates on its control plane: the GPU cluster, and whether its kubelets
    run the pods bound to it (for how long: ``run_for`` seconds, or the pod's annotation)."""

    shape: GpuClusterShape
    kubelets: bool
    run_for: float | None


async def _serve_simulated(
    plane: ControlPlane, simulated: _Simulated, stopping: asyncio.Event
) -> None:
    shape = simulated.shape
    async with Client.from_control_plane(plane) as client:
        nodes = await create_gpu_cluster(client, shape)
        click.echo(
            f"{shape.nodes} simulated nodes, {shape.gpus} GPUs, in {shape.leaves} leaves of "
            f"{shape.nodes_per_leaf}; for the scheduler: --levels {','.join(shape.levels)}"
        )
        if not simulated.kubelets:
            await stopping.wait()
            return
        names = {node.metadata.name for node in nodes}
        kubelet = SimulatedKubelet(
            client,
            nodes=names.__contains__,
            run_for=annotated_run_time(simulated.run_for),
        )
        async with kubelet:
            ends = "until deleted" if simulated.run_for is None else f"{simulated.run_for:g} s"
            click.echo(
                f"kubelets run the pods bound to them: {ends}, or a pod's "
                f"{RUN_SECONDS_ANNOTATION} annotation"
            )
            await stopping.wait()


async def _up(
    crds: Sequence[Path],
    kubeconfig: Path | None,
    simulated: _Simulated | None = None,
    gates: ApiserverGates | None = None,
) -> None:
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    # Both signals are handled explicitly: a process started in the background of a
    # non-interactive shell inherits SIGINT as ignored, and Python then never raises
    # KeyboardInterrupt, so relying on it would leave `up` deaf to an explicit SIGINT.
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    async with _plane(gates or ApiserverGates()) as plane:
        if crds:
            await plane.install_crds(crds)
        path = plane.kubeconfig_path
        if kubeconfig is not None:
            try:
                await asyncio.to_thread(_copy_private, path, kubeconfig)
            except OSError as exc:  # no permission, disk full, a folder in the way
                reason = exc.strerror or str(exc)
                raise _Refused(f"--kubeconfig {kubeconfig}: cannot write it: {reason}") from exc
            path = kubeconfig
        click.echo(f"kube-apiserver {plane.server_url} is ready")
        click.echo(f"kubeconfig: {path}")
        click.echo(f"try: KUBECONFIG={shlex.quote(str(path))} kubectl get namespaces")
        click.echo("Ctrl-C stops it.")
        try:
            if simulated is None:
                await stopping.wait()
            else:
                await _serve_simulated(plane, simulated, stopping)
        finally:
            click.echo("stopping the control plane", err=True)


class _Refused(Exception):
    """Bad input found once the control plane runs; it is stopped, then this is reported."""


def _fail(message: str) -> NoReturn:
    click.echo(f"crdkit envtest: {' '.join(message.split())}", err=True)
    sys.exit(2)


def _check_crds(crds: Sequence[Path]) -> None:
    # Read once before starting: a bad file is then refused in a second, not after the
    # control plane took its few seconds to come up (install_crds reads them again).
    try:
        load_crds(crds)
    except ValueError as exc:
        _fail(f"--crds {exc}")


_crd_option = click.option(
    "--crds",
    "crds",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="CRD file or folder to install before going on (repeatable).",
)


def _gates(
    feature_gates: str | None, runtime_config: str | None, workload_api: bool
) -> ApiserverGates:
    """The apiserver's gates the flags ask for, refused (naming the flag) before anything
    starts."""
    try:
        pairs = parse_pairs(feature_gates or "", "--feature-gates")
        gates: dict[str, bool] = {}
        for gate, value in pairs.items():
            if value.lower() not in ("true", "false"):
                raise ValueError(f"--feature-gates: {gate}={value}: expected true or false")
            gates[gate] = value.lower() == "true"
        given = ApiserverGates(gates, parse_pairs(runtime_config or "", "--runtime-config"))
    except ValueError as exc:
        message = str(exc)
        for field_name, flag in (
            ("feature_gates", "--feature-gates"),
            ("runtime_config", "--runtime-config"),
        ):
            message = message.replace(f"{field_name}:", f"{flag}:")
        _fail(message)
    return WORKLOAD_API.merged(given) if workload_api else given


def _gate_options(command: F) -> F:
    """``--feature-gates``, ``--runtime-config`` and ``--workload-api``, for run and up."""
    for option in reversed(
        (
            click.option(
                "--feature-gates",
                metavar="GATE=BOOL,...",
                help="kube-apiserver feature gates to set, e.g. GenericWorkload=true.",
            ),
            click.option(
                "--runtime-config",
                metavar="GROUP/VERSION=VALUE,...",
                help="kube-apiserver API versions to serve, e.g. scheduling.k8s.io/v1beta1=true.",
            ),
            click.option(
                "--workload-api",
                is_flag=True,
                help="Serve Kubernetes' gang API (scheduling.k8s.io/v1beta1 PodGroup and "
                "Workload): the GenericWorkload and TopologyAwareWorkloadScheduling gates, "
                "its runtime config, and PodGroupProtection admission off (no controller "
                "removes its finalizer here).",
            ),
        )
    ):
        command = option(command)
    return command


@click.group()
def envtest() -> None:
    """A real local kube-apiserver and etcd (build them with `make envtest`)."""


@envtest.command(context_settings={"ignore_unknown_options": True})
@_crd_option
@_gate_options
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(
    command: tuple[str, ...],
    crds: tuple[Path, ...],
    feature_gates: str | None,
    runtime_config: str | None,
    workload_api: bool,
) -> None:
    """Run CMD with KUBECONFIG pointing at a fresh control plane; exit with CMD's status.

    Example: crdkit envtest run -- pytest tests/integration
    """
    gates = _gates(feature_gates, runtime_config, workload_api)
    _check_crds(crds)
    if shutil.which(command[0]) is None:
        _fail(f"{command[0]}: command not found (or not executable)")
    try:
        status = asyncio.run(_run(command, crds, gates))
    except ControlPlaneError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        status = 128 + signal.SIGINT
    sys.exit(_exit_status(status))


def _count_option(flag: str, default: int, help: str) -> Callable[[F], F]:
    """A count of the simulated cluster's shape, 1 or more, its default shown."""
    return click.option(
        flag, type=click.IntRange(min=1), default=default, show_default=True, help=help
    )


def _simulated(
    gpu_nodes: int | None,
    nodes_per_leaf: int,
    gpus_per_node: int,
    kubelets: bool,
    run_for: float | None,
) -> _Simulated | None:
    """The simulated cluster the flags ask for, refused (naming the flag) before anything
    starts."""
    if gpu_nodes is None:
        for given, flag in ((kubelets, "--kubelets"), (run_for is not None, "--run-for")):
            if given:
                _fail(f"{flag}: needs --gpu-nodes (the simulated nodes the kubelets play)")
        return None
    if run_for is not None and not kubelets:
        _fail("--run-for: needs --kubelets (nothing runs pods without them)")
    try:
        shape = GpuClusterShape.with_nodes(
            gpu_nodes, nodes_per_leaf=nodes_per_leaf, gpus_per_node=gpus_per_node
        )
    except ValueError as exc:
        flag = "--gpus-per-node" if str(exc).startswith("gpus_per_node") else "--gpu-nodes"
        _fail(f"{flag}: {exc}")
    return _Simulated(shape, kubelets, run_for)


@envtest.command()
@_crd_option
@_gate_options
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the kubeconfig here (it stops working when the control plane stops).",
)
@click.option(
    "--gpu-nodes",
    type=click.IntRange(min=1),
    help="Also serve a simulated GPU cluster of this many nodes, in whole leaves of "
    "--nodes-per-leaf, up to 4 leaves a spine and 4 spines a zone.",
)
@_count_option("--nodes-per-leaf", 16, "Nodes under one leaf switch.")
@_count_option("--gpus-per-node", 8, "nvidia.com/gpu of each simulated node.")
@click.option(
    "--kubelets",
    is_flag=True,
    help="Run the pods bound to the simulated nodes: Running at once (1/1 Ready), removed "
    "when deleted, ended after --run-for or the pod's sim.crdkit.io/run-seconds annotation.",
)
@click.option(
    "--run-for",
    type=click.FloatRange(min=0),
    help="Seconds each pod runs before it Succeeds (default: until it is deleted).",
)
def up(
    crds: tuple[Path, ...],
    feature_gates: str | None,
    runtime_config: str | None,
    workload_api: bool,
    kubeconfig: Path | None,
    gpu_nodes: int | None,
    nodes_per_leaf: int,
    gpus_per_node: int,
    kubelets: bool,
    run_for: float | None,
) -> None:
    """Run a control plane in the foreground until Ctrl-C.

    Example, a simulated GPU cluster of 4 leaves whose kubelets run what is bound to it:
    crdkit envtest up --gpu-nodes 64 --kubelets --kubeconfig /tmp/sim.kubeconfig
    """
    simulated = _simulated(gpu_nodes, nodes_per_leaf, gpus_per_node, kubelets, run_for)
    gates = _gates(feature_gates, runtime_config, workload_api)
    if kubeconfig is not None and kubeconfig.is_symlink():
        # Before anything starts; writing checks again, for a link put there meanwhile.
        raise _KubeconfigPathError(
            f"--kubeconfig {kubeconfig}: is a symbolic link; refusing to write through it"
        )
    _check_crds(crds)
    if kubeconfig is not None and not kubeconfig.absolute().parent.is_dir():
        _fail(f"--kubeconfig {kubeconfig}: its folder does not exist")
    try:
        asyncio.run(_up(crds, kubeconfig, simulated, gates))
    except ControlPlaneError as exc:
        _fail(str(exc))
    except _Refused as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        pass
