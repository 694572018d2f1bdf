"""Reconciler options from the command line: ``crdkit run mod:Class --option key=value`` and
``--config FILE``, turned into keyword arguments of each class's constructor.

::

    class Scheduler(Reconciler[PodGroup]):
        def __init__(self, zones: list[str], max_gangs: int = 10, dry_run: bool = False): ...

    crdkit run sched:Scheduler --option zones=a,b --option dry-run=yes --config sched.yaml

Values are converted by the constructor's annotations: ``str``, ``int``, ``float``, ``bool``
(true/false/1/0/yes/no), ``list[str]`` (comma-separated on the command line, a YAML list in the
file; other item types are converted item by item), ``Literal`` and ``Enum`` members, ``Path``,
unions of these (the first member that takes the value; ``str`` last) and ``X | None`` (``none`` or
``null`` gives ``None``). An unannotated or ``Any`` parameter gets the text (or the YAML value); any
other class only a YAML value already of that class, so a parameter such as ``mirror: ClusterMirror
| None`` refuses ``--option mirror=x`` instead of receiving the text. The config file is a mapping
of the same keys (``Class.key`` or a ``Class:`` section for one class only); ``--option`` overrides
it. With several classes, ``Class.key=value`` is for one class, and an unqualified key goes to every
class that takes it (an error if none does). Dashes in keys read as underscores. Every problem is an
:class:`OptionError`: one line that names the option and the class.
"""

from __future__ import annotations

import collections.abc
import enum
import inspect
import types
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

from crdkit._yaml import read_yaml_file
from crdkit.runtime.errors import ControllerError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["OptionError", "build_reconcilers", "reconciler_options"]

_TRUE = ("true", "1", "yes", "y", "on")
_FALSE = ("false", "0", "no", "n", "off")


class OptionError(ControllerError, ValueError):
    """A reconciler option that cannot be given as asked (one line)."""


class _Parameters:
    """A constructor's keyword parameters: name -> (annotation, required)."""

    def __init__(self, cls: type[Any]) -> None:
        self.cls = cls
        self.name = cls.__qualname__
        init = cls.__init__
        try:
            signature = inspect.signature(init)
        except (TypeError, ValueError):
            signature = inspect.Signature()
        try:
            hints = typing.get_type_hints(init)
        except Exception:  # an annotation that names something not importable here
            hints = {}
        self.params: dict[str, tuple[Any, bool]] = {}
        self.takes_any = False
        for index, param in enumerate(signature.parameters.values()):
            if index == 0 and param.name == "self":
                continue
            if param.kind is param.VAR_KEYWORD:
                self.takes_any = True
            elif param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
                annotation = hints.get(param.name, param.annotation)
                self.params[param.name] = (annotation, param.default is param.empty)
        if init is object.__init__:  # no constructor of its own: it takes nothing
            self.params = {}
            self.takes_any = False

    def accepts(self, key: str) -> bool:
        return key in self.params or self.takes_any


def _split(ref: str) -> tuple[str | None, str]:
    qualifier, dot, key = ref.rpartition(".")
    return (qualifier if dot else None), key.replace("-", "_")


def _convert(value: Any, annotation: Any, *, text: bool, where: str) -> Any:
    """``value`` as ``annotation`` wants it; ``text``: it came from the command line.

    A value the annotation cannot be made from is an :class:`OptionError`, never passed on
    as given: a constructor annotated ``ClusterMirror`` must not receive the string ``"x"``.
    """
    if annotation in (inspect.Parameter.empty, Any, object):
        return value  # the constructor takes anything: the value as given
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        return _convert_union(value, annotation, text=text, where=where)
    if origin is typing.Literal:
        for member in get_args(annotation):
            if value == member or (text and isinstance(value, str) and value == str(member)):
                return member
        choices = ", ".join(repr(m) for m in get_args(annotation))
        raise OptionError(f"{where}: expected one of {choices}, got {value!r}")
    if annotation is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str | int) and str(value).lower() in _TRUE + _FALSE:
            return str(value).lower() in _TRUE
        raise OptionError(f"{where}: expected true/false/yes/no/1/0, got {value!r}")
    if annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return int(str(value).strip())
        except ValueError:
            raise OptionError(f"{where}: expected an integer, got {value!r}") from None
    if annotation is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        try:
            return float(str(value).strip())
        except ValueError:
            raise OptionError(f"{where}: expected a number, got {value!r}") from None
    if annotation is str:
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            return str(value)
        raise OptionError(f"{where}: expected a string, got {value!r}")
    if origin in (list, collections.abc.Sequence):
        (item,) = get_args(annotation) or (str,)
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        elif not isinstance(value, list):
            raise OptionError(f"{where}: expected a comma-separated list, got {value!r}")
        return [_convert(v, item, text=text, where=where) for v in value]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        for member in annotation:
            if value in (member.value, member.name) or str(member.value) == str(value):
                return member
        choices = ", ".join(repr(m.value) for m in annotation)
        raise OptionError(f"{where}: expected one of {choices}, got {value!r}")
    if annotation is Path:
        if isinstance(value, str):
            return Path(value)
        raise OptionError(f"{where}: expected a path, got {value!r}")
    runtime_type = origin if isinstance(origin, type) else annotation
    if isinstance(runtime_type, type):
        if isinstance(value, runtime_type):
            return value  # e.g. a dict from the config file for a dict[str, str]
        raise OptionError(
            f"{where}: takes a {_type_name(annotation)}, which cannot be made from {value!r}; "
            "leave it out to get the constructor's default"
        )
    return value  # an annotation crdkit cannot read (a TypeVar, a string): the value as given


