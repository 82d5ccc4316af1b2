"""The linux profile's host-side rules, one at a time: TCP Small Queues (`small_queues`), growth
only while the window limits the sends (`cwnd_limited_growth`) and the tail loss probe's 2 ms
(`probe_timeout`), each turned back to the rfc rule over the profile as shipped.

    .venv/bin/python studies/linux_profile_host.py [--duration 30]

Two paths (docs/validation.md, "The linux profile's host queue"):
- `own link`: one CUBIC flow whose own host's 10 Mb/s link (1000-packet drop-tail queue) is
  the bottleneck, 100 Mb/s and 20 ms beyond it. Without TSQ its window fills its own host's
  queue; with TSQ alone the held window would still grow (it is never what limits the sends),
  which `tcp_is_cwnd_limited` stops.
- `dumbbell`: 16 CUBIC flows through a 100 Mb/s, 50 ms drop-tail bottleneck of one
  bandwidth-delay product, 1 Gb/s access links (quench.scenarios.dumbbell).

Prints, per setting: the host queue's mean and largest backlog (packets) and mean sojourn,
the largest congestion window (segments), goodput, drops at the bottleneck and timeouts.
"""

from __future__ import annotations

import argparse

import quench
from quench.scenarios import dumbbell

# Setting name -> keys written over the linux profile on every flow.
SETTINGS: dict[str, dict] = {
    "linux profile": {},
    "small_queues = false": {"small_queues": False},
    "cwnd_limited_growth = false": {"cwnd_limited_growth": False},
    "both off": {"small_queues": False, "cwnd_limited_growth": False},
    "probe_timeout = rfc8985": {"probe_timeout": "rfc8985"},
}
HOST_LINK = "a->r"


def own_link(tcp: dict, duration: str) -> quench.Results:
    net = quench.Network(seed=1)
    net.hosts("a", "b").router("r")
    net.link("a", "r", rate="10Mbps", delay="1ms", qdisc=quench.droptail("1000p"))
    net.link("r", "b", rate="100Mbps", delay="20ms", qdisc=quench.droptail("1000p"))
    net.tcp("a", "b", **tcp)
    return net.run(duration, progress=False)


def own_link_row(name: str, res: quench.Results) -> str:
    link, flow = res.link(HOST_LINK), res.flows.iloc[0]
    cwnd = res.cwnd["cwnd"].max() / 1448
    return (
        f"| {name} | {link['mean_backlog_packets']:.1f} | {link['max_backlog_packets']} | "
        f"{link['mean_sojourn_s'] * 1e3:.1f} | {cwnd:.0f} | {flow['goodput_bps'] / 1e6:.2f} | "
        f"{link['dropped_packets']} | {flow['timeouts']} |"
    )


def dumbbell_row(name: str, tcp: dict, duration: str) -> str:
    res = dumbbell(16, rate="100Mbps", rtt="50ms", cc="cubic", tcp=tcp, tcp_profile="linux").run(
        duration, progress=False
    )
    links = res.links
    access = links[links["name"].str.startswith("s") & links["name"].str.endswith("->r1")]
    bottleneck = res.link("r1->r2")
    jain = res.jain_index()
    return (
        f"| {name} | {access['mean_backlog_packets'].mean():.2f} | {access['max_backlog_packets'].max()} | "
        f"{bottleneck['dropped_packets']} | {bottleneck['utilization']:.3f} | {jain:.3f} | "
        f"{res.flows['timeouts'].sum()} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=30.0, help="simulated seconds per run")
    args = ap.parse_args()
    duration = f"{args.duration}s"
    print(f"own link: one CUBIC flow, its host's 10 Mb/s link the bottleneck, {duration}")
    print(
        "| setting | host queue mean (pkts) | max | mean sojourn (ms) | max cwnd (segments) "
        "| goodput (Mb/s) | host drops | timeouts |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, tcp in SETTINGS.items():
        print(own_link_row(name, own_link(tcp, duration)), flush=True)
    print(f"\ndumbbell: 16 CUBIC flows, 100 Mb/s, 50 ms, 1 Gb/s access links, {duration}")
    print("| setting | access queue mean (pkts) | largest | bottleneck drops | utilization | Jain | timeouts |")
    print("|---|---|---|---|---|---|---|")
    for name, tcp in SETTINGS.items():
        print(dumbbell_row(name, tcp, duration), flush=True)


if __name__ == "__main__":
    main()
