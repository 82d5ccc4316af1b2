"""The Python API end to end: build, run, DataFrames, saving, determinism."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import small_net

import quench


def test_run_returns_dataframes_with_units_in_names(net):
    net.tcp("a", "b", cc="reno", bytes="200KB")
    res = net.run("10s")
    assert isinstance(res.links, pd.DataFrame) and isinstance(res.flows, pd.DataFrame)
    f = res.flows.iloc[0]
    assert f["bytes_delivered"] == 200_000
    # Handshake (1 RTT) + 200 KB at 1 Mb/s (1.6 s of payload) is a floor on the response time.
    assert f["response_time_s"] > 1.6 + 0.022
    assert res.link("r->b")["utilization"] > 0.1
    assert {"time_s", "cwnd", "ssthresh", "flow_name"} <= set(res.cwnd.columns)


def test_queue_trace_is_exact_and_consistent_with_link_summary(net):
    net.tcp("a", "b")
    res = net.run("5s")
    q = res.queue[res.queue["link_name"] == "r->b"]
    assert q["packets"].max() == res.link("r->b")["max_backlog_packets"]
    # Time-weighted mean of the step function equals the engine's integral.
    t = np.append(q["time_s"].to_numpy(), 5.0)
    mean = float(np.sum(q["packets"].to_numpy() * np.diff(t)) / 5.0)
    assert mean == pytest.approx(res.link("r->b")["mean_backlog_packets"], rel=1e-9)


def test_udp_poisson_and_cbr_rates(net):
    # Sources stop at 19 s so every datagram has arrived when the run ends at 20 s.
    net.udp("a", "b", rate="200kbps", pattern="cbr", size="472B", stop="19s")
    net.udp("a", "b", rate="200kbps", pattern="poisson", size={"dist": "uniform", "min": 100, "max": 900}, stop="19s")
    res = net.run("20s")
    sent_bits = (res.flows["bytes_sent"] + 28 * res.flows["packets_sent"]) * 8 / 19
    assert sent_bits.iloc[0] == pytest.approx(200e3, rel=0.01)
    assert sent_bits.iloc[1] == pytest.approx(200e3, rel=0.05)
    assert (res.flows["packets_received"] == res.flows["packets_sent"]).all()


def test_same_seed_same_bytes_other_seed_differs(tmp_path):
    def run(seed):
        net = small_net()
        net.seed = seed
        net.udp("a", "b", rate="900kbps", pattern="poisson")
        net.tcp("a", "b")
        return net.run("5s")

    a, b, c = run(3), run(3), run(4)
    for name in a.tables:
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name])
    assert not a.flows.equals(c.flows)


def test_save_writes_parquet_csv_plots_and_resolved_scenario(net, tmp_path):
    net.tcp("a", "b").record(segments=True, pcap=["r->b"])
    res = net.run("3s")
    out = res.save(tmp_path / "out", formats=["parquet", "csv"])
    names = {p.name for p in out.iterdir()}
    assert {"links.parquet", "flows.csv", "queue.png", "cwnd.png", "time_sequence.png", "r-b.pcap"} <= names
    scenario = json.loads((out / "scenario.json").read_text())
    assert scenario["flows"][0]["tcp"]["mss"] == 1460  # defaults are filled in
    back = pd.read_parquet(out / "flows.parquet")
    pd.testing.assert_frame_equal(back, res.flows)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folder left


def test_failed_save_leaves_nothing(net, tmp_path):
    net.tcp("a", "b")
    res = net.run("1s")
    with pytest.raises(ValueError, match="unknown output format"):
        res.save(tmp_path / "out", formats=["xlsx"])
    assert list(tmp_path.iterdir()) == []


def test_units_share_the_engine_parser():
    assert quench.parse_rate("9600bps") == 9600
    assert quench.parse_duration("25ms") == pytest.approx(0.025)
    assert quench.parse_bytes("64KiB") == 65536
    with pytest.raises(ValueError, match="unknown unit"):
        quench.parse_rate("10Mbsp")
    with pytest.raises(ValueError, match="not a rate"):
        quench.parse_rate("10ms")


@pytest.mark.parametrize(
    ("written", "packets", "size"),
    [("100p", 100, None), ("64KB", None, 64_000), ("100p,64KiB", 100, 65_536), (42, 42, None)],
)
def test_a_limit_reads_as_the_engine_writes_it(written, packets, size):
    """parse_limit reads a limit as written and as the engine writes it back (every default
    filled in: '100p,65536B'), to the same (packets, bytes)."""
    from quench.units import parse_limit

    spec = quench.Network().host("a").host("b").link("a", "b", "1Mbps", "1ms", qdisc=quench.droptail(written))
    resolved = quench.validate_scenario(spec.to_dict("1s"))["links"][0]["qdisc"]["limit"]
    assert parse_limit(written) == parse_limit(resolved) == (packets, size)


def test_a_packet_count_is_whole_and_a_limit_names_its_key():
    from quench.units import parse_limit, parse_packets

    assert parse_packets("12p") == 12
    with pytest.raises(ValueError, match="whole number"):
        parse_packets("2.5p")
    with pytest.raises(ValueError, match="qdisc.limit") as e:
        parse_limit("100p,10Mbps", "qdisc.limit")
    assert e.value.path == "qdisc.limit"


def test_cwnd_interval_thins_ramps_but_keeps_every_decrease(net):
    """record.cwnd_interval samples a rising window at most once per interval per flow, but every
    decrease and the peak before it stay exact (trace/thinning.rs)."""
    net.tcp("a", "b", cc="reno", profile="rfc")
    full = net.run("20s").cwnd
    thin = net.record(cwnd_interval="200ms").run("20s").cwnd
    assert 0 < len(thin) < len(full) / 5
    assert thin["cwnd"].max() == full["cwnd"].max()

    def decreases(t):
        w = t["cwnd"].to_numpy()
        cut = np.flatnonzero(w[1:] < w[:-1]) + 1
        return {(t["time_s"].iloc[i], w[i - 1], w[i]) for i in cut}

    assert decreases(full) and decreases(thin) == decreases(full)
    gaps = np.diff(thin["time_s"].to_numpy())
    # Rows closer than the interval are decreases or the peaks written with them.
    close = np.flatnonzero(gaps < 0.2) + 1
    w = thin["cwnd"].to_numpy()
    assert all(w[i] < w[i - 1] or (i + 1 < len(w) and w[i + 1] < w[i]) for i in close)


def test_journals_collect_the_resolved_scenarios_of_runs_inside_them():
    """`scenario.journal()` records every run inside it as the engine read it; nested journals
    both see inner runs, and leaving the inner one (equal to the outer then: both hold the same one run)
    closes only it."""
    from quench.scenario import active_journal, journal

    with journal() as outer:
        with journal() as inner:
            assert active_journal() is inner
            small_net().run("1s")
        assert active_journal() is outer
        net = small_net()
        net.tcp("a", "b", cc="reno", bytes="10KB")
        net.run("1s")
    small_net().run("1s")
    assert active_journal() is None
    assert len(inner) == 1 and len(outer) == 2
    assert outer[0] is inner[0] and outer[1]["flows"][0]["cc"]["kind"] == "reno"
    assert "rto" in outer[1]["flows"][0]["tcp"], "engine defaults filled in"


def test_engine_code_names_reach_the_tables():
    """A host whose 1 Mb/s NIC queue holds 2 packets, with Linux's answer to its drops: the
    drops table names the reason and tcp_events names the sender's CWR entries."""
    net = quench.Network(seed=1)
    net.hosts("a", "b").router("r")
    net.link("a", "r", rate="1Mbps", delay="1ms", qdisc=quench.droptail("2p"))
    net.link("r", "b", rate="100Mbps", delay="10ms")
    net.tcp("a", "b", bytes="200KB", cc="newreno", sack=True, local_drop="linux_cwr")
    net.record(drops=True)
    res = net.run("20s", progress=False)
    assert (res.drops["reason"] == "overflow").all() and len(res.drops) > 0
    assert (res.tcp_events["event"] == "local_cwr").sum() >= 1
    flow = res.flows.iloc[0]
    assert flow["retransmitted_segments"] == 0 and flow["bytes_delivered"] == 200_000