def _convert_union(value: Any, annotation: Any, *, text: bool, where: str) -> Any:
    members = [a for a in get_args(annotation) if a is not type(None)]
    optional = len(members) < len(get_args(annotation))
    if optional and (value is None or (text and value.lower() in ("none", "null"))):
        return None
    if len(members) == 1:
        return _convert(value, members[0], text=text, where=where)
    # The text "3" for ``int | str`` is the int: a string member is the last resort.
    ordered = sorted(members, key=lambda member: member is str)
    for member in ordered:
        try:
            return _convert(value, member, text=text, where=where)
        except OptionError:
            continue
    names = " | ".join(_type_name(m) for m in get_args(annotation))
    raise OptionError(f"{where}: takes {names}, which cannot be made from {value!r}")


def _type_name(annotation: Any) -> str:
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__qualname__", None) or str(annotation)


def _read_config(path: Path) -> dict[str, Any]:
    data = read_yaml_file(path, f"--config {path}", OptionError, what="YAML or JSON")
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise OptionError(f"--config {path}: expected a mapping of option names to values")
    return data


def reconciler_options(
    classes: Sequence[type[Any]],
    options: Sequence[str],
    config: Path | None = None,
    *,
    require_all: bool = True,
) -> list[dict[str, Any]]:
    """The keyword arguments of each class (in order), from ``--option``s and ``--config``.

    ``require_all=False`` leaves a required parameter nobody gave to the constructor (whose
    ``TypeError`` the caller reports), instead of an :class:`OptionError` here."""
    params = [_Parameters(cls) for cls in classes]
    names = {p.cls.__name__: i for i, p in enumerate(params)}
    names.update({p.name: i for i, p in enumerate(params)})
    chosen: list[dict[str, Any]] = [{} for _ in params]
    entries: list[tuple[str, str, Any, bool]] = []  # (origin, key as given, value, is text)
    if config is not None:
        for key, value in _read_config(config).items():
            if key in names and isinstance(value, dict):  # a section for one class
                entries.extend(
                    (f"--config {config}", f"{key}.{k}", v, False) for k, v in value.items()
                )
            else:
                entries.append((f"--config {config}", key, value, False))
    for option in options:
        key, eq, value = option.partition("=")
        if not eq or not key.strip():
            raise OptionError(f"--option {option!r}: expected key=value (or Class.key=value)")
        entries.append(("--option", key.strip(), value, True))
    for origin, ref, value, text in entries:
        qualifier, key = _split(ref)
        if qualifier is not None:
            if qualifier not in names:
                known = ", ".join(p.cls.__name__ for p in params)
                raise OptionError(
                    f"{origin} {ref}: no class {qualifier!r} on the command line (given: {known})"
                )
            targets = [names[qualifier]]
            if not params[targets[0]].accepts(key):
                raise OptionError(
                    f"{origin} {ref}: {params[targets[0]].name} takes no option {key!r}"
                    f"{_takes(params[targets[0]])}"
                )
        else:
            targets = [i for i, p in enumerate(params) if p.accepts(key)]
            if not targets:
                raise OptionError(
                    f"{origin} {ref}: unknown option: "
                    + "; ".join(f"{p.name}{_takes(p) or ' takes no options'}" for p in params)
                )
        for index in targets:
            annotation, _ = params[index].params.get(key, (inspect.Parameter.empty, False))
            where = f"{origin} {ref} of {params[index].name}"
            chosen[index][key] = (
                value
                if annotation is inspect.Parameter.empty
                else _convert(value, annotation, text=text, where=where)
            )
    for index, p in enumerate(params):
        for key, (_, required) in p.params.items():
            if required and key not in chosen[index] and require_all:
                raise OptionError(
                    f"{p.name} needs option {key!r}: give --option {key}=VALUE "
                    "(or set it in --config)"
                )
    return chosen


def _takes(p: _Parameters) -> str:
    return f" (it takes: {', '.join(p.params)})" if p.params else ""


def build_reconcilers(
    classes: Sequence[type[Any]], options: Sequence[str], config: Path | None = None
) -> list[Any]:
    """An instance of each class, built with its options; its constructor's own
    ``ValueError`` or ``TypeError`` is an :class:`OptionError` too."""
    instances = []
    for cls, kwargs in zip(classes, reconciler_options(classes, options, config), strict=True):
        try:
            instances.append(cls(**kwargs))
        except (TypeError, ValueError) as error:
            said = " ".join(str(error).split())
            raise OptionError(f"{cls.__qualname__}: {type(error).__name__}: {said}") from None
    return instances
