"""A CEL parser, for estimating the cost of rules offline (``crdkit.crd.cel_cost``).

It reads the CEL grammar (conditionals, logic, relations, arithmetic, member calls, indexing,
list and map literals, every literal kind) and expands the macros the way cel-go's parser
does, because the apiserver's cost estimate is computed on the expanded form: ``has()``
becomes a test-only select, ``all``/``exists``/``exists_one``/``map``/``filter`` become
comprehensions with cel-go's accumulator, initial value, loop condition, step and result.
So are cel-go's two-variable comprehensions (``all(k, v, p)``, ``existsOne``, ``transformList``),
which the apiserver enables. Anything else (``cel.bind``, ``transformMap``, optional syntax,
namespaced names) is refused with ``CelSyntaxError``, so the estimator reports it as not
estimated rather than guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from crdkit.crd.errors import CrdError

__all__ = ["ACCUMULATOR", "CelSyntaxError", "Node", "parse"]

# cel-go's name for a macro's accumulator; the cost estimator hides its path from sizes.
ACCUMULATOR = "@result"


class CelSyntaxError(CrdError):
    """An expression outside what this parser reads."""


@dataclass(eq=False)
class Node:
    """An expression of the expanded AST.

    ``kind`` is one of ``literal`` (``value``, ``literal_type``), ``ident`` (``name``),
    ``select`` (``operand``, ``name``, ``test_only``), ``call`` (``name``, ``target`` or
    None, ``args``), ``list`` (``args``), ``map`` (``entries``) and ``comprehension``
    (``iter_var``, ``iter_var2`` or "", ``iter_range``, ``accu_var``, ``accu_init``,
    ``condition``, ``step``, ``result``).
    """

    kind: str
    name: str = ""
    value: Any = None
    literal_type: str = ""
    operand: Node | None = None
    test_only: bool = False
    target: Node | None = None
    args: list[Node] = field(default_factory=list)
    entries: list[tuple[Node, Node]] = field(default_factory=list)
    iter_var: str = ""
    iter_var2: str = ""  # the value's name in a two-variable comprehension
    iter_range: Node | None = None
    accu_var: str = ""
    accu_init: Node | None = None
    condition: Node | None = None
    step: Node | None = None
    result: Node | None = None


_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<number>(?:0[xX][0-9a-fA-F]+|\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?
        |\d+[eE][+-]?\d+|\d+)[uU]?)
  | (?P<string>[rRbB]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
        |'(?:\\.|[^\\'\n])*'|"(?:\\.|[^\\"\n])*"))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|[-+*/%!<>?:.,()\[\]{}])
    """,
    re.VERBOSE | re.DOTALL,
)
_RESERVED = frozenset(
    {"as", "break", "const", "continue", "else", "for", "function", "if", "import", "let",
     "loop", "package", "namespace", "return", "var", "void", "while"}
)  # fmt: skip
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}  # fmt: skip
_RELATIONS = {"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_"}
_MACROS = {"all", "exists", "exists_one", "map", "filter"}
# cel-go ext.TwoVarComprehensions, enabled in the apiserver: all(k, v, p), transformList(i, v, f)...
_TWO_VAR = {"all", "exists", "existsOne", "exists_one", "transformList"}


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    index = 0
    while index < len(text):
        match = _TOKEN.match(text, index)
        if match is None:
            raise CelSyntaxError(f"unexpected character {text[index]!r} at {index}")
        index = match.end()
        kind = match.lastgroup or ""
        if kind != "space":
            out.append((kind, match.group()))
    out.append(("end", ""))
    return out


def _string_value(token: str) -> tuple[str, Any]:
    prefix = ""
    while token[0] in "rRbB":
        prefix += token[0].lower()
        token = token[1:]
    quote = token[:3] if token[:3] in ("'''", '"""') else token[0]
    body = token[len(quote) : -len(quote)]
    if "r" not in prefix:
        body = re.sub(
            r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)",
            lambda m: _unescape(m.group(1)),
            body,
            flags=re.DOTALL,
        )
    if "b" in prefix:
        return "bytes", body.encode("utf-8", "surrogatepass")
    return "string", body


