"""Edge values of the scalar types: pydantic and the real apiserver give the same answer.

Each row is one JSON value for one field of ``ScalarEdges``, sent as the same bytes to both
(``model_validate_json`` and a POST). Where both accept, the stored value must read back to
what pydantic made of the request, and pydantic's own serialisation must be accepted too.
The ``expect`` column is what the apiserver answered when the row was written: it keeps the
table honest about what it covers (a row both sides refuse is not a row both accept).
"""

from __future__ import annotations

import uuid

import pytest
from crd_api import BlockingApi
from crd_corpus import ScalarEdges
from pydantic import ValidationError

from crdkit.resources import resource_info

pytestmark = pytest.mark.integration

OK, NO = True, False
CASES = [
    # Quantity: int-or-string with the quantity pattern
    ("memory", "4", OK),
    ("memory", "-5", OK),
    ("memory", "4.0", OK),  # a whole float is an integer to the apiserver
    ("memory", "-4.0", OK),
    ("memory", "1e3", OK),
    ("memory", "4.5", NO),
    ("memory", "4.0000000001", NO),
    ("memory", "9223372036854775807", OK),
    ("memory", "9223372036854775808", NO),  # beyond int64: decoded as a float
    ("memory", "9007199254740993.0", NO),  # 2**53 as a float
    ("memory", '"4Gi"', OK),
    ("memory", '"500m"', OK),
    ("memory", '"1.5"', OK),
    ("memory", '"+.5e-3"', OK),
    ("memory", '"4XB"', NO),
    ("memory", '" 4"', NO),
    ("memory", '"4\\n"', NO),
    ("memory", '""', NO),
    ("memory", "true", NO),
    # format: int32, as a type and as a marker
    ("small", "2147483647", OK),
    ("small", "-2147483648", OK),
    ("small", "2147483648", NO),
    ("small", "-2147483649", NO),
    ("small", "1099511627776", NO),
    ("small", "4.0", OK),
    ("small", "4.5", NO),
    ("small", '"5"', NO),
    ("small", "true", NO),
    ("marked", "2147483647", OK),
    ("marked", "1099511627776", NO),
    # format: int64
    ("large", "9223372036854775807", OK),
    ("large", "-9223372036854775808", OK),
    ("large", "9223372036854775808", NO),
    ("large", "-9223372036854775809", NO),
    ("large", "1e20", NO),
    # format: byte
    ("data", '"aGVsbG8="', OK),
    ("data", '"aGVsbA=="', OK),
    ("data", '"aGVsbB=="', OK),  # non-zero padding bits are not checked
    ("data", '"aGVs"', OK),
    ("data", '"aGVsbG8"', NO),  # padding is required
    ("data", '"aGVs\\nbG8="', NO),  # no newlines, unlike Go's decoder
    ("data", '"aGVsbG8=\\r\\n"', NO),
    ("data", '"aGVs bG8="', NO),
    ("data", '"aGVsbG-_"', NO),  # no URL-safe alphabet
    ("data", '""', NO),
    ("data", '"="', NO),
    ("data", '"aGVsbA==aGVs"', NO),
    # format: duration (go-openapi strfmt)
    ("every", '"1h30m"', OK),
    ("every", '"0"', OK),
    ("every", '"3d"', OK),
    ("every", '"3wk"', OK),
    ("every", '"3 days"', OK),
    ("every", '"3Hours"', OK),
    ("every", '"3MS"', OK),
    ("every", '"3\\td"', OK),
    ("every", '"abc 3d xyz"', OK),
    ("every", '"-3d"', OK),
    ("every", '"1.5d"', OK),
    ("every", '"1h30x"', OK),
    ("every", '"PT1H"', OK),
    ("every", '"1000000000d"', OK),  # wraps around int64 in the apiserver too
    ("every", '"2562048h"', OK),
    ("every", '"3\\u03bcs"', OK),
    ("every", '"3hrs"', NO),
    ("every", '"3wks"', NO),
    ("every", '"3mi"', NO),
    ("every", '"3"', NO),
    ("every", '"3X"', NO),
    ("every", '"3\\u00b5sec"', NO),
    ("every", '"3\\u000bs"', NO),
    ("every", '"99999999999999999999d"', NO),
    ("every", '""', NO),
    ("every", "5", NO),
    # int-or-string with a CEL rule (kept in the CRD, mirrored by check=)
    # a plain int and int-or-string: the apiserver stores integers as int64
    ("plain", "9223372036854775807", OK),
    ("plain", "-9223372036854775808", OK),
    ("plain", "9223372036854775808", NO),
    ("plain", "-9223372036854775809", NO),
    ("plain", "3.0", OK),
    ("plain", '"3"', NO),
    ("plain", "true", NO),
    ("either", "9223372036854775807", OK),
    ("either", "9223372036854775808", NO),
    ("either", '"9223372036854775808"', OK),
    ("surge", "5", OK),
    ("surge", "4.0", NO),  # a CEL rule on the field refuses a float, even a whole one
    ("surge", "-5", NO),
    ("surge", '"25%"', OK),
    ("surge", '"x"', NO),
    ("surge", "4.5", NO),
    ("surge", "true", NO),
    # an integer with a CEL rule
    ("positive", "4", OK),
    ("positive", "4.0", NO),
    ("positive", "-1", NO),
]


@pytest.mark.parametrize(("field", "raw", "expect"), CASES, ids=[f"{f}={r}" for f, r, _ in CASES])
def test_pydantic_and_apiserver_agree_on_edge_values(
    api: BlockingApi, field: str, raw: str, expect: bool
) -> None:
    info = resource_info(ScalarEdges)
    name = f"edge-{uuid.uuid4().hex[:12]}"
    body = (
        f'{{"apiVersion": "{info.api_version}", "kind": "{info.kind}", '
        f'"metadata": {{"name": "{name}"}}, "spec": {{"{field}": {raw}}}}}'
    ).encode()
    try:
        model: ScalarEdges | None = ScalarEdges.model_validate_json(body)
    except ValidationError:
        model = None
    status, stored = api.request("POST", info.path(), body)
    if status == 201:
        api.request("DELETE", info.path(name=name))
    assert status in (201, 400, 422), stored
    assert (status == 201) is expect, f"the apiserver answered {status}: {stored.get('message')}"
    assert (model is not None) is expect, f"pydantic {'accepted' if model else 'refused'} {raw}"
    if model is None:
        return
    returned = ScalarEdges.model_validate(stored)
    assert getattr(returned.spec, field) == getattr(model.spec, field)
    # What crdkit writes for the value is accepted as well, and means the same.
    written = model.to_dict()
    written["metadata"] = {"name": f"{name}-w"}
    status, stored = api.request("POST", info.path(), written)
    assert status == 201, stored.get("message")
    api.request("DELETE", info.path(name=f"{name}-w"))
    assert getattr(ScalarEdges.model_validate(stored).spec, field) == getattr(model.spec, field)
