"""DCQCN against its fluid model: quench's packet-level DCQCN (docs/mechanisms.md#dcqcn) beside
a numerical solution of the fluid model the DCQCN paper derives for it (Zhu et al.,
"Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, section 5; the same model
in Zhu et al., "ECN or Delay: Lessons Learnt from Analysis of DCQCN and TIMELY", CoNEXT 2016,
section 3), and beside a stochastic hybrid of the same system. Both models are written here
from the papers' equations and rules and share no code with quench's engine (only the Jain
index of their rates is quench's `jain_index`).

The scenario: N RoCE flows (`Network.roce`, DCQCN, paced by the rate alone: `window = False`)
from N hosts through one switch onto a C = 10 Gb/s bottleneck, 1 µs per link, every flow from
time 0 at the line rate, the bottleneck marking as DCQCN's switches do: RED on the instantaneous
queue, nothing below `kmin`, then each packet alone with a probability rising linearly to `pmax`
at `kmax`, every packet above (`quench.red` with `w_q = 1`, `curve = "classic"`,
`spacing = "independent"`, `forced = "mark"`), and a 2 MB buffer. Figures: the bottleneck's
utilization and time-averaged queue, each flow's mean sending rate on the wire and Jain's index,
over the second half of the run; quench's and the hybrid's are means over seeds 1..`--seeds`.

**The fluid model** for N synchronised flows (rates in bits per second, the queue q in bytes,
p and R the marking probability and the rate the sender's current reaction answers, S the
packet's wire size):

    dq/dt   = (N·R_C − C) / 8                                    (q held in [0, buffer])
    λ       = CNPs per second  (see below)
    dα/dt   = (g / τ') · ((1 − e^(−λ·τ')) − α)
    dR_T/dt = −λ·(R_T − R_C)               + μ·R_AI
    dR_C/dt = −λ·R_C·α/2                   + μ·(R_T − R_C)/2
    μ       = λ / (e^(λ·T) − 1)   (increase timer expiries: the timer of period T restarts at
                                  every decrease; 1/T when no CNP comes)

which is the paper's model with its byte counter off (quench's reaction point, the NIC's as
the HPCC authors' simulator models it, has the timer only) and each term written for a CNP
process of rate λ in place of the paper's "a CNP per τ-window holding a mark". Two CNP
processes are offered (`--cnp`):
  holdoff  quench's notification point: a CNP at the first marked packet at least τ after the
           last, so a renewal process of mean gap τ + S/(p·R): λ = 1 / (τ + S/(p·R))
  window   the paper's: one CNP per τ-window holding a marked packet:
           λ = (1 − (1 − p)^(τ·R/S)) / τ
DCQCN's increase stages are the model's single additive stage when quench is configured so
(`fast_recovery_steps = 0`, `rate_hai = rate_ai`: every timer expiry raises the target by R_AI
and halves the distance to it) and its decrease clamps the target (`clamp_target = true`), as
the paper's reaction point does. The feedback delay follows the queue: a packet marked as it
joins the queue at t leaves it at t + q(t)/C (`Feedback`), then crosses the bottleneck (the
switch's link to the receiver) and the notification's two links back (serialisation and 1 µs
each); the fluid model adds half the
reaction point's `decrease_interval` (the check a CNP waits for). It integrates by Euler's
method with a fixed step (`--step-ns`, default 100 ns).

**The hybrid** keeps the queue a fluid but makes each flow its own reaction point with
discrete events (`hybrid`): what the fluid model averages away (each CNP's cut is a step; the
flows drift apart) it keeps, so where the two models differ, the difference is the averaging's.

    .venv/bin/python benchmarks/compare_dcqcn_fluid.py [--flows 2,4,8,16] [--pmax 0.01,0.2,1]

A benchmark-style script: it prints the table; `tests/test_dcqcn_fluid.py` holds quench to it.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np

import quench
from quench.results import jain_index

LINK_RATE = 10e9
LINK_DELAY = 1e-6
PAYLOAD = 1000
# quench's RoCE headers (docs/mechanisms.md#roce): IPv4 20, UDP 8, BTH 12, ICRC 4 on a data
# packet; an ACK is the same headers and AETH 4.
WIRE_PACKET = PAYLOAD + 44
ACK_PACKET = 48
# The fluid model paces by the rate alone; quench's RoCE also holds a window by default.
WINDOW = False


@dataclass(frozen=True)
class Params:
    """DCQCN's parameters as the paper's evaluation sets them (SIGCOMM 2015, Table 1 and
    section 5: g = 1/256, τ = 50 µs, τ' = 55 µs, timer T = 55 µs, R_AI = 40 Mb/s, kmin 5 KB,
    kmax 200 KB, pmax 1 %), with the decrease check every 4 µs of quench's reaction point."""

    g: float = 1.0 / 256.0
    cnp_interval: float = 50e-6
    alpha_interval: float = 55e-6
    increase_interval: float = 55e-6
    # The reaction point's decrease check, quench's default (RATE_DECREASE_INTERVAL in
    # docs/mechanisms.md#dcqcn, after the HPCC authors' simulator).
    decrease_interval: float = 4e-6
    rate_ai: float = 40e6
    kmin: float = 5e3
    kmax: float = 200e3
    pmax: float = 0.01
    # The bottleneck's buffer: this scenario's choice, deep enough that the start at line
    # rate is the only time it overflows.
    buffer: float = 2e6