def test_receiver_order_counts_reach_the_flows_table():
    """`reordered_segments`, `duplicate_segments` and `dsacks_received` are uint64 columns of
    `flows`: 0 for a TCP flow on a lossless single path (nothing overtaken, nothing twice) and
    for a UDP flow (not counted there); their meaning is checked against hand counts in
    quench-core's tests."""
    net = quench.Network(seed=1)
    net.hosts("a", "b").router("r")
    net.link("a", "r", rate="100Mbps", delay="1ms")
    net.link("r", "b", rate="100Mbps", delay="10ms", qdisc=quench.droptail("1000p"))
    net.tcp("a", "b", bytes="200KB", cc="newreno")
    net.udp("a", "b", rate="1Mbps")
    res = net.run("2s", progress=False)
    for col in ("reordered_segments", "duplicate_segments", "dsacks_received"):
        assert str(res.flows[col].dtype) == "uint64"
        assert res.flows[col].tolist() == [0, 0], col
    assert res.flows["retransmitted_segments"].iloc[0] == 0


@pytest.mark.parametrize(
    ("helper", "kind", "monitor"),
    [
        (quench.codel, "codel", "count"),
        (quench.fq_codel, "fq_codel", None),
        (quench.pie, "pie", "drop_prob"),
        (quench.fq_pie, "fq_pie", None),
        (quench.choke, "choke", "avg_queue"),
    ],
)
def test_aqm_helpers_build_their_discipline(helper, kind, monitor):
    net = quench.Network(seed=3).hosts("a", "b").routers("r")
    net.link("a", "r", rate="100Mbps", delay="1ms")
    net.link("r", "b", rate="2Mbps", delay="10ms", qdisc=helper(limit="200p"))
    net.udp("a", "b", rate="4Mbps", size="972B")
    res = net.run("3s")
    link = res.link("r->b")
    assert link["qdisc"] == kind
    assert link["drops_early"] > 0 and link["utilization"] > 0.95
    if monitor:
        assert monitor in set(res.monitors["name"])


