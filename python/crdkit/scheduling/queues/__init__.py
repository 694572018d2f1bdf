"""Queues for a shared cluster: guaranteed quota per queue, borrowing and lending in nested
cohorts, reclaim, and fair share of the surplus by weight, decided in the same pass as
placement (see docs/guides/queues.md).

- `tree`: the quota arithmetic of a forest of queues (pure);
- `admission`: which gangs the queues admit, in fair-share order, in which flavor (pure);
- `reclaim`: whom a queue under its nominal quota may evict, and preemption kept in a queue;
- `gate`: the pass's view of the queues (usage of running gangs, a gang's queue);
- `step`: the cycle's quota step;
- `book`: the queues read from the `Queue` informer.
"""
