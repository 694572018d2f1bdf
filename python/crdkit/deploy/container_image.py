"""The operator image: a multi-stage Dockerfile for an operator packaged as a Python project.

The builder stage turns the project (the folder with its ``pyproject.toml``, which depends on
crdkit) and every dependency into wheels; where no crdkit wheel fits the platform, pip builds
crdkit's Rust extension from the sdist there, which is why that stage has a compiler and Rust.
The runtime stage installs only those wheels, with no compiler, no pip cache and no build
inputs, and runs as the unprivileged uid the Deployment's security context names.
"""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING

from crdkit.deploy.manifests import NONROOT_UID

if TYPE_CHECKING:
    from crdkit.deploy.manifests import ManifestOptions

__all__ = ["dockerfile"]

_TEMPLATE = """\
# syntax=docker/dockerfile:1
# The {name} operator's image, written by `crdkit gen-manifests`; edit freely: regenerating keeps
# this file unless --force is given. Build from the project's root:
#   docker build -t {image} .
ARG PYTHON_VERSION={python}

FROM python:${{PYTHON_VERSION}}-slim-bookworm AS builder
# A C compiler and Rust, used only when pip must build crdkit's extension from its sdist.
RUN apt-get update \\
 && apt-get install -y --no-install-recommends build-essential ca-certificates curl \\
 && rm -rf /var/lib/apt/lists/* \\
 && curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
ENV PATH=/root/.cargo/bin:$PATH PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:${{PYTHON_VERSION}}-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \\
    pip install --no-cache-dir --no-index --find-links /wheels /wheels/*.whl
USER {uid}:{uid}
# The Deployment in config/manager gives the whole command line; these are for `docker run`.
ENTRYPOINT ["crdkit", "run"]
CMD [{references}]
"""


def dockerfile(options: ManifestOptions, *, python: str = "3.11") -> str:
    """The Dockerfile text for the operator ``options`` describe."""
    references = ", ".join(json.dumps(ref) for ref in options.references)
    return _TEMPLATE.format(
        name=options.name,
        image=shlex.quote(options.image),
        python=python,
        uid=NONROOT_UID,
        references=references,
    )
