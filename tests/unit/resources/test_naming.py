"""Kubernetes spelling of JSON names: acronyms in capitals, everything else as to_camel."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from crdkit.resources import ACRONYMS, ApiModel, camel_case, camel_case_with


@pytest.mark.parametrize(
    ("name", "wire"),
    [
        ("cluster_ip", "clusterIP"),
        ("pod_cidr", "podCIDR"),
        ("host_ipc", "hostIPC"),
        ("host_pid", "hostPID"),
        ("external_ips", "externalIPs"),
        ("api_version", "apiVersion"),
        ("target_cpu_utilization_percentage", "targetCPUUtilizationPercentage"),
        ("provider_id", "providerID"),
        ("owner_uid", "ownerUID"),
        ("callback_url", "callbackURL"),
        ("ca_bundle_urls", "caBundleURLs"),
        ("tls_secret_name", "tlsSecretName"),
        ("use_tls", "useTLS"),
        ("dns_policy", "dnsPolicy"),
        ("http_get", "httpGet"),
        ("readiness_http_path", "readinessHTTPPath"),
        ("uid", "uid"),
        ("ip", "ip"),
        ("max_unavailable", "maxUnavailable"),
        ("version_v1alpha1", "versionV1Alpha1"),
        ("in_", "in_"),
        ("pods", "pods"),
        ("status_ids", "statusIDs"),
    ],
)
def test_acronyms_are_capitals_inside_a_name(name: str, wire: str) -> None:
    assert camel_case(name) == wire


_WORD = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=1, max_size=6)


@given(st.lists(_WORD, min_size=1, max_size=4))
def test_names_without_acronyms_keep_the_to_camel_spelling(words: list[str]) -> None:
    plain = [w for w in words if w.upper() not in ACRONYMS and w[:-1].upper() not in ACRONYMS]
    name = "_".join(plain) or "field"
    assert camel_case(name) == to_camel(name)


@given(st.lists(_WORD, min_size=1, max_size=3), st.sampled_from(sorted(ACRONYMS)))
def test_an_acronym_after_the_first_word_is_written_as_listed(
    words: list[str], acronym: str
) -> None:
    name = "_".join([*words, acronym.lower()])
    assert camel_case(name).endswith(acronym)


class Service(ApiModel):
    cluster_ip: str | None = None
    external_ips: list[str] = []  # noqa: RUF012 - pydantic copies mutable defaults
    legacy_ip: str | None = Field(default=None, alias="legacyIp")


def test_api_models_write_and_read_the_kubernetes_names() -> None:
    service = Service.model_validate(
        {"clusterIP": "10.0.0.1", "externalIPs": ["1.2.3.4"], "legacyIp": "x"}
    )
    assert service.cluster_ip == "10.0.0.1"
    assert service.external_ips == ["1.2.3.4"]
    assert service.model_dump(by_alias=True, exclude_none=True) == {
        "clusterIP": "10.0.0.1",
        "externalIPs": ["1.2.3.4"],
        "legacyIp": "x",  # an explicit alias wins over the generated one
    }


def test_the_old_to_camel_spelling_is_not_a_field_any_more() -> None:
    # The apiserver prunes an unknown field; pydantic ignores it the same way.
    assert Service.model_validate({"clusterIp": "10.0.0.1"}).cluster_ip is None


class Accelerators(ApiModel):
    model_config = ConfigDict(alias_generator=camel_case_with("GPU", "TPU"))

    max_gpus: int = 0
    tpu_topology: str = ""
    node_ip: str = ""


def test_a_model_adds_its_own_acronyms() -> None:
    dumped = Accelerators().model_dump(by_alias=True)
    assert dumped == {"maxGPUs": 0, "tpuTopology": "", "nodeIP": ""}
