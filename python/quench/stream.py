"""Streamed records: where a run writes its time series and captures while it goes, and how they
are read back. The engine (crates/quench-core/src/trace/spill.rs) appends each table's rows, a
chunk at a time, to one file of raw little-endian values per column inside a spill folder, and
lists them in the folder's manifest.json at the end; captured links stream straight into their
pcap files. A table is then read back in chunks (`SpilledTable.read`), so saving it never needs
the whole table in memory.

A run writing to an output folder (`quench run --out`) streams into that folder's staging copy:
the spill folder is `.spill` inside it, removed before the folder is moved into place. A run
without one (the Python API) streams into a temporary folder that its `Results` own and remove
when they are garbage-collected or the interpreter exits. A process killed meanwhile cannot
remove its folder; its name holds the process id ('quench-records-<pid>-<random>'), and the
next temporary stream removes the folders of processes no longer running (as atomic.py does
for the staging folders of killed saves).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from quench.atomic import OutputError, remove_orphans, safe_child

if TYPE_CHECKING:  # numpy is imported where a spilled table is read: `import quench` stays light
    import numpy as np

# The spill folder inside the folder a run streams into: hidden, so no saved run lists it.
SPILL_DIR = ".spill"
MANIFEST = "manifest.json"
TEMP_PREFIX = "quench-records-"
_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + r"(\d+)-[A-Za-z0-9_]+")


@dataclass(frozen=True)
class SpilledColumn:
    name: str
    dtype: np.dtype
    path: Path
    # The strings that the stored codes stand for, or None when the values are the column.
    dictionary: list[str] | None
    # A column stored as text: the file of each row's end offset in `path` (`<u8`); `dtype` is
    # then that of the offsets.
    ends: Path | None = None

    def read_text(self, start: int, count: int) -> list[str]:
        """`count` strings from row `start` of a column stored as text."""
        import numpy as np

        first = max(start - 1, 0)
        ends = np.fromfile(self.ends, dtype="<u8", count=count + (start > 0), offset=first * 8)
        if len(ends) != count + (start > 0):
            raise OSError(f"{self.ends}: {len(ends)} offsets from row {first}: the file is truncated")
        begin = int(ends[0]) if start > 0 else 0
        bounds = ends[1:] if start > 0 else ends
        with open(self.path, "rb") as f:
            f.seek(begin)
            data = f.read(int(bounds[-1]) - begin if count else 0)
        cuts = [0, *(int(b) - begin for b in bounds)]
        return [data[a:b].decode("utf-8") for a, b in zip(cuts, cuts[1:])]


@dataclass(frozen=True)
class SpilledTable:
    name: str
    rows: int
    columns: list[SpilledColumn]
    # The table's rows as ranges [start, end) of the stored rows, read in this order; None when
    # the stored order is the table's.
    order: list[tuple[int, int]] | None = None

    def read(self, start: int, stop: int, columns: Iterable[str] | None = None) -> dict[str, np.ndarray | list[str]]:
        """Rows [start, stop) of every column (or of `columns`): numbers as arrays of the
        engine's dtype, strings as a list (as the binding hands over in-memory tables)."""
        wanted = [c for c in self.columns if columns is None or c.name in columns]
        if self.order is None:
            return self._read_stored(start, stop, wanted)
        pieces, offset = [], 0
        for lo, hi in self.order:
            a, b = max(start, offset), min(stop, offset + hi - lo)
            if a < b:
                pieces.append(self._read_stored(lo + a - offset, lo + b - offset, wanted))
            offset += hi - lo
        if not pieces:
            return self._read_stored(0, 0, wanted)
        return {c.name: _concat([p[c.name] for p in pieces]) for c in wanted}

    def _read_stored(self, start: int, stop: int, wanted: list[SpilledColumn]) -> dict[str, np.ndarray | list[str]]:
        """Stored rows [start, stop) of the `wanted` columns."""
        import numpy as np

        count = max(0, min(stop, self.rows) - start)
        cols: dict[str, np.ndarray | list[str]] = {}
        for c in wanted:
            if c.ends is not None:
                cols[c.name] = c.read_text(start, count)
                continue
            values = np.fromfile(c.path, dtype=c.dtype, count=count, offset=start * c.dtype.itemsize)
            if len(values) != count:
                raise OSError(f"{c.path}: {len(values)} of {count} rows from row {start}: the file is truncated")
            cols[c.name] = values if c.dictionary is None else np.asarray(c.dictionary, dtype=object)[values].tolist()
        return cols

    def chunks(self, rows: int) -> Iterator[dict[str, np.ndarray | list[str]]]:
        """The table `rows` rows at a time, in order."""
        for start in range(0, self.rows, rows):
            yield self.read(start, start + rows)


