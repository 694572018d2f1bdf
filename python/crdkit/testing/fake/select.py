"""Label and field selectors as the fake apiserver evaluates them on stored JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crdkit.client.selectors import FieldSelector, LabelSelector, SelectorError
from crdkit.testing.fake.errors import bad_request

if TYPE_CHECKING:
    from crdkit.testing.fake.kinds import FakeKind

__all__ = ["Selection", "field_value"]

Obj = dict[str, Any]


def field_value(obj: Obj, path: str) -> str | None:
    """The value a field selector compares ``path`` with (as text, booleans lowercase)."""
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


class Selection:
    """A label and a field selector, checked against what the kind supports."""

    def __init__(self, kind: FakeKind, label_selector: str | None, field_selector: str | None):
        try:
            self.labels = LabelSelector.parse(label_selector)
            self.fields = FieldSelector.parse(field_selector)
        except SelectorError as exc:
            raise bad_request(f"unable to parse requirement: {exc}") from exc
        allowed = {"metadata.name", "metadata.namespace"} | kind.field_selectors
        for path, _, _ in self.fields.terms:
            if path not in allowed:
                raise bad_request(
                    f"field label not supported: {path} (the fake serves {kind.info.kind} "
                    f"field selectors on {', '.join(sorted(allowed))})"
                )

    def matches(self, obj: Obj) -> bool:
        metadata = obj.get("metadata") or {}
        if not self.labels.matches(metadata.get("labels") or {}):
            return False
        for path, operator, value in self.fields.terms:
            equal = field_value(obj, path) == value
            if equal != (operator == "="):
                return False
        return True
