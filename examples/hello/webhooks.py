"""The hello operator with admission webhooks: a validator refuses greeting nobody and warns
about shouting, a defaulter capitalises the greeting.

    crdkit run examples.hello.webhooks:HelloWebhookReconciler --webhook-install hello
"""

from __future__ import annotations

from crdkit.runtime import AdmissionContext, Defaulter, Denied, Validator, Webhook
from examples.hello.operator import Hello, HelloReconciler


class HelloValidator(Validator[Hello]):
    async def validate_create(self, ctx: AdmissionContext, obj: Hello) -> list[str] | None:
        if obj.spec.target.lower() == "nobody":
            raise Denied("spec.target: greet somebody")
        return ["spec.greeting: no need to shout"] if obj.spec.greeting.isupper() else None

    async def validate_update(
        self, ctx: AdmissionContext, old: Hello, new: Hello
    ) -> list[str] | None:
        return await self.validate_create(ctx, new)


class HelloDefaulter(Defaulter[Hello]):
    async def default(self, ctx: AdmissionContext, obj: Hello) -> None:
        obj.spec.greeting = obj.spec.greeting[:1].upper() + obj.spec.greeting[1:]


class HelloWebhookReconciler(HelloReconciler):
    webhooks = (Webhook(Hello, validator=HelloValidator(), defaulter=HelloDefaulter()),)
