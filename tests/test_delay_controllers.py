"""LEDBAT and Copa from Python by name and by helper: each runs on the default (Linux) profile,
whose timestamps give LEDBAT its per-ACK delay samples, fills a 10 Mb/s link, and keeps the
queue near its own target: LEDBAT's 100 ms (83 packets of 1500 B at 10 Mb/s), Copa's about
1/delta packets (docs/mechanisms.md#ledbat, #copa)."""

import pytest

import quench


def _run(cc: object, duration: str = "20s") -> quench.Results:
    net = quench.Network()
    net.hosts("a", "b")
    net.routers("r")
    net.link("a", "r", rate="1Gbps", delay="1ms")
    net.link("r", "b", rate="10Mbps", delay="20ms", qdisc=quench.droptail(limit="300p"))
    net.tcp("a", "b", cc=cc)
    return net.run(duration)


@pytest.mark.parametrize("cc", ["ledbat", "copa", quench.ledbat(target="50ms"), quench.copa(delta=0.2)])
def test_delay_controllers_run_by_name_and_fill_the_link(cc: object) -> None:
    res = _run(cc)
    kind = cc if isinstance(cc, str) else cc["kind"]
    assert res.flows["cc"].iloc[0] == kind
    # 10 Mb/s less headers (1448 B of payload in 1500 with timestamps), start-up included.
    assert res.flows["goodput_bps"].iloc[0] > 0.85 * 10e6 * 1448 / 1500


def test_copa_keeps_a_shorter_queue_than_ledbat() -> None:
    def late_queue(res: quench.Results) -> float:
        return float(res.queue[res.queue["time_s"] > 10.0]["packets"].mean())

    copa, ledbat = late_queue(_run("copa")), late_queue(_run("ledbat"))
    assert copa < 10.0  # about 1/delta = 2 packets, with its oscillation
    assert ledbat > 5 * copa  # LEDBAT aims at 100 ms, 83 packets
