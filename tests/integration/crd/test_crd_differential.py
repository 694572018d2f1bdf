"""pydantic and the real apiserver agree on every corpus model.

For each model, hypothesis draws documents from the generated schema, some of them broken
in one schema-stated way. pydantic decides whether each is valid; then:

* valid: the raw document is created in the apiserver, which must accept it and store what
  pydantic made of it (null fields pruned and defaulted, integral numbers as integers: compared
  through the model); then so is the model's serialisation, which must come back the same;
* invalid: the raw document is sent, and the apiserver must refuse it too.

Each model's tally is printed (run with ``-s`` to see it) as ``agreement <Model>: ...``.
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from typing import Any

import pytest
from crd_api import BlockingApi
from crd_corpus import CORPUS, ConvertedV2, Recursive
from crd_strategies import documents
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from crdkit.crd import crd_schema
from crdkit.resources import CustomResource, resource_info

pytestmark = pytest.mark.integration

EXAMPLES = int(os.environ.get("CRDKIT_DIFFERENTIAL_EXAMPLES", "15"))
# A Schemaless field is stored unvalidated by design, so its schema says nothing to test
# against; its documents are drawn from the model instead (trees of TreeNode).
_TREES = st.recursive(
    st.fixed_dictionaries({"value": st.integers(-100, 100)}),
    lambda inner: st.fixed_dictionaries(
        {"value": st.integers(-100, 100), "children": st.lists(inner, max_size=3)}
    ),
    max_leaves=8,
)
OVERRIDES: dict[type[CustomResource], st.SearchStrategy[tuple[dict[str, Any], str]]] = {
    Recursive: _TREES.map(lambda tree: ({"spec": {"tree": tree}}, "valid")),
}
# Creating at v2 of this kind needs its conversion webhook, which nothing serves in tests.
CASES = [cls for cls in CORPUS if cls is not ConvertedV2]
TYPE_META = ("apiVersion", "kind", "metadata", "status")


def _body_schema(resource: type[CustomResource]) -> dict[str, Any]:
    root = crd_schema(resource)
    properties = {k: v for k, v in root["properties"].items() if k not in TYPE_META}
    required = [r for r in root.get("required", []) if r in properties]
    return {"type": "object", "properties": properties, "required": required}


def _content(model: CustomResource) -> dict[str, Any]:
    return model.model_dump(mode="json", exclude={"metadata", "api_version", "kind", "status"})


@pytest.mark.parametrize("resource", CASES, ids=lambda cls: cls.__name__)
def test_pydantic_and_apiserver_agree(resource: type[CustomResource], api: BlockingApi) -> None:
    info = resource_info(resource)
    namespace = api.new_namespace() if info.namespaced else None
    collection = info.path(namespace=namespace)
    tally: Counter[str] = Counter()

    def metadata() -> dict[str, str]:
        name = f"x-{uuid.uuid4().hex[:12]}"
        return {"name": name, "namespace": namespace} if namespace else {"name": name}

    def forget(stored: dict[str, Any]) -> None:
        if namespace is None:  # cluster-scoped objects outlive the test otherwise
            api.request("DELETE", info.path(name=stored["metadata"]["name"]))

    body = _body_schema(resource)
    options = resource.__crd_options__
    # Whole floats (3.0) only where no CEL rule, scale or field-selector path reads them.
    whole_floats = (
        "x-kubernetes-validations" not in json.dumps(body)
        and options is not None
        and options.scale is None
        and not options.selectable_fields
    )
    strategy = (
        OVERRIDES[resource] if resource in OVERRIDES else documents(body, whole_floats=whole_floats)
    )

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )
    @given(strategy)
    def agree(drawn: tuple[dict[str, Any], str]) -> None:
        document, how = drawn
        raw = {"apiVersion": info.api_version, "kind": info.kind, "metadata": metadata()}
        raw.update(document)
        try:
            model: CustomResource | None = resource.model_validate(raw)
            refusal = ""
        except ValidationError as error:
            model, refusal = None, str(error)
        if model is None:
            status, stored = api.request("POST", collection, raw)
            if status == 201:
                forget(stored)
            assert status in (400, 422), (
                f"pydantic refused ({how}): {refusal}\nbut the apiserver stored {raw}"
            )
            tally["both refused"] += 1
            return
        status, stored = api.request("POST", collection, raw)
        assert status == 201, (
            f"pydantic accepted ({how}) but the apiserver refused the document as it was: "
            f"{status} {stored.get('message')}\ndocument: {raw}"
        )
        forget(stored)
        assert _content(resource.model_validate(stored)) == _content(model), (
            f"the apiserver stored {stored} for {raw}, which pydantic reads differently"
        )
        body = model.to_dict()
        body["metadata"] = metadata()
        status, stored = api.request("POST", collection, body)
        assert status == 201, (
            f"pydantic accepted ({how}) but the apiserver answered {status}: "
            f"{stored.get('message')}\nbody: {body}"
        )
        forget(stored)
        returned = resource.model_validate(stored)
        # Compared with what was sent: to_dict() leaves None out, by design.
        sent = resource.model_validate(body)
        assert _content(returned) == _content(sent), f"round trip changed {body}"
        tally["both accepted"] += 1

    agree()
    total = sum(tally.values())
    print(
        f"agreement {resource.__name__}: {total}/{total} agreed "
        f"({tally['both accepted']} accepted by both, {tally['both refused']} refused by both)"
    )
