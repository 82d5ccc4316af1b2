"""Windows and time series from one run's snapshots (quench.windows), checked against the
workaround they replace: two runs of different lengths subtracted (a run of length t0 reaches
the same state at t0 as a longer one, the engine being deterministic)."""

from __future__ import annotations

import numpy as np
import pytest

from quench.scenarios import dumbbell

DURATION = 5.0
T0 = 2.0


def net(**record):
    n = dumbbell(2, rate="10Mbps", rtt="40ms")
    n.record(**record)
    return n


@pytest.fixture(scope="module")
def run():
    return net(snapshots=["1s", f"{T0}s", "3.5s", f"{DURATION}s"], sojourn=True).run(f"{DURATION}s")


def test_a_window_is_the_difference_of_two_runs(run):
    short, whole = net().run(f"{T0}s"), net().run(f"{DURATION}s")
    w = run.window(f"{T0}s", f"{DURATION}s")
    assert (w.t0_s, w.t1_s) == (T0, DURATION)
    for col in ("arrived_packets", "departed_bytes", "dropped_packets", "delivered_packets"):
        expected = whole.links[col].to_numpy() - short.links[col].to_numpy()
        np.testing.assert_array_equal(w.links[col].to_numpy(), expected, err_msg=col)
    width = DURATION - T0
    busy = whole.links["utilization"] * DURATION - short.links["utilization"] * T0
    np.testing.assert_allclose(w.links["utilization"], busy / width, rtol=1e-9)
    backlog = whole.links["mean_backlog_packets"] * DURATION - short.links["mean_backlog_packets"] * T0
    np.testing.assert_allclose(w.links["mean_backlog_packets"], backlog / width, rtol=1e-9, atol=1e-12)
    delivered = whole.flows["bytes_delivered"].to_numpy() - short.flows["bytes_delivered"].to_numpy()
    np.testing.assert_array_equal(w.flows["bytes_delivered"].to_numpy(), delivered)
    np.testing.assert_allclose(w.flows["goodput_bps"], delivered * 8 / width)
    assert list(w.flows["name"]) == list(whole.flows["name"])


def test_the_bins_add_up_to_the_run(run):
    ts = run.timeseries()
    assert sorted(set(zip(ts.links["t0_s"], ts.links["t1_s"]))) == [(0.0, 1.0), (1.0, 2.0), (2.0, 3.5), (3.5, 5.0)]
    per_link = ts.links.groupby("link")["departed_bytes"].sum().to_numpy()
    np.testing.assert_array_equal(per_link, run.links["departed_bytes"].to_numpy())
    per_flow = ts.flows.groupby("flow")["bytes_delivered"].sum().to_numpy()
    np.testing.assert_array_equal(per_flow, run.flows["bytes_delivered"].to_numpy())


def test_delay_quantiles_are_those_of_the_bins_departures(run):
    ts = run.timeseries()
    bottleneck = run.links[run.links["name"] == "r1->r2"]["link"].iloc[0]
    row = ts.links[(ts.links["link"] == bottleneck) & (ts.links["t0_s"] == 2.0)].iloc[0]
    s = run.sojourn
    inside = s[(s["link"] == bottleneck) & (s["time_s"] > 2.0) & (s["time_s"] <= 3.5)]["sojourn_s"]
    assert len(inside) > 100
    assert row["delay_p50_s"] == pytest.approx(np.quantile(inside, 0.5))
    assert row["delay_p99_s"] == pytest.approx(np.quantile(inside, 0.99))


def test_instants_must_be_snapshots(run):
    with pytest.raises(ValueError, match=r"^t1: no snapshot at 4 s; the instants are 0, 1, 2, 3.5, 5 s$"):
        run.window("1s", "4s")
    with pytest.raises(ValueError, match=r"^t1: the window must end after it starts"):
        run.window("2s", "1s")
    plain = net().run("1s")
    with pytest.raises(ValueError, match=r"record.snapshots is not set"):
        plain.window(0, "1s")
    assert plain.link_snapshots.empty and list(plain.link_snapshots.columns)[:2] == ["time_s", "link"]


def test_snapshots_are_saved_with_the_other_tables(run, tmp_path):
    run.save(tmp_path / "out", plots=False)
    import pandas as pd

    saved = pd.read_parquet(tmp_path / "out" / "flow_snapshots.parquet")
    assert len(saved) == 4 * len(run.flows) and "flow_name" in saved


def test_a_simulation_advanced_in_steps_is_the_runs_of_each_length():
    """Inspected at 2 s, a simulation holds what a 2-s run ends with; finished at 5 s, what a
    5-s run ends with (inspecting it changes nothing)."""
    sim = net().simulation(f"{DURATION}s")
    early = sim.advance(f"{T0}s").snapshot()
    assert sim.now == T0 and early.meta["simulated_s"] == T0
    short = net().run(f"{T0}s")
    for table in ("links", "flows", "nodes"):
        assert early.tables[table].equals(short.tables[table]), table
    sim.advance(3.0).snapshot()
    whole = sim.finish()
    again = net().run(f"{DURATION}s")
    for table in ("links", "flows", "queue", "cwnd", "drops"):
        assert whole.tables[table].equals(again.tables[table]), table
    with pytest.raises(RuntimeError, match="already finished"):
        sim.snapshot()
