from crdkit.crd.paths import PathTarget, resolve_path

ROOT = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "specs": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"replicas": {"type": "integer"}},
                    },
                },
                "items": {"type": "array", "items": {"type": "object"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        }
    },
}


def test_declared_fields_and_map_keys_resolve() -> None:
    assert resolve_path(ROOT, ".spec.replicas") == PathTarget(schema={"type": "integer"})
    assert resolve_path(ROOT, ".spec.specs.Worker.replicas") == PathTarget(
        schema={"type": "integer"}
    )
    assert resolve_path(ROOT, ".spec.specs.Worker").schema is not None


def test_what_resolves_nowhere_says_why() -> None:
    assert resolve_path(ROOT, ".spec.nope").problem == "is not a field of the schema"
    assert resolve_path(ROOT, ".spec.specs.Worker.nope").problem == "is not a field of the schema"
    assert resolve_path(ROOT, ".spec.items.x").problem == (
        "goes into the list .spec.items, which it cannot index"
    )
    assert resolve_path(ROOT, "spec.replicas").problem == "must be a field path starting with '.'"
    assert resolve_path(ROOT, ".spec.items[0]").problem == "array notation is not allowed"
    assert resolve_path(ROOT, ".spec..replicas").problem == "has an empty step"


def test_past_preserve_unknown_fields_nothing_is_known() -> None:
    assert resolve_path(ROOT, ".spec.free.a.b") == PathTarget(unknown=True)
