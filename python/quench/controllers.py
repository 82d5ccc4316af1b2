"""Congestion controllers as tables for `Network.tcp(cc=...)`: one helper per controller the
engine accepts, each naming every key with its unit and default (a key left as None takes
the engine's default). `tests/test_api_docs.py` checks the helpers against the engine's own
list of controllers and their resolved keys, so the two cannot drift.

    net.tcp("a", "b", cc=quench.cubic(hystart=True), rtt_sampling="every_ack")
"""

from __future__ import annotations

from typing import Any


def _table(kind: str, **keys: Any) -> dict[str, Any]:
    return {"kind": kind, **{k: v for k, v in keys.items() if v is not None}}


def tahoe(initial_window: int | None = None) -> dict[str, Any]:
    """4.3BSD-Tahoe (Jacobson 1988): slow start, congestion avoidance, fast retransmit, and a
    window of one segment after every loss. `initial_window`: segments (default 1)."""
    return _table("tahoe", initial_window=initial_window)


def reno(initial_window: int | None = None, abc_limit: int | None = None, growth: str | None = None) -> dict[str, Any]:
    """Reno (RFC 5681): Tahoe with fast recovery, which ends at the first new ACK.
    `initial_window`: segments (RFC 5681's 2-4 by MSS when None); `abc_limit`: RFC 3465's L, the most
    segments one ACK may add in slow start (default 2).
    `growth`: "rfc5681" (the default: byte counting up to `abc_limit` in slow start, SMSS²/cwnd per ACK
    in congestion avoidance) or "linux" (tcp_slow_start and tcp_cong_avoid_ai: every acknowledged
    segment counts in both; the linux profile's unless `abc_limit` is written)."""
    return _table("reno", initial_window=initial_window, abc_limit=abc_limit, growth=growth)


def newreno(
    initial_window: int | None = None, abc_limit: int | None = None, growth: str | None = None
) -> dict[str, Any]:
    """NewReno (RFC 6582), the default: fast recovery lasts until every segment outstanding at
    its start is acknowledged, a partial ACK resending the next hole.
    `initial_window`: segments (RFC 5681's 2-4 by MSS when None); `abc_limit`: RFC 3465's L, the most
    segments one ACK may add in slow start (default 2).
    `growth`: "rfc5681" (the default: byte counting up to `abc_limit` in slow start, SMSS²/cwnd per ACK
    in congestion avoidance) or "linux" (tcp_slow_start and tcp_cong_avoid_ai: every acknowledged
    segment counts in both; the linux profile's unless `abc_limit` is written)."""
    return _table("newreno", initial_window=initial_window, abc_limit=abc_limit, growth=growth)


def lia(initial_window: int | None = None, abc_limit: int | None = None) -> dict[str, Any]:
    """LIA (RFC 6356), the coupled controller of a Multipath TCP connection's subflows
    (`Network.mptcp`, coupling "lia", the default there); on a single-path TCP flow it is
    NewReno. `initial_window`: segments (RFC 5681's 2-4 by MSS when None); `abc_limit`: RFC 3465's
    L, the most segments one ACK may add in slow start (default 2)."""
    return _table("lia", initial_window=initial_window, abc_limit=abc_limit)


def olia(initial_window: int | None = None, abc_limit: int | None = None) -> dict[str, Any]:
    """OLIA (Khalili et al., CoNEXT 2012), the opportunistic coupled controller of a Multipath TCP
    connection's subflows (`Network.mptcp` with coupling "olia"); on a single-path TCP flow it
    is NewReno. `initial_window`: segments (RFC 5681's 2-4 by MSS when None); `abc_limit`: RFC
    3465's L, the most segments one ACK may add in slow start (default 2)."""
    return _table("olia", initial_window=initial_window, abc_limit=abc_limit)


