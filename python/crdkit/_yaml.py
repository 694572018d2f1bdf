"""Reading YAML the way every crdkit command reports it: the safe loader (libyaml's when PyYAML
has it), and any failure as a one-line ``ValueError`` that says where and what.

Shared by the kubeconfig loader and the placer's file reader, which add their own prefix (the
file, and what it was meant to be). PyYAML is imported on first use: importing a layer should
not pay for it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from crdkit._errors import CrdkitError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    import yaml

__all__ = ["NestedTooDeeply", "load_yaml", "load_yaml_documents", "read_yaml_file"]


class NestedTooDeeply(CrdkitError, ValueError):
    """The document nests deeper than the parser can follow."""


def load_yaml(text: str) -> Any:
    """The plain data of one YAML document (``None`` for an empty one)."""
    import yaml

    with _one_line_errors():
        return yaml.load(text, Loader=_loader())  # a safe loader: plain data only


def load_yaml_documents(text: str) -> list[Any]:
    """The plain data of every document of a multi-document stream (``---`` separated)."""
    import yaml

    with _one_line_errors():
        return list(yaml.load_all(text, Loader=_loader()))  # a safe loader: plain data only


def read_yaml_file(
    path: Path,
    where: str,
    fail: Callable[[str], Exception],
    *,
    load: Callable[[str], Any] = load_yaml,
    what: str = "YAML",
) -> Any:
    """The data of the file ``path``, read as UTF-8 and parsed by ``load``.

    A file that cannot be read, is not UTF-8 text or is not ``what`` raises ``fail(message)``,
    the message one line beginning with ``where``: every file crdkit reads for a user (a
    kubeconfig, ``--config``, a role file) is reported in the same words.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise fail(f"{where}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except OSError as err:
        raise fail(f"{where}: cannot read it: {err.strerror or err}") from None
    try:
        return load(text)
    except ValueError as err:
        raise fail(f"{where}: not {what}: {err}") from None


def _loader() -> type[yaml.SafeLoader]:
    import yaml

    # libyaml's parser when PyYAML has it: several times faster, the same documents.
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """Turn whatever PyYAML raises while loading into the one-line errors callers report."""
    import yaml

    try:
        yield
    except RecursionError:
        raise NestedTooDeeply("nested too deeply") from None
    except yaml.YAMLError as err:
        raise ValueError(_problem(err)) from None
    except (ValueError, TypeError, OverflowError) as err:
        # PyYAML's constructors raise these for values such as the date 2001-02-30.
        raise ValueError(_first_line(err)) from None


def _problem(err: yaml.YAMLError) -> str:
    # PyYAML's message spans lines (context, a quoted excerpt, a caret); keep where and what.
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None)
    if mark is None or not problem:
        return _first_line(err)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"


def _first_line(err: Exception) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
