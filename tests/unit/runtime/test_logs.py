"""Unit tests of the structured log output."""

from __future__ import annotations

import json
import logging

import pytest

from crdkit.runtime.logs import JsonFormatter, ReconcileLogger, configure_logging


def test_reconcile_fields_reach_the_json_line() -> None:
    logger = logging.getLogger("crdkit.test.logs")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        bound = ReconcileLogger(
            logger,
            {"controller": "hello", "namespace": "ns", "name": "a", "reconcileID": "r1"},
        )
        bound.info("reconciled %s", "a", extra={"step": 2})
    finally:
        logger.removeHandler(handler)
    line = json.loads(JsonFormatter().format(records[0]))
    assert line["msg"] == "reconciled a"
    assert line["level"] == "info"
    assert line["controller"] == "hello"
    assert line["namespace"] == "ns"
    assert line["name"] == "a"
    assert line["reconcileID"] == "r1"
    assert line["step"] == 2


def test_configure_logging_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="log level"):
        configure_logging(level="chatty")
    with pytest.raises(ValueError, match="log format"):
        configure_logging(fmt="xml")
