"""The wire effects (docs/mechanisms.md#wire-effects) through the Python front end: the
`Network.link` keywords reach the engine, corrupted packets show under their own reason, and
`quench ns3` refuses each effect with one line naming its key. The models themselves are
validated against closed forms in crates/quench-core/tests/wire_effects.rs."""

from __future__ import annotations

import pytest
from test_ns3 import matched_dumbbell

import quench
from quench import ns3


def _udp_over(**effects: object) -> quench.Results:
    net = quench.Network(seed=3)
    net.hosts("a", "b").routers("r")
    net.link("a", "r", rate="100Mbps", delay="1ms")
    net.link("r", "b", rate="100Mbps", delay="5ms", **effects)
    net.udp("a", "b", rate="8Mbps", size="972B")
    return net.run("2s")


def test_corruption_is_its_own_reason_and_not_a_queue_drop() -> None:
    res = _udp_over(corrupt=0.05)
    link = res.links.set_index("name").loc["r->b"]
    crossed = int(link["departed_packets"] - link["in_flight_packets"])
    # 2,000 datagrams cross: n*p = 100, binomial se 9.7; 4 se.
    assert abs(int(link["drops_corrupted"]) - 0.05 * crossed) < 4 * (crossed * 0.05 * 0.95) ** 0.5
    assert link["dropped_packets"] == 0
    reasons = res.drops["reason"].astype(str)
    assert (reasons == "corrupted").sum() == link["drops_corrupted"]
    assert int(link["delivered_packets"]) == crossed - int(link["drops_corrupted"])


def test_gilbert_elliott_and_jitter_keywords_reach_the_engine() -> None:
    # Simple Gilbert with r = 1: each Bad state lasts one packet, the loss rate p/(p+1) = 0.2.
    # The losses' lag-one correlation 1 - p - r = -0.25 makes the rate's variance 0.6 times the
    # binomial's, so the binomial standard error bounds it.
    res = _udp_over(
        loss={"model": "gilbert-elliott", "p": 0.25, "r": 1.0},
        jitter={"sigma": "1ms", "dist": "normal"},
    )
    link = res.links.set_index("name").loc["r->b"]
    rate = link["drops_link_loss"] / link["departed_packets"]
    assert abs(rate - 0.2) < 4 * (0.2 * 0.8 / link["departed_packets"]) ** 0.5
    assert "drops_corrupted" not in res.links


def test_a_scripted_list_loses_exactly_its_transmissions() -> None:
    res = _udp_over(loss={"model": "list", "packets": [2, 7, 8]})
    assert res.links.set_index("name").loc["r->b", "drops_link_loss"] == 3
    with pytest.raises(Exception, match=r"^links\[1\]\.loss\.packets\[1\]: the list must be strictly increasing"):
        _udp_over(loss={"model": "list", "packets": [4, 4]})


def test_bad_loss_model_names_the_key() -> None:
    with pytest.raises(Exception, match=r"^links\[1\]\.loss\.k: probability 2"):
        _udp_over(loss={"model": "gilbert-elliott", "p": 0.1, "r": 0.5, "k": 2.0})


@pytest.mark.parametrize(
    ("key", "value", "what"),
    [
        ("loss", {"model": "gilbert-elliott", "p": 0.01, "r": 0.3}, "Gilbert-Elliott"),
        ("loss", {"model": "list", "packets": [5]}, "lists"),
        ("reverse_jitter", {"sigma": "1ms"}, "delay jitter"),
        ("corrupt", 0.01, "corruption"),
    ],
)
def test_ns3_refuses_the_wire_effects(key: str, value: object, what: str) -> None:
    spec = matched_dumbbell("newreno", False)
    spec["links"][0][key] = value
    with pytest.raises(Exception, match=rf"^links\[0\]\.{key}: .*{what}.*no ns-3 counterpart"):
        ns3.translate(spec)
