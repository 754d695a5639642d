"""The engine's dispatch order: a balanced plan, run exactly by a shared queue, robust when calls run long."""

from __future__ import annotations

import random

import pytest

from commet.engine.schedule import plan_slots, planned_order, simulate


def longest_first(weights: list[int]) -> list[int]:
    """The order the engine used before: longest first (ties by position)."""
    return sorted(range(len(weights)), key=lambda i: (-weights[i], i))


def test_the_plan_balances_the_bench_workload_where_longest_first_does_not() -> None:
    weights = [3 if i % 2 == 0 else 4 for i in range(600)]  # bench/bench_openai_server.py's stories
    plan = plan_slots(weights, 64)
    loads = [sum(weights[i] for i in slot) for slot in plan]
    assert sorted(i for slot in plan for i in slot) == list(range(600))  # every story exactly once
    assert max(loads) == 33 and min(loads) >= 32  # 2100 turns / 64 slots = 32.8
    order = planned_order(weights, 64)
    assert sorted(order) == list(range(600))
    assert simulate(weights, longest_first(weights), 64) == 35
    assert simulate(weights, order, 64) == 33  # the shared queue in planned order runs the plan exactly
    assert simulate(weights, order, 64, start_interval=0.001) < 33.1  # slots starting 1 ms apart
    # 52 slots plan 33 turns and 12 plan 32: the fullest lists go to the slots that start first, so the
    # last of the 33s starts 51 intervals late, and the 32s have a turn to spare for starting later
    assert simulate(weights, order, 64, start_interval=0.01) == pytest.approx(33 + 51 * 0.01)


def test_the_plan_is_deterministic_and_near_the_bound_on_random_work() -> None:
    rng = random.Random(4)
    for stories, slots in ((540, 64), (2000, 32), (90, 8)):
        weights = [rng.randint(1, 9) for _ in range(stories)]
        plan = plan_slots(weights, slots)
        assert plan == plan_slots(list(weights), slots)
        assert sorted(i for slot in plan for i in slot) == list(range(stories))
        bound = max(max(weights), -(-sum(weights) // slots))  # whole turns: no slot can do less than this
        assert max(sum(weights[i] for i in slot) for slot in plan) <= bound + 1
        assert simulate(weights, planned_order(weights, slots), slots) <= bound + 1
        assert simulate(weights, planned_order(weights, slots), slots) <= simulate(weights, longest_first(weights), slots)


def test_fewer_stories_than_slots_and_no_stories() -> None:
    assert sorted(plan_slots([2.0, 5.0], 64)) == [[0], [1]]  # one slot per story
    assert planned_order([], 8) == []
    assert simulate([2.0, 5.0], planned_order([2.0, 5.0], 64), 64) == 5.0


def test_a_shared_queue_keeps_slots_busy_when_calls_take_other_times_than_planned() -> None:
    """Planned by turns, but one slot's stories run three times longer: a plan followed blindly would
    take 96; handed out in order to the first free slot, the others take the waiting work."""
    weights = [4] * 64
    plan = plan_slots(weights, 8)
    slow = set(plan[0])
    durations = [3.0 * w if i in slow else float(w) for i, w in enumerate(weights)]
    assert max(sum(durations[i] for i in slot) for slot in plan) == 96.0
    assert simulate(durations, planned_order(weights, 8), 8) <= 48.0  # the bound is 320 / 8 = 40
