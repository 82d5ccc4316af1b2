"""A fluid model of CUBIC's window under random loss, beside RFC 9438's response function
(which assumes one loss every 1/p packets). Independent of quench: the window follows
RFC 9438's law in continuous time, losses arrive as a Poisson process in packets sent.

    .venv/bin/python studies/cubic_random_loss_fluid.py [--rtt 0.2] [--seconds 20000]

Prints, per loss rate, the fluid model's mean rate, the response function's, and their ratio
(docs/validation.md, "CUBIC": why quench's goodput under Bernoulli loss sits 10-25 % above the
formula). Model: W(t) = max(C·(t − K)³ + W_max, W_est(t)); at a loss W_max = W (or
W·(1 + β)/2 below the last W_max), W ← β·W, and the epoch starts one RTT later (recovery);
W_est grows α = 3(1 − β)/(1 + β) per RTT until it reaches the window at the last loss, then 1.
"""

from __future__ import annotations

import argparse

import numpy as np

C, BETA = 0.4, 0.7  # RFC 9438 §5, §4.6
ALPHA = 3 * (1 - BETA) / (1 + BETA)
STEP_S = 0.01


def fluid_rate(p: float, rtt: float, seconds: float, rng: np.random.Generator) -> float:
    """Mean sending rate (segments/s) of the fluid CUBIC with Poisson losses of rate p."""
    w = w_max = w_est = prior = 1000.0
    epoch, k, sent, t = 0.0, 0.0, 0.0, 0.0
    next_loss = rng.exponential(1 / p)
    while t < seconds:
        w_est += (1.0 if w_est >= prior else ALPHA) * STEP_S / rtt
        w = max(C * (t - epoch - k) ** 3 + w_max, w_est)
        sent += w / rtt * STEP_S
        if sent >= next_loss:
            next_loss = sent + rng.exponential(1 / p)
            prior = w
            w_max = w * (1 + BETA) / 2 if w < w_max else w
            w *= BETA
            epoch, w_est = t + rtt, w
            k = ((w_max - w) / C) ** (1 / 3)
        t += STEP_S
    return sent / seconds


def response_function(p: float, rtt: float) -> float:
    """RFC 9438 §5.1: average window (segments) for one loss every 1/p packets, over the RTT."""
    return (C * (3 + BETA) / (4 * (1 - BETA))) ** 0.25 * rtt**0.75 / p**0.75 / rtt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rtt", type=float, default=0.2, help="seconds (default 0.2)")
    ap.add_argument("--seconds", type=float, default=20_000.0, help="fluid time per loss rate")
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    print("| p | fluid, random loss (segments/s) | RFC 9438 §5.1 | ratio |")
    print("|---|---|---|---|")
    for p in (5e-6, 1e-5, 2e-5, 4e-5):
        fluid, formula = fluid_rate(p, args.rtt, args.seconds, rng), response_function(p, args.rtt)
        print(f"| {p:g} | {fluid:.0f} | {formula:.0f} | {fluid / formula:.3f} |", flush=True)


if __name__ == "__main__":
    main()
