"""Shared by the studies (the seed documents' open questions, docs/reproductions.md): seeds,
means with 95 % Student-t intervals over seeds (quench.stats, the sweep engine's intervals),
paired comparisons and their verdicts, and the result tables the report shows.

A study is not a reproduction: its source has no figure to match. Its summary.json keeps every
run's measurements (the recorded sweep), the means and intervals computed from them, and a
conclusion stated from those intervals: a difference is called only when its paired 95 %
interval excludes zero; otherwise the comparison is reported as inconclusive. Its criteria are
checks that the sweep measured what it claims to (every run finished, the link was loaded),
never the answer.

Every study's `reproduce` has the same shape: parameters (quick or full) and the output folder
(`common.output_folder`), its grids of keys x seeds run at once (`run_seeded`), its analysis
and tables, then `study_report`, which prints the tables and writes summary.json with the keys
every study has, in one order."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from quench.experiments.common import Criterion, Run, report, run_grid, text_table
from quench.stats import CONFIDENCE, confidence_interval

# Verdicts of a paired comparison; IDENTICAL when every pair is equal (the runs did not differ).
HIGHER, LOWER, INCONCLUSIVE, IDENTICAL = "higher", "lower", "inconclusive", "identical"


def seeds_from(first: int, count: int) -> list[int]:
    """The study's seeds: `count` consecutive seeds from `quench reproduce --seed`."""
    return list(range(first, first + count))


def seed_range(text: str) -> list[int]:
    """The seeds of a study script's `--seeds first-last` (both included), e.g. "1-3"."""
    first, sep, last = text.partition("-")
    if not sep or not first.strip().isdigit() or not last.strip().isdigit() or int(last) < int(first):
        raise ValueError(f"--seeds: expected first-last such as 1-3, got {text!r}")
    return list(range(int(first), int(last) + 1))


def _same(key: Any) -> Any:
    return key


@dataclass(frozen=True)
class SeededGrid:
    """A study's grid: one run per key and seed, made key by key with every seed in turn
    (`make(key, seed)`); its rows are keyed by `label(key)` (the key itself by default)."""

    keys: Sequence[Any]
    seeds: Sequence[int]
    make: Callable[[Any, int], Run]
    label: Callable[[Any], Any] = _same


def run_seeded(*grids: SeededGrid) -> list[dict[Any, list[Any]]]:
    """Run the grids at once on the experiments' grid runner; per grid, what its runs kept as
    {label(key): [one per seed]}."""
    kept = run_grid(*[[g.make(key, s) for key in g.keys for s in g.seeds] for g in grids])
    return [by_key([g.label(k) for k in g.keys], g.seeds, runs) for g, runs in zip(grids, kept, strict=True)]


def by_key(keys: Sequence[Any], seeds: Sequence[int], kept: Sequence[Any]) -> dict[Any, list[Any]]:
    """What a grid's runs kept, {key: [one per seed]}, for a grid made key by key with every seed
    in turn (the order `run_grid` was given its runs in)."""
    if len(kept) != len(keys) * len(seeds):
        raise ValueError(f"{len(kept)} runs kept for {len(keys)} keys x {len(seeds)} seeds")
    it = iter(kept)
    return {key: [next(it) for _ in seeds] for key in keys}


def seed_records(rows: dict[Any, list[dict]], seeds: Sequence[int], fields: Sequence[str]) -> list[dict]:
    """One record per run for the summary: the key's parts under `fields`, the seed, and what
    the run measured."""
    return [
        {**dict(zip(fields, key, strict=True)), "seed": s, **r}
        for key, runs in rows.items()
        for s, r in zip(seeds, runs, strict=True)
    ]


def mean_ci(values: Iterable[float]) -> dict[str, float]:
    """{"mean", "half", "low", "high", "n"}: the mean and its two-sided 95 % t interval."""
    x = np.asarray(list(values), dtype=float)
    mean, half = confidence_interval(x, CONFIDENCE)
    return {"mean": mean, "half": half, "low": mean - half, "high": mean + half, "n": int(np.isfinite(x).sum())}


def compare(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """The paired difference a - b over seeds (same seed, same index), its interval and the
    verdict: HIGHER or LOWER when the interval excludes zero, IDENTICAL when every pair is
    equal, INCONCLUSIVE otherwise (also with fewer than two pairs, whose interval is
    undefined)."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    d = mean_ci(diffs)
    if diffs and all(v == 0 for v in diffs):
        verdict = IDENTICAL
    elif math.isfinite(d["half"]) and d["low"] > 0:
        verdict = HIGHER
    elif math.isfinite(d["half"]) and d["high"] < 0:
        verdict = LOWER
    else:
        verdict = INCONCLUSIVE
    return {**d, "verdict": verdict}


def fmt_ci(ci: dict[str, float], digits: int = 3, scale: float = 1.0) -> str:
    """'mean ± half' (half '?' when undefined)."""
    half = f"{ci['half'] * scale:.{digits}f}" if math.isfinite(ci["half"]) else "?"
    return f"{ci['mean'] * scale:.{digits}f} ± {half}"


def result_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """A table for the report (summary.json "result_tables") and the printed output."""
    return {"title": title, "columns": list(columns), "rows": [[str(c) for c in r] for r in rows]}


def printed(tables: Sequence[dict[str, Any]]) -> list[str]:
    """The result tables as text, for the console."""
    return [text_table([t["columns"], *t["rows"]], t["title"]) for t in tables]


def study_report(
    out: Path,
    name: str,
    criteria: list[Criterion],
    result_tables: list[dict[str, Any]],
    *,
    seed: int,
    parameters: dict[str, Any],
    quick: bool,
    source: str,
    claim: str,
    conclusion: Any,
    scope: str,
    runs: Any,
    statistics: Any,
    plots: Any,
    **extra: Any,
) -> dict:
    """Print a study's result tables and criteria, and write its summary.json: the question
    (`source`, `claim`), the `conclusion` from the intervals, what was varied and fixed
    (`scope`), every run's measurements, the statistics, anything `extra`, then the tables and
    figures."""
    return report(
        out,
        name,
        criteria,
        printed(result_tables),
        seed=seed,
        parameters=parameters,
        quick=quick,
        source=source,
        claim=claim,
        conclusion=conclusion,
        scope=scope,
        runs=runs,
        statistics=statistics,
        **extra,
        result_tables=result_tables,
        plots=plots,
    )
