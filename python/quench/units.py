"""Units, parsed by the engine's own parser so Python and Rust agree on every string.

A value that is not a quantity raises ScenarioError (a ValueError) and one of the wrong type
a TypeError; both carry `.path`, the key the value was given for (`key`, '' by default), and
`.reason`, as the engine's errors do."""

import math

from quench._core import ScenarioError, parse_unit

NS_PER_SECOND = 1_000_000_000


class QuantityTypeError(TypeError):
    """A quantity of the wrong type (None, a list, a boolean); `.path` and `.reason` as for a
    ScenarioError."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}" if path else reason)
        self.path = path
        self.reason = reason


def _error(path: str, reason: str) -> ScenarioError:
    e = ScenarioError(f"{path}: {reason}" if path else reason)
    e.path = path
    e.reason = reason
    return e


def _parse(text: str | float, want: str, example: str, key: str) -> int | float:
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise QuantityTypeError(key, f"expected a {want} such as '{example}' or a number, got {type(text).__name__}")
    if isinstance(text, int | float):
        if not math.isfinite(text) or text < 0:
            raise _error(key, f"{text} is not a finite, non-negative {want}")
        return text
    try:
        kind, value = parse_unit(text)
    except ValueError as e:
        raise _error(key, str(e)) from None
    if kind != want:
        raise _error(key, f"'{text}' is a {kind}, not a {want}")
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
