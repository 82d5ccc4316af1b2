"""REPORT.html and its Markdown twin, built from a real quick reproduction (mills88, about 4 s)
and a made-up experiment with a failing criterion and a lost plot; the page is opened in
headless Chromium (skipped when it is not installed: `make chromium` installs it as root)."""

import base64
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from quench.cli import main  # noqa: E402
from quench.report import write_report  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_TIMEOUT_S = 120
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# A rendered page of text, tables and plots has thousands of colours; a blank one has one.
MIN_SCREENSHOT_COLOURS = 50
FAKE = {
    "experiment": "fake01",
    "source": "A. Nobody, 'A made-up claim' (test fixture)",
    "claim": "Throughput doubles when the buffer doubles.",
    "passed": False,
    "criteria": [
        {"name": "throughput ratio", "source": 2.0, "ours": 1.98, "tolerance": "±5%", "passed": True},
        {"name": "loss below one percent", "source": None, "ours": 0.03, "tolerance": "<= 0.01", "passed": False},
    ],
    "seed": 7,
    "quick": True,
    "parameters": {"buffer_packets": [10, 20], "rate": "1Mbps"},
    "plots": ["curve.png", "lost.png"],
    "scaling": "a note that the report must show",
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    base = tmp_path_factory.mktemp("report")
    assert main(["reproduce", "mills88", "--quick", "--out", str(base / "mills88")]) == 0
    fake = base / "fake01"
    (fake / "run").mkdir(parents=True)
    (fake / "run" / "scenario.json").write_text('{"seed": 7}\n')
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2, 3], [1, 4, 9])
    fig.savefig(fake / "curve.png")
    plt.close(fig)
    (fake / "summary.json").write_text(json.dumps(FAKE))
    summaries = {n: (base / n, json.loads((base / n / "summary.json").read_text())) for n in ("mills88", "fake01")}
    write_report(base, summaries)
    return base, summaries


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.links, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a["src"])
        # Links into the report and to the analyses in docs/ (tests/test_report_failures.py)
        # aside, every link is to a file of the results.
        if tag == "a" and not a["href"].startswith("#") and a.get("class") != "analysis":
            self.links.append(a["href"])

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.text = " ".join(" ".join(page.text).split())
    return page


def expected_plots(base: Path, summaries: dict) -> list[bytes]:
    return [(out / p).read_bytes() for out, s in summaries.values() for p in s["plots"] if (out / p).is_file()]


def test_markdown_twin_has_every_criterion_and_only_plots_that_exist(report):
    base, summaries = report
    md = (base / "REPORT.md").read_text()
    for _, s in summaries.values():
        for c in s["criteria"]:
            assert f"| {c['name']} |" in md
    rows = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| criterion |")]
    verdicts = [line.rsplit("|", 2)[1].strip() for line in rows if line.endswith(("| pass |", "| **FAIL** |"))]
    assert verdicts == ["pass"] * 10 + ["**FAIL**"]
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", md)
    assert len(images) == 4 and all((base / p).is_file() for p in images)
    assert "**Missing plot (listed in summary.json, not found):** `fake01/lost.png`" in md
    assert "quench reproduce mills88 --quick --seed 1 --out" in md and '"buffer_packets"' in md
    assert "[fake01/run/scenario.json](fake01/run/scenario.json)" in md


def test_html_is_self_contained_and_says_the_same(report):
    base, summaries = report
    page = parse((base / "REPORT.html").read_text())
    embedded = [base64.b64decode(src.removeprefix("data:image/png;base64,")) for src in page.imgs]
    assert all(src.startswith("data:image/png;base64,") for src in page.imgs)
    assert embedded == expected_plots(base, summaries)  # every existing plot, in order, nothing else
    assert all((base / href).is_file() for href in page.links) and page.links
    md = (base / "REPORT.md").read_text()
    for phrase in (
        "Throughput doubles when the buffer doubles.",
        "a note that the report must show",
        "1 of 2 criteria",
    ):
        assert phrase in page.text and phrase in md


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (`make chromium` installs it as root with apt)")
def test_report_opens_in_headless_chromium(report, tmp_path):
    base, summaries = report
    url = (base / "REPORT.html").as_uri()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S
    )
    assert dom.returncode == 0 and ":CONSOLE" not in dom.stderr, dom.stderr[-2000:]
    page = parse(dom.stdout)
    for _, s in summaries.values():
        assert all(c["name"] in page.text for c in s["criteria"])
    assert page.text.count(" pass ") >= 10 and "FAIL" in page.text
    assert "mills88: all criteria pass" in page.text and "fake01: 1 of 2 criteria pass" in page.text
    assert len(page.imgs) == len(expected_plots(base, summaries)) == 4
    shot = tmp_path / "report.png"
    args = [CHROMIUM, *flags, "--window-size=1200,1600", f"--screenshot={shot}", url]
    subprocess.run(args, capture_output=True, timeout=CHROMIUM_TIMEOUT_S, check=True)
    assert shot.read_bytes().startswith(PNG_SIGNATURE)
    with Image.open(shot) as img:
        assert img.size == (1200, 1600)
        assert len(img.convert("RGB").getcolors(maxcolors=1 << 24)) >= MIN_SCREENSHOT_COLOURS
