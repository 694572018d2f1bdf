# Stub for the Rust extension module built from rust/placer (checked by mypy.stubtest).

__all__ = ["MAX_SIGNIFICANT_DIGITS", "parse_quantity"]

MAX_SIGNIFICANT_DIGITS: int

def parse_quantity(value: str | int | float, *, allow_negative: bool = False) -> int: ...
