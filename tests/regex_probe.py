"""A worker that times regular expressions on adversarial 100 KB inputs (run by tests/test_regex_linear.py).

It reads one JSON request per line on stdin, ``{"pattern": ..., "flags": ...}``, and for each
input (:func:`inputs`) and each way a pattern is used (search, fullmatch, every match) writes
``at NAME OP`` before it starts and, at the end, ``done`` with the slowest operations as JSON.
It imports nothing but the standard library, so it starts in milliseconds.

Why a process of its own: Python's ``re`` never checks for signals while it matches, so a
catastrophic pattern cannot be stopped from inside. Each operation runs under a CPU-time limit
(``RLIMIT_CPU``): the kernel ends the worker with SIGXCPU once an operation has used more than
about ``HARD_LIMIT_S`` seconds of CPU, and the test reads from the last ``at`` line which input
did it. CPU time (not wall time) is what is measured and limited, so a machine busy with other
work does not make a linear pattern look slow.

The inputs: generic ones (runs of spaces, newlines, brackets, punctuation, repeated labels and
words, a mix) and ones made from the pattern itself: for every unbounded repetition, the text
that leads to it followed by many copies of what it repeats, then a character that makes the
match fail (the shape of every catastrophic backtracking case), and the pattern's own literal
characters cycled.
"""

from __future__ import annotations

import functools
import json
import math
import random
import re
import resource
import sys
import time
from collections.abc import Iterator

try:  # Python 3.11+
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse  # type: ignore[no-redef]

#: length of every input (characters)
SIZE = 100_000
#: an operation slower than this (CPU seconds) fails the pattern
SOFT_LIMIT_S = 0.5
#: an operation still running after about this much more CPU time is killed by the kernel (SIGXCPU)
HARD_LIMIT_S = 1
#: most inputs made from one pattern's repetitions
MAX_PUMPS = 24
MAXREPEAT = sre_parse.MAXREPEAT


