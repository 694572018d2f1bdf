"""gen-manifests' webhook objects pass the apiserver's strict server-side dry-run: the Service,
the configurations, the Deployment with the Secret mounted, and a CRD converting through the
Service. (cert-manager's Issuer and Certificate need its CRDs, which the local control plane
does not have: they are checked offline in tests/unit/deploy/test_deploy_webhooks.py.)"""

from __future__ import annotations

import pytest
from examples.conversion.boxes import BOX_CONVERSION, BoxV1
from examples.hello.webhooks import HelloWebhookReconciler
from test_gen_manifests_live import apply

from crdkit import Context, Reconciler
from crdkit.client import Client
from crdkit.deploy.manifests import ManifestOptions, operator_manifests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


class BoxReconciler(Reconciler[BoxV1]):
    conversions = (BOX_CONVERSION,)

    async def reconcile(self, ctx: Context, obj: BoxV1) -> None:
        return None


async def test_webhook_manifests_pass_a_strict_dry_run(
    crdkit_client: Client, namespace: str
) -> None:
    options = ManifestOptions(name="hooks", image="img", references=("x:y",), namespace=namespace)
    files = operator_manifests([HelloWebhookReconciler, BoxReconciler], options)
    documents = [
        *files["webhook/service.yaml"],
        *files["webhook/manifests.yaml"],
        files["manager/manager.yaml"][1],
        *files["crd/bases/boxes.example.com_boxes.yaml"],
    ]
    assert [d["kind"] for d in documents] == [
        "Service",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "Deployment",
        "CustomResourceDefinition",
    ]
    for document in documents:
        await apply(crdkit_client, document, dry_run=True)
