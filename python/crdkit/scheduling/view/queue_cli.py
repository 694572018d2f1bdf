"""``crdkit queue``: the gangs a crdkit gang scheduler has waiting and running, with their
expected starts, in the manner of Slurm's ``squeue --start``::

    crdkit queue --scheduler crdkit-gang-scheduler -n ops

It reads what the scheduler publishes every few seconds (one ConfigMap, `format.published_name`
of the scheduler's name, in the namespace it runs in) with one GET; ``--watch`` polls it. It
needs no more than `QueueReader`'s role: ``crdkit gen-rbac
crdkit.scheduling.view.queue_cli:QueueReader --namespace NS``.

Exit status: 0 shown; 1 no view published, not allowed to read it, or the apiserver
unreachable; 2 bad input (options, kubeconfig, or a view this crdkit cannot read).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import click

from crdkit.runtime.cli_common import connection_options, fail
from crdkit.runtime.client_role import ClientRole
from crdkit.scheduling.errors import SchedulingError
from crdkit.scheduling.view.format import published_name

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from crdkit.client import Client
    from crdkit.runtime.reconciler import RbacRule
    from crdkit.scheduling.view.format import GangView, PublishedSnapshot

__all__ = [
    "DEFAULT_SCHEDULER",
    "NOT_A_TTY_WIDTH",
    "WATCH_INTERVAL",
    "NoView",
    "QueueError",
    "QueueReader",
    "default_namespace",
    "json_view",
    "queue_command",
    "read_view",
    "render",
]

DEFAULT_SCHEDULER = "crdkit-gang-scheduler"
"""`GangScheduler`'s default name (a unit test keeps the two equal; importing the scheduler
here would load it for every ``crdkit --help``)."""

WATCH_INTERVAL = 2.0
"""Seconds between two reads of ``--watch``: the scheduler publishes every few seconds, and a
GET of one small ConfigMap every two is nothing to the apiserver."""

NOT_A_TTY_WIDTH = 160
"""The width of a table written to a pipe or file without ``--width``: wide enough for most
reasons, and lines a log keeps whole."""

STALE_AFTER = 60.0
"""A view older than this (seconds) gets a note on stderr: its scheduler stopped publishing."""

_READER_COMMAND = "crdkit gen-rbac crdkit.scheduling.view.queue_cli:QueueReader"


class QueueReader(ClientRole):
    """The role ``crdkit queue`` needs: read ConfigMaps (the published view) where the
    scheduler publishes. ``crdkit gen-rbac crdkit.scheduling.view.queue_cli:QueueReader
    --namespace NS --service-account SA`` writes it as a Role in NS."""

    # get for a read; list and watch so that a reader that watches the ConfigMap (by
    # fieldSelector metadata.name, as kubectl get -w does) needs no other role.
    rbac: ClassVar[Sequence[RbacRule]] = (("", "configmaps", ("get", "list", "watch")),)


class QueueError(SchedulingError):
    """A failure ``crdkit queue`` reports in one line, with its exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class NoView(QueueError):
    """The scheduler's ConfigMap does not exist (not running, not yet published, or another
    namespace)."""


def default_namespace(kubeconfig: Path | None, context: str | None) -> str:
    """Where to look without ``--namespace``: in a pod (no kubeconfig or context asked for)
    the pod's own namespace, else the kubeconfig context's, else ``default``; as kubectl."""
    from crdkit.client.config import SERVICE_ACCOUNT_DIR

    if kubeconfig is None and context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            return (SERVICE_ACCOUNT_DIR / "namespace").read_text().strip() or "default"
        except OSError:
            return "default"
    from crdkit.client.kubeconfig import kubeconfig_paths, read_kubeconfig

    return read_kubeconfig(kubeconfig_paths(kubeconfig), context=context).namespace or "default"


async def read_view(client: Client, scheduler: str, namespace: str) -> PublishedSnapshot:
    """The view the scheduler ``scheduler`` published in ``namespace``; `QueueError` when it
    is missing or may not be read, `PublishedError` when it cannot be read."""
    from crdkit.client.errors import Forbidden, NotFound
    from crdkit.resources import ConfigMap
    from crdkit.scheduling.view.published import read_config_map_data

    name = published_name(scheduler)
    try:
        config_map = await client.get(ConfigMap, name, namespace=namespace)
    except NotFound:
        raise NoView(
            f"no view published by scheduler {scheduler} in namespace {namespace} (no "
            f"ConfigMap {name}): is `crdkit scheduler --name {scheduler}` running (it publishes "
            "its queue every few seconds)? If it runs in another namespace, give --namespace",
            1,
        ) from None
    except Forbidden as error:
        raise QueueError(
            f"not allowed to read ConfigMap {namespace}/{name} ({error.message}): the reader "
            f"needs get on configmaps in {namespace}, which `{_READER_COMMAND} --namespace "
            f"{namespace} --service-account SA` grants",
            1,
        ) from None
    return read_config_map_data(config_map.data, f"ConfigMap {namespace}/{name}")


