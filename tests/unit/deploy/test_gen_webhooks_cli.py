"""``crdkit gen-webhooks`` end to end, without a cluster (test_webhooks_live has the apiserver
accept its output)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from crdkit.cli import main

HELLO = "examples.hello.webhooks:HelloWebhookReconciler"


def gen_webhooks(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["gen-webhooks", *args])
    return result.exit_code, result.output


def test_service_configurations_with_cert_manager(tmp_path: Path) -> None:
    out = tmp_path / "webhooks.yaml"
    code, output = gen_webhooks(
        HELLO,
        "--name",
        "hello",
        "--service-name",
        "hello-webhook",
        "--service-namespace",
        "hello-system",
        "--cert-manager-certificate",
        "hello-system/hello-serving-cert",
        "-o",
        str(out),
    )
    assert code == 0, output
    mutating, validating = yaml.safe_load_all(out.read_text())
    assert mutating["kind"] == "MutatingWebhookConfiguration"
    assert validating["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": "hello-system/hello-serving-cert"
    }
    webhook: dict[str, Any] = validating["webhooks"][0]
    assert webhook["clientConfig"] == {
        "service": {
            "name": "hello-webhook",
            "namespace": "hello-system",
            "path": "/validate-hello-example-com-v1-hello",
            "port": 443,
        }
    }
    assert webhook["rules"][0]["resources"] == ["hellos"]
    assert webhook["failurePolicy"] == "Fail"
    assert webhook["sideEffects"] == "None"


def test_url_and_ca_bundle(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\n")
    code, output = gen_webhooks(
        HELLO, "--name", "dev", "--url", "https://127.0.0.1:9443", "--ca-bundle", str(ca)
    )
    assert code == 0, output
    for document in yaml.safe_load_all(output):
        config = document["webhooks"][0]["clientConfig"]
        assert config["url"].startswith("https://127.0.0.1:9443/")
        assert base64.b64decode(config["caBundle"]) == ca.read_bytes()


def test_bad_options_exit_2_with_a_clear_line() -> None:
    code, output = gen_webhooks(
        "examples.hello.operator:HelloReconciler", "--name", "x", "--url", "https://h"
    )
    assert code == 2
    assert "declare no webhooks" in output
    code, output = gen_webhooks(HELLO, "--name", "x", "--service-name", "only")
    assert code == 2
    assert "--service-name and --service-namespace go together" in output
    code, output = gen_webhooks(HELLO, "--name", "x")
    assert code == 2
    assert "exactly one of service and url" in output
    code, output = gen_webhooks(
        HELLO, "--name", "x", "--url", "https://h", "--cert-manager-certificate", "c"
    )
    assert code == 2
    assert "NAMESPACE/NAME" in output
