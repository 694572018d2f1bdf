"""The apiserver's static cost estimate of a CEL rule, computed offline.

When a CRD is created, the apiserver estimates the worst-case cost of every
``x-kubernetes-validations`` rule with cel-go's ``checker.Cost`` and the Kubernetes library's
``CostEstimator``, and refuses rules over budget (see ``crdkit.crd.budget``). This module
reproduces that estimate (cel-go ``checker/cost.go``, k8s.io/apiserver
``pkg/cel/library/cost.go`` and the apiextensions size estimator of Kubernetes 1.37) on the
AST of ``crdkit.crd.cel_parse``, typed against ``crdkit.crd.cel_types``:

* an identifier or a field selection costs 1 (a field of an object or map adds 1; the
  apiserver counts ``has()`` itself as free), a literal 0, a list literal 10, a map literal 30;
* a call costs its arguments plus its own price: 1 for most, a traversal (0.1 a character)
  for string comparisons, equality, ``startsWith``, ``lowerAscii``..., the product of the
  string's and the pattern's for ``matches`` and ``contains``; ``&&``/``||`` and ``?:`` cost
  only their operands (the dearer branch);
* a comprehension (``all``, ``exists``, ``map``...) costs its range, plus (condition + step)
  times the range's largest size.

Sizes come from the schema (``maxLength``, ``maxItems``...) through the same paths the
apiserver follows, including its quirks (a size looked up along a path it cannot resolve
falls back to the rule's own value). What is not modelled (unknown functions or variables,
dynamic operands whose overload the type checker would pick at run time, macros the parser
does not read) raises ``NotEstimated`` naming the reason, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from crdkit.crd.cel_parse import ACCUMULATOR, CelSyntaxError, Node, parse
from crdkit.crd.cel_ranges import (
    REGEX,
    TRAVERSAL,
    U64,
    UNKNOWN,
    Range,
    add,
    mul,
    radd,
    replaced_size,
    rfactor,
    rmul,
    union,
)
from crdkit.crd.cel_types import Decl
from crdkit.crd.errors import CrdError

__all__ = ["Estimate", "NotEstimated", "estimate_rule"]

_SCALAR_KINDS = {"bool", "double", "duration", "int", "timestamp", "uint"}
_TYPE_NAMES = {"bool", "int", "uint", "double", "string", "bytes", "list", "map", "null_type",
               "type", "duration", "timestamp", "dyn"}  # fmt: skip
_CONVERSIONS = {"int": "int", "uint": "uint", "double": "double", "string": "string",
                "bytes": "bytes", "bool": "bool", "duration": "duration",
                "timestamp": "timestamp"}  # fmt: skip
# k8s library constructors (quantity('1Gi'), url(...)...) and their nominal-cost accessors
_K8S_PARSERS = {"quantity": "opaque:quantity", "url": "opaque:url", "ip": "opaque:ip",
                "cidr": "opaque:cidr", "isQuantity": "bool", "isIP": "bool",
                "isCIDR": "bool"}  # fmt: skip
_K8S_ACCESSORS = {"sign": "int", "asInteger": "int", "isInteger": "bool",
                  "asApproximateFloat": "double", "isGreaterThan": "bool", "isLessThan": "bool",
                  "compareTo": "int", "add": "opaque:quantity", "sub": "opaque:quantity",
                  "getScheme": "string", "getHostname": "string", "getHost": "string",
                  "getPort": "string", "getEscapedPath": "string", "getQuery": "map"}  # fmt: skip
# calls whose estimate does not depend on the overload picked for a dynamic operand
_DYN_SAFE = {"_==_", "_!=_", "_&&_", "_||_", "_?_:_", "!_", "@not_strictly_false", "size",
             "type", *_CONVERSIONS}  # fmt: skip
_TIME_ACCESSORS = {"getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate",
                   "getDayOfWeek", "getHours", "getMinutes", "getSeconds",
                   "getMilliseconds"}  # fmt: skip


class NotEstimated(CrdError):
    """A rule whose cost this module does not know how the apiserver would estimate."""


@dataclass
class _Entry:
    """The size of a literal container's keys and values (cel-go's entrySizeEstimate)."""

    container: str
    key: Range
    val: Range

    def union(self, other: _Entry | None) -> _Entry | None:
        if other is None:
            return None
        return _Entry(self.container, union(self.key, other.key), union(self.val, other.val))


@dataclass
class _Local:
    path: list[str]
    type: Decl
    size: Range | None
    entry: _Entry | None


@dataclass
class _Arg:
    """cel-go's AstNode: an argument's type, path and size as the call's estimator sees it."""

    node: Node
    type: Decl
    path: list[str]
    size: Range | None


