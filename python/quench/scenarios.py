"""Ready-made topologies."""

from __future__ import annotations

import math

from quench.network import Network, droptail
from quench.units import parse_duration, parse_rate

PACKET_BYTES = 1500
ACCESS_RATE_FACTOR = 10
ACCESS_DELAY_S = 0.001


def dumbbell(
    flows: int = 4,
    *,
    rate: str | int = "10Mbps",
    rtt: str | float = "50ms",
    buffer_packets: int | None = None,
    cc: str = "newreno",
    seed: int = 1,
    start_spacing: str | float = "1ms",
    tcp: dict | None = None,
    tcp_profile: str | None = None,
) -> Network:
    """N senders s0..s{N-1} -> r1 -> r2 -> receivers d0..d{N-1}.

    Access links run at 10x the bottleneck rate with 1 ms delay; the bottleneck r1->r2 has a
    one-way delay of rtt/2 - 2 ms so the base RTT is `rtt`, and a drop-tail FIFO of
    `buffer_packets` (default: one bandwidth-delay product of 1500-byte packets). Flow i
    starts at i * start_spacing. `tcp_profile`: the flows' TCP profile (`Network`'s).
    """
    if flows < 1:
        raise ValueError(f"flows must be at least 1, got {flows}")
    bottleneck_bps = parse_rate(rate)
    rtt_s = parse_duration(rtt)
    bottleneck_delay = rtt_s / 2 - 2 * ACCESS_DELAY_S
    if bottleneck_delay < 0:
        raise ValueError(f"rtt {rtt} is shorter than the 4 ms of access-link delay")
    if buffer_packets is None:
        buffer_packets = math.ceil(bottleneck_bps * rtt_s / 8 / PACKET_BYTES)
    access_bps = bottleneck_bps * ACCESS_RATE_FACTOR
    spacing = parse_duration(start_spacing)
    net = Network(seed=seed, name=f"dumbbell-{flows}x{cc}", tcp_profile=tcp_profile)
    net.routers("r1", "r2")
    net.link("r1", "r2", rate=bottleneck_bps, delay=bottleneck_delay, qdisc=droptail(f"{buffer_packets}p"))
    for i in range(flows):
        net.hosts(f"s{i}", f"d{i}")
        net.link(f"s{i}", "r1", rate=access_bps, delay=ACCESS_DELAY_S, qdisc=droptail("100000p"))
        net.link("r2", f"d{i}", rate=access_bps, delay=ACCESS_DELAY_S, qdisc=droptail("100000p"))
        net.tcp(f"s{i}", f"d{i}", cc=cc, start=i * spacing, name=f"flow{i}", **(tcp or {}))
    return net
