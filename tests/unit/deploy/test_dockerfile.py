from __future__ import annotations

from crdkit.deploy import ManifestOptions, dockerfile


def test_the_runtime_stage_has_no_compiler_and_runs_unprivileged() -> None:
    text = dockerfile(
        ManifestOptions(name="hello", image="example.com/hello:1", references=("pkg.op:Hello",))
    )
    builder, runtime = text.split("\nFROM ")[1:]
    assert builder.startswith("python:${PYTHON_VERSION}-slim-bookworm AS builder")
    assert "rustup" in builder
    assert "pip wheel" in builder
    for tool in ("apt-get", "rustup", "build-essential", "COPY . ."):
        assert tool not in runtime
    assert "--no-index --find-links /wheels" in runtime
    assert "\nUSER 65532:65532\n" in runtime
    assert runtime.rstrip().endswith('ENTRYPOINT ["crdkit", "run"]\nCMD ["pkg.op:Hello"]')
