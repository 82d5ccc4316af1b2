"""quench.Results.load reopens a saved run: every table, the captures, the scenario and meta."""

import pandas as pd
import pytest
from conftest import small_net

import quench
from quench.atomic import OutputError

RECORD = {"segments": True, "pcap": ["r->b"], "links": ["r->b"], "snapshots": ["1s", "2s"]}


@pytest.fixture(scope="module")
def run():
    net = small_net(**RECORD)
    net.tcp("a", "b", cc="newreno").udp("a", "b", rate="200kbps", pattern="poisson")
    return net.run("3s")


def assert_same_run(back: quench.Results, res: quench.Results) -> None:
    assert sorted(back.tables) == sorted(res.tables)
    for name in res.tables:
        pd.testing.assert_frame_equal(back.tables[name], res.tables[name], obj=name)
    assert {link: back.pcaps[link] for link in back.pcaps} == {link: res.pcaps[link] for link in res.pcaps}
    assert back.scenario == res.scenario and back.meta == res.meta


def test_saved_run_reopens_with_every_table_equal(run, tmp_path):
    out = run.save(tmp_path / "out", plots=False)
    back = quench.Results.load(out)
    assert_same_run(back, run)
    assert list(back.tables)[:2] == ["links", "flows"]
    assert back.bottleneck() == run.bottleneck() and back.jain_index() == run.jain_index()


def test_a_reopened_run_saves_the_same_files(run, tmp_path):
    first = run.save(tmp_path / "first", plots=False)
    again = quench.Results.load(first).save(tmp_path / "again", plots=False)
    assert_same_run(quench.Results.load(again), run)


def test_csv_only_run_reopens_with_every_table_and_its_values(run, tmp_path):
    out = run.save(tmp_path / "out", formats=["csv"], plots=False)
    back = quench.Results.load(out)
    assert sorted(back.tables) == sorted(run.tables)
    for name in run.tables:
        want = run.tables[name]
        assert list(back.tables[name].columns) == list(want.columns) and len(back.tables[name]) == len(want)
    pd.testing.assert_series_equal(back.flows["goodput_bps"], run.flows["goodput_bps"])


def test_a_folder_without_a_run_is_refused(tmp_path):
    with pytest.raises(OutputError, match="no saved quench run"):
        quench.Results.load(tmp_path)