@dataclass(frozen=True)
class Outcome:
    utilization: float
    mean_queue_bytes: float
    mean_rate_bps: float
    jain: float


def marking(q: float, p: Params) -> float:
    if q <= p.kmin:
        return 0.0
    if q >= p.kmax:
        return 1.0
    return p.pmax * (q - p.kmin) / (p.kmax - p.kmin)


def cnp_rate(mark: float, rate: float, p: Params, process: str) -> float:
    """CNPs per second at marking probability `mark` and sending rate `rate` (bit/s)."""
    packets_per_s = rate / (8 * WIRE_PACKET)
    if mark <= 0.0 or packets_per_s <= 0.0:
        return 0.0
    if process == "holdoff":
        return 1.0 / (p.cnp_interval + 1.0 / (mark * packets_per_s))
    if mark >= 1.0:
        return 1.0 / p.cnp_interval
    return -math.expm1(packets_per_s * p.cnp_interval * math.log1p(-mark)) / p.cnp_interval


# From the marked packet's departure from the bottleneck's queue to the sender's reaction: its
# transmission on the bottleneck (the switch's link to the receiver), then the notification's
# two links back (receiver to switch, switch to sender), each link's 1 µs.
FIXED_DELAY = WIRE_PACKET * 8 / LINK_RATE + 2 * ACK_PACKET * 8 / LINK_RATE + 3 * LINK_DELAY


class Feedback:
    """Which enqueue instant's marking the sender reacts to now. A packet marked as it joins
    the queue at step j leaves it at j·step + q_j/C (a FIFO: that instant never decreases with
    j), then takes `extra` more to reach the sender's reaction; at step i the sender has seen
    every enqueue whose reaction instant has come."""

    def __init__(self, steps: int, step: float, extra: float) -> None:
        self.reaction = np.empty(steps)
        self.step, self.extra, self.seen = step, extra, -1

    def at(self, i: int, q: float) -> int:
        """Record step i's queue; the last step whose marking has reached the sender (−1:
        none yet)."""
        self.reaction[i] = i * self.step + q * 8 / LINK_RATE + self.extra
        now = i * self.step
        while self.seen + 1 <= i and self.reaction[self.seen + 1] <= now:
            self.seen += 1
        return self.seen


def fluid(flows: int, duration: float, p: Params, process: str = "holdoff", step: float = 100e-9) -> Outcome:
    """The fluid model from every flow at the line rate and an empty queue, averaged over the
    second half of `duration`."""
    steps = int(duration / step)
    hist_q = [0.0] * steps
    hist_r = [LINK_RATE] * steps
    feedback = Feedback(steps, step, FIXED_DELAY + p.decrease_interval / 2)
    q, rc, rt, alpha = 0.0, LINK_RATE, LINK_RATE, 1.0
    half = steps // 2
    sum_q = sum_r = served = 0.0
    for i in range(steps):
        hist_q[i], hist_r[i] = q, rc
        back = feedback.at(i, q)
        q_then, r_then = (hist_q[back], hist_r[back]) if back >= 0 else (0.0, LINK_RATE)
        lam = cnp_rate(marking(q_then, p), r_then, p, process)
        mu = lam / math.expm1(lam * p.increase_interval) if lam > 0 else 1.0 / p.increase_interval
        d_alpha = p.g / p.alpha_interval * (-math.expm1(-lam * p.alpha_interval) - alpha)
        d_rt = -lam * (rt - rc) + mu * p.rate_ai
        d_rc = -lam * rc * alpha / 2 + mu * (rt - rc) / 2
        q = min(max(q + (flows * rc - LINK_RATE) / 8 * step, 0.0), p.buffer)
        alpha = min(max(alpha + d_alpha * step, 0.0), 1.0)
        rt = min(rt + d_rt * step, LINK_RATE)
        rc = min(max(rc + d_rc * step, 0.0), rt)
        if i >= half:
            sum_q += q
            sum_r += rc
            served += 1.0 if q > 0 else min(flows * rc / LINK_RATE, 1.0)
    n = steps - half
    # The model's flows are one synchronised rate, so their shares are equal by construction.
    return Outcome(served / n, sum_q / n, sum_r / n, 1.0)


