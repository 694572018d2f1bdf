"""Volcano's own Job manifests, applied under Volcano's Job CRD and under the example's.

Each manifest of tests/data/volcano-jobs (and the example's two) is created with server-side
dry-run twice on each CRD: with ``fieldValidation=Strict`` (what ``kubectl apply
--validate=strict`` sends: an unknown field is an error) and with the apiserver's default
validation (unknown fields pruned). The two CRDs share a name, so each gets a control plane of
its own, one after the other.

What must hold: the same verdict for every manifest, except where Volcano's CRD refuses a
field inside a task's pod template, which the example keeps whole and unchecked by design
(its pods are checked when they are created); nothing Volcano's CRD keeps is pruned by the
example's; and both add the same defaults outside pod templates.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from examples.gang_scheduler.cluster_setup import JOB_CRD_PATH

from crdkit.client import ApiError, Client
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).parents[3]
VOLCANO_CRD = ROOT / "tests" / "data" / "crds" / "volcano_batch.volcano.sh_jobs.yaml"
MANIFESTS = {
    **{
        path.name: path
        for path in sorted((ROOT / "tests" / "data" / "volcano-jobs").glob("*.yaml"))
    },
    **{
        f"example-{path.name}": path
        for path in sorted((ROOT / "examples" / "gang_scheduler" / "manifests").glob("*.yaml"))
    },
}
NAMESPACE = "conformance"
JOBS_PATH = f"/apis/batch.volcano.sh/v1alpha1/namespaces/{NAMESPACE}/jobs"
STRICT = {"dryRun": "All", "fieldValidation": "Strict"}
DEFAULT = {"dryRun": "All"}
_FIELD = re.compile(r"\b(?:spec|metadata|status)(?:\.[A-Za-z0-9_-]+|\[\d+\])+")
_TEMPLATE = re.compile(r"^spec\.tasks\[\d+\]\.template(\.|\[|$)")


@dataclass(frozen=True)
class Outcome:
    """One dry-run create: accepted (with the object the apiserver would store) or refused."""

    returned: dict[str, Any] | None
    error: str = ""

    @property
    def verdict(self) -> str:
        return "accepted" if self.returned is not None else "refused"

    @property
    def fields(self) -> list[str]:
        """The field paths the refusal names."""
        return _FIELD.findall(self.error)


@dataclass(frozen=True)
class Outcomes:
    strict: dict[str, Outcome]
    default: dict[str, Outcome]


async def _apply_all(crd: Path) -> Outcomes:
    strict: dict[str, Outcome] = {}
    default: dict[str, Outcome] = {}
    async with ControlPlane() as plane:
        await plane.install_crds([crd])
        await plane.create_namespace(NAMESPACE)
        async with Client.from_control_plane(plane) as client:
            for name, path in MANIFESTS.items():
                body = yaml.safe_load(path.read_text())
                body.setdefault("metadata", {})["namespace"] = NAMESPACE
                for params, into in ((STRICT, strict), (DEFAULT, default)):
                    try:
                        answer = await client.transport.request(
                            "POST",
                            JOBS_PATH,
                            params=params,
                            body=json.dumps(body).encode(),
                            content_type="application/json",
                        )
                    except ApiError as error:
                        into[name] = Outcome(None, " ".join(str(error).split()))
                    else:
                        into[name] = Outcome(json.loads(answer))
    return Outcomes(strict, default)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def outcomes() -> AsyncIterator[dict[str, Outcomes]]:
    """Every manifest under each CRD, Volcano's first."""
    yield {"volcano": await _apply_all(VOLCANO_CRD), "crdkit": await _apply_all(JOB_CRD_PATH)}


def _template_only(outcome: Outcome) -> bool:
    """Whether a refusal names fields, all of them inside a task's pod template."""
    return bool(outcome.fields) and all(_TEMPLATE.match(field) for field in outcome.fields)


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list) and node:
        for index, value in enumerate(node):
            yield from _leaves(value, (*path, index))
    else:
        yield path, node


