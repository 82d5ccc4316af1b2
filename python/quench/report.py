"""REPORT.md: every reproduced experiment's pass criteria and plots on one page."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)


def write_report(base: Path, summaries: dict[str, tuple[Path, dict]]) -> Path:
    lines = ["# quench: reproductions of the seed experiments", ""]
    for name, (out, summary) in summaries.items():
        rel = os.path.relpath(out, base)
        verdict = "all criteria pass" if summary["passed"] else "some criteria fail"
        mode = "quick mode" if summary.get("quick") else "full mode"
        lines += [f"## {name} ({verdict}; {mode}, seed {summary['seed']})", ""]
        lines += ["| criterion | source | quench | tolerance | pass |", "|---|---|---|---|---|"]
        for c in summary["criteria"]:
            ok = "yes" if c["passed"] else "**no**"
            lines.append(f"| {c['name']} | {_fmt(c['source'])} | {_fmt(c['ours'])} | {c['tolerance']} | {ok} |")
        lines.append("")
        for plot in summary.get("plots", []):
            lines.append(f"![{name} {plot}]({rel}/{plot})")
        lines += ["", f"Full results: `{rel}/summary.json` and the Parquet tables beside it.", ""]
    path = base / "REPORT.md"
    tmp = base / ".REPORT.md.tmp"
    tmp.write_text("\n".join(lines))
    os.replace(tmp, path)
    return path
