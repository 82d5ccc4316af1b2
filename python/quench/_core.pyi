"""Type stubs of the Rust extension `quench._core` (crates/quench-py/src/lib.rs): every name it
exports (tests/test_core_stub.py compares this file with `dir(quench._core)`)."""

from os import PathLike
from typing import Any

__version__: str

# The engine's codes of the drops table's `reason`, the tcp_events table's `event` and the
# pacing table's `mode`, in code order (a code is its index).
DROP_REASONS: list[str]
TCP_EVENTS: list[str]
PACING_MODES: list[str]

class ScenarioError(ValueError):
    path: str
    reason: str

class InternalError(RuntimeError): ...

def parse_unit(text: str) -> tuple[str, int]:
    """(dimension, value in base units): "time" (ns), "rate" (bit/s), "size" (bytes) or
    "packets"; ValueError when `text` is not a quantity."""

def validate(spec_json: str) -> str:
    """The scenario as JSON with every default filled in; ScenarioError naming the key."""

# A column as Python hands it over: (name, kind, data), kind one of "<u1", "<u4", "<u8", "<f8"
# (data: little-endian bytes), "str" (a list of str or None) or "category" ((int8 codes as
# bytes, category names)).
_Column = tuple[str, str, Any]

def write_parquet(path: str | PathLike[str], columns: list[_Column], pandas_metadata: str, row_group_rows: int) -> None:
    """A results table as one Parquet file with row groups of `row_group_rows` rows; OSError
    naming the file when it cannot be written."""

class ParquetWriter:
    """A table's Parquet file written one row group at a time."""

    def __init__(self, path: str | PathLike[str], pandas_metadata: str) -> None: ...
    def write_group(self, columns: list[_Column]) -> None:
        """One row group of every row of `columns`; the first call creates the file."""

    def close(self) -> None:
        """Write the footer and close the file (nothing when no group was written)."""

class Simulation:
    def __init__(self, spec_json: str) -> None: ...
    def stream_to(self, spill_dir: str | PathLike[str], pcap_files: list[tuple[str, str | PathLike[str]]]) -> None: ...
    def run_until(self, t: float) -> None: ...
    @property
    def now(self) -> float: ...
    @property
    def end(self) -> float: ...
    @property
    def events_executed(self) -> int: ...
    @property
    def scenario(self) -> str: ...
    def snapshot(self) -> dict[str, Any]:
        """The summary tables as they stand now, in `finish`'s form; the simulation goes on."""

    def finish(self) -> dict[str, Any]:
        """{"tables", "pcaps", "events_executed", "end_time_s", "seed"}; the simulation cannot
        be used afterwards."""