def cubic(
    c: float | None = None,
    beta: float | None = None,
    fast_convergence: bool | None = None,
    reno_friendly: bool | None = None,
    hystart: bool | str | None = None,
    initial_window: int | None = None,
    abc_limit: int | None = None,
    growth: str | None = None,
    hz: int | None = None,
) -> dict[str, Any]:
    """CUBIC (RFC 9438): `c`, the cubic's scaling constant in segments/s³ (default 0.4); `beta`,
    the window kept after a loss (default 0.7); `fast_convergence` (default True);
    `reno_friendly`, the Reno-friendly region (default True); `hystart`, how slow start may end
    before a loss: False (the default), "linux" (Linux's HyStart, tcp_cubic.c's ACK-train and
    delay detectors; the linux profile's) or "rfc9406" (HyStart++ in the first slow start; True
    reads as this); either needs `rtt_sampling="every_ack"`.
    `initial_window`: segments (RFC 5681's 2-4 by MSS when None); `abc_limit`: RFC 3465's L, the most
    segments one ACK may add in slow start (default 2).
    `growth`: "rfc5681" (the default: byte counting up to `abc_limit` in slow start, SMSS²/cwnd per ACK
    in congestion avoidance) or "linux" (tcp_slow_start and tcp_cong_avoid_ai: every acknowledged
    segment counts in both, and CUBIC's own arithmetic is tcp_cubic.c's: whole segments, a clock of
    jiffies, the minimum RTT as look-ahead, β = 717/1024; the linux profile's unless `abc_limit` is
    written). `hz`: the kernel's CONFIG_HZ that clocks that arithmetic (100, 250, 300 or 1000;
    default 1000), only with growth "linux"."""
    return _table(
        "cubic",
        c=c,
        beta=beta,
        fast_convergence=fast_convergence,
        reno_friendly=reno_friendly,
        hystart=hystart,
        initial_window=initial_window,
        abc_limit=abc_limit,
        growth=growth,
        hz=hz,
    )


def vegas(
    alpha: float | None = None,
    beta: float | None = None,
    gamma: float | None = None,
    initial_window: int | None = None,
) -> dict[str, Any]:
    """Vegas (Brakmo and Peterson 1995): once per RTT, grow while fewer than `alpha` packets are
    queued in the path (default 2), shrink while more than `beta` (default 4), and leave slow
    start once more than `gamma` (default 1). `initial_window`: segments (default 2). Needs
    `rtt_sampling="every_ack"`."""
    return _table("vegas", alpha=alpha, beta=beta, gamma=gamma, initial_window=initial_window)


def fast(
    alpha: float,
    beta: float | None = None,
    gamma: float | None = None,
    mi_threshold: str | float | None = None,
    update_period: int | None = None,
    initial_window: int | None = None,
    mi_after_loss: bool | None = None,
) -> dict[str, Any]:
    """FAST TCP (Wei, Jin, Low, Hegde 2006): `alpha`, the packets each flow keeps queued in the
    path (required; the papers use 100-500); `beta`, the upper edge of a hysteresis band in
    packets (default: alpha, no band); `gamma`, the weight of each window update (default 0.5);
    `mi_threshold`, the queueing delay under which multiplicative increase runs (a time,
    default "1500us"); `update_period`, RTTs between updates (default 2); `initial_window`:
    segments (default 2); `mi_after_loss`, multiplicative increase again after losses while the
    delay is under `mi_threshold` (default True, as ns-2). Needs `rtt_sampling="every_ack"`."""
    return _table(
        "fast",
        alpha=alpha,
        beta=beta,
        gamma=gamma,
        mi_threshold=mi_threshold,
        update_period=update_period,
        initial_window=initial_window,
        mi_after_loss=mi_after_loss,
    )


def bbr(
    high_gain: float | None = None,
    cwnd_gain: float | None = None,
    pacing_margin: float | None = None,
    initial_window: int | None = None,
    send_quantum: str | None = None,
    ack_aggregation: bool | None = None,
) -> dict[str, Any]:
    """BBR v1 (Cardwell et al. 2016; Linux tcp_bbr.c), paced at its own rate: `high_gain`,
    STARTUP's pacing and window gain (default 2/ln 2 = 2.885); `cwnd_gain`, PROBE_BW's window
    gain over the estimated BDP (default 2); `pacing_margin`, the fraction the pacing rate stays
    under the bandwidth estimate (default 0.01). `initial_window`: segments (RFC 5681's 2-4 by
    MSS when None). `send_quantum`: "draft" (default; 1 ms of pacing above 24 Mb/s) or
    "segment" (ns-3's TcpBbr), three of which the window target holds. `ack_aggregation`: add
    Linux's ACK-aggregation allowance to the window target once the pipe is full (default
    True)."""
    return _table(
        "bbr",
        high_gain=high_gain,
        cwnd_gain=cwnd_gain,
        pacing_margin=pacing_margin,
        initial_window=initial_window,
        send_quantum=send_quantum,
        ack_aggregation=ack_aggregation,
    )


