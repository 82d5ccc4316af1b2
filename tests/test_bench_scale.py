"""The scale-curve benchmark runs (two short points) and prints its table; the figures
themselves are the benchmark's business, only the output format is checked here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_scale.py"


def test_quick_flow_series_prints_a_row_per_point(tmp_path):
    out = tmp_path / "scale.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--series", "flows", "--json", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[:3] == ["series", "flows", "rate"] and header[-1] == "per flow KiB"
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    assert [r[1] for r in rows] == ["1", "100"]
    assert all(len(r) == len(header) for r in rows)
    points = json.loads(out.read_text())["points"]
    assert [p["flows"] for p in points] == [1, 100]
    for p in points:
        assert p["peak_rss_kib"] > 0 and p["events"] > 0 and p["delivered_packets"] > 0
