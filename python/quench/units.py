"""Units, parsed by the engine's own parser so Python and Rust agree on every string.

A value that is not a quantity raises ScenarioError (a ValueError) and one of the wrong type
a TypeError; both carry `.path`, the key the value was given for (`key`, '' by default), and
`.reason`, as the engine's errors do."""

import math
from typing import Any

from quench._core import parse_unit
from quench.errors import scenario_error

NS_PER_SECOND = 1_000_000_000


class QuantityTypeError(TypeError):
    """A quantity of the wrong type (None, a list, a boolean); `.path` and `.reason` as for a
    ScenarioError."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}" if path else reason)
        self.path = path
        self.reason = reason


def _parse(text: str | float, want: str, example: str, key: str) -> int | float:
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise QuantityTypeError(key, f"expected a {want} such as '{example}' or a number, got {type(text).__name__}")
    if isinstance(text, int | float):
        if not math.isfinite(text) or text < 0:
            raise scenario_error(key, f"{text} is not a finite, non-negative {want}")
        return text
    try:
        kind, value = parse_unit(text)
    except ValueError as e:
        raise scenario_error(key, str(e)) from None
    if kind != want:
        raise scenario_error(key, f"'{text}' is a {kind}, not a {want}")
    return value


def parse_duration(text: str | float, key: str = "") -> float:
    """'25ms' -> 0.025 (seconds). A bare number is already in seconds. `key` names the value
    in errors."""
    value = _parse(text, "time", "25ms", key)
    return value / NS_PER_SECOND if isinstance(text, str) else float(value)


def parse_rate(text: str | float, key: str = "") -> int:
    """'10Mbps' -> 10_000_000 (bit/s). A bare number is already in bit/s. `key` names the
    value in errors."""
    return int(_parse(text, "rate", "10Mbps", key))


def parse_bytes(text: str | float, key: str = "") -> int:
    """'64KB' -> 64_000 (bytes; KB = 1000, KiB = 1024). A bare number is already in bytes.
    `key` names the value in errors."""
    return int(_parse(text, "size", "64KB", key))


def parse_packets(text: str | float, key: str = "") -> int:
    """'100p' -> 100 (packets). A bare number is already a count. `key` names the value in
    errors."""
    return int(_parse(text, "packets", "100p", key))


def parse_limit(value: str | float | dict[str, Any], key: str = "") -> tuple[int | None, int | None]:
    """(packets, bytes) of a buffer limit, each None when not bounded: '100p', '64KB', both
    joined by a comma ('100p,64KB', as the engine writes a limit), a bare number of packets, or
    a table {packets = 100, bytes = "64KB"}. `key` names the value in errors."""
    if isinstance(value, dict):
        packets, size = value.get("packets"), value.get("bytes")
        return (
            None if packets is None else parse_packets(packets, f"{key}.packets" if key else "packets"),
            None if size is None else parse_bytes(size, f"{key}.bytes" if key else "bytes"),
        )
    if not isinstance(value, str):
        return parse_packets(value, key), None
    packets = size = None
    for part in (p.strip() for p in value.split(",")):
        if part.endswith("p"):
            packets = parse_packets(part, key)
        elif part:
            size = parse_bytes(part, key)
    return packets, size
