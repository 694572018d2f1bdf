"""Every CRD generated from the corpus is accepted by the real apiserver and becomes Established."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from crd_corpus import CORPUS

from crdkit.crd import build_crds, render_all, schema_violations
from crdkit.crd.cli import gen_crd
from crdkit.testing import ControlPlane
from crdkit.testing.envtest.crds import crd_is_established

pytestmark = pytest.mark.integration

HERE = Path(__file__).parent


def test_corpus_has_at_least_30_models() -> None:
    assert len(CORPUS) >= 30


async def test_every_corpus_crd_is_established(control_plane: ControlPlane) -> None:
    crds = build_crds(CORPUS)
    for crd in crds:
        for version in crd["spec"]["versions"]:
            assert schema_violations(version["schema"]["openAPIV3Schema"]) == []
    stored = await control_plane.install_crds(crds)
    assert [crd["metadata"]["name"] for crd in stored] == [crd["metadata"]["name"] for crd in crds]
    for crd in stored:
        assert crd_is_established(crd), crd["metadata"]["name"]


@pytest.fixture
def generated_dir(tmp_path: Path) -> tuple[Path, str]:
    """The corpus written by ``crdkit gen-crd crd_corpus -o DIR``, and the files' joint text."""
    result = CliRunner().invoke(
        gen_crd, ["crd_corpus", "-o", str(tmp_path)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    files = sorted(tmp_path.glob("*.yaml"))
    assert len(files) == len(build_crds(CORPUS))
    return tmp_path, "".join(f.read_text() for f in files)


async def test_gen_crd_output_installs_as_is(
    control_plane: ControlPlane, generated_dir: tuple[Path, str]
) -> None:
    directory, text = generated_dir
    stored = await control_plane.install_crds([directory])
    assert all(crd_is_established(crd) for crd in stored)
    assert text == render_all(build_crds(CORPUS))
