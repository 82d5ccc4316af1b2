"""Results of a run as pandas DataFrames, and their atomic export to Parquet/CSV.

Tables: `links` and `flows` (one row each, always), and the recorded time series `queue`,
`sojourn`, `drops`, `cwnd` (TCP), `pcp_rate` (PCP's base rate and probe increment), `pacing`
(a model-based TCP controller's pacing rate, bandwidth and min-RTT estimates, mode, gains), `rtt`,
`segments`, `tcp_events`, `monitors` (rows only for what the scenario's `record` section asked
for). Times are seconds since the start of the run.

A run streams its time series and captures to disk as it goes (quench.stream): a table with
rows on disk is read into a DataFrame when first used, and saved chunk by chunk, so saving a
long run needs memory for one chunk, not the whole table. Every saved Parquet file has row
groups of SAVE_CHUNK_ROWS rows, so a streamed table's file is byte for byte the one its whole
DataFrame would give.

A table the engine handed over in memory stays as the engine's columns until it is used:
pandas and numpy are imported then (or when a table is saved as CSV), so `import quench` and
a `quench run` that saves Parquet do not load them.
"""

from __future__ import annotations

import json
import os
import shutil
import weakref
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quench import _core
from quench.atomic import OutputError, check_output_dir, safe_child, staged_dir
from quench.fct import FCT_SIZE_EDGES, fct_slowdown
from quench.schema import (
    CATEGORIES,
    FLOW_TABLES,
    LINK_TABLES,
    RawTable,
    can_write_parquet,
    column_values,
    engine_form,
    frame,
    write_frame_parquet,
    write_parquet,
    write_parquet_chunks,
)
from quench.stream import RecordStream, SpilledTable, pcap_file_name, pcap_file_names, read_manifest

# The percentiles `Results.delay` reports by default (a VoIP study reads the median and the tail).
DELAY_PERCENTILES = (50.0, 90.0, 99.0)

if TYPE_CHECKING:  # imported where a table is first used (see the module's docstring)
    import numpy as np
    import pandas as pd

# Names of the engine's codes in the drops, tcp_events and pacing tables, in code order, from
# the engine itself (quench.schema.CATEGORIES).
DROP_REASONS = CATEGORIES[("drops", "reason")]
TCP_EVENTS = CATEGORIES[("tcp_events", "event")]
PACING_MODES = CATEGORIES[("pacing", "mode")]
FORMATS = ("parquet", "csv")
# Rows per Parquet row group and per CSV write of every saved table, in memory or streamed (so
# both save the same file). Measured with benchmarks/bench_memory.py: pyarrow's default row
# group (1 Mi rows) made the dumbbell's peak memory grow from 205 to 337 MiB between 100 and
# 3000 simulated seconds, 128 Ki rows still varied by a third (pyarrow's allocator keeps what
# a row group's writer used), 64 Ki rows (the engine's chunk) stay within 8%.
SAVE_CHUNK_ROWS = 64 * 1024


def _frame(raw: RawTable) -> pd.DataFrame:
    import numpy as np

    return frame({c: list(d) if dtype == "str" else np.frombuffer(d, dtype=dtype) for c, (dtype, d) in raw.items()})


Labeler = Callable[[str, "pd.DataFrame"], "pd.DataFrame"]


