"""Reproductions of the seed documents' experiments: one module per seed, each with a
`reproduce(out_dir, quick)` that runs it, prints the source's figures beside ours, and writes
`summary.json` with every pass criterion computed from the recorded results."""

from __future__ import annotations

import contextlib
from pathlib import Path

from quench.experiments import (
    aqm,
    edge,
    fabric,
    feng99,
    feng99_fairness,
    jacobson88,
    jacobson88_mss,
    mills88,
    mills88_tuning,
    pcp06,
    pcp06_tcp,
    wei05,
    wei05_pacing,
)
from quench.experiments.common import progress_reports
from quench.scenario import journal

EXPERIMENTS = {
    "mills88": mills88,
    "pcp06": pcp06,
    "jacobson88": jacobson88,
    "feng99": feng99,
    "wei05": wei05,
    "aqm": aqm,
    "fabric": fabric,
    "edge": edge,
    # Studies of the seeds' open questions (docs/reproductions.md, "Studies"), in the order
    # of the experiments they extend.
    "mills88-tuning": mills88_tuning,
    "pcp06-tcp": pcp06_tcp,
    "jacobson88-mss": jacobson88_mss,
    "feng99-fairness": feng99_fairness,
    "wei05-pacing": wei05_pacing,
}


def reproduce(name: str, out: Path, quick: bool = False, seed: int = 1, progress: bool = False) -> dict:
    """Run experiment `name`; its summary.json references every scenario it ran, as the
    engine read them (`scenarios.json.gz`). With `progress`, its grids say on stderr how far
    they are (runs done of the total, time elapsed and left)."""
    with journal(), progress_reports(name) if progress else contextlib.nullcontext():
        return EXPERIMENTS[name].reproduce(out, quick=quick, seed=seed)
