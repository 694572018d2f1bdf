"""The fewest pods of each task a Volcano Job can start with (the PodGroup's ``minTaskMember``).

A task's ``minAvailable`` is used as given. Tasks without one share what the job's
``minAvailable`` leaves over, in task order (so a master listed first is kept), each at least 1
and at most its replicas; with no job-level figure either, a task needs all its replicas. Tasks
with zero replicas are left out.
"""

from __future__ import annotations

from examples.gang_scheduler.models import Job


def task_minimums(job: Job) -> dict[str, int]:
    """The fewest pods each task can start with (see the module docstring for the rule)."""
    tasks = [task for task in job.spec.tasks if task.replicas > 0]
    explicit = {task.name: task.min_available for task in tasks if task.min_available is not None}
    open_tasks = [task for task in tasks if task.min_available is None]
    minimums: dict[str, int] = {}
    if not job.spec.min_available:
        for task in open_tasks:
            minimums[task.name] = task.replicas
    else:
        budget = job.spec.min_available - sum(value for value in explicit.values() if value)
        for task in open_tasks:
            share = min(task.replicas, max(budget, 1))
            minimums[task.name] = share
            budget -= share
    for name, value in explicit.items():
        minimums[name] = max(value or 0, 1)
    return minimums
