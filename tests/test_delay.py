"""The per-packet one-way delay record from the Python API (`record(delay=[...])`, the `delay`
table, `Results.delay`); the engine's tests (crates/quench-core/tests/delay_record.rs) check
the rows against the closed form."""

from __future__ import annotations

import pytest

import quench


def voip_over_a_shared_link() -> quench.Network:
    """A 1000-byte datagram every 1 ms (8 Mb/s) a -> r -> b over 100 Mb/s, 1 ms then 10 Mb/s,
    5 ms: 6.88 ms each, alone; a TCP transfer in the same direction queues it from 0.2 s."""
    net = quench.Network(seed=1).hosts("a", "b").routers("r")
    net.link("a", "r", rate="100Mbps", delay="1ms")
    net.link("r", "b", rate="10Mbps", delay="5ms", qdisc=quench.droptail("50p"))
    net.udp("a", "b", rate="8Mbps", size="972B", name="voip")
    net.tcp("a", "b", bytes="2MB", start="200ms", name="bulk")
    return net.record(delay=["voip"])


def test_delay_summarises_a_flows_one_way_delay():
    res = voip_over_a_shared_link().run("1s", progress=False)
    d = res.delay("voip")
    assert list(d.index) == ["packets", "mean_s", "p50_s", "p90_s", "p99_s", "min_s", "max_s", "jitter_s"]
    # Alone, 80 us + 1 ms + 800 us + 5 ms; behind the TCP transfer's queue, up to 50 packets more.
    assert d["min_s"] == pytest.approx(6.88e-3, abs=1e-12)
    assert 6.88e-3 < d["max_s"] <= 6.88e-3 + 50 * 1.2e-3
    rows = res.tables["delay"]
    assert d["packets"] == len(rows) and (rows["flow_name"] == "voip").all()
    assert d["p50_s"] <= d["p99_s"] <= d["max_s"]


def test_delay_says_what_is_missing():
    res = voip_over_a_shared_link().run("300ms", progress=False)
    with pytest.raises(KeyError, match="no flow 'video'"):
        res.delay("video")
    with pytest.raises(KeyError, match="is it named in record.delay"):
        res.delay("bulk")


def test_an_unknown_flow_in_record_delay_names_its_place():
    net = voip_over_a_shared_link().record(delay=["voip", "video"])
    with pytest.raises(quench.ScenarioError) as e:
        net.run("1s", progress=False)
    assert e.value.path == "record.delay[1]"