class Tables(MutableMapping[str, "pd.DataFrame"]):
    """The DataFrames of a run by name, in the engine's order; a table the engine handed over
    in memory becomes a DataFrame, and a table streamed to disk is read, when first used (each
    labelled then)."""

    def __init__(
        self,
        frames: dict[str, pd.DataFrame | RawTable | None],
        spilled: dict[str, SpilledTable],
        names: Names | None = None,
    ):
        self._frames = frames
        self._spilled = spilled
        self.names = names
        self._label: Labeler = names.label if names is not None else (lambda name, df: df)

    def __getitem__(self, name: str) -> pd.DataFrame:
        df = self._frames[name]
        if df is None:
            t = self._spilled[name]
            df = self._frames[name] = self._label(name, frame(t.read(0, t.rows)))
        elif isinstance(df, dict):
            df = self._frames[name] = self._label(name, _frame(df))
        return df

    def raw(self, name: str) -> RawTable | None:
        """The engine's columns of a table not yet made a DataFrame (None once it is one, or
        for a table on disk)."""
        df = self._frames.get(name)
        return df if isinstance(df, dict) else None

    def write_parquet(self, name: str, path: Path) -> bool:
        """Write a table still in the engine's form, in memory or streamed to disk, to `path`
        without pandas (quench.schema: pandas' file, read back); False, writing nothing, for
        a table already made a DataFrame."""
        if self.names is None or not can_write_parquet():
            return False
        raw, spilled = self.raw(name), self.on_disk(name)
        if raw is not None:
            write_parquet(path, name, raw, self.names.links, self.names.flows, SAVE_CHUNK_ROWS)
        elif spilled is not None:
            chunks = (engine_form(cols) for cols in spilled.chunks(SAVE_CHUNK_ROWS))
            write_parquet_chunks(path, name, chunks, self.names.links, self.names.flows)
        return raw is not None or spilled is not None

    def column(self, name: str, column: str) -> list:
        """One column of a table as a list of Python values; a table still in the engine's
        form is read without pandas or numpy."""
        raw = self.raw(name)
        if raw is not None:
            return column_values(*raw[column])
        return self[name][column].tolist()

    def __setitem__(self, name: str, df: pd.DataFrame) -> None:
        self._frames[name] = df
        self._spilled.pop(name, None)

    def __delitem__(self, name: str) -> None:
        del self._frames[name]
        self._spilled.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._frames)

    def __len__(self) -> int:
        return len(self._frames)

    def on_disk(self, name: str) -> SpilledTable | None:
        """The streamed rows of a table not read into memory (None for one in memory)."""
        return self._spilled.get(name) if self._frames.get(name) is None else None

    def chunks(self, name: str) -> Iterator[pd.DataFrame]:
        """The table as labelled DataFrames of at most SAVE_CHUNK_ROWS rows, from disk when it
        was streamed there and is not in memory."""
        t = self.on_disk(name)
        if t is None:
            yield self[name]
            return
        for cols in t.chunks(SAVE_CHUNK_ROWS):
            yield self._label(name, frame(cols))


class _FolderLease:
    """Held by a run's Results and Captures while they may read its temporary folder; the
    folder is removed when the last of them is gone."""


class Captures(MutableMapping[str, bytes]):
    """Captured links' pcap bytes by link name; a capture streamed to a file is read from it
    when used."""

    def __init__(self, data: dict[str, bytes], files: dict[str, Path]):
        self._data = data
        self.files = files

    def __getitem__(self, link: str) -> bytes:
        return self._data[link] if link in self._data else self.files[link].read_bytes()

    def __setitem__(self, link: str, data: bytes) -> None:
        self._data[link] = data
        self.files.pop(link, None)

    def __delitem__(self, link: str) -> None:
        if link in self._data:
            del self._data[link]
        else:
            del self.files[link]

    def __iter__(self) -> Iterator[str]:
        return iter([*self._data, *self.files])

    def __len__(self) -> int:
        return len(self._data) + len(self.files)


