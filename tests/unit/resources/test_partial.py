from crdkit.resources import ObjectList, PartialObjectMetadata


def test_metadata_only_list() -> None:
    page = ObjectList[PartialObjectMetadata].model_validate_json(
        b'{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1",'
        b'"metadata":{"resourceVersion":"9"},"items":[{"kind":"PartialObjectMetadata",'
        b'"apiVersion":"meta.k8s.io/v1","metadata":{"name":"p","labels":{"a":"b"}}}]}'
    )
    assert page.items[0].metadata.labels == {"a": "b"}
    assert PartialObjectMetadata.__resource__ is None