_DYN = Decl("dyn")
_BOOL = Decl("bool")
_INT = Decl("int")
_STRING = Decl("string")


class _Coster:
    def __init__(self, root: Decl, optional_old_self: bool = False) -> None:
        self.root = root
        # with optionalOldSelf, oldSelf is optional(self): absent on create
        self.old_self = Decl("optional", elem=root) if optional_old_self else root
        self.paths: dict[int, list[str]] = {}
        self.types: dict[int, Decl] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, _Entry] = {}
        self.locals: dict[str, list[_Local]] = {}
        # For the remedy: the values whose size only the request limit bounds ("self.a",
        # "self.b[*]") that each node's size derives from, and those a cost formula used.
        self.origins: dict[int, tuple[str, ...]] = {}
        self.unbounded: list[str] = []

    # sizes and paths, in cel-go's order of lookup
    def estimate_path(self, path: list[str]) -> Range | None:
        """apiextensions' sizeEstimator: the path walked from the rule's value (its first
        element, whatever it names, stands for the rule's value)."""
        found = self.decl_at(path)
        return None if found is None else (0, found.max_elements)

    def decl_at(self, path: list[str]) -> Decl | None:
        if not path:
            return None
        node = self.root
        for name in path[1:]:
            if name in ("@items", "@values"):
                if node.elem is None:
                    return None
                node = node.elem
            elif name == "@keys":
                if node.key is None:
                    return None
                node = node.key
            elif name in node.fields:
                node = node.fields[name]
            else:
                return None
        return node

    def unbounded_at(self, path: list[str]) -> tuple[str, ...]:
        """The value at ``path`` as a remedy names it, if only the request limit bounds it."""
        found = self.decl_at(path)
        if found is None or not found.unbounded:
            return ()
        steps = {"@items": "[*]", "@values": "[*]", "@keys": ""}
        return ("self" + "".join(steps.get(n, f".{n}") for n in path[1:]),)

    def use(self, *nodes: Node) -> None:
        """A cost formula used these nodes' sizes: their unbounded origins go in the remedy."""
        for node in nodes:
            self.note(self.origins.get(id(node), ()))

    def note(self, places: tuple[str, ...]) -> None:
        self.unbounded += [where for where in places if where not in self.unbounded]

    def derive(self, e: Node, *sources: Node | None) -> None:
        """``e``'s size comes from these nodes' sizes."""
        merged: list[str] = []
        for source in sources:
            if source is not None:
                merged += [w for w in self.origins.get(id(source), ()) if w not in merged]
        if merged:
            self.origins[id(e)] = tuple(merged)

    def local(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def path(self, e: Node) -> list[str]:
        if e.kind == "ident":
            var = self.local(e.name)
            if var is not None:
                return list(var.path)
        return list(self.paths.get(id(e), []))

    def size(self, e: Node) -> Range | None:
        if id(e) in self.sizes:
            return self.sizes[id(e)]
        if e.kind == "literal":
            if e.literal_type in ("string", "bytes"):
                return (len(e.value), len(e.value))
            return (1, 1)
        if e.kind in ("list", "map"):
            count = len(e.args) if e.kind == "list" else len(e.entries)
            return (count, count)
        path = self.path(e)
        estimated = self.estimate_path(path)
        if estimated is not None:
            self.sizes[id(e)] = estimated
            origin = self.unbounded_at(path)
            if origin:
                self.origins[id(e)] = origin
            return estimated
        found = self.types[id(e)]
        if found.kind in _SCALAR_KINDS or (
            found.kind == "optional" and found.elem is not None and found.elem.kind in _SCALAR_KINDS
        ):
            return (1, 1)
        if e.kind == "ident":
            var = self.local(e.name)
            if var is not None and var.size is not None:
                return var.size
        return None

    def size_or_unknown(self, e: Node) -> Range:
        found = self.size(e)
        return UNKNOWN if found is None else found

    def entry(self, e: Node) -> _Entry | None:
        if id(e) in self.entries:
            return self.entries[id(e)]
        if e.kind == "ident":
            var = self.local(e.name)
            if var is not None:
                return var.entry
        return None

    def arg(self, e: Node) -> _Arg:
        path = self.path(e)
        size = self.size(e)
        if path and path[0] == ACCUMULATOR:
            path = []
        return _Arg(e, self.types[id(e)], path, size)

    # costs
    def cost(self, e: Node) -> Range:
        if e.kind == "literal":
            kind = {"null": "null"}.get(e.literal_type, e.literal_type)
            self.types[id(e)] = Decl(kind)
            return (0, 0)
        if e.kind == "ident":
            return self.cost_ident(e)
        if e.kind == "select":
            return self.cost_select(e)
        if e.kind == "call":
            return self.cost_call(e)
        if e.kind == "list":
            return self.cost_list(e)
        if e.kind == "map":
            return self.cost_map(e)
        return self.cost_comprehension(e)

    def cost_ident(self, e: Node) -> Range:
        var = self.local(e.name)
        if var is not None:
            self.paths[id(e)] = list(var.path)
            self.types[id(e)] = var.type
        else:
            self.paths[id(e)] = [e.name]
            if e.name == "self":
                self.types[id(e)] = self.root
            elif e.name == "oldSelf":
                self.types[id(e)] = self.old_self
            elif e.name in _TYPE_NAMES:
                self.types[id(e)] = Decl("type")
            else:
                raise NotEstimated(f"unknown variable {e.name!r}")
        return (1, 1)

    def cost_select(self, e: Node) -> Range:
        assert e.operand is not None
        operand_cost = self.cost(e.operand)
        operand = self.types[id(e.operand)]
        if e.test_only:
            # the apiserver sets PresenceTestHasCost(false): has() costs its operand only
            self.types[id(e)] = _BOOL
            return operand_cost
        cost = operand_cost
        if operand.kind in ("map", "object"):
            cost = radd(cost, (1, 1))
        if operand.kind == "object":
            if e.name not in operand.fields:
                raise NotEstimated(f"no field {e.name!r} in the schema here")
            self.types[id(e)] = operand.fields[e.name]
        elif operand.kind == "map":
            self.types[id(e)] = operand.elem or _DYN
        elif operand.kind == "dyn":
            self.types[id(e)] = _DYN
        else:
            raise NotEstimated(f"field {e.name!r} selected on a {operand.kind}")
        self.paths[id(e)] = [*self.path(e.operand), e.name]
        return cost

    def cost_list(self, e: Node) -> Range:
        total: Range = (0, 0)
        item: Range = (U64, 0) if e.args else (0, 0)
        elem: Decl | None = None
        for element in e.args:
            total = radd(total, self.cost(element))
            item = union(item, self.size_or_unknown(element))
            kind = self.types[id(element)]
            elem = kind if elem is None or elem.kind == kind.kind else _DYN
        self.entries[id(e)] = _Entry("list", (1, 1), item)
        self.types[id(e)] = Decl("list", elem=elem or _DYN)
        return radd(total, (10, 10))

    def cost_map(self, e: Node) -> Range:
        total: Range = (0, 0)
        keys: Range = (U64, 0) if e.entries else (0, 0)
        vals: Range = (U64, 0) if e.entries else (0, 0)
        elem: Decl | None = None
        for key, value in e.entries:
            total = radd(radd(total, self.cost(key)), self.cost(value))
            keys = union(keys, self.size_or_unknown(key))
            vals = union(vals, self.size_or_unknown(value))
            kind = self.types[id(value)]
            elem = kind if elem is None or elem.kind == kind.kind else _DYN
        self.entries[id(e)] = _Entry("map", keys, vals)
        key_type = self.types[id(e.entries[0][0])] if e.entries else _DYN
        self.types[id(e)] = Decl("map", elem=elem or _DYN, key=key_type)
        return radd(total, (30, 30))

    def cost_comprehension(self, e: Node) -> Range:
        assert e.iter_range is not None
        assert e.accu_init is not None
        assert e.condition is not None
        assert e.step is not None
        assert e.result is not None
        total = self.cost(e.iter_range)
        total = radd(total, self.cost(e.accu_init))
        init = e.accu_init
        self.locals.setdefault(e.accu_var, []).append(
            _Local(self.path(init), self.types[id(init)], self.size(init), self.entry(init))
        )
        iterated = self.types[id(e.iter_range)]
        entry = self.entry(e.iter_range)
        container = entry.container if entry is not None else iterated.kind
        if container not in ("list", "map", "dyn"):
            raise NotEstimated(f"a macro over a {iterated.kind}")
        listed = container == "list"
        keys = _Local(
            [*self.path(e.iter_range), "@indices" if listed else "@keys"],
            _INT if listed else (iterated.key or _DYN),
            entry.key if entry is not None else None,
            None,
        )
        values = _Local(
            [*self.path(e.iter_range), "@items" if listed else "@values"],
            iterated.elem or _DYN,
            entry.val if entry is not None else None,
            None,
        )
        if e.iter_var2:
            self.locals.setdefault(e.iter_var, []).append(keys)
            self.locals.setdefault(e.iter_var2, []).append(values)
        else:
            # one variable: a list's items, a map's keys (cel-go's pushIterSingle)
            self.locals.setdefault(e.iter_var, []).append(values if listed else keys)
        loop = self.cost(e.condition)
        step = self.cost(e.step)
        self.locals[e.iter_var].pop()
        if e.iter_var2:
            self.locals[e.iter_var2].pop()
        # the accumulator of map()/filter() is a list of what the step appends
        self.locals[e.accu_var][-1].type = self.types[id(e.step)]
        total = radd(total, self.cost(e.result))
        self.locals[e.accu_var].pop()
        count = self.size_or_unknown(e.iter_range)
        self.use(e.iter_range)
        total = radd(total, rmul(count, radd(step, loop)))
        self.types[id(e)] = self.types[id(e.result)]
        if init.kind == "literal":
            literal_size = self.size(init)
            if literal_size is not None:
                self.sizes[id(e)] = literal_size
        elif init.kind in ("list", "map"):
            self.sizes[id(e)] = count
            self.derive(e, e.iter_range)
            step_entry = self.entry(e.step)
            if step_entry is not None:
                self.entries[id(e)] = step_entry
        return total

    def cost_call(self, e: Node) -> Range:
        if e.name == "dyn" and e.target is None and len(e.args) == 1:
            cost = radd((1, 1), self.cost(e.args[0]))
            self.types[id(e)] = _DYN
            size, entry = self.size(e.args[0]), self.entry(e.args[0])
            if size is not None:
                self.sizes[id(e)] = size
                self.derive(e, e.args[0])
            if entry is not None:
                self.entries[id(e)] = entry
            return cost
        arg_costs = [self.cost(a) for a in e.args]
        args = [self.arg(a) for a in e.args]
        total: Range = (0, 0)
        target: _Arg | None = None
        if e.target is not None:
            total = self.cost(e.target)
            target = self.arg(e.target)
        call, result_size = self.function_cost(e, target, args, arg_costs)
        if result_size is None:
            result_size = self.size(e)
        else:
            self.derive(e, e.target, *e.args)
        if result_size is not None:
            self.sizes[id(e)] = result_size
        return radd(total, call)

    def function_cost(
        self, e: Node, target: _Arg | None, args: list[_Arg], arg_costs: list[Range]
    ) -> tuple[Range, Range | None]:
        """The call's own cost with its arguments' (not its target's), and its result size."""
        summed: Range = (0, 0)
        for c in arg_costs:
            summed = radd(summed, c)
        name = e.name
        kinds = [a.type.kind for a in args]
        ttype = target.type if target is not None else None

        def result(kind: str | Decl) -> None:
            self.types[id(e)] = kind if isinstance(kind, Decl) else Decl(kind)

        def size_of(arg: _Arg, priced: bool = True) -> Range:
            if priced:
                self.use(arg.node)
            return UNKNOWN if arg.size is None else arg.size

        def nominal() -> tuple[Range, Range | None]:
            return radd((1, 1), summed), None

        dynamic = "dyn" in kinds or (ttype is not None and ttype.kind == "dyn")
        if dynamic and name not in _DYN_SAFE:
            # the type checker would keep every overload; which one runs is known at run time
            raise NotEstimated(f"{name} on a value of dynamic type (x-kubernetes-int-or-string)")
        if name in ("_&&_", "_||_"):
            result(_BOOL)
            return (arg_costs[0][0], add(arg_costs[0][1], arg_costs[1][1])), None
        if name == "_?_:_":
            size = union(size_of(args[1], False), size_of(args[2], False))
            left = self.entry(e.args[1])
            joined = left.union(self.entry(e.args[2])) if left is not None else None
            if joined is not None:
                self.entries[id(e)] = joined
            branch = args[1].type if args[1].type.kind == args[2].type.kind else _DYN
            result(branch)
            return radd(arg_costs[0], union(arg_costs[1], arg_costs[2])), size
        if name in ("!_", "@not_strictly_false"):
            result(_BOOL)
            return nominal()
        if name in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"):
            result(_BOOL)
            ordered = name not in ("_==_", "_!=_")
            if name == "_==_" and kinds[0] == kinds[1] == "opaque:url":
                # the k8s library: a traversal of the right-hand URL (its text's size)
                self.use(args[1].node)
                top = args[1].size[1] if args[1].size is not None else 1
                return radd(rfactor((1, top), TRAVERSAL), summed), None
            if name == "_==_" and kinds[0].startswith("opaque:") and kinds[0] == kinds[1]:
                return nominal()  # the k8s library: quantities, IPs, CIDRs compare in O(1)
            if ordered and not (kinds[0] in ("string", "bytes") and kinds[0] == kinds[1]):
                if kinds[0] != kinds[1] and {kinds[0], kinds[1]} - {"int", "uint", "double"}:
                    raise NotEstimated(f"{name} between {kinds[0]} and {kinds[1]}")
                return nominal()
            lhs, rhs = size_of(args[0]), size_of(args[1])
            smallest = min(lhs[1], rhs[1])
            return radd(rfactor((1 if smallest > 0 else 0, smallest), TRAVERSAL), summed), None
        if name == "@in":
            result(_BOOL)
            if kinds[1] == "list":
                return radd(size_of(args[1]), summed), None
            if kinds[1] == "map":
                return nominal()
            raise NotEstimated(f"'in' on a {kinds[1]}")
        if name in ("_+_", "_-_") and set(kinds) <= {"timestamp", "duration"}:
            times = kinds.count("timestamp")
            if times == 2 and name == "_+_":
                raise NotEstimated("+ between two timestamps")
            # timestamp ± duration is a timestamp, timestamp - timestamp a duration: O(1)
            result("timestamp" if times == 1 else "duration")
            return nominal()
        if name == "_+_":
            return self.cost_add(e, args, kinds, summed)
        if name in ("_-_", "_*_", "_/_", "_%_", "-_"):
            if len(set(kinds)) != 1 or kinds[0] not in ("int", "uint", "double"):
                raise NotEstimated(f"{name} on {' and '.join(kinds)}")
            result(kinds[0])
            return nominal()
        if name == "_[_]":
            return self.cost_index(e, args, kinds, summed)
        if name == "size" and (target is not None or len(args) == 1):
            subject = ttype.kind if ttype is not None else kinds[0]
            if subject not in ("string", "bytes", "list", "map", "dyn"):
                raise NotEstimated(f"size() of a {subject}")
            result(_INT)
            return nominal()
        if target is None and name in _CONVERSIONS and len(args) == 1:
            result(_CONVERSIONS[name])
            if name == "bytes" and kinds[0] == "string":
                sz = size_of(args[0])
                return radd(rfactor(sz, TRAVERSAL), summed), (sz[0], mul(sz[1], 4))
            if name == "string" and kinds[0] == "bytes":
                sz = size_of(args[0])
                return radd(rfactor(sz, TRAVERSAL), summed), (sz[0] // 4, sz[1])
            if name == "string" and kinds[0] in ("string", "dyn"):
                # Of a string, the string itself; of an int-or-string (dyn), that or an
                # integer's digits (20 at most): no longer than the value. The apiserver bounds
                # it so too: it accepts quantity(string(x)) on a bounded int-or-string in a list
                # of 256, which a result of unknown size would price over its budget.
                low, high = size_of(args[0])
                return nominal()[0], (min(low, 1), max(high, 20))
            return nominal()
        if target is None and name == "type" and len(args) == 1:
            result("type")
            return nominal()
        if target is not None and ttype is not None:
            return self.cost_method(e, target, ttype, args, kinds, summed)
        if name in _K8S_PARSERS and len(args) == 1 and kinds[0] == "string":
            result(_K8S_PARSERS[name])
            text = size_of(args[0])
            # only url() tells the size of its result: the text's
            return radd(rfactor(text, TRAVERSAL), summed), text if name == "url" else None
        if name == "matches" and len(args) == 2 and kinds == ["string", "string"]:
            # the global form matches(text, pattern) is priced as text.matches(pattern)
            result(_BOOL)
            text = rfactor(radd(size_of(args[0]), (1, 1)), TRAVERSAL)
            return radd(rmul(text, rfactor(size_of(args[1]), REGEX)), summed), None
        if name == "isURL" and len(args) == 1 and kinds[0] == "string":
            result(_BOOL)  # the library has no size-based estimate for it
            return nominal()
        raise NotEstimated(f"function {name}()")

    def cost_add(
        self, e: Node, args: list[_Arg], kinds: list[str], summed: Range
    ) -> tuple[Range, Range | None]:
        if kinds[0] != kinds[1] and not (kinds[0] == "list" and kinds[1] == "list"):
            raise NotEstimated(f"+ between {kinds[0]} and {kinds[1]}")
        kind = kinds[0]
        if kind in ("int", "uint", "double"):
            self.types[id(e)] = Decl(kind)
            return radd((1, 1), summed), None
        if kind not in ("string", "bytes", "list"):
            raise NotEstimated(f"+ on {kind}")
        lhs = UNKNOWN if args[0].size is None else args[0].size
        rhs = UNKNOWN if args[1].size is None else args[1].size
        size = radd(lhs, rhs)
        if kind != "list":  # concatenating strings traverses them; lists are O(1)
            self.use(e.args[0], e.args[1])
        first = self.entry(e.args[0])
        joined = first.union(self.entry(e.args[1])) if first is not None else None
        if joined is not None:
            self.entries[id(e)] = joined
        if kind == "list":
            left, right = args[0].type, args[1].type
            elem = left.elem if left.elem is not None and left.elem.kind != "dyn" else right.elem
            self.types[id(e)] = Decl("list", elem=elem or _DYN)
            return radd((1, 1), summed), size
        self.types[id(e)] = Decl(kind)
        return radd(rfactor(size, TRAVERSAL), summed), size

    def cost_index(
        self, e: Node, args: list[_Arg], kinds: list[str], summed: Range
    ) -> tuple[Range, Range | None]:
        container = args[0].type
        if kinds[0] not in ("list", "map"):
            raise NotEstimated(f"indexing a {kinds[0]}")
        self.types[id(e)] = container.elem or _DYN
        entry = self.entry(e.args[0])
        self.paths[id(e)] = [*self.path(e.args[0]), "@items" if kinds[0] == "list" else "@values"]
        size = entry.val if entry is not None else None
        return radd((1, 1), summed), size

    def cost_method(
        self,
        e: Node,
        target: _Arg,
        ttype: Decl,
        args: list[_Arg],
        kinds: list[str],
        summed: Range,
    ) -> tuple[Range, Range | None]:
        name = e.name
        tsize = UNKNOWN if target.size is None else target.size
        if ttype.kind in ("string", "list") and name not in ("charAt", "startsWith", "endsWith"):
            self.use(target.node)  # the other string and list methods below traverse it

        def size_of(arg: _Arg) -> Range:
            self.use(arg.node)
            return UNKNOWN if arg.size is None else arg.size

        def done(
            kind: str | Decl, cost: Range, size: Range | None = None
        ) -> tuple[Range, Range | None]:
            self.types[id(e)] = kind if isinstance(kind, Decl) else Decl(kind)
            return radd(cost, summed), size

        if ttype.kind == "string":
            if name in ("startsWith", "endsWith") and kinds == ["string"]:
                return done("bool", rfactor(size_of(args[0]), TRAVERSAL))
            if name == "contains" and kinds == ["string"]:
                text = rfactor(tsize, TRAVERSAL)
                return done("bool", rmul(text, rfactor(size_of(args[0]), TRAVERSAL)))
            if name == "matches" and kinds == ["string"]:
                text = rfactor(radd(tsize, (1, 1)), TRAVERSAL)
                return done("bool", rmul(text, rfactor(size_of(args[0]), REGEX)))
            if name in ("find", "findAll") and kinds and kinds[0] == "string":
                text = rfactor(radd(tsize, (1, 1)), TRAVERSAL)
                found = _STRING if name == "find" else Decl("list", elem=_STRING)
                return done(found, rmul(text, rfactor(size_of(args[0]), REGEX)), (0, tsize[1]))
            if name in ("lowerAscii", "upperAscii", "trim") and not args:
                return done("string", rfactor(tsize, TRAVERSAL), tsize)
            if name == "substring" and kinds in (["int"], ["int", "int"]):
                return done("string", rfactor(tsize, TRAVERSAL), tsize)
            if name in ("indexOf", "lastIndexOf") and kinds in (["string"], ["string", "int"]):
                return done("int", rfactor(tsize, TRAVERSAL))
            if name == "charAt" and kinds == ["int"]:
                return done("string", (1, 1))
            if name == "replace" and kinds in (["string", "string"], ["string", "string", "int"]):
                size = replaced_size(tsize, size_of(args[0]), size_of(args[1]))
                return done("string", rfactor(tsize, 2 * TRAVERSAL), size)
            if name == "split" and kinds in (["string"], ["string", "int"]):
                top = tsize[1]
                if len(e.args) > 1 and e.args[1].kind == "literal":
                    top = int(e.args[1].value)
                return done(Decl("list", elem=_STRING), rfactor(tsize, 2 * TRAVERSAL), (0, top))
        if ttype.kind == "list":
            elem = ttype.elem or _DYN
            if name == "join" and elem.kind == "string" and kinds in ([], ["string"]):
                item = self.estimate_path([*target.path, "@items"]) if target.path else None
                self.note(self.unbounded_at([*target.path, "@items"]))
                joined = rmul(tsize, item if item is not None else UNKNOWN)
                if args:
                    separators = (max(tsize[0] - 1, 0), max(tsize[1] - 1, 0))
                    joined = radd(joined, rmul(size_of(args[0]), separators))
                return done("string", rfactor(joined, TRAVERSAL), joined)
            if name in ("isSorted", "sum", "min", "max", "indexOf", "lastIndexOf") and (
                len(args) == (1 if name in ("indexOf", "lastIndexOf") else 0)
            ):
                per_item: Range = (1, 1)
                if elem.kind in ("string", "bytes"):
                    path = [*target.path, "@items"] if target.path else []
                    item = self.estimate_path(path)
                    self.note(self.unbounded_at(path))
                    per_item = radd(per_item, rfactor(item or UNKNOWN, TRAVERSAL))
                kind = {"isSorted": _BOOL, "indexOf": _INT, "lastIndexOf": _INT}.get(name, elem)
                return done(kind, rmul(tsize, per_item))
        if ttype.kind == "optional" and ttype.elem is not None:
            if name == "hasValue" and not args:
                return done("bool", (1, 1))
            if name == "value" and not args:
                return done(ttype.elem, (1, 1))
            if name == "orValue" and len(args) == 1:
                return done(ttype.elem, (1, 1))
        if ttype.kind == "timestamp" and name in _TIME_ACCESSORS:
            return done("int", (1, 1))
        if ttype.kind.startswith("opaque:") and name in _K8S_ACCESSORS:
            return done(_K8S_ACCESSORS[name], (1, 1))
        raise NotEstimated(f"method {name}() on a {ttype.kind}")


@dataclass(frozen=True)
class Estimate:
    """A rule's estimated cost, and the values whose size weighs in it that only the request
    limit bounds (``self.name``, ``self.items[*]``): where a ``maxLength``, ``maxItems`` or
    ``maxProperties`` would lower it."""

    cost: int
    unbounded: tuple[str, ...]


def estimate_rule(rule: str, self_type: Decl, optional_old_self: bool = False) -> Estimate:
    """The apiserver's estimated worst-case cost of one rule on a value of ``self_type``,
    before it is multiplied by the cardinality; ``NotEstimated`` if it is not modelled.
    With ``optional_old_self`` (the rule's ``optionalOldSelf``) ``oldSelf`` is an optional."""
    try:
        tree = parse(rule)
    except CelSyntaxError as error:
        raise NotEstimated(f"not read: {error}") from error
    coster = _Coster(self_type, optional_old_self)
    cost = coster.cost(tree)[1]
    return Estimate(cost, tuple(coster.unbounded))
