"""``batch/v1`` Job and CronJob: run-to-completion pods, the unit a training step or a data
preparation runs as.

Only what operators set or read is typed; every model keeps the fields it does not declare, so a
read-modify-write through them loses nothing.
"""

# Annotations are evaluated at class creation (no `from __future__ import annotations`), so the
# names they use are runtime imports to pydantic and to the linter alike.
from pydantic import Field

from crdkit.resources._model import OpenModel, RawObject, Time
from crdkit.resources.core import ObjectReference, PodCondition, PodTemplateSpec
from crdkit.resources.meta import LabelSelector, ObjectMeta
from crdkit.resources.object import KubernetesObject

__all__ = [
    "CronJob",
    "CronJobSpec",
    "CronJobStatus",
    "Job",
    "JobCondition",
    "JobSpec",
    "JobStatus",
    "JobTemplateSpec",
]


class JobSpec(OpenModel):
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    parallelism: int | None = None
    completions: int | None = None
    completion_mode: str | None = None
    backoff_limit: int | None = None
    backoff_limit_per_index: int | None = None
    active_deadline_seconds: int | None = None
    ttl_seconds_after_finished: int | None = None
    suspend: bool | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    pod_failure_policy: RawObject | None = None
    success_policy: RawObject | None = None
    pod_replacement_policy: str | None = None
    managed_by: str | None = None


class JobCondition(PodCondition):
    """``Complete``, ``Failed``, ``Suspended``, ``FailureTarget``, ``SuccessCriteriaMet``; the
    same fields as a Pod's condition (``batchv1.JobCondition``)."""


class JobStatus(OpenModel):
    active: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    ready: int | None = None
    terminating: int | None = None
    start_time: Time | None = None
    completion_time: Time | None = None
    completed_indexes: str | None = None
    failed_indexes: str | None = None
    conditions: list[JobCondition] = Field(default_factory=list)


class Job(KubernetesObject, group="batch", version="v1", kind="Job", plural="jobs"):
    spec: JobSpec = Field(default_factory=JobSpec)
    status: JobStatus | None = None


class JobTemplateSpec(OpenModel):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: JobSpec = Field(default_factory=JobSpec)


class CronJobSpec(OpenModel):
    schedule: str = ""
    job_template: JobTemplateSpec = Field(default_factory=JobTemplateSpec)
    time_zone: str | None = None
    concurrency_policy: str | None = None
    suspend: bool | None = None
    starting_deadline_seconds: int | None = None
    successful_jobs_history_limit: int | None = None
    failed_jobs_history_limit: int | None = None


class CronJobStatus(OpenModel):
    active: list[ObjectReference] = Field(default_factory=list)
    last_schedule_time: Time | None = None
    last_successful_time: Time | None = None


class CronJob(KubernetesObject, group="batch", version="v1", kind="CronJob", plural="cronjobs"):
    spec: CronJobSpec = Field(default_factory=CronJobSpec)
    status: CronJobStatus | None = None