def hybrid(flows: int, duration: float, p: Params, seed: int = 1, step: float = 250e-9) -> Outcome:
    """A stochastic hybrid of the same system: the queue still a fluid, but each flow its own
    reaction point with discrete events, a CNP a random event (marks at rate p·R/S, the first
    one at least τ after the last CNP: the holdoff process), the decrease at the next check of
    `decrease_interval`, alpha's ticks every τ', the increase timer restarted at each decrease.
    It keeps what the fluid model averages away (each CNP's cut is a step, the flows drift
    apart), so the gap between the two models is the averaging's own error."""
    rng = np.random.default_rng(seed)
    steps = int(duration / step)
    hist_q = np.zeros(steps)
    hist_r = np.full((steps, flows), LINK_RATE)
    feedback = Feedback(steps, step, FIXED_DELAY)
    rc, rt = np.full(flows, LINK_RATE), np.full(flows, LINK_RATE)
    alpha = np.ones(flows)
    last_cnp = np.full(flows, -np.inf)
    flag_alpha = np.zeros(flows, dtype=bool)
    flag_decrease = np.zeros(flows, dtype=bool)
    next_increase = np.full(flows, np.inf)
    next_alpha, next_check = p.alpha_interval, p.decrease_interval
    q, sum_q, sum_r, served, half = 0.0, 0.0, np.zeros(flows), 0.0, steps // 2
    for i in range(steps):
        now = i * step
        hist_q[i], hist_r[i] = q, rc
        back = feedback.at(i, q)
        q_then, r_then = (hist_q[back], hist_r[back]) if back >= 0 else (0.0, hist_r[0])
        marks = marking(q_then, p) * r_then / (8 * WIRE_PACKET) * step
        cnp = (now - last_cnp >= p.cnp_interval) & (rng.random(flows) < marks)
        last_cnp[cnp] = now
        flag_alpha |= cnp
        flag_decrease |= cnp
        if now >= next_alpha:
            alpha = np.where(flag_alpha, (1 - p.g) * alpha + p.g, (1 - p.g) * alpha)
            flag_alpha[:] = False
            next_alpha += p.alpha_interval
        if now >= next_check:
            cut = flag_decrease
            rt = np.where(cut, rc, rt)
            rc = np.where(cut, rc * (1 - alpha / 2), rc)
            next_increase = np.where(cut, now + p.increase_interval, next_increase)
            flag_decrease[:] = False
            next_check += p.decrease_interval
        up = now >= next_increase
        rt = np.where(up, np.minimum(rt + p.rate_ai, LINK_RATE), rt)
        rc = np.where(up, (rc + rt) / 2, rc)
        next_increase = np.where(up, next_increase + p.increase_interval, next_increase)
        q = min(max(q + (rc.sum() - LINK_RATE) / 8 * step, 0.0), p.buffer)
        if i >= half:
            sum_q += q
            sum_r += rc
            served += 1.0 if q > 0 else min(rc.sum() / LINK_RATE, 1.0)
    n = steps - half
    rates = sum_r / n
    return Outcome(served / n, sum_q / n, rates.mean(), jain_index(rates))