@pytest.mark.parametrize(
    ("qdisc", "key"),
    [
        (quench.codel(target="200ms"), "target"),
        (quench.fq_codel(quantum=0), "quantum"),
        (quench.pie(beta=-1), "beta"),
        (quench.pie(delay_estimate="rate"), "delay_estimate"),
        (quench.fq_pie(flows=0), "flows"),
        (quench.fq_pie(tupdate="0s"), "tupdate"),
        (quench.choke(max_p=1.5), "max_p"),
    ],
)
def test_aqm_helpers_name_a_bad_key(qdisc, key):
    net = quench.Network().hosts("a", "b").routers("r")
    net.link("a", "r", rate="10Mbps", delay="1ms", qdisc=qdisc)
    net.link("r", "b", rate="10Mbps", delay="1ms")
    net.tcp("a", "b")
    with pytest.raises(quench.ScenarioError) as e:
        net.run("1s")
    assert e.value.path == f"links[0].qdisc.{key}"


def _resolved_cc(cc, profile=None):
    net = quench.Network().hosts("a", "b")
    net.link("a", "b", rate="10Mbps", delay="5ms")
    tcp = {"profile": profile} if profile else {}
    net.tcp("a", "b", cc=cc, **tcp)
    return quench.validate_scenario(net.to_dict("1s"))["flows"][0]["cc"]


def test_linux_profile_grows_as_linux_and_runs_linux_hystart():
    """The linux profile fills tcp_cubic.c's HyStart and tcp_cong.c's per-segment growth; the
    rfc profile and a written abc_limit keep RFC 3465's rule; HyStart++ stays by name."""
    cc = _resolved_cc(quench.cubic())
    assert (cc["hystart"], cc["growth"]) == ("linux", "linux")
    assert _resolved_cc(quench.dctcp())["growth"] == "linux"
    assert "growth" not in _resolved_cc(quench.newreno(abc_limit=2))
    rfc = _resolved_cc(quench.cubic(), profile="rfc")
    assert rfc["hystart"] is False and "growth" not in rfc
    assert _resolved_cc(quench.cubic(hystart="rfc9406"))["hystart"] is True


@pytest.mark.parametrize(
    ("cc", "key", "words"),
    [
        (quench.cubic(hystart="bsd"), "hystart", 'unknown hystart "bsd"'),
        (quench.reno(growth="linux", abc_limit=2), "abc_limit", "RFC 3465"),
    ],
)
def test_growth_and_hystart_name_a_bad_key(cc, key, words):
    with pytest.raises(quench.ScenarioError) as e:
        _resolved_cc(cc)
    assert e.value.path.endswith(key) and words in str(e.value)