class Results:
    """Everything a run produced. DataFrames are attributes: `res.links`, `res.flows`, ..."""

    def __init__(
        self,
        tables: MutableMapping[str, pd.DataFrame],
        pcaps: MutableMapping[str, bytes],
        scenario: dict[str, Any],
        meta: dict[str, Any],
        stream: RecordStream | None = None,
    ) -> None:
        self.tables = tables
        self.pcaps = pcaps
        self.scenario = scenario
        self.meta = meta
        self.stream = stream
        if stream is not None and stream.owned:
            # The temporary folder lives as long as these results, their tables or their
            # captures (`net.run().tables[name]` and `net.run().pcaps[link]` read a streamed
            # table or capture after the Results are gone). Nothing here is in a reference
            # cycle (the tables' labeller refers back to them weakly), so the folder goes as
            # soon as the last holder does, not when the cycle collector runs.
            lease = _FolderLease()
            weakref.finalize(lease, shutil.rmtree, stream.folder, ignore_errors=True)
            for holder in (self, tables, pcaps):
                holder.__dict__["_lease"] = lease

    @classmethod
    def from_raw(
        cls, raw: dict[str, Any], scenario: dict[str, Any], wall_run_s: float, stream: RecordStream | None = None
    ) -> Results:
        """Results from the engine's `finish`; `stream` is where the run streamed its records
        (a table without columns in `raw` has its rows there)."""
        spilled = read_manifest(stream.spill) if stream is not None else {}
        frames: dict[str, pd.DataFrame | RawTable | None] = {
            name: None if name in spilled else cols for name, cols in raw["tables"].items()
        }

        # The labeller reads the names from the tables it labels: through a weak reference, so
        # that the tables are not in a cycle and go (with their folder lease) when unused.
        def link_names() -> dict[Any, str]:
            tables = tables_ref()
            assert tables is not None, "a table is labelled only while its tables exist"
            return dict(zip(tables.column("links", "link"), tables.column("links", "name")))

        def flow_names() -> dict[Any, str]:
            tables = tables_ref()
            assert tables is not None, "a table is labelled only while its tables exist"
            if tables.on_disk("flows") is None:
                return dict(zip(tables.column("flows", "flow"), tables.column("flows", "name")))
            # streamed (one row per arrival of a long workload): its ids and names only
            f = spilled["flows"].read(0, spilled["flows"].rows, columns=("flow", "name"))
            return dict(zip(f["flow"], f["name"]))

        tables = Tables(frames, spilled, Names(link_names, flow_names))
        tables_ref = weakref.ref(tables)
        captured = dict(raw["pcaps"])
        files = {} if stream is None else _streamed_captures(stream, scenario, tables.column("links", "name"))
        if stream is not None and stream.owned and not spilled and not files:
            stream.discard()  # nothing lives there: no temporary folder to keep
            stream = None
        meta = {
            "quench_version": _core.__version__,
            "seed": raw["seed"],
            "simulated_s": raw["end_time_s"],
            "events_executed": raw["events_executed"],
            "wall_run_s": wall_run_s,
        }
        return cls(tables, Captures(captured, files), scenario, meta, stream)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (a run in a worker process handing its Results back), the tables and captures
        travel in memory: the streamed files belong to this process's temporary folder, which
        goes when these Results do."""
        state = dict(self.__dict__)
        state["tables"] = {name: self.tables[name] for name in self.tables}
        state["pcaps"] = {link: self.pcaps[link] for link in self.pcaps}
        state["stream"] = None
        state.pop("_lease", None)
        return state

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(f"no table {name!r}; tables are {sorted(tables)}")

    def link(self, name: str) -> pd.Series:
        """The summary row of link `name` ("a->b")."""
        rows = self.links[self.links["name"] == name]
        if rows.empty:
            raise KeyError(f"no link {name!r}; links are {list(self.links['name'])}")
        return rows.iloc[0]

    def bottleneck(self) -> str:
        """The name of the busiest link (highest utilization)."""
        return str(self.links.loc[self.links["utilization"].idxmax(), "name"])

    def window(self, t0: Any, t1: Any) -> Any:
        """Every link's and flow's statistics over [t0, t1], two instants of the run's
        snapshots (`record.snapshots`) or 0: a `quench.windows.Window` (`.links`, `.flows`)."""
        from quench.windows import window

        return window(self, t0, t1)

    def timeseries(self) -> Any:
        """The run cut at every snapshot instant: `quench.windows.TimeSeries` (`.links`,
        `.flows`), one row per bin and link or flow."""
        from quench.windows import timeseries

        return timeseries(self)

    def jain_index(self, column: str = "goodput_bps") -> float:
        """Jain's fairness index of a per-flow column (1 = perfectly equal)."""
        return jain_index(self.flows[column].to_numpy(dtype=float))

    def fct(self, edges: Sequence[float] = FCT_SIZE_EDGES, flows: pd.DataFrame | None = None) -> pd.DataFrame:
        """FCT slowdown by flow size: per size bucket (`edges` in bytes, buckets (lo, hi]), the
        flows in it, how many completed, and the 50th, 95th and 99th percentiles and mean of
        the completed flows' `slowdown` (response time over the flow alone on the idle network,
        docs/tables.md). `flows`: a subset of the flows table (default: every flow with an
        ideal, i.e. sized TCP flows). See `fct_slowdown`."""
        return fct_slowdown(self.flows if flows is None else flows, edges)

    def delay(self, flow: str, percentiles: Sequence[float] = DELAY_PERCENTILES) -> pd.Series:
        """The one-way delay of flow `flow`'s data packets, in seconds, from the `delay` table
        (a run with `record.delay` naming the flow): how many were received, their mean, the
        given percentiles (`p50`, `p99`, ...), the smallest and largest, and the jitter (the
        mean absolute difference of consecutive packets' delays, RFC 3550's without its
        smoothing)."""
        import numpy as np
        import pandas as pd

        if "delay" not in self.tables:
            raise KeyError("no delay table: record the flow with record(delay=[...]) or record.delay in the scenario")
        ids = self.flows.loc[self.flows["name"] == flow, "flow"]
        if ids.empty:
            raise KeyError(f"no flow {flow!r}; flows are {list(self.flows['name'])}")
        rows = self.tables["delay"]
        d = rows.loc[rows["flow"] == ids.iloc[0], "delay_s"].to_numpy(dtype=float)
        if len(d) == 0:
            raise KeyError(f"flow {flow!r} has no delay rows: is it named in record.delay?")
        out = {"packets": float(len(d)), "mean_s": float(d.mean())}
        out |= {f"p{q:g}_s": float(np.percentile(d, q)) for q in percentiles}
        jitter = float(np.abs(np.diff(d)).mean()) if len(d) > 1 else 0.0
        out |= {"min_s": float(d.min()), "max_s": float(d.max()), "jitter_s": jitter}
        return pd.Series(out, name=flow)

    def save(
        self, out_dir: str | Path, formats: Iterable[str] = ("parquet",), plots: bool = True, *, force: bool = False
    ) -> Path:
        """Write tables, pcaps, the resolved scenario and (optionally) plots into out_dir, which
        may be absent, empty, or an earlier quench run's folder (replaced whole, so no file of
        that run stays); any other non-empty folder only with `force` (its contents are
        replaced). Everything is written into a hidden folder beside out_dir first, which then
        takes its place: out_dir holds either the whole run or what it held before. Every file
        name is checked to stay inside out_dir before anything is written."""
        if not isinstance(out_dir, str | os.PathLike):
            raise TypeError(f"out_dir: expected the path of a folder, got {type(out_dir).__name__}")
        formats = list(formats)
        unknown = [f for f in formats if f not in FORMATS]
        if unknown:
            raise ValueError(f"unknown output format(s) {unknown}; choose from {list(FORMATS)}")
        out = check_output_dir(out_dir, force=force)
        names = self._file_names(formats)
        try:
            with staged_dir(out, force=force) as tmp:
                paths = {key: safe_child(tmp, name) for key, name in names.items()}
                self._write_all(paths, formats, tmp if plots else None)
        except OSError as e:
            # Named by the folder the caller gave: the hidden staging folder is ours, and gone.
            # Still an OSError (a full disk is not a bad argument), with the caller's folder.
            raise OSError(f"cannot save the results into {out_dir}: {e.strerror or e}") from None
        return Path(out_dir)

    @classmethod
    def load(cls, folder: str | Path) -> Results:
        """Reopen a run that `save` (or `quench run --out`) wrote into `folder`: every table, the
        pcap captures, the resolved scenario and the run's meta.json, as the run's own Results
        had them. A table is read from its Parquet file, which keeps every dtype (names as
        strings, codes as categories); from its CSV file where it was saved only as CSV, with
        the dtypes pandas infers from text. Captures are read from their files when used;
        plots are not read. Raises OutputError when `folder` holds no saved run."""
        folder = Path(folder)
        meta, scenario = folder / "meta.json", folder / "scenario.json"
        if not (meta.is_file() and scenario.is_file()):
            raise OutputError(f"{folder} holds no saved quench run (meta.json and scenario.json)")
        tables = {name: _read_saved_table(name, path) for name, path in _saved_tables(folder).items()}
        links = tables["links"]["name"] if "links" in tables else []
        captures = {link: folder / pcap_file_name(link) for link in links}
        files = {link: path for link, path in captures.items() if path.is_file()}
        return cls(tables, Captures({}, files), json.loads(scenario.read_text()), json.loads(meta.read_text()))

    def write_into(self, folder: Path, formats: Iterable[str], plots: bool) -> None:
        """Write every file of the run into `folder`, the staging folder the run streamed into
        (`quench run --out`), and remove the spill folder from it; a failed write is an
        OutputError naming the output folder. The caller owns `folder` (atomic.staged_dir)."""
        formats = list(formats)
        paths = {key: safe_child(folder, name) for key, name in self._file_names(formats).items()}
        label = self.stream.label if self.stream is not None else str(folder)
        try:
            self._write_all(paths, formats, folder if plots else None)
        except OSError as e:
            raise OutputError(f"cannot write the results into {label}: {e}") from None
        finally:
            if self.stream is not None and self.stream.folder == folder:
                self.stream.remove_spill()

    def _file_names(self, formats: list[str]) -> dict[tuple[str, str], str]:
        """The file name of every table (per format), pcap and JSON file, keyed by (kind, item);
        two items that would share a file are refused."""
        names: dict[tuple[str, str], str] = {}
        for name in self.tables:
            for fmt in formats:
                names[(fmt, name)] = f"{name}.{fmt}"
        for link, file in pcap_file_names(self.pcaps).items():
            names[("pcap", link)] = file
        names[("json", "scenario")] = "scenario.json"
        names[("json", "meta")] = "meta.json"
        seen: dict[str, tuple[str, str]] = {}
        for key, file in names.items():
            if file in seen:
                raise OutputError(f"{key[1]} and {seen[file][1]} would both be written to {file}")
            seen[file] = key
        return names

    def _write_all(self, paths: dict[tuple[str, str], Path], formats: list[str], plots_dir: Path | None) -> None:
        for name in self.tables:
            parquet = paths[("parquet", name)] if "parquet" in formats else None
            csv = paths[("csv", name)] if "csv" in formats else None
            self._write_table(name, parquet, csv)
        files = self.pcaps.files if isinstance(self.pcaps, Captures) else {}
        for link in self.pcaps:
            path = paths[("pcap", link)]
            if link not in files:
                path.write_bytes(self.pcaps[link])
            elif files[link] != path:  # streamed elsewhere (a temporary folder): copy it over
                shutil.copyfile(files[link], path)
        paths[("json", "scenario")].write_text(json.dumps(self.scenario, indent=2) + "\n")
        paths[("json", "meta")].write_text(json.dumps(self.meta, indent=2) + "\n")
        if plots_dir is not None:
            from quench.plot import save_standard_plots

            save_standard_plots(self, plots_dir)

    def _write_table(self, name: str, parquet: Path | None, csv: Path | None) -> None:
        """One table's files; a table on disk is written chunk by chunk (one Parquet row group
        and one CSV append per chunk), giving the same files as its whole DataFrame. Parquet
        files come from the engine's writer (quench.schema), from the table in the engine's form
        (no DataFrame needed) or from its DataFrame; pandas writes a DataFrame of other dtypes."""
        if parquet is not None and isinstance(self.tables, Tables) and self.tables.write_parquet(name, parquet):
            parquet = None
            if csv is None:
                return
        if not isinstance(self.tables, Tables) or self.tables.on_disk(name) is None:
            df = self.tables[name]
            if parquet is not None and not (can_write_parquet() and write_frame_parquet(parquet, df, SAVE_CHUNK_ROWS)):
                df.to_parquet(parquet, index=False, row_group_size=SAVE_CHUNK_ROWS)
            if csv is not None:
                df.to_csv(csv, index=False)
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        writer = None
        try:
            for i, df in enumerate(self.tables.chunks(name)):
                if parquet is not None:
                    chunk = pa.Table.from_pandas(df, preserve_index=False)
                    # DataFrame.to_parquet's settings (pandas passes snappy, pyarrow the rest) and
                    # its row groups: one per chunk.
                    writer = writer or pq.ParquetWriter(parquet, chunk.schema, compression="snappy")
                    writer.write_table(chunk)
                if csv is not None:
                    df.to_csv(csv, index=False, header=i == 0, mode="w" if i == 0 else "a")
        finally:
            if writer is not None:
                writer.close()


