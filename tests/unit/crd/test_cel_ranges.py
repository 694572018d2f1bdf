"""cel-go's saturating cost arithmetic and the library's replace() size."""

from __future__ import annotations

from crdkit.crd.cel_ranges import U64, add, factor, mul, radd, replaced_size, rfactor, rmul, union


def test_sums_and_products_saturate_at_u64() -> None:
    assert add(U64, 1) == U64
    assert mul(2**40, 2**40) == U64
    assert radd((1, U64), (2, 3)) == (3, U64)
    assert rmul((2, 3), (4, 5)) == (8, 15)


def test_factors_round_up_and_saturate() -> None:
    assert factor(1, 0.1) == 1
    assert factor(10, 0.1) == 1
    assert factor(11, 0.1) == 2
    assert factor(0, 0.1) == 0
    assert factor(3145726, 0.1) == 314573
    assert factor(U64, 2.0) == U64
    assert rfactor((0, 257), 0.1) == (0, 26)


def test_union_spans_both() -> None:
    assert union((3, 5), (1, 4)) == (1, 5)


def test_replace_sizes() -> None:
    # '-' by '': never longer than the text
    assert replaced_size((0, 100), (1, 1), (0, 0)) == (0, 100)
    # 'a' by 'bb': every character may double
    assert replaced_size((0, 100), (1, 1), (2, 2)) == (0, 200)
    # an empty pattern surrounds every character
    assert replaced_size((2, 2), (0, 0), (1, 1)) == (5, 5)
