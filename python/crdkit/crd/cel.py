"""Small helpers for writing CEL expressions about JSON field names."""

from __future__ import annotations

import re

__all__ = ["cel_field", "cel_string"]

# CEL reserved words; a property with one of these names is written __name__ in rules.
_RESERVED = frozenset(
    {
        "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
        "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
        "void", "while",
    }
)  # fmt: skip


def cel_field(name: str) -> str:
    """A property name as the apiserver's CEL sees it (escaping reserved words and symbols)."""
    if name in _RESERVED:
        return f"__{name}__"
    escaped = name.replace("__", "__underscores__")
    escaped = escaped.replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", escaped):
        raise ValueError(f"property {name!r} cannot be named in a CEL rule")
    return escaped


def cel_string(value: str) -> str:
    """A CEL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