# The tables every run has, first in a reopened run's order; the recorded ones follow by name.
SUMMARY_TABLES = ("links", "flows")


def _saved_tables(folder: Path) -> dict[str, Path]:
    """Every table saved in `folder` and the file to read it from (Parquet where both exist)."""
    found: dict[str, Path] = {}
    for fmt in reversed(FORMATS):  # the first format listed wins
        found.update({path.stem: path for path in sorted(folder.glob(f"*.{fmt}"))})
    first = [name for name in SUMMARY_TABLES if name in found]
    return {name: found[name] for name in [*first, *sorted(set(found) - set(first))]}


def _read_saved_table(name: str, path: Path) -> pd.DataFrame:
    """A saved table; its columns of engine codes get their categories back, which a Parquet
    file of no rows does not keep and a CSV file keeps only as text."""
    import pandas as pd

    df = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    for (table, col), categories in CATEGORIES.items():
        if name == table and col in df:
            df[col] = pd.Categorical(df[col].astype("str"), categories=pd.Index(categories, dtype="str"))
    return df


def _streamed_captures(stream: RecordStream, scenario: dict[str, Any], links: list[str]) -> dict[str, Path]:
    """The pcap file of every link whose capture streamed to a file, in link order (`links`:
    every link's name)."""
    files = stream.pcap_files(scenario.get("record", {}).get("pcap", []))
    return {link: files[link] for link in links if link in files}