def _fill(unit: str, size: int = SIZE) -> str:
    return (unit * (size // max(1, len(unit)) + 1))[:size] if unit else ""


@functools.cache
def generic_inputs() -> dict[str, str]:
    rng = random.Random(30)
    alphabet = "aAbB xX01 .,;:!?()[]{}<>\"'-_*#`/\\|\n\t"
    mixed = "".join(rng.choice(alphabet) for _ in range(SIZE))
    words = " ".join(rng.choice(["the", "box", "basket", "or", "and", "A", "B", "yes", "no", "if", "right:",
                                 "wrong:", "option", "(a)", "b)", "is", "answer"]) for _ in range(SIZE // 4))
    return {
        "spaces": " " * SIZE,
        "A+spaces+x": "A" + " " * (SIZE - 2) + "x",
        "A+spaces+?": "A" + " " * (SIZE - 2) + "?",
        "A A A": _fill("A "),
        "(A) (A)": _fill("(A) "),
        "A. A.": _fill("A. "),
        "open brackets": _fill("(["),
        "close brackets": _fill(")]"),
        "nested brackets": "(" * (SIZE // 2) + ")" * (SIZE // 2),
        "newlines": "\n" * SIZE,
        "a newline": _fill("a\n"),
        "repeated words": _fill("the box or the basket "),
        "repeated word no space": _fill("answer"),
        "punctuation": _fill(".,;:!?-*_`#>\"'|/"),
        "digits": "1" * SIZE,
        "wide spaces": _fill("\u3000\xa0 \t"),
        "quotes": _fill('"\\'),
        "mixed": mixed,
        "mixed words": words[:SIZE],
    }


# ----------------------------------------------------------------------------- inputs from the pattern


def _category_char(name: str) -> str:
    return {"CATEGORY_DIGIT": "1", "CATEGORY_NOT_DIGIT": "a", "CATEGORY_SPACE": " ", "CATEGORY_NOT_SPACE": "a",
            "CATEGORY_WORD": "a", "CATEGORY_NOT_WORD": " ", "CATEGORY_LINEBREAK": "\n",
            "CATEGORY_NOT_LINEBREAK": "a"}.get(name, "a")


def _in_char(items: list, flags: int) -> str:
    """A character matched by a ``[...]`` set."""
    negated = any(str(op) == "NEGATE" for op, _ in items)
    if negated:
        probe = re.compile(_rebuild_set(items), flags & ~re.VERBOSE)
        for candidate in "a A1 .\n-x_\"'é":
            if probe.fullmatch(candidate):
                return candidate
        return "\x01"
    op, value = items[0]
    name = str(op)
    if name == "LITERAL":
        return chr(value)
    if name == "RANGE":
        return chr(value[0])
    if name == "CATEGORY":
        return _category_char(str(value))
    return "a"


def _rebuild_set(items: list) -> str:
    """A ``[...]`` set again, from its parsed items (for negated sets, to test candidates)."""
    body = ""
    for op, value in items:
        name = str(op)
        if name == "NEGATE":
            body = "^" + body
        elif name == "LITERAL":
            body += re.escape(chr(value))
        elif name == "RANGE":
            body += f"{re.escape(chr(value[0]))}-{re.escape(chr(value[1]))}"
        elif name == "CATEGORY":
            body += {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_SPACE": r"\s",
                     "CATEGORY_NOT_SPACE": r"\S", "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W"}.get(str(value), "")
    return f"[{body}]"


def example(seq, flags: int) -> str:  # noqa: ANN001 - a parsed SubPattern or list of (op, value)
    """One short text matched by a parsed sequence (approximately: assertions and back references are skipped)."""
    out = []
    for op, value in seq:
        out.append(_node_example(str(op), value, flags))
    return "".join(out)


def _node_example(name: str, value, flags: int) -> str:  # noqa: ANN001
    if name == "LITERAL":
        return chr(value)
    if name == "NOT_LITERAL":
        return "a" if value != ord("a") else "b"
    if name == "ANY":
        return "a"
    if name == "IN":
        return _in_char(value, flags)
    if name == "CATEGORY":
        return _category_char(str(value))
    if name == "BRANCH":
        return example(value[1][0], flags)
    if name == "SUBPATTERN":
        return example(value[-1], flags)
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _high, body = value
        return example(body, flags) * max(low, 1)
    if name == "ATOMIC_GROUP":
        return example(value, flags)
    if name == "GROUPREF_EXISTS":
        return example(value[1], flags)
    return ""  # AT (anchors), ASSERT, ASSERT_NOT, GROUPREF


def pumps(seq, flags: int, before: str = "") -> Iterator[tuple[str, str]]:  # noqa: ANN001
    """(text leading to a repetition, one copy of what it repeats) for every unbounded repetition, and for
    every alternative inside one."""
    items = list(seq)
    for i, (op, value) in enumerate(items):
        name = str(op)
        lead = before + example(items[:i], flags)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = value
            if high == MAXREPEAT or high >= 1000:
                yield lead, example(body, flags)
                body_items = list(body)
                if len(body_items) == 1 and str(body_items[0][0]) == "BRANCH":
                    for alternative in body_items[0][1][1]:
                        yield lead, example(alternative, flags)
            yield from pumps(body, flags, lead)
        elif name == "SUBPATTERN":
            yield from pumps(value[-1], flags, lead)
        elif name == "ATOMIC_GROUP":
            yield from pumps(value, flags, lead)
        elif name == "BRANCH":
            for alternative in value[1]:
                yield from pumps(alternative, flags, lead)
        elif name in ("ASSERT", "ASSERT_NOT"):
            yield from pumps(value[1], flags, lead)


def literal_chars(seq) -> list[str]:  # noqa: ANN001
    """Every literal character of a parsed pattern, in order of first appearance."""
    found: dict[str, None] = {}

    def walk(node) -> None:  # noqa: ANN001
        for op, value in node:
            name = str(op)
            if name == "LITERAL":
                found[chr(value)] = None
            elif name == "IN":
                for item_op, item in value:
                    if str(item_op) == "LITERAL":
                        found[chr(item)] = None
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                walk(value[2])
            elif name == "SUBPATTERN":
                walk(value[-1])
            elif name == "BRANCH":
                for alternative in value[1]:
                    walk(alternative)
            elif name in ("ASSERT", "ASSERT_NOT"):
                walk(value[1])

    walk(seq)
    return list(found)


def pattern_inputs(pattern: str, flags: int) -> dict[str, str]:
    parsed = sre_parse.parse(pattern, flags)
    made: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for lead, unit in pumps(parsed, flags):
        if not unit or (lead, unit) in seen or len(seen) >= MAX_PUMPS:
            continue
        seen.add((lead, unit))
        # a blank stands for any white space: the same repetition pumped with line breaks too (``\\s*`` before
        # ``\\n`` is quadratic on line breaks only, as a card's front matter of 100,000 of them showed)
        for pumped in dict.fromkeys((unit, unit.replace(" ", "\n"))):
            copies = max(1, (SIZE - len(lead) - 1) // len(pumped))
            for tail in ("\x00", "\n"):
                made[f"pump {lead[:20]!r}+{pumped[:20]!r}*{copies}+{tail!r}"] = lead + pumped * copies + tail
    whole = example(parsed, flags)
    if whole:
        made[f"example {whole[:30]!r} repeated"] = _fill(whole)
        made[f"example {whole[:30]!r}+NUL repeated"] = _fill(whole + "\x00")
    chars = literal_chars(parsed)
    if chars:
        made["literal characters"] = _fill("".join(chars))
        made["literal characters spaced"] = _fill(" ".join(chars) + " ")
    return made


# ----------------------------------------------------------------------------- timing


def _limit_cpu(extra: float) -> None:
    """The kernel ends this process once it has used ``extra`` more seconds of CPU (at least 1 s more)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    now = used.ru_utime + used.ru_stime
    soft = math.ceil(now + extra)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))


def _every_match(compiled: re.Pattern[str], text: str) -> None:
    for _ in compiled.finditer(text):
        pass


OPERATIONS = {
    "search": lambda compiled, text: compiled.search(text),
    "fullmatch": lambda compiled, text: compiled.fullmatch(text),
    "finditer": _every_match,
}


def check(pattern: str, flags: int, out) -> dict[str, object]:  # noqa: ANN001 - a text stream
    compiled = re.compile(pattern, flags)
    texts = {**generic_inputs(), **pattern_inputs(pattern, flags)}
    slowest: list[tuple[float, str, str]] = []
    for name, text in texts.items():
        for op, run in OPERATIONS.items():
            out.write(f"at {json.dumps(name)} {op}\n")
            out.flush()
            _limit_cpu(HARD_LIMIT_S)
            started = time.thread_time()
            run(compiled, text)
            slowest.append((time.thread_time() - started, name, op))
    slowest.sort(reverse=True)
    return {"inputs": len(texts), "slowest": [[round(s, 4), name, op] for s, name, op in slowest[:3]],
            "over": [[round(s, 4), name, op] for s, name, op in slowest if s > SOFT_LIMIT_S]}


def main() -> None:
    generic_inputs()  # warm up
    for line in sys.stdin:
        request = json.loads(line)
        result = check(request["pattern"], request["flags"], sys.stdout)
        resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        sys.stdout.write("done " + json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
