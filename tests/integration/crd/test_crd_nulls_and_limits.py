"""gen-crd against the real apiserver: nulls where pydantic keeps them, numbers a CRD can hold.

The apiserver decides: each generated CRD is installed, documents are sent raw, and the
apiserver's verdict must be pydantic's. The last tests pin the apiserver behaviour behind the
errors gen-crd raises (a CRD with ``inf`` is refused; a bound it cannot hold breaks the field),
so a future apiserver that lifts a limit shows up here.
"""

# ruff: noqa: RUF012 - pydantic copies mutable defaults
from __future__ import annotations

import copy
import json
from typing import Annotated, Any

import pytest
import yaml
from crd_api import BlockingApi, raw_object
from pydantic import ValidationError

from crdkit.client import Client
from crdkit.crd import Maximum, Minimum, build_crds
from crdkit.crd.limits import BOUND_LIMIT
from crdkit.resources import ApiModel, CustomResource, ObjectMeta, resource_info
from crdkit.testing import ControlPlane, ControlPlaneError

pytestmark = pytest.mark.integration

GROUP = "limits.crdkit.dev"


class NullsSpec(ApiModel):
    count: int | None  # pydantic requires the key and accepts null
    limit: Annotated[int, Minimum(0)] | None = 5  # null reads as None, absent as 5
    sizes: list[int | None] = []
    note: str | None = None  # absent reads as None: the CRD need not keep a null


class Nulls(CustomResource, group=GROUP, version="v1"):
    spec: NullsSpec


class EdgeSpec(ApiModel):
    whole: Annotated[int, Minimum(-BOUND_LIMIT), Maximum(BOUND_LIMIT)] = 0
    real: Annotated[float, Maximum(float(BOUND_LIMIT))] = 0.0


class Edge(CustomResource, group=GROUP, version="v1"):
    spec: EdgeSpec


class PlainSpec(ApiModel):
    whole: int | None = None
    real: float | None = None
    counted: int = 0  # has a default, which the apiserver checks against the bounds


class Plain(CustomResource, group=GROUP, version="v1"):
    spec: PlainSpec


def _verdicts(
    api: BlockingApi, resource: type[CustomResource], namespace: str, spec: dict[str, Any]
) -> tuple[CustomResource | None, int, dict[str, Any]]:
    """pydantic's model (or None when it refuses) and the apiserver's answer to one document."""
    info = resource_info(resource)
    raw = raw_object(resource, {"generateName": "doc-", "namespace": namespace}, spec=spec)
    try:
        model: CustomResource | None = resource.model_validate(raw)
    except ValidationError:
        model = None
    status, stored = api.request("POST", info.path(namespace=namespace), raw)
    return model, status, stored


NULL_DOCUMENTS: list[dict[str, Any]] = [
    {"count": None},
    {"count": 3},
    {},
    {"count": 1, "limit": None},
    {"count": 1},
    {"count": 1, "limit": -1},
    {"count": 1, "sizes": [1, None]},
    {"count": None, "sizes": [None], "limit": None},
    {"count": 1, "note": None},
]


async def test_pydantic_and_apiserver_agree_where_null_is_not_absent(
    control_plane: ControlPlane, namespace: str
) -> None:
    await control_plane.install_crds(build_crds([Nulls]))
    api = BlockingApi(control_plane)
    for spec in NULL_DOCUMENTS:
        model, status, stored = _verdicts(api, Nulls, namespace, spec)
        assert (status == 201) == (model is not None), (
            f"{json.dumps(spec)}: pydantic {'accepts' if model else 'refuses'}, the apiserver "
            f"answered {status} {stored.get('message', '')}"
        )
        if model is not None:
            # What the apiserver stored reads back as what pydantic made of the document.
            assert Nulls.model_validate(stored).spec == model.spec, json.dumps(spec)