def jain_index(x: np.ndarray) -> float:
    """Jain, Chiu, Hawe (1984): (sum x)^2 / (n sum x^2)."""
    import numpy as np

    x = np.asarray(x, dtype=float)
    if x.size == 0 or not np.any(x):
        return float("nan")
    return float(x.sum() ** 2 / (x.size * np.square(x).sum()))


class Names:
    """A run's link and flow names by id, for the labels of its time series (`_label_table`).
    `links` and `flows` read them, each once, when a table first needs them (the flows table of
    a long workload, streamed to disk, only when a table with flow ids has rows)."""

    def __init__(self, links: Callable[[], dict[Any, str]], flows: Callable[[], dict[Any, str]]) -> None:
        self._read = {"links": links, "flows": flows}
        self._names: dict[str, dict[Any, str]] = {}

    def _get(self, which: str) -> dict[Any, str]:
        if which not in self._names:
            self._names[which] = self._read[which]()
        return self._names[which]

    def links(self) -> dict[Any, str]:
        return self._get("links")

    def flows(self) -> dict[Any, str]:
        return self._get("flows")

    def label(self, name: str, df: pd.DataFrame) -> pd.DataFrame:
        return _label_table(name, df, self.links, self.flows)


def _label_table(
    name: str, df: pd.DataFrame, links: Callable[[], dict[Any, str]], flows: Callable[[], dict[Any, str]]
) -> pd.DataFrame:
    """Add readable names next to the engine's integer ids (in place; returns `df`)."""
    import pandas as pd

    if name in LINK_TABLES and "link" in df:
        df["link_name"] = df["link"].map(links()).astype("string")
    if name in FLOW_TABLES and "flow" in df:
        df["flow_name"] = df["flow"].map(flows() if len(df) else {}).astype("string")
    for (table, col), categories in CATEGORIES.items():
        if name == table and col in df:
            df[col] = pd.Categorical.from_codes(df[col].astype(int), categories)
    return df