def json_view(
    snapshot: PublishedSnapshot, gangs: Sequence[GangView], queue: str | None
) -> dict[str, Any]:
    """``-o json``'s object: its keys are kept from one crdkit to the next, so scripts can
    read it. ``gangs`` are those the filters kept; ``queues`` only ``queue`` when given."""
    queues = [q for q in snapshot["queues"] if queue is None or q["name"] == queue]
    return {
        "scheduler": snapshot["scheduler"],
        "time": snapshot["time"],
        "gangs": list(gangs),
        "queues": queues,
        "omitted": snapshot["omitted"],
    }


@dataclass(frozen=True)
class _Choices:
    output: Literal["table", "wide", "json"]
    queue: str | None
    state: Literal["waiting", "running"] | None
    wrap: bool
    width: int | None


def _stdout_is_a_terminal() -> bool:
    return sys.stdout.isatty()


def _width(choices: _Choices, tty: bool) -> int:
    if choices.width is not None:
        return choices.width
    # Asked each time: a terminal resized during --watch redraws at its new width.
    return shutil.get_terminal_size().columns if tty else NOT_A_TTY_WIDTH


def render(snapshot: PublishedSnapshot, now: float, width: int, choices: _Choices) -> list[str]:
    """The lines ``crdkit queue`` prints for ``snapshot`` at ``now``."""
    from crdkit.scheduling.view.table import queue_table, select_gangs

    gangs = select_gangs(snapshot["gangs"], queue=choices.queue, state=choices.state)
    if choices.output == "json":
        return [json.dumps(json_view(snapshot, gangs, choices.queue), indent=2)]
    return queue_table(
        snapshot,
        now=now,
        width=width,
        wrap=choices.wrap,
        wide=choices.output == "wide",
        gangs=gangs,
    )


def _stale_note(snapshot: PublishedSnapshot, now: float) -> str | None:
    from crdkit.scheduling.view.table import duration_text

    age = now - snapshot["time"]
    if age <= STALE_AFTER:
        return None
    return (
        f"note: this view is {duration_text(age)} old: scheduler {snapshot['scheduler']} "
        "has stopped publishing (is it running?)"
    )


async def _show_once(
    client: Client, scheduler: str, namespace: str, choices: _Choices, tty: bool
) -> None:
    snapshot = await read_view(client, scheduler, namespace)
    now = time.time()
    for line in render(snapshot, now, _width(choices, tty), choices):
        click.echo(line)
    if choices.output != "json":
        note = _stale_note(snapshot, now)
        if note is not None:
            click.echo(f"crdkit queue: {note}", err=True)


async def _watch(
    client: Client, scheduler: str, namespace: str, choices: _Choices, tty: bool
) -> None:
    """Until interrupted: on a terminal, the screen redrawn every `WATCH_INTERVAL` (the
    relative times move even when the view does not); to a pipe, the view printed again only
    when the scheduler published a new one, JSON as one object per line."""
    from crdkit.scheduling.view.table import truncate

    # A view that cannot be read, or a reader not allowed to, ends the watch as it ends a
    # single read; only a missing view is waited out.
    last: int | None = None
    missing_said = False
    while True:
        try:
            snapshot: PublishedSnapshot | None = await read_view(client, scheduler, namespace)
            problem, missing_said = "", False
        except NoView as error:
            # A scheduler restarting publishes again in a few seconds: keep looking.
            snapshot, problem = None, str(error)
        now = time.time()
        width = _width(choices, tty)
        if tty:
            # Home, then clear the screen (color=True: click strips escapes it thinks go to no
            # terminal, and a terminal is what `tty` says this is).
            click.echo("\x1b[H\x1b[2J", nl=False, color=True)
            head = f"crdkit queue: scheduler {scheduler} in {namespace}, every {WATCH_INTERVAL:g}s"
            if snapshot is not None:
                head += f"; view of {_clock(snapshot['time'])}"
            click.echo(truncate(head, width))
            click.echo("")
            if snapshot is None:
                click.echo(truncate(problem, width))
            else:
                for line in render(snapshot, now, width, choices):
                    click.echo(line)
                note = _stale_note(snapshot, now)
                if note is not None:
                    click.echo(truncate(note, width))
        elif snapshot is not None and snapshot["seq"] != last:
            if choices.output == "json":
                gangs = _selected(snapshot, choices)
                click.echo(json.dumps(json_view(snapshot, gangs, choices.queue)))
            else:
                if last is not None:
                    click.echo("")
                for line in render(snapshot, now, width, choices):
                    click.echo(line)
            last = snapshot["seq"]
        elif snapshot is None and not missing_said:
            # Said once on stderr (stdout stays views only), again if it goes missing later.
            click.echo(f"crdkit queue: {problem}", err=True)
            missing_said, last = True, None
        await asyncio.sleep(WATCH_INTERVAL)


