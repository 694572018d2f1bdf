"""``crdkit gen-webhooks``: write the webhook configurations of the reconcilers' ``webhooks``.

::

    crdkit gen-webhooks examples.hello.webhooks:HelloWebhookReconciler --name hello \\
        --service-name hello-webhook --service-namespace hello-system \\
        --cert-manager-certificate hello-system/hello-serving-cert

The apiserver reaches the manager through ``--service-name``/``--service-namespace`` (in a
cluster) or ``--url`` (a manager outside it). ``--ca-bundle FILE`` writes that CA into
``caBundle``; with cert-manager, ``--cert-manager-certificate NAMESPACE/NAME`` adds the
annotation its cainjector fills ``caBundle`` from. Exit status 2 for a bad reference or option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from crdkit.deploy.cli._options import output_option
from crdkit.deploy.cli.output import write_documents
from crdkit.runtime.loader import load_reconciler_classes
from crdkit.webhook.configuration import ServiceRef, webhook_configurations

__all__ = ["gen_webhooks"]


@click.command("gen-webhooks")
@click.argument("reconcilers", nargs=-1, required=True, metavar="MODULE:CLASS...")
@click.option("--name", required=True, help="Name of both configurations.")
@click.option("--service-name", default=None, help="The Service in front of the webhook port.")
@click.option("--service-namespace", default=None, help="Namespace of that Service.")
@click.option("--service-port", type=click.IntRange(1, 65535), default=443, show_default=True)
@click.option(
    "--url",
    default=None,
    help="Instead of a Service: https://HOST:PORT where the apiserver calls the manager.",
)
@click.option(
    "--ca-bundle",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="PEM file of the CA that signed the serving certificate (e.g. its ca.crt).",
)
@click.option(
    "--cert-manager-certificate",
    default=None,
    metavar="NAMESPACE/NAME",
    help="The cert-manager Certificate of the serving certificate: cainjector then fills "
    "caBundle (the cert-manager.io/inject-ca-from annotation).",
)
@output_option
def gen_webhooks(
    reconcilers: tuple[str, ...],
    name: str,
    service_name: str | None,
    service_namespace: str | None,
    service_port: int,
    url: str | None,
    ca_bundle: Path | None,
    cert_manager_certificate: str | None,
    output: Path | None,
) -> None:
    """Write the Validating/MutatingWebhookConfiguration of the reconcilers' webhooks."""
    classes = load_reconciler_classes(reconcilers)
    webhooks = [webhook for cls in classes for webhook in cls.webhooks]
    if not webhooks:
        raise click.UsageError(
            "the reconcilers declare no webhooks (a `webhooks = (Webhook(...),)` class attribute)"
        )
    if (service_name is None) != (service_namespace is None):
        raise click.UsageError("--service-name and --service-namespace go together")
    if cert_manager_certificate is not None and cert_manager_certificate.count("/") != 1:
        raise click.UsageError(
            f"--cert-manager-certificate must be NAMESPACE/NAME, got {cert_manager_certificate!r}"
        )
    options: dict[str, Any] = {
        "name": name,
        "url": url,
        "ca_bundle": ca_bundle.read_bytes() if ca_bundle is not None else None,
        "annotations": {"cert-manager.io/inject-ca-from": cert_manager_certificate}
        if cert_manager_certificate
        else None,
    }
    try:
        if service_name is not None and service_namespace is not None:
            options["service"] = ServiceRef(service_name, service_namespace, service_port)
        documents = webhook_configurations(webhooks, **options)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    write_documents("gen-webhooks", documents, output)