def _unescape(code: str) -> str:
    if code[0] in "xuU":
        return chr(int(code[1:], 16))
    if code[0].isdigit():
        return chr(int(code, 8))
    if code not in _ESCAPES:
        raise CelSyntaxError(f"invalid escape \\{code}")
    return _ESCAPES[code]


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.index = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.index]

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.index]
        if value is not None and token[1] != value:
            raise CelSyntaxError(f"expected {value!r}, found {token[1] or 'the end'!r}")
        self.index += 1
        return token

    def accept(self, value: str) -> bool:
        if self.peek()[1] == value and self.peek()[0] in ("op", "ident"):
            self.index += 1
            return True
        return False

    def expression(self) -> Node:
        condition = self.logical("||", "_||_", self.conjunction)
        if self.accept("?"):
            if_true = self.logical("||", "_||_", self.conjunction)
            self.take(":")
            if_false = self.expression()
            return _call("_?_:_", [condition, if_true, if_false])
        return condition

    def conjunction(self) -> Node:
        return self.logical("&&", "_&&_", self.relation)

    def logical(self, op: str, function: str, operand: Any) -> Node:
        node: Node = operand()
        while self.accept(op):
            node = _call(function, [node, operand()])
        return node

    def relation(self) -> Node:
        node = self.addition()
        while True:
            kind, value = self.peek()
            if kind == "op" and value in _RELATIONS:
                self.take()
                node = _call(_RELATIONS[value], [node, self.addition()])
            elif kind == "ident" and value == "in":
                self.take()
                node = _call("@in", [node, self.addition()])
            else:
                return node

    def addition(self) -> Node:
        node = self.multiplication()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            node = _call(f"_{op}_", [node, self.multiplication()])
        return node

    def multiplication(self) -> Node:
        node = self.unary()
        while self.peek() in (("op", "*"), ("op", "/"), ("op", "%")):
            op = self.take()[1]
            node = _call(f"_{op}_", [node, self.unary()])
        return node

    def unary(self) -> Node:
        if self.peek() == ("op", "!"):
            count = 0
            while self.accept("!"):
                count += 1
            operand = self.member()
            # cel-go drops an even run of negations, as it does here
            return operand if count % 2 == 0 else _call("!_", [operand])
        if self.peek() == ("op", "-"):
            self.take()
            kind, value = self.peek()
            if kind == "number" and not value.lower().endswith("u"):
                # -9223372036854775808 is a literal, not the negation of an overflowing one
                self.take()
                return _number("-" + value)
            return _call("-_", [self.unary()])
        return self.member()

    def member(self) -> Node:
        node = self.primary()
        while True:
            if self.accept("."):
                kind, name = self.take()
                if kind != "ident":
                    raise CelSyntaxError(f"expected a field name after '.', found {name!r}")
                if self.accept("("):
                    node = self.member_call(node, name, self.arguments(")"))
                else:
                    node = Node("select", operand=node, name=name)
            elif self.accept("["):
                index = self.expression()
                self.take("]")
                node = _call("_[_]", [node, index])
            else:
                return node

    def arguments(self, close: str) -> list[Node]:
        args: list[Node] = []
        while not self.accept(close):
            args.append(self.expression())
            if not self.accept(","):
                self.take(close)
                break
        return args

    def primary(self) -> Node:
        kind, value = self.take()
        if kind == "number":
            return _number(value)
        if kind == "string":
            literal_type, literal = _string_value(value)
            return Node("literal", value=literal, literal_type=literal_type)
        if kind == "ident":
            if value in ("true", "false"):
                return Node("literal", value=value == "true", literal_type="bool")
            if value == "null":
                return Node("literal", value=None, literal_type="null")
            if value in _RESERVED or value == "in":
                raise CelSyntaxError(f"reserved word {value!r}")
            if self.accept("("):
                args = self.arguments(")")
                if value == "has":
                    return _has(args)
                return _call(value, args)
            return Node("ident", name=value)
        if value == "(":
            node = self.expression()
            self.take(")")
            return node
        if value == "[":
            return Node("list", args=self.arguments("]"))
        if value == "{":
            entries: list[tuple[Node, Node]] = []
            while not self.accept("}"):
                key = self.expression()
                self.take(":")
                entries.append((key, self.expression()))
                if not self.accept(","):
                    self.take("}")
                    break
            return Node("map", entries=entries)
        if value == ".":
            raise CelSyntaxError("qualified names from the root ('.name') are not read")
        raise CelSyntaxError(f"unexpected {value or 'end of rule'!r}")

    def member_call(self, target: Node, name: str, args: list[Node]) -> Node:
        arity = (3, 4) if name == "transformList" else (3,)
        if name in _TWO_VAR and len(args) in arity and args[0].kind == args[1].kind == "ident":
            key, value = args[0].name, args[1].name
            if name == "transformList":
                one_var = _expand("map", target, [args[1], *args[2:]])
            else:
                one_var = _expand("exists_one" if name == "existsOne" else name, target, args[1:])
            one_var.iter_var, one_var.iter_var2 = key, value
            return one_var
        if name in ("transformMap", "transformMapEntry"):
            raise CelSyntaxError(f"{name}() is not read")
        if name in _MACROS and len(args) in (2, 3) and args[0].kind == "ident":
            if len(args) == 3 and name != "map":
                raise CelSyntaxError(f"two-variable {name}() is not read")
            return _expand(name, target, args)
        if name in _MACROS and len(args) in (2, 3):
            raise CelSyntaxError(f"{name}() needs a variable name as its first argument")
        if isinstance(target, Node) and target.kind == "ident" and target.name == "cel":
            raise CelSyntaxError(f"cel.{name}() is not read")
        return Node("call", name=name, target=target, args=args)


