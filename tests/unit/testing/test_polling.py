"""``eventually`` and ``holds``: plain predicates and coroutine functions alike."""

from __future__ import annotations

import pytest

from crdkit.testing import eventually
from crdkit.testing.polling import holds


async def test_holds_answers_for_a_predicate_and_a_coroutine_function() -> None:
    async def yes() -> bool:
        return True

    assert await holds(lambda: True) is True
    assert await holds(lambda: False) is False
    assert await holds(yes) is True


async def test_eventually_polls_a_plain_predicate_until_it_holds() -> None:
    calls: list[int] = []

    def third_time() -> bool:
        calls.append(1)
        return len(calls) >= 3

    await eventually(third_time, 60, "the third call", interval=0)
    assert len(calls) == 3


async def test_eventually_names_what_was_not_met() -> None:
    with pytest.raises(AssertionError, match="never not met within 0s"):
        await eventually(lambda: False, 0, "never", interval=0)