def packet(flows: int, duration: float, p: Params, seed: int = 1) -> Outcome:
    """quench's packet-level DCQCN on the same scenario, measured over the second half."""
    net = quench.Network(seed=seed)
    senders = [f"s{i}" for i in range(flows)]
    net.hosts(*senders, "d")
    net.routers("sw")
    red = quench.red(
        mode="bytes",
        min_th=f"{p.kmin:.0f}B",
        max_th=f"{p.kmax:.0f}B",
        max_p=p.pmax,
        w_q=1.0,
        curve="classic",
        spacing="independent",
        mean_packet_size=f"{WIRE_PACKET}B",
        signal="mark",
        forced="mark",
        limit=f"{p.buffer:.0f}B",
    )
    rate, delay = f"{LINK_RATE:.0f}bps", f"{LINK_DELAY * 1e6:.0f}us"
    for s in senders:
        net.link(s, "sw", rate=rate, delay=delay)
    net.link("sw", "d", rate=rate, delay=delay, qdisc=red)
    cc = {
        "kind": "dcqcn",
        "g": p.g,
        "cnp_interval": f"{p.cnp_interval * 1e9:.0f}ns",
        "alpha_interval": f"{p.alpha_interval * 1e9:.0f}ns",
        "increase_interval": f"{p.increase_interval * 1e9:.0f}ns",
        "decrease_interval": f"{p.decrease_interval * 1e9:.0f}ns",
        "fast_recovery_steps": 0,
        "rate_ai": f"{p.rate_ai:.0f}bps",
        "rate_hai": f"{p.rate_ai:.0f}bps",
        "clamp_target": True,
    }
    for s in senders:
        net.roce(s, "d", cc=cc, mtu=PAYLOAD, window=WINDOW)
    half, end = f"{duration / 2 * 1e3:.6f}ms", f"{duration * 1e3:.6f}ms"
    net.record(snapshots=[half, end])
    window = net.run(end).window(half, end)
    return _outcome(window, duration / 2)


def _outcome(window, span: float) -> Outcome:
    links = window.links.set_index("name")
    bottleneck = links.loc["sw->d"]
    rates = window.flows["bytes_delivered"].to_numpy() * 8 / span
    return Outcome(
        utilization=bottleneck["utilization"],
        mean_queue_bytes=bottleneck["mean_backlog_bytes"],
        mean_rate_bps=rates.mean() * WIRE_PACKET / PAYLOAD,
        jain=jain_index(rates),
    )


def mean_outcome(runs: list[Outcome]) -> Outcome:
    n = len(runs)
    return Outcome(*(sum(getattr(r, f) for r in runs) / n for f in Outcome.__dataclass_fields__))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", default="2,4,8,16", help="comma-separated flow counts")
    ap.add_argument("--pmax", default="0.01,0.2,1", help="comma-separated marking probabilities at kmax")
    ap.add_argument("--duration-ms", type=float, default=60.0)
    ap.add_argument("--seeds", type=int, default=3, help="quench's and the hybrid's runs: seeds 1..N")
    ap.add_argument("--cnp", choices=["holdoff", "window"], default="holdoff")
    ap.add_argument("--step-ns", type=float, default=100.0, help="the fluid model's step")
    ap.add_argument("--hybrid-step-ns", type=float, default=250.0, help="the hybrid's step")
    args = ap.parse_args()
    duration = args.duration_ms / 1e3
    seeds = range(1, args.seeds + 1)
    print(
        "| pmax | flows | utilization quench / fluid / hybrid | mean queue KB quench / fluid / hybrid "
        "| queue quench ÷ hybrid | rate Gb/s quench / fluid | Jain quench |"
    )
    print("|---|---|---|---|---|---|---|")
    for pmax in (float(x) for x in args.pmax.split(",")):
        p = Params(pmax=pmax)
        for n in (int(x) for x in args.flows.split(",")):
            ours = mean_outcome([packet(n, duration, p, s) for s in seeds])
            model = fluid(n, duration, p, args.cnp, args.step_ns * 1e-9)
            mixed = mean_outcome([hybrid(n, duration, p, s, args.hybrid_step_ns * 1e-9) for s in seeds])
            kb = [o.mean_queue_bytes / 1e3 for o in (ours, model, mixed)]
            print(
                f"| {pmax:g} | {n} | {ours.utilization:.3f} / {model.utilization:.3f} / {mixed.utilization:.3f} "
                f"| {kb[0]:.1f} / {kb[1]:.1f} / {kb[2]:.1f} | {kb[0] / kb[2]:.2f} "
                f"| {ours.mean_rate_bps / 1e9:.3f} / {model.mean_rate_bps / 1e9:.3f} | {ours.jain:.4f} |"
            )


if __name__ == "__main__":
    main()