def bbr3(
    initial_window: int | None = None,
    loss_thresh: float | None = None,
    beta: float | None = None,
    ecn_max_rtt: str | None = None,
) -> dict[str, Any]:
    """BBRv3 (draft-ietf-ccwg-bbr; Linux tcp_bbr.c v3), paced at its own rate: BBR's model with
    upper and lower bounds from loss and ECN. `loss_thresh`: the loss rate above which probing
    stops and `inflight_hi` is set (default 0.02); `beta`: what the lower bounds keep of
    themselves after a round with loss (default 0.7); `ecn_max_rtt`: ECN marks are acted on
    only while the min RTT is at most this (default "5ms", Linux; "0s": at any RTT; ECN itself
    is the flow's `ecn=True`). `initial_window`: segments (RFC 5681's 2-4 by MSS when None)."""
    return _table("bbr3", initial_window=initial_window, loss_thresh=loss_thresh, beta=beta, ecn_max_rtt=ecn_max_rtt)


def dctcp(
    g: float | None = None,
    initial_alpha: float | None = None,
    initial_window: int | None = None,
    abc_limit: int | None = None,
    growth: str | None = None,
) -> dict[str, Any]:
    """DCTCP (RFC 8257): the window shrinks by alpha/2 once per window of marks, alpha being the
    moving fraction of CE-marked bytes; `g`, its estimation gain (default 1/16);
    `initial_alpha` (default 1). Needs `ecn=True` and a marking queue.
    `initial_window`: segments (RFC 5681's 2-4 by MSS when None); `abc_limit`: RFC 3465's L, the most
    segments one ACK may add in slow start (default 2).
    `growth`: "rfc5681" (the default: byte counting up to `abc_limit` in slow start, SMSS²/cwnd per ACK
    in congestion avoidance) or "linux" (tcp_slow_start and tcp_cong_avoid_ai: every acknowledged
    segment counts in both; the linux profile's unless `abc_limit` is written)."""
    return _table(
        "dctcp", g=g, initial_alpha=initial_alpha, initial_window=initial_window, abc_limit=abc_limit, growth=growth
    )


def prague(
    g: float | None = None,
    initial_alpha: float | None = None,
    initial_window: int | None = None,
    abc_limit: int | None = None,
    growth: str | None = None,
) -> dict[str, Any]:
    """Prague (RFC 9331's scalable sender for L4S): DCTCP's response on ECT(1) packets; `g`
    (default 1/16) and `initial_alpha` (default 1) as DCTCP's. Needs `ecn=True` and an L4S
    queue (DualPI2).
    `initial_window`: segments (RFC 5681's 2-4 by MSS when None); `abc_limit`: RFC 3465's L, the most
    segments one ACK may add in slow start (default 2).
    `growth`: "rfc5681" (the default: byte counting up to `abc_limit` in slow start, SMSS²/cwnd per ACK
    in congestion avoidance) or "linux" (tcp_slow_start and tcp_cong_avoid_ai: every acknowledged
    segment counts in both; the linux profile's unless `abc_limit` is written)."""
    return _table(
        "prague", g=g, initial_alpha=initial_alpha, initial_window=initial_window, abc_limit=abc_limit, growth=growth
    )


