"""crdkit's version, as a literal: reading it from the installed distribution's metadata
(importlib.metadata) costs tens of milliseconds, more than the rest of `crdkit --version`.
tests/unit/test_package.py keeps it equal to pyproject.toml's and the installed metadata's."""

VERSION = "0.1.0"
