"""Modules that moved rooms keep their old import path for one release: the old name is the
new module (one object, so patches and isinstance agree) and importing it warns with the new
path."""

from __future__ import annotations

import importlib
import sys

import pytest

MOVED = {
    "crdkit.runtime.admission": "crdkit.webhook.admission",
    "crdkit.runtime.conversion": "crdkit.webhook.conversion",
    "crdkit.runtime.jsonpatch": "crdkit.webhook.jsonpatch",
    "crdkit.runtime.webhook_server": "crdkit.webhook.server",
    "crdkit.runtime.webhook_runner": "crdkit.webhook.runner",
    "crdkit.runtime.webhook_config": "crdkit.webhook.configuration",
    "crdkit.runtime.webhook_certs": "crdkit.webhook.certs",
    "crdkit.runtime.rbac": "crdkit.deploy.rbac",
    "crdkit.runtime.rbac_check": "crdkit.deploy.role_check",
    "crdkit.runtime.rbac_cli": "crdkit.deploy.cli.rbac",
    "crdkit.runtime.webhook_cli": "crdkit.deploy.cli.webhooks",
    "crdkit.runtime.cli_output": "crdkit.deploy.cli.output",
}


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_the_old_path_is_the_new_module_and_warns(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        moved = importlib.import_module(old)
    assert moved is importlib.import_module(new)


def test_the_old_deploy_cli_module_still_gives_gen_manifests() -> None:
    from crdkit.deploy.cli import gen_manifests
    from crdkit.deploy.cli.manifests import gen_manifests as home

    assert gen_manifests is home
