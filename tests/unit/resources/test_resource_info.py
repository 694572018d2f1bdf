import pytest

from crdkit.resources import ConfigMap, Node, Pod, ResourceInfo, resource_info

JOBS = ResourceInfo(
    group="batch.example.com",
    version="v1",
    kind="TrainingJob",
    plural="trainingjobs",
    singular="trainingjob",
    namespaced=True,
)


def test_api_version_of_core_and_named_groups() -> None:
    assert resource_info(Pod).api_version == "v1"
    assert JOBS.api_version == "batch.example.com/v1"
    assert JOBS.list_kind == "TrainingJobList"


def test_paths() -> None:
    assert resource_info(Pod).path() == "/api/v1/pods"
    assert resource_info(Pod).path(namespace="ns") == "/api/v1/namespaces/ns/pods"
    assert (
        resource_info(Pod).path(namespace="ns", name="p", subresource="binding")
        == "/api/v1/namespaces/ns/pods/p/binding"
    )
    assert resource_info(Node).path(name="n1") == "/api/v1/nodes/n1"
    assert (
        JOBS.path(namespace="ns", name="j", subresource="status")
        == "/apis/batch.example.com/v1/namespaces/ns/trainingjobs/j/status"
    )


def test_path_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="cluster-scoped"):
        resource_info(Node).path(namespace="ns")
    with pytest.raises(ValueError, match="namespace is needed"):
        resource_info(ConfigMap).path(name="c")
    with pytest.raises(ValueError, match="subresource needs"):
        JOBS.path(subresource="status")


def test_resource_info_of_an_instance_and_of_a_non_resource() -> None:
    assert resource_info(Pod()) is resource_info(Pod)
    with pytest.raises(TypeError, match="int is not an addressable resource"):
        resource_info(int)


def test_invalid_info_is_refused() -> None:
    with pytest.raises(ValueError, match="plural"):
        ResourceInfo(group="", version="v1", kind="X", plural="", singular="x", namespaced=True)
    with pytest.raises(ValueError, match="lowercase"):
        ResourceInfo(group="", version="v1", kind="X", plural="Xs", singular="x", namespaced=True)
