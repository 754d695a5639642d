"""The order in which the engine hands StoryTurns to its slots: a balanced plan, followed by a shared queue.

A run's wall time is that of its busiest slot. Handing the longest StoryTurns out first, each to
the first free slot, leaves the slots finishing at different times (the "last wave"): with 600
stories of 3 or 4 turns on 64 slots that alone costs 7 % over the lower bound. So the work is
first split into per-slot lists of nearly equal total length (longest processing time first,
then moves and swaps between the fullest and the emptiest slot), and the StoryTurns are queued
in the order of their planned start times. Slots that are free at the same moment are
interchangeable, so a shared queue in that order, each story to the first free slot, runs
exactly the plan when calls take the time planned, and stays a good list schedule when they do
not (no slot idles while stories wait). Results never depend on the order: each StoryTurn is
one conversation and keeps its position.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

#: improvement steps per slot before the plan is taken as it is (each step strictly improves it)
MAX_STEPS_PER_SLOT = 50


def plan_slots(weights: Sequence[float], slots: int) -> list[list[int]]:
    """Indices of ``weights`` split into ``slots`` lists of nearly equal sums, each list heaviest first.

    Deterministic: equal inputs give equal plans (ties go to the lower index and the lower slot).
    """
    slots = max(1, min(slots, len(weights))) if weights else 1
    order = sorted(range(len(weights)), key=lambda i: (-weights[i], i))
    bins: list[list[int]] = [[] for _ in range(slots)]
    loads = [0.0] * slots
    heap = [(0.0, s) for s in range(slots)]
    for i in order:  # longest processing time first: each item onto the least loaded slot
        load, s = heapq.heappop(heap)
        bins[s].append(i)
        loads[s] = load + weights[i]
        heapq.heappush(heap, (loads[s], s))
    for _ in range(MAX_STEPS_PER_SLOT * slots):
        if not _improve(bins, loads, weights):
            break
    for items in bins:
        items.sort(key=lambda i: (-weights[i], i))
    return bins


def _improve(bins: list[list[int]], loads: list[float], weights: Sequence[float]) -> bool:
    """One move or swap that lowers the fullest slot's load against some emptier slot; False when none does.

    Each step lowers the sum of squared loads, so repeating it ends.
    """
    top = max(range(len(loads)), key=lambda s: (loads[s], -s))
    for low in sorted(range(len(loads)), key=lambda s: (loads[s], s)):
        gap = loads[top] - loads[low]
        if gap <= 0:
            return False
        # one representative item per distinct weight: items of equal weight are interchangeable
        top_items = {weights[i]: i for i in reversed(bins[top])}
        low_items = {weights[j]: j for j in reversed(bins[low])}
        best: tuple[float, int, int | None] | None = None  # (load of the pair's fuller slot after, i, j)
        for wi, i in top_items.items():
            if 0 < wi < gap:  # move i from top to low
                after = max(loads[top] - wi, loads[low] + wi)
                if best is None or after < best[0]:
                    best = (after, i, None)
            for wj, j in low_items.items():
                delta = wi - wj
                if 0 < delta < gap:  # swap i (top) with j (low)
                    after = max(loads[top] - delta, loads[low] + delta)
                    if best is None or after < best[0]:
                        best = (after, i, j)
        if best is None:
            continue
        _, given, taken = best  # given: top -> low; taken (a swap): low -> top
        bins[top].remove(given)
        bins[low].append(given)
        moved = weights[given]
        if taken is not None:
            bins[low].remove(taken)
            bins[top].append(taken)
            moved -= weights[taken]
        loads[top] -= moved
        loads[low] += moved
        return True
    return False


def planned_order(weights: Sequence[float], slots: int) -> list[int]:
    """Indices of ``weights`` in the order a shared queue should hand them out (see the module docstring).

    The fullest lists go first: the engine's slots start a moment apart (``START_INTERVAL_S``), and the
    slots that start last then have the lists with room to spare.
    """
    plan = sorted(plan_slots(weights, slots), key=lambda items: -sum(weights[i] for i in items))  # stable
    starts: list[tuple[float, int, int]] = []
    for slot, items in enumerate(plan):
        start = 0.0
        for i in items:
            starts.append((start, slot, i))
            start += weights[i]
    return [i for _, _, i in sorted(starts)]


def simulate(durations: Sequence[float], order: Sequence[int], slots: int, start_interval: float = 0.0) -> float:
    """Wall time of ``durations`` handed out in ``order``, each to the first free of ``slots``, with no overhead."""
    free = [(s * start_interval, s) for s in range(max(1, min(slots, len(order))))]
    heapq.heapify(free)
    for i in order:
        now, s = heapq.heappop(free)
        heapq.heappush(free, (now + durations[i], s))
    return max(now for now, _ in free)
