"""The client-bottleneck warnings, from the figures each measuring process reports (synthetic runs: the rules
themselves, with no timing involved)."""

from __future__ import annotations

from array import array

from vlmkit.perf.bottleneck import client_health
from vlmkit.perf.metrics import LevelTally
from vlmkit.perf.schedule import LevelRun

SECOND = 1_000_000_000


def _run(cpu_s: float, lag_ms: list[float], dispatch_ms: list[float] | None = None, worker: int = 0) -> LevelRun:
    return LevelRun(
        tally=LevelTally({}), timeline=None, sent=0, warmup=0, t0=0, t_end=10 * SECOND, cpu_s=cpu_s,
        loop_lag=array("q", [int(x * 1e6) for x in lag_ms]),
        dispatch_lag=array("q", [int(x * 1e6) for x in dispatch_ms or []]),
        interrupted=False, gc_collections=0, worker=worker,
    )


def test_a_healthy_client_gets_no_warning() -> None:
    health, warnings = client_health([_run(2.0, [0.2] * 1000)], open_loop=False, requested_rate=None)
    assert warnings == []
    assert health["processes"][0]["cpu_fraction"] == 0.2


def test_a_saturated_client_is_named() -> None:
    _, warnings = client_health([_run(1.0, [0.1] * 100), _run(9.7, [25.0] * 100, worker=1)], open_loop=False, requested_rate=None)
    assert any(w.startswith("CLIENT BOTTLENECK") and "process 1 used 97%" in w and "--workers" in w for w in warnings)
    assert any(w.startswith("CLIENT LAG") and "saturated" in w for w in warnings)


def test_a_starved_client_blames_the_machine() -> None:
    _, warnings = client_health([_run(2.0, [1.0] * 95 + [150.0] * 5)], open_loop=False, requested_rate=None)
    assert len(warnings) == 1 and "waiting for a CPU" in warnings[0]


def test_growing_schedule_lag_in_open_loop() -> None:
    steady = _run(3.0, [0.5] * 100, dispatch_ms=[0.5] * 500)
    health, warnings = client_health([steady], open_loop=True, requested_rate=50.0)
    assert warnings == [] and health["schedule"]["requested_rate"] == 50.0
    growing = _run(3.0, [0.5] * 100, dispatch_ms=[0.5 + i * 0.1 for i in range(500)])
    _, warnings = client_health([growing], open_loop=True, requested_rate=50.0)
    assert len(warnings) == 1 and "schedule lag grew" in warnings[0]