def ledbat(
    target: str | float | None = None,
    gain: float | None = None,
    allowed_increase: float | None = None,
    min_cwnd: int | None = None,
    base_history: int | None = None,
    current_filter: int | None = None,
    slow_start: bool | None = None,
    initial_window: int | None = None,
    variant: str | None = None,
) -> dict[str, Any]:
    """LEDBAT (RFC 6817), a less-than-best-effort sender: per ACK the window moves by
    `gain`·(`target` − queuing delay)/`target` segments per window, the queuing delay being the
    least of the last `current_filter` RTT samples (default 4) minus the least of `base_history`
    one-minute minima (default 10). `target`: a time (default "100ms"); `gain` (default 1, at
    most 1); `allowed_increase`: segments the window may exceed the flight by (default 1);
    `min_cwnd`: segments (default 2); `slow_start`: slow start until the first loss, as ns-3
    (default True); `initial_window`: segments (default 10). `variant`: "rfc6817" (default) or
    "ledbat++" (draft-irtf-iccrg-ledbat-plus-plus): a 60 ms target when `target` is None, the gain
    divided by min(16, ceil(2·target/base delay)), a multiplicative decrease above the target (at
    most half the window per RTT), slow start at that gain until 3/4 of the target, and slowdowns
    to 2 segments for 2 RTTs, the first 2 RTTs after slow start, the next 9 times the last one's
    duration after it. Needs `rtt_sampling="every_ack"` or timestamps."""
    return _table(
        "ledbat",
        target=target,
        gain=gain,
        allowed_increase=allowed_increase,
        min_cwnd=min_cwnd,
        base_history=base_history,
        current_filter=current_filter,
        slow_start=slow_start,
        initial_window=initial_window,
        variant=variant,
    )


def copa(delta: float | None = None, mode: str | None = None, initial_window: int | None = None) -> dict[str, Any]:
    """Copa (Arun and Balakrishnan 2018): the window moves towards the target rate
    1/(`delta`·queuing delay), about 1/`delta` packets queued per flow (default 0.5), pacing at
    twice the window per standing RTT. `mode`: "default" (δ fixed) or "competitive" (section
    2.3: while the queue has not nearly emptied for 5 RTTs, a buffer-filling flow is assumed and
    1/δ grows by 1 per RTT without loss and halves on loss, δ at most `delta`).
    `initial_window`: segments (default 10)."""
    return _table("copa", delta=delta, mode=mode, initial_window=initial_window)


def swift(
    base_target: str | None = None,
    per_hop: str | None = None,
    fs_range: str | None = None,
    fs_min_cwnd: float | None = None,
    fs_max_cwnd: float | None = None,
    ai: float | None = None,
    beta: float | None = None,
    max_mdf: float | None = None,
    retx_reset_threshold: int | None = None,
    min_cwnd: float | None = None,
    max_cwnd: float | None = None,
    initial_window: int | None = None,
) -> dict[str, Any]:
    """Swift (Kumar et al. 2020): additive increase of `ai` packets per RTT (default 1) while the
    fabric delay (RTT less the receiver's ACK delay) is below the target, else a decrease of
    `beta`·(delay − target)/delay (default 0.8), at most `max_mdf` (default 0.5), once per RTT.
    Target: `base_target` (default "20us") + `per_hop` (default "3.053us") per router on the path
    + a flow-scaling term from `fs_range` (default "100us") at `fs_min_cwnd` packets (default
    0.1) down to 0 at `fs_max_cwnd` (default 100). Loss: `1 − max_mdf` once per RTT;
    `retx_reset_threshold` timeouts in a row (default 5) drop the window to `min_cwnd`.
    Window bounds in packets: `min_cwnd` (default 0.001, paced below one packet) and `max_cwnd`
    (default 1000). `initial_window`: segments (default 10). Needs `rtt_sampling="every_ack"`."""
    return _table(
        "swift",
        base_target=base_target,
        per_hop=per_hop,
        fs_range=fs_range,
        fs_min_cwnd=fs_min_cwnd,
        fs_max_cwnd=fs_max_cwnd,
        ai=ai,
        beta=beta,
        max_mdf=max_mdf,
        retx_reset_threshold=retx_reset_threshold,
        min_cwnd=min_cwnd,
        max_cwnd=max_cwnd,
        initial_window=initial_window,
    )


