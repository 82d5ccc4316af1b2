"""The report of every reproduced experiment: REPORT.html (self-contained: plots embedded as
base64 PNG) and its Markdown twin REPORT.md, with the same content. For each experiment: the
source and its claim, the verdict, every criterion (source, ours, tolerance, pass/fail), under
each failing criterion the measured figure against the claim, why it fails and a link to the
analysis in docs/reproductions.md, the plots, the exact command and the parameters and scenario
files that produced them."""

from __future__ import annotations

import base64
import html
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quench import _core
from quench.atomic import write_text_atomic

TITLE = "quench: reproductions of the seed experiments"
# Where each failure's analysis is; the report links to it relative to its own folder, which
# resolves in a checkout of the project (the report's usual place is its results/ folder).
REPRODUCTIONS_DOC = Path(__file__).resolve().parents[2] / "docs" / "reproductions.md"
# The page's look; no scripts, no external resources.
CSS = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 0.8rem 0; }
th, td { border: 1px solid #bbb; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #eee; }
.pass { color: #11691f; font-weight: 600; }
.fail { color: #b00020; font-weight: 700; }
blockquote { border-left: 4px solid #99b; margin: 0.6rem 0; padding: 0.2rem 0.8rem; background: #f6f6fb; }
pre { background: #f4f4f4; padding: 0.6rem; overflow-x: auto; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
.missing { color: #b00020; }
tr.why td { background: #fff4f4; border-top: none; }
"""


@dataclass
class Failure:
    """A failing criterion as the report explains it: the measured figure against the claim,
    why it fails, and the link to the analysis (docs/reproductions.md#anchor, relative to the
    report)."""

    criterion: str
    measured: str
    why: str
    link: str


@dataclass
class Section:
    """One experiment, as both renderers show it."""

    name: str
    summary: dict
    out: str  # the experiment's folder relative to the report
    source: str
    claim: str
    command: str
    plots: list[str] = field(default_factory=list)  # relative to the report; each exists
    missing: list[str] = field(default_factory=list)  # listed in summary.json, not on disk
    # The saved runs' scenario.json files and the journal of every run (scenarios.json.gz).
    scenarios: list[str] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    # Result tables from summary.json's "result_tables": each {"title", "columns", "rows"}.
    tables: list[dict[str, Any]] = field(default_factory=list)
    failures: dict[str, Failure] = field(default_factory=dict)  # by criterion name

    @property
    def parameters_json(self) -> str:
        return json.dumps(self.summary.get("parameters"), indent=2, default=str)

    @property
    def passed(self) -> int:
        return sum(1 for c in self.summary["criteria"] if c["passed"])

    @property
    def verdict(self) -> str:
        n = len(self.summary["criteria"])
        return "all criteria pass" if self.passed == n else f"{self.passed} of {n} criteria pass"


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)


def source_and_claim(name: str, summary: dict) -> tuple[str, str]:
    """The source (the module docstring's first paragraph) and its claim (the paragraphs after
    it, up to our modelling notes: the first paragraph with a list or ending in ':').
    summary.json's own "source"/"claim" take precedence."""
    from quench.experiments import EXPERIMENTS

    doc = getattr(EXPERIMENTS.get(name), "__doc__", None) or ""
    paragraphs = [" ".join(p.split()) for p in doc.strip().split("\n\n") if p.strip()]
    claim = []
    for raw, text in zip(doc.strip().split("\n\n")[1:], paragraphs[1:]):
        if "\n- " in raw or text.endswith(":"):
            break
        claim.append(text)
    source = paragraphs[0] if paragraphs else name
    return summary.get("source", source), summary.get("claim", " ".join(claim) or "-")


# Said of a failure that its experiment's module does not analyse; the link then goes to the
# experiment's own section.
NO_ANALYSIS = "No analysis of this failure is recorded yet; the experiment's section states its set-up and open gaps."


def measured_against_claim(criterion: dict) -> str:
    """The measured figure beside what it is held to: 'quench 1.792 against the source's 1.36
    (criterion: ±0.06)', or where the source states no figure 'quench 0.7648 (criterion:
    >= 0.999; the source: not lower)'."""
    ours, source, rule = _fmt(criterion["ours"]), criterion["source"], criterion["tolerance"]
    if isinstance(source, int | float):
        return f"quench {ours} against the source's {_fmt(source)} (criterion: {rule})"
    said = f"; the source: {source}" if source else ""
    return f"quench {ours} (criterion: {rule}{said})"


def heading_anchors(markdown: str) -> list[str]:
    """The anchor of every heading of a Markdown document, by GitHub's rule: lower case, every
    character but letters, digits, spaces, '-' and '_' removed, spaces turned into '-', and a
    repeated anchor suffixed -1, -2, ..."""
    seen: dict[str, int] = {}
    anchors = []
    in_code = False
    for line in markdown.splitlines():
        in_code ^= line.startswith("```")  # a '#' line in a fenced block is code, not a heading
        if in_code or not re.match(r"#{1,6} ", line):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        anchors.append(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def doc_link(base: Path, anchor: str) -> str:
    """docs/reproductions.md#anchor as a link relative to the report's folder `base`."""
    return Path(os.path.relpath(REPRODUCTIONS_DOC, base.resolve())).as_posix() + "#" + anchor


def section_anchor(name: str) -> str:
    """The anchor of experiment `name`'s section of docs/reproductions.md, or of the document's
    title where it has none."""
    anchors = heading_anchors(REPRODUCTIONS_DOC.read_text()) if REPRODUCTIONS_DOC.is_file() else []
    return name if name in anchors else (anchors[0] if anchors else "")


def explain_failures(name: str, summary: dict, base: Path) -> dict[str, Failure]:
    """Every failing criterion of experiment `name`, explained by its module's FAILURES."""
    from quench.experiments import EXPERIMENTS

    analyses = getattr(EXPERIMENTS.get(name), "FAILURES", {})
    out = {}
    for c in summary["criteria"]:
        if c["passed"]:
            continue
        analysis = analyses.get(c["name"])
        why, anchor = (analysis.why, analysis.anchor) if analysis else (NO_ANALYSIS, section_anchor(name))
        out[c["name"]] = Failure(c["name"], measured_against_claim(c), why, doc_link(base, anchor))
    return out


def command_for(name: str, summary: dict, out: Path) -> str:
    quick = " --quick" if summary.get("quick") else ""
    return f"quench reproduce {name}{quick} --seed {summary.get('seed', 1)} --out {out}"


def collect(base: Path, summaries: dict[str, tuple[Path, dict]]) -> list[Section]:
    sections = []
    for name, (out, summary) in summaries.items():
        out = Path(out)
        rel = os.path.relpath(out, base)
        source, claim = source_and_claim(name, summary)
        s = Section(name, summary, rel, source, claim, command_for(name, summary, out))
        for plot in summary.get("plots", []):
            (s.plots if (out / plot).is_file() else s.missing).append(f"{rel}/{plot}")
        s.scenarios = [os.path.relpath(p, base) for p in sorted(out.glob("*/scenario.json"))]
        journal = summary.get("scenarios", {}).get("file")
        if journal and (out / journal).is_file():
            s.scenarios.append(f"{rel}/{journal}")
        s.notes = {
            k: v for k, v in summary.items() if isinstance(v, str) and k not in ("experiment", "source", "claim")
        }
        s.tables = summary.get("result_tables", [])
        s.failures = explain_failures(name, summary, base)
        sections.append(s)
    return sections


def _overview_rows(sections: list[Section]) -> list[tuple[str, ...]]:
    def mode(s: Section) -> str:
        return "quick" if s.summary.get("quick") else "full"

    return [(s.name, s.verdict, mode(s), str(s.summary.get("seed", "-"))) for s in sections]


# summary.json strings shown elsewhere, not as notes.
NOT_NOTES = ("experiment", "source", "claim")
OVERVIEW_HEAD = ("experiment", "verdict", "mode", "seed")
CRITERIA_HEAD = ("criterion", "source", "quench", "tolerance", "pass")


def _criteria_rows(s: Section) -> list[tuple[str, ...]]:
    return [(c["name"], _fmt(c["source"]), _fmt(c["ours"]), str(c["tolerance"])) for c in s.summary["criteria"]]


# ---------------------------------------------------------------------------------------
# Markdown


def _md_table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    def row(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [row(head), "|" + "---|" * len(head), *[row(r) for r in rows]]


def _md_failures(s: Section) -> list[str]:
    """A list under the criteria table, one item per failing criterion, in the table's order."""
    if not s.failures:
        return []
    items = [f"- **FAIL: {f.criterion}**: {f.measured}. {f.why} [Analysis]({f.link})" for f in s.failures.values()]
    return ["Why these criteria fail:", "", *items, ""]


def render_markdown(sections: list[Section]) -> str:
    lines = [f"# {TITLE}", "", f"quench {_core.__version__}.", ""]
    lines += [*_md_table(OVERVIEW_HEAD, _overview_rows(sections)), ""]
    for s in sections:
        mode = "quick mode" if s.summary.get("quick") else "full mode"
        lines += [f"## {s.name} ({s.verdict}; {mode}, seed {s.summary.get('seed', '-')})", ""]
        lines += [f"**Source:** {s.source}", "", f"> **Claim:** {s.claim}", ""]
        verdicts = ["pass" if c["passed"] else "**FAIL**" for c in s.summary["criteria"]]
        rows = [(*r, v) for r, v in zip(_criteria_rows(s), verdicts)]
        lines += [*_md_table(CRITERIA_HEAD, rows), ""]
        lines += _md_failures(s)
        lines += [f"**{k}:** {v}" for k, v in s.notes.items()]
        lines += [f"![{s.name}: {Path(p).name}]({p})\n" for p in s.plots]
        lines += [f"**Missing plot (listed in summary.json, not found):** `{p}`" for p in s.missing]
        for table in s.tables:
            lines += [
                "",
                f"**{table['title']}**",
                "",
                *_md_table(tuple(table["columns"]), list(map(tuple, table["rows"]))),
            ]
        lines += ["", "Command:", "", "```sh", s.command, "```", ""]
        lines += ["Parameters (summary.json):", "", "```json", s.parameters_json, "```"]
        lines += [""] + [f"Scenario: [{p}]({p})" for p in s.scenarios]
        lines += ["", f"Full results: `{s.out}/summary.json` and the Parquet tables beside it.", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# HTML


def _html_table(head: tuple[str, ...], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _verdict_html(passed: bool) -> str:
    return '<span class="pass">pass</span>' if passed else '<span class="fail">FAIL</span>'


def _img(base: Path, rel: str) -> str:
    data = base64.b64encode((base / rel).read_bytes()).decode("ascii")
    alt = html.escape(rel)
    return f'<figure><img src="data:image/png;base64,{data}" alt="{alt}"><figcaption>{alt}</figcaption></figure>'


def _html_failure_row(f: Failure) -> str:
    """The row under a failing criterion: the figure against the claim, why, and the link."""
    e = html.escape
    return (
        f'<tr class="why"><td colspan="{len(CRITERIA_HEAD)}">{e(f.measured)}. {e(f.why)} '
        f'<a class="analysis" href="{e(f.link)}">Analysis</a></td></tr>'
    )


def _html_criteria(s: Section) -> str:
    """The criteria table, each failing criterion followed by the row that explains it."""
    e = html.escape
    th = "".join(f"<th>{e(h)}</th>" for h in CRITERIA_HEAD)
    body = []
    for cells, c in zip(_criteria_rows(s), s.summary["criteria"]):
        tds = "".join(f"<td>{e(cell)}</td>" for cell in cells) + f"<td>{_verdict_html(c['passed'])}</td>"
        body.append(f'<tr class="criterion">{tds}</tr>')
        if c["name"] in s.failures:
            body.append(_html_failure_row(s.failures[c["name"]]))
    return f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _html_section(s: Section, base: Path) -> str:
    e = html.escape
    parts = [
        f'<section id="{e(s.name)}"><h2>{e(s.name)}: {e(s.verdict)}</h2>',
        f"<p><strong>Source:</strong> {e(s.source)}</p>",
        f"<blockquote><strong>Claim:</strong> {e(s.claim)}</blockquote>",
        _html_criteria(s),
        *[f"<p><strong>{e(k)}:</strong> {e(v)}</p>" for k, v in s.notes.items()],
        *[_img(base, p) for p in s.plots],
        *[f'<p class="missing">Missing plot (listed in summary.json, not found): {e(p)}</p>' for p in s.missing],
        *(["<details><summary>Results by configuration</summary>"] if s.tables else []),
        *[
            f"<h3>{e(t['title'])}</h3>" + _html_table(tuple(t["columns"]), [[e(c) for c in r] for r in t["rows"]])
            for t in s.tables
        ],
        *(["</details>"] if s.tables else []),
        f"<p>Command:</p><pre><code>{e(s.command)}</code></pre>",
        "<details><summary>Parameters (summary.json)</summary>",
        f"<pre>{e(s.parameters_json)}</pre></details>",
        *[f'<p>Scenario: <a href="{e(p)}">{e(p)}</a></p>' for p in s.scenarios],
        f"<p>Full results: <code>{e(s.out)}/summary.json</code> and the Parquet tables beside it.</p></section>",
    ]
    return "\n".join(parts)


def render_html(sections: list[Section], base: Path) -> str:
    e = html.escape
    overview = [[f'<a href="#{e(r[0])}">{e(r[0])}</a>', *[e(c) for c in r[1:]]] for r in _overview_rows(sections)]
    body = [f"<h1>{e(TITLE)}</h1>", f"<p>quench {e(_core.__version__)}.</p>", _html_table(OVERVIEW_HEAD, overview)]
    body += [_html_section(s, base) for s in sections]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(TITLE)}</title><style>{CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def write_report(base: Path, summaries: dict[str, tuple[Path, dict]]) -> Path:
    """Write REPORT.md and REPORT.html into `base`; returns the HTML report's path."""
    base = Path(base)
    sections = collect(base, summaries)
    write_text_atomic(base / "REPORT.md", render_markdown(sections))
    write_text_atomic(base / "REPORT.html", render_html(sections, base))
    return base / "REPORT.html"
