"""What the work queue's state machines (test_queue_properties, test_queue_priority_properties)
share: the keys workers hold, and the rule by which a worker finishes one. Imported by module
name (pytest puts this folder on ``sys.path``)."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from crdkit.runtime.queue import WorkQueue


class Workers(RuleBasedStateMachine):
    """A machine whose ``queue`` hands keys to workers; ``processing`` is what they hold.

    ``done`` finishes one of them, chosen by hypothesis, then lets the subclass's model
    catch up in ``finished`` (a key added while it was processing is due again).
    """

    queue: WorkQueue[str]

    def __init__(self) -> None:
        super().__init__()
        self.processing: set[str] = set()

    @precondition(lambda self: bool(self.processing))
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.processing)))
        self.queue.done(key)
        self.processing.discard(key)
        self.finished(key)

    def finished(self, key: str) -> None:
        """The model's side of ``done`` for ``key``: nothing unless a subclass says."""
