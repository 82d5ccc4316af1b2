"""FCT slowdown by flow size: the table datacenter papers read (pFabric, HPCC, Homa), computed
from a flows table's `bytes_requested` and `slowdown` columns (the engine's ideal FCT,
docs/tables.md). Owns the size buckets and their percentiles; knows nothing of runs or plots,
so `results` and `plot` both build on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy and pandas load when a table is computed, not when quench starts
    import pandas as pd

# Flow-size bucket edges (bytes) of the FCT slowdown table (Results.fct): pFabric's classes
# (Alizadeh et al., SIGCOMM 2013: small flows (0, 100KB], large (10MB, inf)) cut at every
# decade between, as the size axes of HPCC's (Li et al., SIGCOMM 2019) and Homa's (Montazeri
# et al., SIGCOMM 2018) slowdown figures are logarithmic; a web-search workload's sizes (up
# to 30 MB) fall in the five buckets.
FCT_SIZE_EDGES = (0.0, 10e3, 100e3, 1e6, 10e6, math.inf)


def size_label(lo: float, hi: float) -> str:
    """A size bucket as "(lo, hi]" in KB/MB, e.g. "(10KB, 100KB]"."""

    def fmt(b: float) -> str:
        if math.isinf(b):
            return "inf"
        return f"{b / 1e6:g}MB" if b >= 1e6 else f"{b / 1e3:g}KB" if b >= 1e3 else f"{b:g}B"

    return f"({fmt(lo)}, {fmt(hi)}]"


def fct_slowdown(flows: pd.DataFrame, edges: Sequence[float] = FCT_SIZE_EDGES) -> pd.DataFrame:
    """FCT slowdown by flow size over a flows table: one row per size bucket (lo, hi] of
    `bytes_requested`, labelled "(lo, hi]", with `lo_bytes`, `hi_bytes`, `flows` (with an
    ideal), `completed`, and `p50`, `p95`, `p99`, `mean` of the completed flows' slowdown
    (NaN where none completed). Percentiles interpolate linearly between order statistics
    (numpy's default); a flow that never completed has no slowdown and counts only in `flows`."""
    import numpy as np
    import pandas as pd

    if list(edges) != sorted(edges) or len(edges) < 2:
        raise ValueError(f"edges: expected at least two increasing sizes in bytes, got {list(edges)}")
    sized = flows[np.isfinite(flows["ideal_fct_s"].to_numpy(dtype=float))]
    size = sized["bytes_requested"].to_numpy(dtype=float)
    slowdown = sized["slowdown"].to_numpy(dtype=float)
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (size > lo) & (size <= hi)
        done = slowdown[inside & np.isfinite(slowdown)]
        p50, p95, p99 = np.percentile(done, [50, 95, 99]) if len(done) else (math.nan,) * 3
        mean = float(done.mean()) if len(done) else math.nan
        row = {"bucket": size_label(lo, hi), "lo_bytes": lo, "hi_bytes": hi}
        row |= {"flows": int(inside.sum()), "completed": len(done), "p50": float(p50), "p95": float(p95)}
        rows.append(row | {"p99": float(p99), "mean": mean})
    return pd.DataFrame(rows).set_index("bucket")
