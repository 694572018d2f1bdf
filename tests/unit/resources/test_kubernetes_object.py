import pytest
from pydantic import ValidationError

from crdkit.resources import ConfigMap, KubernetesObject, ObjectMeta, Pod


def test_type_meta_is_filled_when_absent() -> None:
    pod = Pod.model_validate_json(b'{"metadata":{"name":"p"}}')
    assert (pod.api_version, pod.kind) == ("v1", "Pod")
    assert {"api_version", "kind"} <= pod.model_fields_set


def test_an_object_of_another_kind_is_refused() -> None:
    with pytest.raises(ValidationError, match="kind must be 'Pod', got 'Node'"):
        Pod.model_validate({"apiVersion": "v1", "kind": "Node"})
    with pytest.raises(ValidationError, match="apiVersion must be 'v1'"):
        ConfigMap.model_validate({"apiVersion": "apps/v1", "kind": "ConfigMap"})


def test_to_dict_is_the_full_object_by_alias_without_none() -> None:
    cm = ConfigMap(metadata=ObjectMeta(name="c", namespace="ns"), data={"k": "v"})
    body = cm.to_dict()
    assert body["apiVersion"] == "v1"
    assert body["kind"] == "ConfigMap"
    assert body["metadata"]["name"] == "c"
    assert "immutable" not in body
    assert cm.to_json().startswith(b'{"apiVersion":"v1","kind":"ConfigMap"')


def test_merge_patch_holds_only_what_was_set_and_keeps_explicit_nulls() -> None:
    cm = ConfigMap(metadata=ObjectMeta(name="c", labels={"a": "1"}), immutable=None)
    patch = cm.to_merge_patch()
    assert patch == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"a": "1"}},
        "immutable": None,
    }


def test_apply_body_drops_nulls_and_always_has_type_meta() -> None:
    cm = ConfigMap(metadata=ObjectMeta(name="c"), immutable=None)
    assert cm.to_apply() == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


def test_unknown_fields_survive_a_round_trip() -> None:
    raw = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"hostNetwork":true}}'
    assert Pod.model_validate_json(raw).to_merge_patch()["spec"] == {"hostNetwork": True}


def test_a_built_in_subclass_needs_its_full_identity() -> None:
    with pytest.raises(TypeError, match="needs group, version, kind and plural"):

        class Broken(KubernetesObject, group="", version="v1"):
            pass
