"""The story slots' plan: balanced loads, a partition of the work, stealing when real calls run long."""

from __future__ import annotations

import random

from commet.engine.schedule import SlotQueues, plan_slots, simulate


def longest_first(durations: list[float], slots: int) -> float:
    """The schedule the engine used before: longest first, each into the first free slot."""
    free = [0.0] * slots
    for duration in sorted(durations, reverse=True):
        free[free.index(min(free))] += duration
    return max(free)


def test_plan_balances_the_bench_workload_where_longest_first_does_not() -> None:
    weights = [3 if i % 2 == 0 else 4 for i in range(600)]  # bench/bench_openai_server.py's stories
    plan = plan_slots(weights, 64)
    loads = [sum(weights[i] for i in slot) for slot in plan]
    assert sorted(i for slot in plan for i in slot) == list(range(600))  # every story exactly once
    assert max(loads) == 33 and min(loads) >= 32  # 2100 turns / 64 slots = 32.8
    assert longest_first([float(w) for w in weights], 64) == 35
    assert simulate(weights, 64) == 33
    assert all(slot == sorted(slot, key=lambda i: (-weights[i], i)) for slot in plan)  # longest first in a slot


def test_plan_is_deterministic_and_near_the_bound_on_random_work() -> None:
    rng = random.Random(4)
    for stories, slots in ((540, 64), (2000, 32), (90, 8)):
        weights = [rng.randint(1, 9) for _ in range(stories)]
        plan = plan_slots(weights, slots)
        assert plan == plan_slots(list(weights), slots)
        assert sorted(i for slot in plan for i in slot) == list(range(stories))
        bound = max(max(weights), -(-sum(weights) // slots))  # whole turns: no slot can do less than this
        assert max(sum(weights[i] for i in slot) for slot in plan) <= bound + 1


def test_fewer_stories_than_slots_and_no_stories() -> None:
    assert sorted(plan_slots([2.0, 5.0], 64)) == [[0], [1]]  # one slot per story
    assert len(SlotQueues([2.0, 5.0], 64).queues) == 2
    assert SlotQueues([], 8).next(0) is None


def test_a_slot_out_of_work_steals_the_shortest_story_of_the_busiest_slot() -> None:
    weights = [5, 4, 3, 3, 2, 1]
    queues = SlotQueues(weights, 2)
    own = list(queues.queues[0])
    taken = [queues.next(0) for _ in own]
    assert taken == own
    busiest = queues.queues[1]
    shortest = busiest[-1]
    assert queues.next(0) == shortest  # slot 0's own list is done: it takes from slot 1's tail
    while queues.next(1) is not None:
        pass
    assert queues.next(0) is None and queues.next(1) is None


def test_stealing_keeps_slots_busy_when_calls_take_other_times_than_planned() -> None:
    """Planned by turns, but one slot's stories run three times longer: the others take its unstarted work."""
    weights = [4] * 64
    plan = plan_slots(weights, 8)
    slow = set(plan[0])
    durations = [3.0 * w if i in slow else float(w) for i, w in enumerate(weights)]
    unbalanced = max(sum(durations[i] for i in slot) for slot in plan)  # following the plan blindly
    assert unbalanced == 96.0
    assert simulate(durations, 8, weights=weights) <= 44.0  # the bound is 320 / 8 = 40; one story more at most
