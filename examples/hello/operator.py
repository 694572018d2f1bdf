"""A Hello resource gets a ConfigMap with its greeting and a Ready condition."""

from __future__ import annotations

from pydantic import Field

from crdkit import Context, Reconciler
from crdkit.resources import ApiModel, ConfigMap, CustomResource, ObjectMeta
from crdkit.runtime import Condition, set_condition


class HelloSpec(ApiModel):
    greeting: str = "Hello"
    target: str = Field(min_length=1)


class HelloStatus(ApiModel):
    config_map: str | None = None
    observed_generation: int | None = None
    conditions: list[Condition] = Field(default_factory=list)


class Hello(CustomResource, group="hello.example.com", version="v1", kind="Hello"):
    spec: HelloSpec
    status: HelloStatus | None = None


class HelloReconciler(Reconciler[Hello]):
    owns = (ConfigMap,)

    async def reconcile(self, ctx: Context, obj: Hello) -> None:
        name = f"{obj.metadata.name}-greeting"
        message = f"{obj.spec.greeting}, {obj.spec.target}!"
        await ctx.apply(
            ConfigMap(
                metadata=ObjectMeta(name=name, namespace=obj.metadata.namespace),
                data={"message": message},
            )
        )
        status = (obj.status or HelloStatus()).model_copy(deep=True)
        status.config_map, status.observed_generation = name, obj.metadata.generation
        set_condition(
            status.conditions,
            type="Ready",
            status="True",
            reason="ConfigMapApplied",
            message=message,
        )
        if status != obj.status:  # write only what changed: no reconcile loop on our own write
            obj.status = status
            await ctx.update_status(obj)
            ctx.log.info("greeting written to %s", name)
