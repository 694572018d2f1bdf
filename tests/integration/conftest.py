"""Integration tests: this folder's conftest, so that pytest puts the folder on ``sys.path`` and
the tests of every subfolder import the helpers in ``_live.py`` by module name."""
