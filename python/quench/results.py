"""Results of a run as pandas DataFrames, and their atomic export to Parquet/CSV.

Tables: `links` and `flows` (one row each, always), and the recorded time series `queue`,
`sojourn`, `drops`, `cwnd` (TCP), `pcp_rate` (PCP's base rate and probe increment), `rtt`,
`segments`, `tcp_events`, `monitors` (rows only for what the scenario's `record` section asked
for). Times are seconds since the start of the run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from quench import _core
from quench.atomic import OutputError, check_output_dir, safe_child, staged_dir

# Names of the engine's codes in the drops and tcp_events tables (qdisc::DropReason,
# trace::TcpEvent), in code order, from the engine itself.
DROP_REASONS = list(_core.DROP_REASONS)
TCP_EVENTS = list(_core.TCP_EVENTS)
FORMATS = ("parquet", "csv")


def _frame(raw: dict[str, tuple[str, Any]]) -> pd.DataFrame:
    cols = {}
    for name, (dtype, data) in raw.items():
        cols[name] = list(data) if dtype == "str" else np.frombuffer(data, dtype=dtype)
    return pd.DataFrame(cols)


class Results:
    """Everything a run produced. DataFrames are attributes: `res.links`, `res.flows`, ..."""

    def __init__(
        self,
        tables: dict[str, pd.DataFrame],
        pcaps: dict[str, bytes],
        scenario: dict[str, Any],
        meta: dict[str, Any],
    ) -> None:
        self.tables = tables
        self.pcaps = pcaps
        self.scenario = scenario
        self.meta = meta

    @classmethod
    def from_raw(cls, raw: dict[str, Any], scenario: dict[str, Any], wall_run_s: float) -> Results:
        tables = {name: _frame(cols) for name, cols in raw["tables"].items()}
        _label(tables)
        meta = {
            "quench_version": _core.__version__,
            "seed": raw["seed"],
            "simulated_s": raw["end_time_s"],
            "events_executed": raw["events_executed"],
            "wall_run_s": wall_run_s,
        }
        return cls(tables, dict(raw["pcaps"]), scenario, meta)

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

    def jain_index(self, column: str = "goodput_bps") -> float:
        """Jain's fairness index of a per-flow column (1 = perfectly equal)."""
        return jain_index(self.flows[column].to_numpy(dtype=float))

    def save(
        self, out_dir: str | Path, formats: Iterable[str] = ("parquet",), plots: bool = True, *, force: bool = False
    ) -> Path:
        """Write tables, pcaps, the resolved scenario and (optionally) plots into out_dir, which
        may be absent, empty, or an earlier quench run's folder (replaced whole, so no file of
        that run stays); any other non-empty folder only with `force` (its contents are
        replaced). Everything is written into a hidden folder beside out_dir first, which then
        takes its place: out_dir holds either the whole run or what it held before. Every file
        name is checked to stay inside out_dir before anything is written."""
        formats = list(formats)
        unknown = [f for f in formats if f not in FORMATS]
        if unknown:
            raise ValueError(f"unknown output format(s) {unknown}; choose from {list(FORMATS)}")
        out = check_output_dir(out_dir, force=force)
        names = self._file_names(formats)
        with staged_dir(out, force=force) as tmp:
            paths = {key: safe_child(tmp, name) for key, name in names.items()}
            self._write_all(paths, formats, tmp if plots else None)
        return Path(out_dir)

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
        for name, df in self.tables.items():
            if "parquet" in formats:
                df.to_parquet(paths[("parquet", name)], index=False)
            if "csv" in formats:
                df.to_csv(paths[("csv", name)], index=False)
        for link, data in self.pcaps.items():
            paths[("pcap", link)].write_bytes(data)
        paths[("json", "scenario")].write_text(json.dumps(self.scenario, indent=2) + "\n")
        paths[("json", "meta")].write_text(json.dumps(self.meta, indent=2) + "\n")
        if plots_dir is not None:
            from quench.plot import save_standard_plots

            save_standard_plots(self, plots_dir)


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


def jain_index(x: np.ndarray) -> float:
    """Jain, Chiu, Hawe (1984): (sum x)^2 / (n sum x^2)."""
    x = np.asarray(x, dtype=float)
    if x.size == 0 or not np.any(x):
        return float("nan")
    return float(x.sum() ** 2 / (x.size * np.square(x).sum()))


def _label(tables: dict[str, pd.DataFrame]) -> None:
    """Add readable names next to the engine's integer ids."""
    links = tables["links"]
    names = dict(zip(links["link"], links["name"]))
    flows = dict(zip(tables["flows"]["flow"], tables["flows"]["name"]))
    for t in ("queue", "sojourn", "drops", "monitors"):
        if "link" in tables[t]:
            tables[t]["link_name"] = tables[t]["link"].map(names).astype("string")
    for t in ("sojourn", "drops", "cwnd", "pcp_rate", "rtt", "segments", "tcp_events"):
        if "flow" in tables[t]:
            tables[t]["flow_name"] = tables[t]["flow"].map(flows).astype("string")
    tables["drops"]["reason"] = pd.Categorical.from_codes(tables["drops"]["reason"].astype(int), DROP_REASONS)
    tables["tcp_events"]["event"] = pd.Categorical.from_codes(tables["tcp_events"]["event"].astype(int), TCP_EVENTS)
