"""``crdkit envtest``: a local control plane from the command line.

``run -- CMD [ARGS...]`` wraps one command (a test suite, a demo) in a control plane;
``up`` keeps one running for interactive use with kubectl.

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
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from crdkit.testing.envtest.control_plane import ControlPlane
from crdkit.testing.envtest.crds import load_crds
from crdkit.testing.envtest.kubeconfig import write_private
from crdkit.testing.errors import ControlPlaneError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["envtest"]


def _exit_status(returncode: int) -> int:
    # A command killed by a signal reports -N; shells report 128+N, and so do we.
    return 128 - returncode if returncode < 0 else returncode


async def _run(command: Sequence[str], crds: Sequence[Path]) -> int:
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    # SIGTERM would otherwise kill Python at once, leaving etcd and kube-apiserver behind.
    loop.add_signal_handler(signal.SIGTERM, main.cancel)
    async with ControlPlane() as plane:
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


async def _up(crds: Sequence[Path], kubeconfig: Path | None) -> None:
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    # Both signals are handled explicitly: a process started in the background of a
    # non-interactive shell inherits SIGINT as ignored, and Python then never raises
    # KeyboardInterrupt, so relying on it would leave `up` deaf to an explicit SIGINT.
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    async with ControlPlane() as plane:
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
            await stopping.wait()
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


@click.group()
def envtest() -> None:
    """A real local kube-apiserver and etcd (build them with `make envtest`)."""


@envtest.command(context_settings={"ignore_unknown_options": True})
@_crd_option
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(command: tuple[str, ...], crds: tuple[Path, ...]) -> None:
    """Run CMD with KUBECONFIG pointing at a fresh control plane; exit with CMD's status.

    Example: crdkit envtest run -- pytest tests/integration
    """
    _check_crds(crds)
    if shutil.which(command[0]) is None:
        _fail(f"{command[0]}: command not found (or not executable)")
    try:
        status = asyncio.run(_run(command, crds))
    except ControlPlaneError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        status = 128 + signal.SIGINT
    sys.exit(_exit_status(status))


@envtest.command()
@_crd_option
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the kubeconfig here (it stops working when the control plane stops).",
)
def up(crds: tuple[Path, ...], kubeconfig: Path | None) -> None:
    """Run a control plane in the foreground until Ctrl-C."""
    if kubeconfig is not None and kubeconfig.is_symlink():
        # Before anything starts; writing checks again, for a link put there meanwhile.
        raise _KubeconfigPathError(
            f"--kubeconfig {kubeconfig}: is a symbolic link; refusing to write through it"
        )
    _check_crds(crds)
    if kubeconfig is not None and not kubeconfig.absolute().parent.is_dir():
        _fail(f"--kubeconfig {kubeconfig}: its folder does not exist")
    try:
        asyncio.run(_up(crds, kubeconfig))
    except ControlPlaneError as exc:
        _fail(str(exc))
    except _Refused as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        pass