def _clock(moment: float) -> str:
    """``HH:MM:SS`` of an epoch time, local; the number itself if no clock shows it."""
    try:
        return time.strftime("%H:%M:%S", time.localtime(moment))
    except (OverflowError, OSError, ValueError):
        return f"{moment:.0f}"


def _selected(snapshot: PublishedSnapshot, choices: _Choices) -> list[GangView]:
    from crdkit.scheduling.view.table import select_gangs

    return select_gangs(snapshot["gangs"], queue=choices.queue, state=choices.state)


async def _main(
    kubeconfig: Path | None,
    connection: dict[str, Any],
    scheduler: str,
    namespace: str,
    choices: _Choices,
    watch: bool,
    tty: bool,
) -> None:
    from crdkit.client import Client, ClientConfig

    if kubeconfig is None:
        config = await ClientConfig.load(**connection)
    else:
        config = await ClientConfig.from_kubeconfig(kubeconfig, **connection)
    async with Client(config) as client:
        if watch:
            await _watch(client, scheduler, namespace, choices, tty)
        else:
            await _show_once(client, scheduler, namespace, choices, tty)


@click.command("queue")
@click.option(
    "--scheduler",
    default=DEFAULT_SCHEDULER,
    show_default=True,
    help="The scheduler's name (crdkit scheduler --name): its view is the ConfigMap NAME-queue.",
)
@click.option(
    "--namespace",
    "-n",
    default=None,
    help="Where the scheduler publishes: the namespace it runs in (default: the kubeconfig "
    "context's namespace, in a pod its own, else default).",
)
@click.option(
    "--output",
    "-o",
    type=click.Choice(["table", "wide", "json"]),
    default="table",
    show_default=True,
    help="table; wide: also each gang's PodGroup API, its first promised start, how long a "
    "running one has run, and why a start is unknown; json: {scheduler, time, gangs, queues, "
    "omitted} as published, for scripts.",
)
@click.option("--queue", "queue_name", default=None, help="Only the gangs of this queue.")
@click.option(
    "--state",
    type=click.Choice(["waiting", "running"]),
    default=None,
    help="Only the gangs in this state (default: both).",
)
@click.option(
    "--watch",
    "-w",
    is_flag=True,
    help=f"Read the view again every {WATCH_INTERVAL:g} s: on a terminal the screen is redrawn; "
    "otherwise each new view is printed (JSON: one object a line). Until Ctrl-C.",
)
@click.option(
    "--wrap",
    is_flag=True,
    help="Wrap long reasons onto lines of their own under REASON instead of cutting them.",
)
@click.option(
    "--width",
    type=click.IntRange(min=20),
    default=None,
    help=f"Columns of the table (default: the terminal's; {NOT_A_TTY_WIDTH} when not a terminal).",
)
@connection_options
def queue_command(
    scheduler: str,
    namespace: str | None,
    output: Literal["table", "wide", "json"],
    queue_name: str | None,
    state: Literal["waiting", "running"] | None,
    watch: bool,
    wrap: bool,
    width: int | None,
    kubeconfig: Path | None,
    context: str | None,
    exec_timeout: float,
    event_loop: str,
) -> None:
    """Show the gangs a crdkit gang scheduler has waiting and running, with expected starts.

    One row per gang, waiting ones in line order (POS) then running ones, read from the view
    the scheduler publishes every few seconds. Needs get on configmaps where it publishes:
    crdkit gen-rbac crdkit.scheduling.view.queue_cli:QueueReader --namespace NS.
    """
    from crdkit.client.errors import ConfigError, KubernetesError, TransportError
    from crdkit.runtime.event_loop import run as run_on_loop
    from crdkit.scheduling.view.published import PublishedError

    choices = _Choices(output, queue_name, state, wrap, width)
    tty = _stdout_is_a_terminal()
    connection: dict[str, Any] = {"context": context, "exec_timeout": exec_timeout}
    try:
        where = namespace or default_namespace(kubeconfig, context)
        run_on_loop(
            _main(kubeconfig, connection, scheduler, where, choices, watch, tty), event_loop
        )
    except KeyboardInterrupt:
        return  # Ctrl-C is how --watch ends
    except QueueError as error:
        fail("queue", str(error), error.status)
    except PublishedError as error:
        fail("queue", str(error), 2)
    except ConfigError as error:
        fail("queue", str(error), 2)
    except TransportError as error:
        fail("queue", f"cannot reach the apiserver: {error}", 1)
    except KubernetesError as error:  # Unauthorized, a 5xx after retries: the cluster's side
        fail("queue", str(error), 1)
