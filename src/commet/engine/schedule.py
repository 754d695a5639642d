"""Which story slot runs which StoryTurn: a balanced plan, followed while it holds, rebalanced when it does not.

A run's wall time is that of its busiest slot. Handing the longest StoryTurns out first, each to
the first free slot, leaves the slots finishing at different times (the "last wave"): with 600
stories of 3 or 4 turns on 64 slots that alone costs 7 % over the lower bound. So the work is
split beforehand into per-slot lists of nearly equal total length (longest-processing-time
first, then moves and swaps between the fullest and the emptiest slot), and each slot works
through its own list. Real calls do not all take the same time: a slot that runs out of its
own work takes a not-yet-started StoryTurn from the slot with the most work left (the shortest
one there), so no slot idles while stories wait. Results never depend on this order: each
StoryTurn is one conversation and keeps its position in the dataset.
"""

from __future__ import annotations

import heapq
from collections import deque
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
        _, i, j = best
        bins[top].remove(i)
        bins[low].append(i)
        moved = weights[i]
        if j is not None:
            bins[low].remove(j)
            bins[top].append(j)
            moved -= weights[j]
        loads[top] -= moved
        loads[low] += moved
        return True
    return False


class SlotQueues:
    """The plan as work queues: each slot takes its own next item, else steals from the slot with most work left."""

    def __init__(self, weights: Sequence[float], slots: int):
        self.weights = weights
        self.queues = [deque(items) for items in plan_slots(weights, slots)]
        self.left = [sum(weights[i] for i in q) for q in self.queues]

    @property
    def slots(self) -> int:
        return len(self.queues)

    def next(self, slot: int) -> int | None:
        """The index slot ``slot`` runs next, or None when no work is left anywhere."""
        if self.queues[slot]:
            item = self.queues[slot].popleft()
            self.left[slot] -= self.weights[item]
            return item
        victim = max(range(len(self.queues)), key=lambda s: (self.left[s], -s))
        if not self.queues[victim]:
            return None
        item = self.queues[victim].pop()  # its shortest: the victim keeps the long ones it is about to start
        self.left[victim] -= self.weights[item]
        return item


def simulate(durations: Sequence[float], slots: int, weights: Sequence[float] | None = None,
             start_interval: float = 0.0) -> float:
    """Wall time of ``durations`` run by :class:`SlotQueues` with no overhead (planned by ``weights``)."""
    queues = SlotQueues(weights if weights is not None else durations, slots)
    clock = [(s * start_interval, s) for s in range(queues.slots)]
    heapq.heapify(clock)
    end = 0.0
    while clock:
        now, s = heapq.heappop(clock)
        item = queues.next(s)
        if item is None:
            end = max(end, now)
            continue
        heapq.heappush(clock, (now + durations[item], s))
    return end
