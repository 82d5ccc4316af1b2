"""quench's packet-level DCQCN against the DCQCN paper's fluid model and a stochastic hybrid of
it (benchmarks/compare_dcqcn_fluid.py, which writes both from the papers' equations; table and
commands in docs/validation.md#dcqcn). N RoCE flows onto one 10 Gb/s port that marks as
DCQCN's switches do.

- Dense marking (pmax = 1): every model has a stable operating point; quench's flows share the
  link equally at full utilization, as the fluid model's fixed point says. quench's mean queue
  is within 20 % of the hybrid's on these short single-seed runs (1.00-1.04 over 60 ms and
  three seeds), and 0.95-1.35 of the fluid's, at or above it: the fluid model averages away
  the queue that discrete cuts leave.
- Sparse marking (the paper's pmax = 1 %, two flows): the queue swings between empty and kmax.
  The fluid model averages the swing away (a fixed point at 137 KB, the link always busy);
  quench and the hybrid, which keep each CNP a discrete event, agree with each other on the
  swing: the mean queue within 15 % and the utilization within 4 %."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "compare_dcqcn_fluid.py"
DURATION_S = 0.03


def _models():
    spec = importlib.util.spec_from_file_location("compare_dcqcn_fluid", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def m():
    return _models()


@pytest.mark.parametrize("flows", [2, 8])
def test_dense_marking_meets_the_fluid_fixed_point(m, flows: int) -> None:
    p = m.Params(pmax=1.0)
    ours = m.packet(flows, DURATION_S, p)
    fixed = m.fluid(flows, DURATION_S, p)
    mixed = m.hybrid(flows, DURATION_S, p)
    assert fixed.utilization == pytest.approx(1.0, abs=1e-3)
    assert ours.utilization > 0.99
    assert ours.mean_rate_bps == pytest.approx(fixed.mean_rate_bps, rel=0.01)
    assert ours.jain > 0.99
    assert 0.95 <= ours.mean_queue_bytes / fixed.mean_queue_bytes <= 1.35
    assert ours.mean_queue_bytes == pytest.approx(mixed.mean_queue_bytes, rel=0.2)


def test_sparse_marking_swings_as_the_hybrid_does(m) -> None:
    # The sparse case's swings are slow (from empty to kmax and back): twice the dense case's run.
    p, duration = m.Params(), 2 * DURATION_S
    ours = m.packet(2, duration, p)
    fixed = m.fluid(2, duration, p)
    mixed = m.hybrid(2, duration, p)
    # The fluid model's fixed point keeps the link busy with a deep queue ...
    assert fixed.utilization > 0.99 and fixed.mean_queue_bytes > 2 * ours.mean_queue_bytes
    # ... the discrete models swing: the link idles part of the time, at the same share.
    assert ours.utilization < 0.95
    assert ours.utilization == pytest.approx(mixed.utilization, abs=0.04)
    assert ours.mean_queue_bytes == pytest.approx(mixed.mean_queue_bytes, rel=0.15)
