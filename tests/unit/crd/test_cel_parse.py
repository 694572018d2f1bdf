"""The CEL parser: precedence, literals and macros expanded as cel-go expands them."""

from __future__ import annotations

import pytest

from crdkit.crd.cel_parse import ACCUMULATOR, CelSyntaxError, Node, parse


def shape(node: Node) -> str:
    """A compact rendering of the AST for comparing structure."""
    if node.kind == "literal":
        return repr(node.value)
    if node.kind == "ident":
        return node.name
    if node.kind == "select":
        assert node.operand is not None
        return f"{'has:' if node.test_only else ''}{shape(node.operand)}.{node.name}"
    if node.kind == "call":
        target = f"{shape(node.target)}." if node.target is not None else ""
        return f"{target}{node.name}({', '.join(shape(a) for a in node.args)})"
    if node.kind == "list":
        return "[" + ", ".join(shape(a) for a in node.args) + "]"
    if node.kind == "map":
        return "{" + ", ".join(f"{shape(k)}: {shape(v)}" for k, v in node.entries) + "}"
    parts = (node.iter_range, node.accu_init, node.condition, node.step, node.result)
    return f"comp({node.iter_var}; " + "; ".join(shape(p) for p in parts if p) + ")"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a || b && c", "_||_(a, _&&_(b, c))"),
        ("a && b ? 1 : 0", "_?_:_(_&&_(a, b), 1, 0)"),
        ("1 + 2 * 3 == 7", "_==_(_+_(1, _*_(2, 3)), 7)"),
        ("!!a", "a"),
        ("!a", "!_(a)"),
        ("-5", "-5"),
        ("-self.n", "-_(self.n)"),
        ("'x' in self.tags", "@in('x', self.tags)"),
        ("self.a[0].b", "_[_](self.a, 0).b"),
        ("self.a.startsWith('x')", "self.a.startsWith('x')"),
        ("size(self.a) >= 2u", "_>=_(size(self.a), 2)"),
        ("{'a': 1.5, 'b': 0x10}", "{'a': 1.5, 'b': 16}"),
        ("has(self.a)", "has:self.a"),
    ],
)
def test_precedence_and_literals(text: str, expected: str) -> None:
    assert shape(parse(text)) == expected


def test_string_literals_are_unescaped_and_raw_strings_kept() -> None:
    assert parse(r"'a\'b\n'").value == "a'b\n"
    assert parse(r"r'\d+'").value == "\\d+"
    assert parse("'''multi\nline'''").value == "multi\nline"
    assert parse(r"b'\x00\x01'").value == b"\x00\x01"
    assert parse(r"'\u00e9'").value == "é"


def test_two_variable_comprehensions_name_key_and_value() -> None:
    r = ACCUMULATOR
    for text, expected in [
        ("m.all(k, v, p)", f"comp(k; m; True; @not_strictly_false({r}); _&&_({r}, p); {r})"),
        ("m.existsOne(k, v, p)", f"comp(k; m; 0; True; _?_:_(p, _+_({r}, 1), {r}); _==_({r}, 1))"),
        ("l.transformList(i, v, f)", f"comp(i; l; []; True; _+_({r}, [f]); {r})"),
        ("l.transformList(i, v, p, f)", f"comp(i; l; []; True; _?_:_(p, _+_({r}, [f]), {r}); {r})"),
    ]:
        node = parse(text)
        assert shape(node) == expected
        assert node.iter_var2 == "v"


def test_macros_expand_like_cel_go() -> None:
    r = ACCUMULATOR
    assert shape(parse("l.all(x, p)")) == (
        f"comp(x; l; True; @not_strictly_false({r}); _&&_({r}, p); {r})"
    )
    assert shape(parse("l.exists(x, p)")) == (
        f"comp(x; l; False; @not_strictly_false(!_({r})); _||_({r}, p); {r})"
    )
    assert shape(parse("l.exists_one(x, p)")) == (
        f"comp(x; l; 0; True; _?_:_(p, _+_({r}, 1), {r}); _==_({r}, 1))"
    )
    assert shape(parse("l.map(x, f)")) == f"comp(x; l; []; True; _+_({r}, [f]); {r})"
    assert shape(parse("l.map(x, p, f)")) == (
        f"comp(x; l; []; True; _?_:_(p, _+_({r}, [f]), {r}); {r})"
    )
    assert shape(parse("l.filter(x, p)")) == (
        f"comp(x; l; []; True; _?_:_(p, _+_({r}, [x]), {r}); {r})"
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("cel.bind(x, 1, x)", "cel.bind"),
        ("self.m.filter(k, v, v > 0)", "two-variable filter"),
        ("self.m.transformMap(k, v, v + 1)", "transformMap"),
        ("self.?a", "expected a field name"),
        ("has(self)", "one field selection"),
        ("self.a == ", "unexpected 'end of rule'"),
        ("a b", "unexpected 'b' after"),
        ("'\\q'", "invalid escape"),
        ("a # b", "unexpected character"),
        ("l.all(1, p)", "variable name"),
    ],
)
def test_what_is_not_read_is_an_error(text: str, reason: str) -> None:
    with pytest.raises(CelSyntaxError, match=reason):
        parse(text)
