"""Units, parsed by the engine's own parser so Python and Rust agree on every string."""

from quench._core import parse_unit

NS_PER_SECOND = 1_000_000_000


def _parse(text: str | float, want: str, base_name: str) -> int | float:
    if isinstance(text, bool):
        raise TypeError(f"expected a {want} such as '{base_name}', got {text!r}")
    if isinstance(text, (int, float)):
        return text
    kind, value = parse_unit(text)
    if kind != want:
        raise ValueError(f"'{text}' is a {kind}, not a {want}")
    return value


def parse_duration(text: str | float) -> float:
    """'25ms' -> 0.025 (seconds). A bare number is already in seconds."""
    value = _parse(text, "time", "25ms")
    return value / NS_PER_SECOND if isinstance(text, str) else float(value)


def parse_rate(text: str | float) -> int:
    """'10Mbps' -> 10_000_000 (bit/s). A bare number is already in bit/s."""
    return int(_parse(text, "rate", "10Mbps"))


def parse_bytes(text: str | float) -> int:
    """'64KB' -> 64_000 (bytes; KB = 1000, KiB = 1024). A bare number is already in bytes."""
    return int(_parse(text, "size", "64KB"))