def _call(name: str, args: list[Node]) -> Node:
    return Node("call", name=name, args=args)


def _number(text: str) -> Node:
    lowered = text.lower()
    if lowered.endswith("u"):
        return Node("literal", value=int(lowered[:-1], 0), literal_type="uint")
    if lowered.lstrip("-").startswith("0x"):
        return Node("literal", value=int(lowered, 16), literal_type="int")
    if any(c in lowered for c in ".e"):
        return Node("literal", value=float(lowered), literal_type="double")
    return Node("literal", value=int(lowered), literal_type="int")


def _has(args: list[Node]) -> Node:
    if len(args) != 1 or args[0].kind != "select" or args[0].operand is None:
        raise CelSyntaxError("has() takes one field selection, as in has(self.field)")
    return Node("select", operand=args[0].operand, name=args[0].name, test_only=True)


def _ident(name: str) -> Node:
    return Node("ident", name=name)


def _literal(value: Any, literal_type: str) -> Node:
    return Node("literal", value=value, literal_type=literal_type)


def _expand(name: str, target: Node, args: list[Node]) -> Node:
    """A macro as cel-go's parser expands it (``parser/macro.go``)."""
    var = args[0].name
    accu = _ident(ACCUMULATOR)
    if name == "all":
        init, condition = _literal(True, "bool"), _call("@not_strictly_false", [accu])
        step, result = _call("_&&_", [_ident(ACCUMULATOR), args[1]]), _ident(ACCUMULATOR)
    elif name == "exists":
        init = _literal(False, "bool")
        condition = _call("@not_strictly_false", [_call("!_", [accu])])
        step, result = _call("_||_", [_ident(ACCUMULATOR), args[1]]), _ident(ACCUMULATOR)
    elif name == "exists_one":
        init, condition = _literal(0, "int"), _literal(True, "bool")
        step = _call(
            "_?_:_",
            [args[1], _call("_+_", [accu, _literal(1, "int")]), _ident(ACCUMULATOR)],
        )
        result = _call("_==_", [_ident(ACCUMULATOR), _literal(1, "int")])
    else:  # map (with or without a filter) and filter build a list
        init, condition = Node("list"), _literal(True, "bool")
        value = _ident(var) if name == "filter" else args[-1]
        step = _call("_+_", [accu, Node("list", args=[value])])
        if name == "filter" or len(args) == 3:
            step = _call("_?_:_", [args[1], step, _ident(ACCUMULATOR)])
        result = _ident(ACCUMULATOR)
    return Node(
        "comprehension",
        iter_var=var,
        iter_range=target,
        accu_var=ACCUMULATOR,
        accu_init=init,
        condition=condition,
        step=step,
        result=result,
    )


def parse(text: str) -> Node:
    """The expanded AST of one CEL expression; ``CelSyntaxError`` if it is not read."""
    parser = _Parser(text)
    node = parser.expression()
    kind, value = parser.peek()
    if kind != "end":
        raise CelSyntaxError(f"unexpected {value!r} after the expression")
    return node