def _in_template(path: tuple[Any, ...]) -> bool:
    return len(path) >= 3 and path[0] == "tasks" and path[2] == "template"


def _spec_leaves(outcome: Outcome) -> dict[tuple[Any, ...], Any]:
    assert outcome.returned is not None
    return dict(_leaves(outcome.returned.get("spec") or {}))


async def test_print_the_verdicts_side_by_side(
    outcomes: dict[str, Outcomes], capsys: pytest.CaptureFixture[str]
) -> None:
    volcano, crdkit = outcomes["volcano"].strict, outcomes["crdkit"].strict
    width = max(len(name) for name in MANIFESTS)
    lines = [f"{'manifest':<{width}}  {'Volcano CRD':<11}  {'crdkit CRD':<11}"]
    for name in MANIFESTS:
        mark = "" if volcano[name].verdict == crdkit[name].verdict else "  differs"
        lines.append(
            f"{name:<{width}}  {volcano[name].verdict:<11}  {crdkit[name].verdict:<11}{mark}"
        )
        for side, outcome in (("Volcano", volcano[name]), ("crdkit", crdkit[name])):
            if outcome.error:
                lines.append(f"    {side}: {outcome.error[:200]}")
    accepted = {
        side: sum(o.returned is not None for o in outcomes[side].strict.values())
        for side in outcomes
    }
    differing = sum(volcano[name].verdict != crdkit[name].verdict for name in MANIFESTS)
    lines.append(
        f"strict validation, {len(MANIFESTS)} manifests: accepted by Volcano's CRD "
        f"{accepted['volcano']}, by crdkit's {accepted['crdkit']}; {differing} verdicts differ"
    )
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert len(volcano) == len(crdkit) == len(MANIFESTS)


@pytest.mark.parametrize("name", list(MANIFESTS))
async def test_strict_verdicts_agree_outside_pod_templates(
    outcomes: dict[str, Outcomes], name: str
) -> None:
    volcano, crdkit = outcomes["volcano"].strict[name], outcomes["crdkit"].strict[name]
    if volcano.verdict == crdkit.verdict:
        return
    # The one difference by design: the example keeps pod templates whole and unchecked.
    assert volcano.verdict == "refused", crdkit.error
    assert _template_only(volcano), volcano.error


@pytest.mark.parametrize("name", list(MANIFESTS))
async def test_nothing_volcanos_crd_keeps_is_pruned(
    outcomes: dict[str, Outcomes], name: str
) -> None:
    volcano, crdkit = outcomes["volcano"].default[name], outcomes["crdkit"].default[name]
    if volcano.returned is None:
        return
    assert crdkit.returned is not None, crdkit.error
    sent = dict(_leaves(yaml.safe_load(MANIFESTS[name].read_text()).get("spec") or {}))
    theirs, ours = _spec_leaves(volcano), _spec_leaves(crdkit)
    kept_by_volcano = {p: v for p, v in sent.items() if p in theirs and theirs[p] == v}
    lost = {p: v for p, v in kept_by_volcano.items() if ours.get(p, object()) != v}
    assert not lost, lost


@pytest.mark.parametrize("name", list(MANIFESTS))
async def test_both_crds_default_the_same_outside_pod_templates(
    outcomes: dict[str, Outcomes], name: str
) -> None:
    volcano, crdkit = outcomes["volcano"].default[name], outcomes["crdkit"].default[name]
    if volcano.returned is None or crdkit.returned is None:
        assert volcano.verdict == crdkit.verdict or _template_only(volcano), (volcano, crdkit)
        return
    sent = dict(_leaves(yaml.safe_load(MANIFESTS[name].read_text()).get("spec") or {}))

    def added(outcome: Outcome) -> dict[tuple[Any, ...], Any]:
        return {
            p: v for p, v in _spec_leaves(outcome).items() if p not in sent and not _in_template(p)
        }

    assert added(crdkit) == added(volcano)
