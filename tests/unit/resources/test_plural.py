import pytest

from crdkit.resources.plural import pluralize


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("Policy", "Policies"),
        ("Class", "Classes"),
        ("Status", "Statuses"),
        ("NetworkPolicy", "NetworkPolicies"),
        ("IngressClass", "IngressClasses"),
        ("TrainingJob", "TrainingJobs"),
        ("Gateway", "Gateways"),
        ("Box", "Boxes"),
        ("Mesh", "Meshes"),
        ("Batch", "Batches"),
        ("Analysis", "Analyses"),
        ("Person", "People"),
        ("Leaf", "Leaves"),
        ("Metadata", "Metadata"),
        ("Series", "Series"),
        ("Matrix", "Matrices"),
        ("Quiz", "Quizzes"),
        ("Photo", "Photos"),
        ("Hero", "Heroes"),
        ("GPU", "GPUs"),
        ("NodeGPU", "NodeGPUs"),
        ("CIDRBlock", "CIDRBlocks"),
        ("Pool2", "Pool2s"),
        ("policy", "policies"),
    ],
)
def test_english_plurals(kind: str, plural: str) -> None:
    assert pluralize(kind) == plural


def test_empty_name_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        pluralize("")
