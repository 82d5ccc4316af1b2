"""D-SACK (`tcp.dsack`) on a sprayed fabric: linux-profile CUBIC flows across a k = 4 fat-tree
whose switches spray each flow's packets over the equal-cost next hops (`multipath =
"spray_flow"`), with the linux profile as shipped (D-SACK on: the receiver reports duplicates
and RACK widens its reordering window per D-SACK round) and with `dsack = false` (RACK's
window stays min_RTT/4).

    .venv/bin/python studies/dsack_spray.py [--seeds 5] [--duration 0.05]

10 Gb/s links of 1 µs, 100-packet drop-tail queues; `flows` long transfers from host i to host
i + 8 (pod 0-1 to pod 2-3, every one across the core), all starting at 0. Queues that differ
from path to path reorder a flow's packets; below the reordering window RACK takes that for
loss and resends segments whose originals arrive: the receiver counts them as duplicates
(`duplicate_segments`, the spurious retransmissions). Prints, per setting and seed, the sums
over the flows of retransmitted and duplicate segments, D-SACKs received and timeouts, and
the mean goodput (docs/validation.md, "D-SACK").
"""

from __future__ import annotations

import argparse

import quench

HOSTS = 16  # k = 4: k³/4 hosts


def run(dsack: bool, seed: int, flows: int, duration: str) -> quench.Results:
    net = quench.Network(seed=seed)
    net.fat_tree(4, rate="10Gbps", delay="1us", qdisc=quench.droptail("100p"), multipath="spray_flow")
    for i in range(flows):
        net.tcp(f"h{i}", f"h{(i + HOSTS // 2) % HOSTS}", cc="cubic", profile="linux", dsack=dsack)
    return net.run(duration, progress=False)


def row(name: str, seed: int, res: quench.Results) -> str:
    f = res.flows
    return (
        f"| {name} | {seed} | {f['retransmitted_segments'].sum()} | {f['duplicate_segments'].sum()} | "
        f"{f['dsacks_received'].sum()} | {f['reordered_segments'].sum()} | {f['timeouts'].sum()} | "
        f"{f['goodput_bps'].mean() / 1e9:.3f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..N")
    ap.add_argument("--flows", type=int, default=8, help="flows, from h0.. to h8..")
    ap.add_argument("--duration", type=float, default=0.05, help="simulated seconds per run")
    args = ap.parse_args()
    duration = f"{args.duration}s"
    print(f"{args.flows} linux-profile CUBIC flows, k = 4 fat-tree, spray_flow, {duration}")
    print("| setting | seed | retransmitted | duplicate | D-SACKs | reordered | timeouts | mean goodput (Gb/s) |")
    print("|---|---|---|---|---|---|---|---|")
    for seed in range(1, args.seeds + 1):
        for name, dsack in [("dsack = false", False), ("linux profile (dsack)", True)]:
            print(row(name, seed, run(dsack, seed, args.flows, duration)), flush=True)


if __name__ == "__main__":
    main()
