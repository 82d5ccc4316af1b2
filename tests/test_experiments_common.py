"""The experiments' grid runner and table helper (quench.experiments.common)."""

import re
from operator import attrgetter

import pandas as pd
import pytest
from conftest import small_net

from quench import _core
from quench.experiments import common
from quench.experiments.common import Run, progress_reports, run_grid, text_table
from quench.scenario import journal


def transfer(duration: str, keep=None) -> Run:
    """One NewReno flow through small_net's bottleneck for `duration`."""
    net = small_net(queues=True)
    net.tcp("a", "b", cc="newreno")
    return Run.of(net, duration, keep)


def test_grid_keeps_the_given_order_and_journals_like_a_serial_loop():
    """In the pool the first run, the longest, finishes last; results and journal still come
    in the order given, equal to a serial loop's."""
    durations = ["20s", "2s", "3s", "1s"]
    runs = [transfer(d, attrgetter("flows")) for d in durations]
    with journal() as serial:
        expected = run_grid(runs[:1], runs[1:], jobs=1)
    with journal() as pooled:
        got = run_grid(runs[:1], runs[1:], jobs=2)
    assert [len(g) for g in got] == [1, 3]
    for e, g in zip(sum(expected, []), sum(got, [])):
        pd.testing.assert_frame_equal(e, g)
    assert [r["duration"] for r in pooled] == durations
    assert pooled == serial


def test_grid_keeps_whole_results_by_default():
    (kept,) = run_grid([transfer("1s")] * 2, jobs=2)
    assert [r.scenario["duration"] for r in kept] == ["1s", "1s"]
    assert len(kept[0].queue) and kept[0].links.equals(kept[1].links)


def test_grid_raises_a_run_s_error():
    bad = Run({"duration": "1s", "links": [{"from": "a", "to": "nowhere"}]})
    with pytest.raises(_core.ScenarioError):
        run_grid([transfer("1s"), bad], jobs=2)


@pytest.mark.parametrize("jobs", [1, 2])
def test_grid_reports_its_progress_on_stderr_only_when_asked(jobs, capsys, monkeypatch):
    monkeypatch.setattr(common, "PROGRESS_INTERVAL_S", 0.0)  # a line at every finished run
    runs = [transfer("1s", attrgetter("flows"))] * 3
    run_grid(runs, jobs=jobs)
    assert capsys.readouterr() == ("", "")
    with progress_reports("demo"):
        run_grid(runs, jobs=jobs)
        run_grid(runs[:2], jobs=jobs)
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if "left" in line]  # the ticker's may come too
    assert out == "" and lines
    assert any(re.fullmatch(r"  demo: grid 1, 3/3 runs, \d+:\d\d elapsed, about 0:00 left in it", x) for x in lines)
    assert re.fullmatch(r"  demo: grid 2, 2/2 runs, \d+:\d\d elapsed, about 0:00 left in it", lines[-1])


def test_text_table_aligns_columns_and_trims_lines():
    table = text_table([("name", "n"), ("a", "10"), ("bb", "7")], "title", right=[1])
    assert table.split("\n") == ["title", "name   n", "a     10", "bb     7"]
