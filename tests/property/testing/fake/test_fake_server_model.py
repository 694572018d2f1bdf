"""FakeApiServer against a model: resourceVersion, generation and conflict invariants.

A state machine creates, updates (fresh or stale, spec or labels or nothing), writes status,
adds finalizers, deletes and releases objects; after every step the server must agree with a
model that only counts: one global version that grows with every real write and stays put on
a no-op, generation = 1 + spec changes (+1 when marked for deletion), ``Conflict`` exactly when
the write's version is stale, and an object held by finalizers until they are gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from examples.hello.operator import Hello
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from crdkit.client import AlreadyExists, Conflict, NotFound
from crdkit.testing.fake.kinds import FakeKind
from crdkit.testing.fake.select import Selection
from crdkit.testing.fake.server import FakeApiServer

NAMES = st.sampled_from(["a", "b", "c"])
NS = "ns"
KIND = FakeKind.of_custom_resource(Hello)


@dataclass
class Model:
    generation: int
    spec: str
    labels: dict[str, str]
    finalizers: list[str] = field(default_factory=list)
    deleting: bool = False
    status: str | None = None
    versions: list[str] = field(default_factory=list)  # every version this object had


def body(name: str, spec: str, labels: dict[str, str], version: str | None) -> dict[str, object]:
    metadata: dict[str, object] = {"name": name, "namespace": NS, "labels": dict(labels)}
    if version is not None:
        metadata["resourceVersion"] = version
    return {
        "apiVersion": "hello.example.com/v1",
        "kind": "Hello",
        "metadata": metadata,
        "spec": {"target": spec},
    }


class FakeServerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.server = FakeApiServer(clock=lambda: datetime(2030, 1, 1, tzinfo=UTC))
        self.model: dict[str, Model] = {}
        self.revision = 0

    def _wrote(self, name: str, version: str) -> None:
        assert int(version) == self.revision + 1, "one counter, one step per write"
        self.revision = int(version)
        self.model[name].versions.append(version)

    def _version(self, name: str) -> str:
        return self.model[name].versions[-1]

    @rule(name=NAMES, spec=st.sampled_from(["x", "y"]))
    def create(self, name: str, spec: str) -> None:
        try:
            got = self.server.create(KIND, NS, body(name, spec, {}, None))
        except AlreadyExists:
            assert name in self.model
            return
        assert name not in self.model
        self.model[name] = Model(generation=1, spec=spec, labels={})
        self._wrote(name, got["metadata"]["resourceVersion"])
        assert got["metadata"]["generation"] == 1

    @precondition(lambda self: self.model)
    @rule(
        data=st.data(),
        spec=st.sampled_from(["x", "y"]),
        label=st.sampled_from(["", "1", "2"]),
        stale=st.booleans(),
    )
    def update(self, data: st.DataObject, spec: str, label: str, stale: bool) -> None:
        name = data.draw(st.sampled_from(sorted(self.model)))
        model = self.model[name]
        stale = stale and len(model.versions) > 1
        version = model.versions[0] if stale else self._version(name)
        labels = {"l": label} if label else {}
        new = body(name, spec, labels, version)
        new["metadata"]["finalizers"] = list(model.finalizers)  # type: ignore[index]
        try:
            got = self.server.update(KIND, NS, name, new)
        except Conflict:
            assert stale
            return
        assert not stale
        changed = spec != model.spec or labels != model.labels
        if spec != model.spec:
            model.generation += 1
        model.spec, model.labels = spec, labels
        if changed:
            self._wrote(name, got["metadata"]["resourceVersion"])
        else:
            assert got["metadata"]["resourceVersion"] == version  # a no-op is no write

    @precondition(lambda self: self.model)
    @rule(data=st.data(), status=st.sampled_from(["ok", "bad"]))
    def update_status(self, data: st.DataObject, status: str) -> None:
        name = data.draw(st.sampled_from(sorted(self.model)))
        model = self.model[name]
        new = body(name, "ignored-spec", {"ignored": "label"}, self._version(name))
        new["status"] = {"configMap": status}
        got = self.server.update(KIND, NS, name, new, subresource="status")
        assert got["spec"] == {"target": model.spec}
        if status != model.status:
            model.status = status
            self._wrote(name, got["metadata"]["resourceVersion"])

    @precondition(lambda self: any(not m.deleting for m in self.model.values()))
    @rule(data=st.data())
    def add_finalizer(self, data: st.DataObject) -> None:
        name = data.draw(
            st.sampled_from(sorted(n for n, m in self.model.items() if not m.deleting))
        )
        model = self.model[name]
        if "x.io/f" in model.finalizers:
            return
        new = body(name, model.spec, model.labels, self._version(name))
        new["metadata"]["finalizers"] = [*model.finalizers, "x.io/f"]  # type: ignore[index]
        got = self.server.update(KIND, NS, name, new)
        model.finalizers.append("x.io/f")
        self._wrote(name, got["metadata"]["resourceVersion"])

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.model)))
        model = self.model[name]
        got = self.server.delete(KIND, NS, name, {})
        if not model.finalizers:
            del self.model[name]
            assert int(got["metadata"]["resourceVersion"]) == self.revision + 1
            self.revision += 1
            return
        if not model.deleting:
            model.deleting = True
            model.generation += 1
            self._wrote(name, got["metadata"]["resourceVersion"])
        assert got["metadata"]["deletionTimestamp"]

    @precondition(lambda self: any(m.deleting for m in self.model.values()))
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(n for n, m in self.model.items() if m.deleting)))
        new = self.server.get(KIND, NS, name)
        new["metadata"]["finalizers"] = []
        self.server.update(KIND, NS, name, new)
        del self.model[name]
        self.revision += 1  # the deletion is a write

    @invariant()
    def server_agrees_with_the_model(self) -> None:
        assert self.server.revision == self.revision
        listed = self.server.list_objects(KIND, NS, Selection(KIND, None, None))
        assert [o["metadata"]["name"] for o in listed] == sorted(self.model)
        for obj in listed:
            model = self.model[obj["metadata"]["name"]]
            metadata = obj["metadata"]
            assert metadata["resourceVersion"] == model.versions[-1]
            assert metadata["generation"] == model.generation
            assert obj["spec"] == {"target": model.spec}
            assert metadata.get("labels", {}) == model.labels
            assert bool(metadata.get("deletionTimestamp")) == model.deleting
            assert (obj.get("status") or {}).get("configMap") == model.status

    @precondition(lambda self: self.model)
    @rule(name=NAMES)
    def get_missing_or_present(self, name: str) -> None:
        try:
            self.server.get(KIND, NS, name)
        except NotFound:
            assert name not in self.model
        else:
            assert name in self.model


FakeServerMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30)
test_fake_server_agrees_with_the_model = FakeServerMachine.TestCase