async def test_models_with_meaningful_nulls_are_written_and_read_back(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    await control_plane.install_crds(build_crds([Nulls]))
    spec = NullsSpec(count=None, limit=None, sizes=[None, 2])
    created = await crdkit_client.create(
        Nulls(metadata=ObjectMeta(name="created", namespace=namespace), spec=spec)
    )
    assert created.spec == spec
    applied = await crdkit_client.apply(
        Nulls(metadata=ObjectMeta(name="applied", namespace=namespace), spec=spec),
        field_manager="crdkit-test",
    )
    assert applied.spec == spec
    # Every stored object decodes: a list fails as a whole on one the model refuses.
    listed = await crdkit_client.list(Nulls, namespace=namespace)
    assert sorted((o.metadata.name, o.spec == spec) for o in listed.items) == [
        ("applied", True),
        ("created", True),
    ]


EDGE_DOCUMENTS: list[dict[str, Any]] = [
    {"whole": BOUND_LIMIT},
    {"whole": BOUND_LIMIT + 1},
    {"whole": -BOUND_LIMIT},
    {"whole": -BOUND_LIMIT - 1},
    {"whole": 5},
    {"real": 5},
    {"real": 5.5},
    {"real": float(BOUND_LIMIT)},
    {"real": 2.0 * BOUND_LIMIT},
]


async def test_bounds_at_the_limit_gen_crd_allows_agree(
    control_plane: ControlPlane, namespace: str
) -> None:
    await control_plane.install_crds(build_crds([Edge]))
    api = BlockingApi(control_plane)
    for spec in EDGE_DOCUMENTS:
        model, status, stored = _verdicts(api, Edge, namespace, spec)
        assert (status == 201) == (model is not None), (
            f"{spec}: pydantic {'accepts' if model else 'refuses'}, the apiserver answered "
            f"{status} {stored.get('message', '')}"
        )


def _plain_crd_with(field: str, keyword: str, value: Any) -> dict[str, Any]:
    """Plain's CRD with one keyword added by hand, as gen-crd used to write it."""
    crd = copy.deepcopy(build_crds([Plain])[0])
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"][field][keyword] = value
    return crd


@pytest.mark.parametrize(
    ("field", "bound"),
    [("whole", 2**63 - 1), ("whole", -(2**63)), ("whole", 2**64), ("real", 1e300)],
)
async def test_a_bound_the_apiserver_cannot_hold_breaks_the_field(
    control_plane: ControlPlane, namespace: str, field: str, bound: int | float
) -> None:
    keyword = "minimum" if bound < 0 else "maximum"
    await control_plane.install_crds([_plain_crd_with(field, keyword, bound)])
    try:
        # 5 is within the bound, so pydantic accepts it; the apiserver refuses it.
        _, status, stored = _verdicts(BlockingApi(control_plane), Plain, namespace, {field: 5})
        assert status == 422, stored
    finally:
        await control_plane.install_crds(build_crds([Plain]))  # as it was, for the next case


async def test_a_bound_the_apiserver_cannot_hold_makes_a_default_refuse_the_crd(
    control_plane: ControlPlane,
) -> None:
    with pytest.raises(ControlPlaneError, match="Maximum boundary value must be of type integer"):
        await control_plane.install_crds([_plain_crd_with("counted", "maximum", 2**63 - 1)])


@pytest.mark.parametrize(
    ("field", "keyword", "value"),
    [
        ("real", "default", float("inf")),
        ("real", "default", float("nan")),
        ("real", "maximum", float("inf")),
    ],
)
def test_the_apiserver_refuses_a_crd_holding_a_non_finite_number(
    control_plane: ControlPlane, field: str, keyword: str, value: float
) -> None:
    crd = _plain_crd_with(field, keyword, value)
    api = BlockingApi(control_plane)
    status, body = api.request(
        "PATCH",
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
        "?fieldManager=crdkit-test&force=true",
        yaml.safe_dump(crd).encode(),  # YAML, as `crdkit gen-crd` writes and kubectl sends
        content_type="application/apply-patch+yaml",
    )
    assert status == 400, body
    assert "unsupported value" in body["message"]
