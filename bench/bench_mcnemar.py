"""McNemar's exact test: the log-space sum against the sum of exact big integers it replaced.

    python bench/bench_mcnemar.py [--old-up-to 5000] [--repeats 3]

For discordant counts b + c from 1,000 to 100,000 (b a little below half) it prints the time
of :func:`commet.reports.stats.mcnemar_exact` (linear: each term from the last by one ratio)
and, up to ``--old-up-to``, of the former computation (``sum(comb(m, i)) / 2**m``, whose big
integers make it quadratic: 5.2 s here, 12.9 s in issue 32, at b = 5,000, c = 5,200), side by side with their ratio and
the relative difference of the two p-values. Best of ``--repeats`` runs each.
"""

from __future__ import annotations

import argparse
import time
from math import comb

from commet.reports.stats import mcnemar_exact


def old_mcnemar(b: int, c: int) -> float:
    """The former exact p-value: a sum of big binomial coefficients."""
    m = b + c
    if m == 0:
        return 1.0
    tail = sum(comb(m, i) for i in range(min(b, c) + 1)) / 2 ** m
    return min(1.0, 2.0 * tail)


def best_time(function, *args: int, repeats: int) -> tuple[float, float]:  # noqa: ANN001 - a p-value function
    """(best seconds of ``repeats`` calls, the value)."""
    best, value = float("inf"), 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        value = function(*args)
        best = min(best, time.perf_counter() - started)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old-up-to", type=int, default=5000, help="largest b + c to time the old sum at")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'b + c':>8} {'b':>7} {'c':>7} {'log-space s':>12} {'old sum s':>10} {'old / new':>10} "
          f"{'p-value':>11} {'rel. diff':>10}")
    for total in (1_000, 2_000, 5_000, 10_200, 20_000, 50_000, 100_000):
        b = total * 49 // 100 if total != 10_200 else 5_000
        c = total - b
        new_s, p = best_time(mcnemar_exact, b, c, repeats=args.repeats)
        if total <= args.old_up_to:
            old_s, old_p = best_time(old_mcnemar, b, c, repeats=args.repeats)
            diff = abs(p - old_p) / old_p if old_p else abs(p)
            print(f"{total:>8} {b:>7} {c:>7} {new_s:>12.6f} {old_s:>10.4f} {old_s / new_s:>10.0f} {p:>11.4g} "
                  f"{diff:>10.1e}")
        else:
            print(f"{total:>8} {b:>7} {c:>7} {new_s:>12.6f} {'-':>10} {'-':>10} {p:>11.4g} {'-':>10}")


if __name__ == "__main__":
    main()
