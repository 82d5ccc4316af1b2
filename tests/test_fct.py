"""FCT slowdown from Python: the flows table's `ideal_fct_s` and `slowdown`
(crates/quench-core/src/fct.rs), `Results.fct()`'s buckets and percentiles, and the plot.

References: the closed form of a lone flow's ideal on a leaf-spine (a handshake of header-only
packets, then the data store-and-forward over 4 links), and percentiles recomputed with the
definition `Results.fct` documents (numpy's linear interpolation) from the flows table."""

from __future__ import annotations

import math

import numpy as np
import pytest

import quench
from quench import dist
from quench.fct import FCT_SIZE_EDGES, fct_slowdown

RATE_BPS = 1e9
DELAY_S = 5e-6
# Headers of every segment under the linux profile: IP, TCP and the timestamp option.
OVERHEAD = 52
# The linux profile's SYN and SYN-ACK: mss, sackOK, TS, nop, wscale (docs/mechanisms.md#handshake-options).
SYN = 60
PAYLOAD = 1448


def leaf_spine() -> quench.Network:
    """8 hosts on 2 leaves and 2 spines, 1 Gb/s links of 5 us."""
    return quench.Network(seed=4).leaf_spine(4, 2, 2, "1Gbps", "5us", qdisc=quench.droptail("100p"))


def test_a_lone_flow_across_the_spine_takes_its_closed_form_ideal():
    # h0 -> h4 crosses host-leaf, leaf-spine, spine-leaf, leaf-host: 4 links each way, the
    # two fabric links at 2 Gb/s (4 hosts x 1 Gb/s over 2 spines), so a packet's
    # serialization over the path is 3 of its times at 1 Gb/s, and the last link is slowest.
    size = 5000  # 4 segments: 3 full and 656 B
    res = leaf_spine().tcp("h0", "h4", bytes=size).run("10ms", progress=False)
    assert res.link("tor0->spine0")["rate_bps"] == 2 * RATE_BPS
    f = res.flows.iloc[0]
    tx = lambda b: b * 8 / RATE_BPS  # noqa: E731
    segments = math.ceil(size / PAYLOAD)
    wire = size + segments * OVERHEAD
    handshake = 8 * DELAY_S + 2 * 3 * tx(SYN)
    data = 4 * DELAY_S + 3 * tx(PAYLOAD + OVERHEAD) + tx(wire - PAYLOAD - OVERHEAD)
    assert f["ideal_fct_s"] == pytest.approx(handshake + data, abs=1e-12)
    # Within the initial window and alone: it takes exactly that (to the nanosecond).
    assert round(f["response_time_s"] * 1e9) == round(f["ideal_fct_s"] * 1e9)
    assert f["slowdown"] == pytest.approx(1.0, abs=1e-9)


def test_fct_buckets_hold_the_percentiles_of_the_flows_table():
    net = leaf_spine()
    net.workload(matrix="all_to_all", load=0.5, size=dist.websearch(), stop="200ms", name="ws")
    res = net.run("1s", progress=False)
    table = res.fct()
    assert list(table.index) == ["(0B, 10KB]", "(10KB, 100KB]", "(100KB, 1MB]", "(1MB, 10MB]", "(10MB, inf]"]
    flows = res.flows
    assert table["flows"].sum() == flows["ideal_fct_s"].notna().sum() == len(flows)
    for (lo, hi), (_, row) in zip(zip(FCT_SIZE_EDGES, FCT_SIZE_EDGES[1:]), table.iterrows()):
        inside = flows[(flows["bytes_requested"] > lo) & (flows["bytes_requested"] <= hi)]
        done = inside["slowdown"].dropna().to_numpy()
        assert row["flows"] == len(inside) and row["completed"] == len(done)
        if len(done):
            assert row["p50"] == np.percentile(done, 50) and row["p99"] == np.percentile(done, 99)
            assert row["p50"] >= 1.0 - 1e-9, "no flow beats its ideal where the last link is the slowest"
        else:
            assert math.isnan(row["p50"])
    assert table["completed"].sum() > 30


def test_fct_refuses_bad_edges():
    with pytest.raises(ValueError, match="edges"):
        fct_slowdown(leaf_spine().tcp("h0", "h1", bytes=1000).run("5ms", progress=False).flows, [10, 5])


def test_the_slowdown_plot_draws_points_and_bucket_steps(tmp_path):
    from quench import plot

    net = leaf_spine()
    net.workload(matrix="all_to_all", load=0.3, size="20KB", stop="5ms", name="w")
    res = net.run("50ms", progress=False)
    ax = plot.fct_slowdown(res, label="droptail")
    assert len(ax.collections) == 1 and len(ax.lines) == 2  # the points, the p50 and p99 lines
    assert ax.lines[0].get_xdata()[0] == 20e3  # one bucket, at its flows' size
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    ax.figure.savefig(tmp_path / "s.png")