def _concat(parts: list) -> np.ndarray | list[str]:
    """One column from consecutive pieces: arrays joined, string lists chained."""
    if isinstance(parts[0], list):
        return [v for p in parts for v in p]
    import numpy as np

    return np.concatenate(parts)


def _column(spill: Path, c: dict) -> SpilledColumn:
    """A manifest's column entry."""
    import numpy as np

    if c.get("ends") is not None:  # stored as text ("utf8")
        return SpilledColumn(c["name"], np.dtype("<u8"), spill / c["file"], None, spill / c["ends"])
    return SpilledColumn(c["name"], np.dtype(c["dtype"]), spill / c["file"], c["dictionary"])


def read_manifest(spill: Path) -> dict[str, SpilledTable]:
    """The tables with rows in the spill folder (none when the run spilled nothing)."""
    try:
        text = (spill / MANIFEST).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    tables = {}
    for t in json.loads(text)["tables"]:
        cols = [_column(spill, c) for c in t["columns"]]
        order = [(int(a), int(b)) for a, b in t["order"]] if t.get("order") is not None else None
        tables[t["name"]] = SpilledTable(t["name"], int(t["rows"]), cols, order)
    return tables


class RecordStream:
    """The folder a run streams its records and captures into. `label` names it in error
    messages (the output folder the user gave, not its staging copy); an `owned` folder is a
    temporary one that is removed with the Results holding it."""

    def __init__(self, folder: Path, label: str, *, owned: bool = False) -> None:
        self.folder = Path(folder)
        self.label = label
        self.owned = owned

    @classmethod
    def temporary(cls) -> RecordStream:
        parent = Path(tempfile.gettempdir())
        remove_stale_temporaries(parent)
        folder = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", dir=parent))
        return cls(folder, f"a temporary folder ({folder})", owned=True)

    @property
    def spill(self) -> Path:
        return self.folder / SPILL_DIR

    def pcap_files(self, links: Iterable[str]) -> dict[str, Path]:
        """The file each captured link streams into: its final name in an output folder; in a
        temporary folder a numbered one, so links whose names would clash still run (the clash
        is refused when they are saved, as before)."""
        links = list(links)
        if self.owned:
            return {link: self.folder / f"capture-{i}.pcap" for i, link in enumerate(links)}
        return {link: self.folder / name for link, name in pcap_file_names(links).items()}

    def remove_spill(self) -> None:
        shutil.rmtree(self.spill, ignore_errors=True)

    def discard(self) -> None:
        """Remove what this stream wrote: the whole folder if it is a temporary one, else the
        spill folder (the output's staging folder is removed by its own owner)."""
        if self.owned:
            shutil.rmtree(self.folder, ignore_errors=True)
        else:
            self.remove_spill()


def pcap_file_name(link: str) -> str:
    """The file a captured link is saved to: link a->b as a-b.pcap."""
    return f"{link.replace('->', '-')}.pcap"


def pcap_file_names(links: Iterable[str]) -> dict[str, str]:
    """The pcap file of every captured link; refuses two links that would share a file (nodes
    'a-b'->'c' and 'a'->'b-c' are both a-b-c.pcap) or a name that is not a plain file name."""
    files: dict[str, str] = {}
    owner: dict[str, str] = {}
    for link in links:
        file = pcap_file_name(link)
        safe_child(Path("."), file)
        if file in owner:
            raise OutputError(f"captured links {owner[file]} and {link} would both be written to {file}")
        files[link] = file
        owner[file] = link
    return files


def remove_stale_temporaries(parent: Path) -> list[Path]:
    """Remove the temporary stream folders in `parent` whose process is gone (killed before
    its Results could remove them); returns what was removed."""
    return remove_orphans(parent, _TEMP_NAME)