def hpcc(
    eta: float | None = None,
    max_stage: int | None = None,
    rate_ai: str | None = None,
    min_rate: str | None = None,
    base_rtt: str | None = None,
    line_rate: str | None = None,
    initial_window: int | None = None,
    int_hops: int | None = None,
    int_on_wire: bool | None = None,
) -> dict[str, Any]:
    """HPCC (Li et al. 2019): a window set from in-band telemetry. Every switch the flow's data
    leaves stamps its queue, transmitted bytes, time and rate; the ACK echoes them; the sender
    estimates the most loaded link's utilization U and sets W = W_c/(U/`eta`) + W_AI when U ≥
    `eta` (default 0.95) or after `max_stage` (default 5) additive rounds, else W = W_c + W_AI,
    with W_AI = `rate_ai` (default "50Mbps") × T, W_c moving once per round, and paces at W/T.
    T is `base_rtt` and the start window is `line_rate` × T; by default the flow's idle round
    trip and its host's link rate. `min_rate` (default "100Mbps") is the lowest pacing rate.
    `initial_window`: segments, to start below line rate (no TCP profile sets it for HPCC).
    Every packet of the flow carries the telemetry header, 2 + 8 × `int_hops` bytes (default
    5 hops, 42 bytes, as HPCC's implementation), counted in its size and shown in captures;
    switches past the last slot leave no record; `int_on_wire=False` carries the records at no
    cost in bytes."""
    return _table(
        "hpcc",
        eta=eta,
        max_stage=max_stage,
        rate_ai=rate_ai,
        min_rate=min_rate,
        base_rtt=base_rtt,
        line_rate=line_rate,
        initial_window=initial_window,
        int_hops=int_hops,
        int_on_wire=int_on_wire,
    )


def dcqcn(
    g: float | None = None,
    alpha_interval: str | None = None,
    decrease_interval: str | None = None,
    increase_interval: str | None = None,
    fast_recovery_steps: int | None = None,
    rate_ai: str | None = None,
    rate_hai: str | None = None,
    min_rate: str | None = None,
    cnp_interval: str | None = None,
    clamp_target: bool | None = None,
    line_rate: str | None = None,
) -> dict[str, Any]:
    """DCQCN (Zhu et al. 2015), as NICs run it: a rate from line rate (`line_rate`, default the
    host's link) cut by alpha/2 at the `decrease_interval` check (default "4us") after a
    congestion notification (an ECN-Echo, at most one per `cnp_interval`, default "50us");
    alpha moves by `g` (default 1/256) every `alpha_interval` (default "1us"); every
    `increase_interval` (default "900us") after a cut the rate halves its gap to a target
    raised by nothing for `fast_recovery_steps` (default 1), then by `rate_ai` (default
    "50Mbps"), then by `rate_hai` (default "100Mbps"); at least `min_rate` (default
    "100Mbps"). A cut sets the target to the rate only after an increase, or always with
    `clamp_target` (default False). Needs switches that mark ECN on the instantaneous queue,
    e.g. quench.red(w_q=1, signal="mark", ...); ECN is negotiated by itself."""
    return _table(
        "dcqcn",
        g=g,
        alpha_interval=alpha_interval,
        decrease_interval=decrease_interval,
        increase_interval=increase_interval,
        fast_recovery_steps=fast_recovery_steps,
        rate_ai=rate_ai,
        rate_hai=rate_hai,
        min_rate=min_rate,
        cnp_interval=cnp_interval,
        clamp_target=clamp_target,
        line_rate=line_rate,
    )


def vivace(
    exponent: float | None = None,
    latency_coefficient: float | None = None,
    loss_coefficient: float | None = None,
    epsilon: float | None = None,
    theta0: float | None = None,
    omega0: float | None = None,
    omega_step: float | None = None,
    initial_window: int | None = None,
) -> dict[str, Any]:
    """PCC Vivace (Dong et al. 2018): a paced rate learned by gradient ascent on the utility
    x^`exponent` − `latency_coefficient`·x·dRTT/dT − `loss_coefficient`·x·loss of each monitor
    interval of about one RTT (x in Mb/s; defaults 0.9, 900, 11.35). A starting phase doubles
    the rate while the utility grows; each decision then probes r(1 ± `epsilon`) (default 0.05)
    and moves r by the amplified gradient times `theta0` (default 1 Mb/s per utility per Mb/s),
    at most (`omega0` + k·`omega_step`) of r (defaults 0.05, 0.05; k counts consecutive clipped
    steps). `initial_window`: segments before the first RTT sample (default 10). Losses are
    measured with SACK (each fast retransmit counts one segment without)."""
    return _table(
        "vivace",
        exponent=exponent,
        latency_coefficient=latency_coefficient,
        loss_coefficient=loss_coefficient,
        epsilon=epsilon,
        theta0=theta0,
        omega0=omega0,
        omega_step=omega_step,
        initial_window=initial_window,
    )
