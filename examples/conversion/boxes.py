"""Two versions of one kind and the conversion between them, hub and spoke.

``v1`` (the storage version, and the hub) says ``image: "repo:tag"`` and ``replicas``; ``v2``
splits the image into ``container.repository`` and ``container.tag`` and moves replicas under
``scale``. Both directions lose nothing, which
``tests/property/runtime/test_conversion_round_trip.py`` checks::

    manager.add_conversion(Conversion(hub=BoxV1, spokes=(BoxV2,)))
"""

from __future__ import annotations

from pydantic import Field

from crdkit import ApiModel, CustomResource
from crdkit.runtime import Conversion

_NAME = r"[a-z0-9]([a-z0-9./-]*[a-z0-9])?"
_TAG = r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?"


class BoxV1Spec(ApiModel):
    image: str = Field(pattern=rf"^{_NAME}(:{_TAG})?$")
    replicas: int = Field(default=1, ge=0)


class BoxV1(CustomResource, group="boxes.example.com", version="v1", kind="Box", storage=True):
    spec: BoxV1Spec


class Container(ApiModel):
    repository: str = Field(pattern=rf"^{_NAME}$")
    tag: str | None = Field(default=None, pattern=rf"^{_TAG}$")


class Scale(ApiModel):
    replicas: int = Field(default=1, ge=0)


class BoxV2Spec(ApiModel):
    container: Container
    scale: Scale = Field(default_factory=Scale)


class BoxV2(CustomResource, group="boxes.example.com", version="v2", kind="Box"):
    spec: BoxV2Spec

    def to_hub(self) -> BoxV1:
        container = self.spec.container
        image = container.repository + (f":{container.tag}" if container.tag else "")
        return BoxV1(
            metadata=self.metadata, spec=BoxV1Spec(image=image, replicas=self.spec.scale.replicas)
        )

    @classmethod
    def from_hub(cls, hub: BoxV1) -> BoxV2:
        repository, _, tag = hub.spec.image.partition(":")
        return cls(
            metadata=hub.metadata,
            spec=BoxV2Spec(
                container=Container(repository=repository, tag=tag or None),
                scale=Scale(replicas=hub.spec.replicas),
            ),
        )


BOX_CONVERSION = Conversion(hub=BoxV1, spokes=(BoxV2,))
