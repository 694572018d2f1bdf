"""``crdkit queue`` without a cluster: reading the published view (and refusing what cannot be
read), the command's output and errors, and the role gen-rbac gives its reader."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from crdkit.cli import main
from crdkit.client.errors import Forbidden, NotFound
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.scheduling.view import queue_cli
from crdkit.scheduling.view.format import FORMAT, PUBLISHED_KEY
from crdkit.scheduling.view.published import PublishedError, WrongFormat, parse_published
from crdkit.scheduling.view.queue_cli import (
    DEFAULT_SCHEDULER,
    NoView,
    QueueError,
    default_namespace,
    read_view,
)
from crdkit.scheduling.view.table import queue_table

if TYPE_CHECKING:
    from crdkit.client import Client
    from crdkit.scheduling.view.format import PublishedSnapshot

DATA = Path(__file__).resolve().parents[3] / "data" / "scheduling" / "published_queue.json"
TEXT = DATA.read_text()


def _document(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(TEXT)
    document.update(changes)
    return document


# -- reading the view ---------------------------------------------------------------------


def test_the_default_scheduler_is_the_gang_schedulers_default_name() -> None:
    from crdkit.scheduling.scheduler import GangScheduler

    default = inspect.signature(GangScheduler.__init__).parameters["name"].default
    assert default == DEFAULT_SCHEDULER


def test_another_format_says_which_it_got_and_which_it_reads() -> None:
    with pytest.raises(
        WrongFormat, match=rf"format: the view is in format 2, .* reads format {FORMAT}"
    ):
        parse_published(json.dumps(_document(format=2)))
    with pytest.raises(WrongFormat, match="the view is in format null"):
        parse_published(json.dumps({"gangs": []}))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["gangs"][1].update(priority="high"),
            r"gangs\[1\]\.priority: expected an integer, got 'high'",
        ),
        (
            lambda d: d["gangs"][0].update(priority=True),
            r"gangs\[0\]\.priority: expected an integer, got true",
        ),
        (lambda d: d["gangs"][2].pop("reason"), r"gangs\[2\]\.reason: missing"),
        (
            lambda d: d["gangs"][0].update(state="done"),
            r"gangs\[0\]\.state: expected waiting or running",
        ),
        (
            lambda d: d["gangs"][3].update(expected_start="soon"),
            r"gangs\[3\]\.expected_start: expected a finite number or null",
        ),
        (lambda d: d.update(gangs={}), r"^gangs: expected a list, got \{\}"),
        (lambda d: d.update(time=float("nan")), r"^time: expected a finite number, got NaN"),
        (lambda d: d["gangs"][0].update(since=float("inf")), r"since: expected a finite number"),
        (lambda d: d["gangs"].append(3), r"gangs\[6\]: expected an object, got 3"),
        (
            lambda d: d["queues"][0]["resources"][0].pop("used"),
            r"queues\[0\]\.resources\[0\]\.used: missing",
        ),
        (lambda d: d.update(levels=["zone", 1]), r"levels\[1\]: expected a string"),
        (lambda d: d.pop("omitted"), r"^omitted: missing"),
    ],
)
def test_a_wrong_field_is_named(change: Any, message: str) -> None:
    document = _document()
    change(document)
    with pytest.raises(PublishedError, match=message):
        parse_published(json.dumps(document))


def test_not_json_and_not_an_object() -> None:
    with pytest.raises(PublishedError, match="not JSON"):
        parse_published("{")
    with pytest.raises(PublishedError, match="expected an object, got"):
        parse_published("[1]")


def test_a_field_added_later_in_the_same_format_is_ignored() -> None:
    document = _document(nodes=[], timeline=[], extra={"a": 1})
    document["gangs"][0]["new_field"] = 1
    assert parse_published(json.dumps(document))["seq"] == 42


class _Reads:
    """A client whose GET of the view answers ``answer`` (a ConfigMap, or raises it)."""

    def __init__(self, answer: ConfigMap | Exception) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str | None]] = []

    async def get(
        self, kind: type[ConfigMap], name: str, *, namespace: str | None = None
    ) -> ConfigMap:
        self.asked.append((name, namespace))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _config_map(data: dict[str, str]) -> ConfigMap:
    meta = ObjectMeta(name="crdkit-gang-scheduler-queue", namespace="ops")
    return ConfigMap(metadata=meta, data=data)


async def test_read_view_gets_the_schedulers_config_map() -> None:
    client = _Reads(_config_map({PUBLISHED_KEY: TEXT}))
    snapshot = await read_view(cast("Client", client), "crdkit-gang-scheduler", "ops")
    assert client.asked == [("crdkit-gang-scheduler-queue", "ops")]
    assert len(snapshot["gangs"]) == 6


async def test_a_missing_view_asks_whether_the_scheduler_runs() -> None:
    client = _Reads(NotFound('configmaps "x" not found', code=404))
    with pytest.raises(NoView) as raised:
        await read_view(cast("Client", client), "sched", "ops")
    assert raised.value.status == 1
    assert str(raised.value).startswith(
        "no view published by scheduler sched in namespace ops (no ConfigMap sched-queue): is "
        "`crdkit scheduler --name sched` running (it publishes its queue every few seconds)?"
    )


async def test_forbidden_names_the_role_and_the_gen_rbac_command() -> None:
    client = _Reads(Forbidden('configmaps is forbidden: User "me" cannot get', code=403))
    with pytest.raises(QueueError) as raised:
        await read_view(cast("Client", client), "sched", "ops")
    said = str(raised.value)
    assert "needs get on configmaps in ops" in said
    assert "crdkit gen-rbac crdkit.scheduling.view.queue_cli:QueueReader --namespace ops" in said


async def test_a_config_map_without_the_key_or_with_a_bad_view_is_named() -> None:
    client = _Reads(_config_map({}))
    with pytest.raises(
        PublishedError, match=rf"ConfigMap ops/sched-queue: data.{PUBLISHED_KEY}: missing"
    ):
        await read_view(cast("Client", client), "sched", "ops")
    client = _Reads(_config_map({PUBLISHED_KEY: json.dumps(_document(format=7))}))
    with pytest.raises(WrongFormat, match=r"ConfigMap ops/sched-queue: data.queue.json: format: "):
        await read_view(cast("Client", client), "sched", "ops")


# -- the namespace ------------------------------------------------------------------------


def _kubeconfig(path: Path, namespace: str | None) -> Path:
    context: dict[str, str] = {"cluster": "c", "user": "u"}
    if namespace is not None:
        context["namespace"] = namespace
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": context}],
        "current-context": "x",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def test_the_namespace_is_the_contexts_else_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert default_namespace(_kubeconfig(tmp_path / "a", "ops"), None) == "ops"
    assert default_namespace(_kubeconfig(tmp_path / "b", None), None) == "default"


def test_in_a_pod_the_namespace_is_the_pods(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import crdkit.client.config

    (tmp_path / "namespace").write_text("sched-ns\n")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setattr(crdkit.client.config, "SERVICE_ACCOUNT_DIR", tmp_path)
    assert default_namespace(None, None) == "sched-ns"


# -- the command --------------------------------------------------------------------------


class _Published:
    """What the command's reads answer, in turn (the last one again and again): a view, or
    an exception to raise; and what each read asked for, as (scheduler, namespace)."""

    def __init__(self) -> None:
        self.answers: list[Any] = [parse_published(TEXT)]
        self.asked: list[tuple[str, str]] = []

    async def read(self, client: Client, scheduler: str, namespace: str) -> PublishedSnapshot:
        self.asked.append((scheduler, namespace))
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, BaseException):
            raise answer
        return cast("PublishedSnapshot", answer)


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> _Published:
    fake = _Published()
    monkeypatch.setattr(queue_cli, "read_view", fake.read)
    monkeypatch.setattr(queue_cli.time, "time", lambda: 1733425002.5)
    return fake


def _run(tmp_path: Path, *args: str) -> Any:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", "ops")
    return CliRunner().invoke(main, ["queue", "--kubeconfig", str(kubeconfig), *args])


def test_the_table_at_the_width_of_a_pipe(tmp_path: Path, published: _Published) -> None:
    result = _run(tmp_path)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:3] == ["QUEUE", "PRIORITY", "POS"]
    assert len(lines) == 7
    assert max(len(line) for line in lines) == queue_cli.NOT_A_TTY_WIDTH
    assert published.asked == [("crdkit-gang-scheduler", "ops")]


def test_width_filters_and_scheduler(tmp_path: Path, published: _Published) -> None:
    result = _run(
        tmp_path,
        "--width",
        "90",
        "--queue",
        "prod",
        "--state",
        "waiting",
        "--scheduler",
        "s",
        "-n",
        "q",
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 2
    assert "team-b/eval-nightly" in lines[1]
    assert all(len(line) <= 100 for line in lines)
    assert lines[1].endswith("…")
    assert published.asked == [("s", "q")]


def test_wrap_keeps_the_whole_reason(tmp_path: Path, published: _Published) -> None:
    result = _run(tmp_path, "--width", "100", "--wrap")
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "borrowing stops at the cohort's limit" in flat


def test_json_is_the_stable_object(tmp_path: Path, published: _Published) -> None:
    result = _run(tmp_path, "-o", "json", "--queue", "research")
    assert result.exit_code == 0, result.output
    view = json.loads(result.output)
    assert list(view) == ["scheduler", "time", "gangs", "queues", "omitted"]
    assert view["scheduler"] == "crdkit-gang-scheduler"
    assert {g["queue"] for g in view["gangs"]} == {"research"}
    assert [q["name"] for q in view["queues"]] == ["research"]
    assert view["gangs"][0] == json.loads(TEXT)["gangs"][0]


def test_a_stale_view_gets_a_note_on_stderr(
    tmp_path: Path, published: _Published, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queue_cli.time, "time", lambda: 1733425000.5 + 600)
    result = _run(tmp_path)
    assert result.exit_code == 0
    assert "note: this view is 10m00s old" in result.stderr


@pytest.mark.parametrize(
    ("error", "status", "said"),
    [
        (
            NoView("no view published by scheduler x in namespace ops", 1),
            1,
            "crdkit queue: no view published",
        ),
        (QueueError("not allowed to read", 1), 1, "crdkit queue: not allowed to read"),
        (
            WrongFormat("format: the view is in format 2"),
            2,
            "crdkit queue: format: the view is in format 2",
        ),
    ],
)
def test_errors_are_one_line_with_their_status(
    tmp_path: Path, published: _Published, error: Exception, status: int, said: str
) -> None:
    published.answers = [error]
    result = _run(tmp_path)
    assert result.exit_code == status
    assert result.stderr.strip().startswith(said)
    assert "Traceback" not in result.output


def test_a_bad_kubeconfig_is_status_two(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["queue", "--kubeconfig", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_watch_to_a_pipe_prints_each_new_view_once(
    tmp_path: Path, published: _Published, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = parse_published(TEXT)
    second = parse_published(json.dumps(_document(seq=43, gangs=_document()["gangs"][:1])))
    published.answers = [first, first, second, KeyboardInterrupt()]
    monkeypatch.setattr(queue_cli, "WATCH_INTERVAL", 0)
    result = _run(tmp_path, "-w", "-o", "json")
    assert result.exit_code == 0, result.output
    views = [json.loads(line) for line in result.output.splitlines()]
    assert [len(v["gangs"]) for v in views] == [6, 1]


# -- the reader's role --------------------------------------------------------------------


def test_gen_rbac_gives_the_reader_exactly_read_access_to_config_maps() -> None:
    result = CliRunner().invoke(
        main,
        [
            "gen-rbac",
            "crdkit.scheduling.view.queue_cli:QueueReader",
            "--namespace",
            "ops",
            "--name",
            "queue-reader",
            "--service-account",
            "me",
            "--service-account-namespace",
            "ops",
        ],
    )
    assert result.exit_code == 0, result.output
    documents = list(yaml.safe_load_all(result.output))
    assert [(d["kind"], d["metadata"]["name"]) for d in documents] == [
        ("Role", "queue-reader"),
        ("RoleBinding", "queue-reader"),
    ]
    assert documents[0]["metadata"]["namespace"] == "ops"
    assert documents[0]["rules"] == [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}
    ]


def test_gen_rbac_without_a_namespace_is_a_cluster_role_of_the_same_rule() -> None:
    result = CliRunner().invoke(main, ["gen-rbac", "crdkit.scheduling.view.queue_cli:QueueReader"])
    assert result.exit_code == 0, result.output
    documents = list(yaml.safe_load_all(result.output))
    assert [d["kind"] for d in documents] == ["ClusterRole"]
    assert documents[0]["rules"] == [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}
    ]


def test_watch_on_a_terminal_redraws_and_waits_out_a_missing_view(
    tmp_path: Path, published: _Published, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = NoView("no view published by scheduler crdkit-gang-scheduler in namespace ops", 1)
    view = parse_published(TEXT)
    published.answers = [missing, view, view, KeyboardInterrupt()]
    monkeypatch.setattr(queue_cli, "WATCH_INTERVAL", 0)
    monkeypatch.setattr(queue_cli, "_stdout_is_a_terminal", lambda: True)
    monkeypatch.setenv("COLUMNS", "140")
    result = _run(tmp_path, "-w")
    assert result.exit_code == 0, result.output
    screens = result.output.split("\x1b[H\x1b[2J")[1:]
    assert len(screens) == 3  # each read redrawn, the same view too: its times move
    assert "no view published" in screens[0]
    assert screens[1] == screens[2]
    lines = screens[1].splitlines()
    assert lines[0].startswith("crdkit queue: scheduler crdkit-gang-scheduler in ops, every")
    assert lines[2].split()[:2] == ["QUEUE", "PRIORITY"]
    assert all(len(line) <= 140 for line in lines)
    assert max(len(line) for line in lines) == 140  # the terminal's width, not a pipe's


def test_a_watch_ends_when_the_view_cannot_be_read(
    tmp_path: Path, published: _Published, monkeypatch: pytest.MonkeyPatch
) -> None:
    published.answers = [parse_published(TEXT), WrongFormat("format: the view is in format 2")]
    monkeypatch.setattr(queue_cli, "WATCH_INTERVAL", 0)
    result = _run(tmp_path, "-w")
    assert result.exit_code == 2
    assert "format 2" in result.stderr


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_one_field_replaced_is_read_or_refused_by_name(data: st.DataObject) -> None:
    document = _document()
    gang = data.draw(st.integers(0, len(document["gangs"]) - 1))
    target = data.draw(st.sampled_from([document, document["gangs"][gang]]))
    key = data.draw(st.sampled_from(sorted(target)))
    target[key] = data.draw(_JSON)
    refused: str | None = None
    try:
        snapshot = parse_published(json.dumps(document))
    except PublishedError as error:
        refused = str(error)
    if refused is not None:
        named = refused.split(":")[0]
        container = key in ("gangs", "queues", "starts", "levels")  # names its item
        assert named in (key, f"gangs[{gang}].{key}", "format") or container, refused
        return
    # What is read is shown: the table of any readable view is drawn.
    assert queue_table(snapshot, now=snapshot["time"], width=120, wide=True)


def test_watch_to_a_pipe_says_once_that_the_view_is_missing(
    tmp_path: Path, published: _Published, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = NoView("no view published by scheduler crdkit-gang-scheduler in namespace ops", 1)
    published.answers = [missing, missing, parse_published(TEXT), KeyboardInterrupt()]
    monkeypatch.setattr(queue_cli, "WATCH_INTERVAL", 0)
    result = _run(tmp_path, "-w", "-o", "json")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("no view published") == 1
    assert len(result.stdout.splitlines()) == 1
    assert json.loads(result.stdout)["scheduler"] == "crdkit-gang-scheduler"
