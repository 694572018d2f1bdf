"""Unit tests of the predicates and their composition."""

from __future__ import annotations

from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime.predicates import (
    AnnotationsChanged,
    FuncPredicate,
    GenerationChanged,
    LabelsChanged,
    Predicate,
    ResourceVersionChanged,
)


def cm(
    generation: int = 1, labels: dict[str, str] | None = None, rv: str = "1", note: str = ""
) -> ConfigMap:
    return ConfigMap(
        metadata=ObjectMeta(
            name="x",
            namespace="ns",
            generation=generation,
            labels=labels or {},
            annotations={"note": note} if note else {},
            resource_version=rv,
        )
    )


def test_filters_look_at_their_field_only() -> None:
    base = cm()
    assert GenerationChanged().update(base, cm(generation=2))
    assert not GenerationChanged().update(base, cm(rv="2", labels={"a": "b"}))
    assert LabelsChanged().update(base, cm(labels={"a": "b"}))
    assert not LabelsChanged().update(base, cm(generation=5))
    assert AnnotationsChanged().update(base, cm(note="hi"))
    assert not AnnotationsChanged().update(base, cm(labels={"a": "b"}))
    assert ResourceVersionChanged().update(base, cm(rv="2"))
    assert not ResourceVersionChanged().update(base, cm())


def test_creates_and_deletes_always_pass_the_filters() -> None:
    for predicate in (GenerationChanged(), LabelsChanged(), ResourceVersionChanged()):
        assert predicate.create(cm())
        assert predicate.delete(cm())


def test_composition_with_and_or_not() -> None:
    spec_or_labels = GenerationChanged() | LabelsChanged()
    spec_and_labels = GenerationChanged() & LabelsChanged()
    not_spec = ~GenerationChanged()
    base = cm()
    only_labels = cm(labels={"a": "b"})
    both = cm(generation=2, labels={"a": "b"})
    assert spec_or_labels.update(base, only_labels)
    assert not spec_or_labels.update(base, cm(rv="9"))
    assert not spec_and_labels.update(base, only_labels)
    assert spec_and_labels.update(base, both)
    assert not_spec.update(base, only_labels)
    assert not not_spec.update(base, both)
    assert not not_spec.create(base), "~ negates creates too"
    assert repr(spec_or_labels) == "(GenerationChanged() | LabelsChanged())"


def test_func_predicate_and_default_predicate() -> None:
    only_named_x = FuncPredicate(create=lambda o: o.metadata.name == "x")
    assert only_named_x.create(cm())
    assert only_named_x.update(cm(), cm())
    assert not FuncPredicate(delete=lambda o: False).delete(cm())
    assert Predicate().update(cm(), cm())
