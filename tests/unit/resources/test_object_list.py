from crdkit.resources import ObjectList, Pod


def test_list_metadata_and_items_without_type_meta() -> None:
    page = ObjectList[Pod].model_validate_json(
        b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42",'
        b'"continue":"tok","remainingItemCount":3},"items":[{"metadata":{"name":"a"}}]}'
    )
    assert page.metadata.resource_version == "42"
    assert page.metadata.continue_ == "tok"
    assert page.metadata.remaining_item_count == 3
    assert [pod.kind for pod in page.items] == ["Pod"]


def test_last_page_has_no_continue() -> None:
    page = ObjectList[Pod].model_validate_json(b'{"metadata":{"resourceVersion":"1"},"items":[]}')
    assert page.metadata.continue_ is None
    assert page.items == []
