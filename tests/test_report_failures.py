"""Every failing criterion in REPORT.md and REPORT.html comes with the measured figure against
the claim, a sentence of why, and a link that resolves to a heading of docs/reproductions.md.

The reports are built from the golden quick-mode summaries (tests/golden) without running
anything, with every criterion that an experiment analyses also marked failing, so that the
failures of the full runs (which CI does not run) are covered as well."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from quench.experiments import EXPERIMENTS
from quench.report import NO_ANALYSIS, measured_against_claim, write_report

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "reproductions.md"
GOLDEN = Path(__file__).parent / "golden"
MD_FAILURE = re.compile(r"^- \*\*FAIL: (?P<name>.+?)\*\*: (?P<text>.+) \[Analysis\]\((?P<link>[^)]+)\)$")


def doc_anchors() -> set[str]:
    """The anchors GitHub gives the headings of docs/reproductions.md (duplicates numbered)."""
    anchors: set[str] = set()
    counts: dict[str, int] = {}
    for line in DOC.read_text().splitlines():
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            slug = "-".join(re.sub(r"[^a-z0-9_\- ]", "", heading[1].lower()).split(" "))
            anchors.add(slug if slug not in counts else f"{slug}-{counts[slug]}")
            counts[slug] = counts.get(slug, 0) + 1
    return anchors


def golden(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.summary.json").read_text())


def analysed(name: str) -> dict:
    return getattr(EXPERIMENTS[name], "FAILURES", {})


def with_analysed_failing(name: str) -> dict:
    """The golden summary with every criterion the experiment analyses marked failing."""
    summary = golden(name)
    for c in summary["criteria"]:
        c["passed"] = c["passed"] and c["name"] not in analysed(name)
    return summary


def failing(summaries: dict) -> set[tuple[str, str]]:
    return {(n, c["name"]) for n, (_, s) in summaries.items() for c in s["criteria"] if not c["passed"]}


def resolves(base: Path, link: str) -> bool:
    path, _, anchor = link.partition("#")
    return (base / path).resolve() == DOC.resolve() and anchor in doc_anchors()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    base = tmp_path_factory.mktemp("failures") / "results"
    summaries = {}
    for name in EXPERIMENTS:
        out = base / name
        out.mkdir(parents=True)
        summary = with_analysed_failing(name)
        (out / "summary.json").write_text(json.dumps(summary))
        summaries[name] = (out, summary)
    write_report(base, summaries)
    return base, summaries


def test_every_analysis_names_a_criterion_its_experiment_has():
    for name in EXPERIMENTS:
        names = {c["name"] for c in golden(name)["criteria"]}
        assert set(analysed(name)) <= names, name


def test_every_failing_golden_criterion_is_analysed():
    for name in EXPERIMENTS:
        unexplained = [
            c["name"] for c in golden(name)["criteria"] if not c["passed"] and c["name"] not in analysed(name)
        ]
        assert not unexplained, name


def test_markdown_explains_every_failing_criterion(report):
    base, summaries = report
    items = [MD_FAILURE.match(line) for line in (base / "REPORT.md").read_text().splitlines()]
    explained = {m["name"]: m for m in items if m}
    for name, criterion in failing(summaries):
        m = explained[criterion]
        c = next(c for c in summaries[name][1]["criteria"] if c["name"] == criterion)
        assert m["text"] == f"{measured_against_claim(c)}. {analysed(name)[criterion].why}"
        assert resolves(base, m["link"]), m["link"]


class CriteriaRows(HTMLParser):
    """The criteria tables' rows: ("criterion", first cell) or ("why", its text and link)."""

    def __init__(self):
        super().__init__()
        self.rows: list[list] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and a.get("class") in ("criterion", "why"):
            self.rows.append([a["class"], "", None])
        elif tag == "a" and a.get("class") == "analysis":
            self.rows[-1][2] = a["href"]
        elif tag == "td" and self.rows and self.cell is None:
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            if not self.rows[-1][1]:
                self.rows[-1][1] = " ".join("".join(self.cell).split())
            self.cell = None
        if tag == "tr":
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def test_html_puts_the_reason_under_each_failing_criterion(report):
    base, summaries = report
    parser = CriteriaRows()
    parser.feed((base / "REPORT.html").read_text())
    rows = parser.rows
    reasons = {}
    for row, after in zip(rows, [*rows[1:], ["end", "", None]]):
        if row[0] == "criterion" and after[0] == "why":
            reasons[row[1]] = after
    for name, criterion in failing(summaries):
        _, text, link = reasons[criterion]
        c = next(c for c in summaries[name][1]["criteria"] if c["name"] == criterion)
        assert text == f"{measured_against_claim(c)}. {analysed(name)[criterion].why} Analysis"
        assert resolves(base, link), link
    assert len(reasons) == len(failing(summaries))


def test_a_failure_without_analysis_says_so_and_links_to_its_section(tmp_path):
    summary = golden("mills88")
    summary["criteria"][0]["passed"] = False
    (tmp_path / "mills88").mkdir()
    write_report(tmp_path, {"mills88": (tmp_path / "mills88", summary)})
    m = next(filter(None, map(MD_FAILURE.match, (tmp_path / "REPORT.md").read_text().splitlines())))
    assert m["text"].endswith(f". {NO_ANALYSIS}")
    assert resolves(tmp_path, m["link"]) and m["link"].endswith("#mills88")
