"""Every regular expression of the package runs in linear time on adversarial 100 KB inputs.

Replies, datasets, requests and files reach patterns; one pattern that backtracks (adjacent
unbounded ``\\s*`` around optional parts: 308 s of CPU for "A" and 4,000 spaces) freezes a
whole run. So this test finds every pattern, not a list of known ones:

* every ``re.Pattern`` reachable from a module's globals (in dicts, lists, tuples and classes
  too), for every module of ``commet``;
* every call of ``re.compile/search/match/fullmatch/sub/subn/findall/finditer/split`` in the
  source (read with ``ast``): a literal pattern is taken as written; a pattern built with an
  f-string is taken with each ``re.escape(...)`` replaced by sample words; a call whose pattern
  cannot be resolved fails :func:`test_every_pattern_in_the_source_is_checked` (make it a
  literal, a module-level compiled pattern, or teach this test).

Each pattern runs in a worker process (tests/regex_probe.py) on generic inputs and on inputs
made from its own repetitions and characters, under a CPU-time limit the kernel enforces.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import pkgutil
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import commet

SOURCE = Path(commet.__file__).parent
PROBE = Path(__file__).parent / "regex_probe.py"
FUNCTIONS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}
#: where each function takes ``flags`` when it is given by position
FLAGS_AT = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2, "split": 3,
            "sub": 4, "subn": 4}
#: what stands for ``re.escape(...)`` in a pattern built at run time
ESCAPED_SAMPLES = ("a", "the box", "(b)")
#: wall-clock seconds without a word from the worker before it is taken as hung (CPU is limited inside)
WORKER_SILENCE_S = 30.0


@dataclass(frozen=True)
class Case:
    id: str
    pattern: str
    flags: int


@dataclass(frozen=True)
class Site:
    """A call of a ``re`` function in the source."""

    module: str
    where: str  # the enclosing function's qualified name, or "<module>"
    line: int
    pattern: ast.expr
    flags: ast.expr | None


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(commet.__path__, "commet.")
                  if not m.name.endswith("__main__"))


def _source_files() -> dict[str, Path]:
    files = {}
    for path in sorted(SOURCE.rglob("*.py")):
        parts = path.relative_to(SOURCE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        files[name] = path
    return files


def _sites(module: str, path: Path) -> Iterator[Site]:
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def visit(node: ast.AST, where: list[str]) -> Iterator[Site]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from visit(child, [*where, child.name])
                continue
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                    and isinstance(child.func.value, ast.Name) and child.func.value.id == "re"
                    and child.func.attr in FUNCTIONS):
                pattern = child.args[0] if child.args else next(
                    (k.value for k in child.keywords if k.arg == "pattern"), None)
                flags = next((k.value for k in child.keywords if k.arg == "flags"), None)
                if flags is None and len(child.args) > FLAGS_AT[child.func.attr]:
                    flags = child.args[FLAGS_AT[child.func.attr]]
                assert pattern is not None, f"{module}:{child.lineno}: re.{child.func.attr} without a pattern"
                yield Site(module, ".".join(where) or "<module>", child.lineno, pattern, flags)
            yield from visit(child, where)

    yield from visit(tree, [])


def _flags(node: ast.expr | None) -> int | None:
    if node is None:
        return 0
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        return int(getattr(re, node.attr))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _flags(node.left), _flags(node.right)
        return None if left is None or right is None else left | right
    return None


def _resolved(site: Site, namespace: dict[str, object]) -> list[str] | None:
    """The pattern texts a call uses (one per sample for a pattern built with ``re.escape``), or None."""
    node = site.pattern
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and isinstance(namespace.get(node.id), (str, re.Pattern)):
        value = namespace[node.id]
        return [value.pattern if isinstance(value, re.Pattern) else value]  # type: ignore[union-attr]
    if isinstance(node, ast.JoinedStr):
        texts = []
        for sample in ESCAPED_SAMPLES:
            pieces = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    pieces.append(str(part.value))
                elif (isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Call)
                      and isinstance(part.value.func, ast.Attribute) and part.value.func.attr == "escape"):
                    pieces.append(re.escape(sample))
                elif (isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name)
                      and isinstance(namespace.get(part.value.id), str)):
                    pieces.append(str(namespace[part.value.id]))
                else:
                    return None
            texts.append("".join(pieces))
        return texts
    return None


def _module_patterns(module: object, name: str) -> Iterator[tuple[str, re.Pattern[str]]]:
    """Every compiled pattern reachable from a module's globals, named by where it was found."""
    seen: set[int] = set()

    def walk(value: object, where: str, depth: int) -> Iterator[tuple[str, re.Pattern[str]]]:
        if id(value) in seen or depth > 4:
            return
        seen.add(id(value))
        if isinstance(value, re.Pattern):
            if isinstance(value.pattern, str):
                yield where, value
        elif isinstance(value, dict):
            for key, item in value.items():
                yield from walk(item, f"{where}[{key!r}]", depth + 1)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for i, item in enumerate(value):
                yield from walk(item, f"{where}[{i}]", depth + 1)
        elif isinstance(value, type) and value.__module__ == name:
            for key, item in vars(value).items():
                yield from walk(item, f"{where}.{key}", depth + 1)

    for key, value in vars(module).items():
        yield from walk(value, f"{name}.{key}", 0)


def collect() -> tuple[list[Case], list[str]]:
    """(every pattern to check, the source sites that could not be resolved)."""
    cases: dict[tuple[str, int], Case] = {}
    unresolved: list[str] = []
    files = _source_files()
    for name in _modules():
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional extra: its literal patterns are still read from the source
            module = None
        namespace = vars(module) if module is not None else {}
        found = list(_module_patterns(module, name)) if module is not None else []
        for where, compiled in found:
            cases.setdefault((compiled.pattern, compiled.flags & ~re.UNICODE), Case(where, compiled.pattern,
                                                                                    compiled.flags))
        counts: dict[str, int] = {}
        for site in _sites(name, files[name]):
            counts[site.where] = counts.get(site.where, 0) + 1
            site_id = f"{name}:{site.where}#{counts[site.where]}"
            texts, flags = _resolved(site, namespace), _flags(site.flags)
            if texts is None or flags is None:
                compiled_here = site.where == "<module>" and found
                if not compiled_here:
                    unresolved.append(f"{site_id} (line {site.line})")
                continue
            for i, text in enumerate(texts):
                key = (text, re.compile(text, flags).flags & ~re.UNICODE)
                cases.setdefault(key, Case(site_id if len(texts) == 1 else f"{site_id}~{i}", text, flags))
    return sorted(cases.values(), key=lambda c: c.id), unresolved


CASES, UNRESOLVED = collect()

class Worker:
    """tests/regex_probe.py as a long-lived process; restarted after a pattern that had it killed or hung."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen([sys.executable, str(PROBE)], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": ""})
        return self.process

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def check(self, case: Case) -> dict[str, object]:
        """The worker's figures for one pattern, or ``{"killed": input and operation}``."""
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"pattern": case.pattern, "flags": case.flags}) + "\n")
        process.stdin.flush()
        last, pending = "(before the first input)", b""
        while True:
            while b"\n" not in pending:
                ready, _, _ = select.select([process.stdout], [], [], WORKER_SILENCE_S)
                chunk = os.read(process.stdout.fileno(), 65536) if ready else b""
                if not chunk:  # killed by the kernel (SIGXCPU) or silent too long
                    self.stop()
                    return {"killed": last}
                pending += chunk
            line, pending = pending.split(b"\n", 1)
            if line.startswith(b"done "):
                return json.loads(line[5:])
            last = line[3:].decode()


@pytest.fixture(scope="module")
def worker() -> Iterator[Worker]:
    running = Worker()
    yield running
    running.stop()


def test_every_pattern_in_the_source_is_checked() -> None:
    assert not UNRESOLVED, ("patterns this test cannot see (use a literal or a module-level compiled pattern): "
                            + ", ".join(UNRESOLVED))
    assert len(CASES) > 60  # every module's patterns were found, not a few


def test_the_probe_catches_a_catastrophic_pattern(worker: Worker) -> None:
    """The probe itself: adjacent unbounded repetitions over spaces are caught, a linear twin passes."""
    slow = worker.check(Case("slow", r"^\s*[(]?\s*[a-z]\s*[)]?\s*[.:]?\s*$", 0))
    assert slow.get("killed") or slow.get("over"), slow
    fast = worker.check(Case("fast", r"^[(]?[a-z][)]?[.:]?$", 0))
    assert not fast.get("killed") and not fast["over"], fast


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_pattern_runs_in_linear_time(case: Case, worker: Worker) -> None:
    result = worker.check(case)
    assert "killed" not in result, (f"{case.id}: {case.pattern!r} ran past the CPU limit on input "
                                    f"{result['killed']}")
    assert not result["over"], f"{case.id}: {case.pattern!r} took over 0.5 s of CPU: {result['over']}"


#: Card and CSV parsing on adversarial inputs, each timed in CPU seconds in a worker whose CPU the kernel limits.
PARSING_SCRIPT = r"""
import json, resource, sys, tempfile, time
from pathlib import Path
from commet.sources.card import _glob_matches, front_matter, front_text
from commet.sources.folders import check_folder
from commet.store.labels import LabelError, _csv_rows

resource.setrlimit(resource.RLIMIT_CPU, (60, resource.RLIM_INFINITY))
N = 100_000
cards = {"--- and line breaks": "---" + "\n" * N, "--- then lines": "---\n" + "a: b\n" * N,
         "--- spaces": "---" + " \n" * N, "--- dashes": "---\n" + "---x\n" * N, "dashes only": "-" * N,
         "open list": "---\n" + "[" * 5000 + "\n---\n", "line breaks": "\n" * N + "---",
         "crlf": "---\r\n" + "\r\n" * N, "cr": "---" + "\r" * N}
csvs = {"open quote": 'run,story_id,turn,label,labeller\nr,s,0,correct,"' + "a" * N,
        "quotes": 'run,story_id,turn,label,labeller\n' + '"' * N, "commas": "run,story_id,turn,label,labeller\n" + "," * N,
        "line breaks": "run,story_id,turn,label,labeller\n" + "\n" * N, "crs": "run,story_id,turn,label,labeller\r" * N,
        "doubled quotes": 'run,story_id,turn,label,labeller\nr,s,0,correct,"' + '""' * N + '"\n'}
times = {}
with tempfile.TemporaryDirectory() as root:
    for name, text in cards.items():
        folder = Path(root) / str(len(times))
        folder.mkdir()
        (folder / "README.md").write_text(text)
        started = time.process_time()
        front_text(text)
        front_matter(folder)
        times[f"card {name}"] = time.process_time() - started
    for name, text in csvs.items():
        started = time.process_time()
        try:
            _csv_rows(Path("labels.csv"), text)
        except LabelError:
            pass
        folder = Path(root) / f"csv{len(times)}"
        folder.mkdir()
        (folder / "metadata.csv").write_text(text.replace("run", "file_name", 1))
        try:
            check_folder(folder)
        except Exception:
            pass
        times[f"csv {name}"] = time.process_time() - started
    started = time.process_time()
    _glob_matches(tuple("abcd"), tuple(["**"] * 60 + ["x"]))
    _glob_matches(tuple("abcd"), tuple(["**", "*"] * 30 + ["x"]))
    times["glob of many **"] = time.process_time() - started
print(json.dumps(times))
"""


def test_card_and_csv_parsing_run_in_linear_time() -> None:
    """What reads a dataset card (front matter, data_files globs) and a CSV (labels, image-folder metadata) stays
    within seconds on 100,000-line adversarial inputs (``---`` and 100,000 line breaks took 156 s)."""
    done = subprocess.run([sys.executable, "-c", PARSING_SCRIPT], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(SOURCE.parent)})
    assert done.returncode == 0, done.stderr[-2000:]
    times = json.loads(done.stdout)
    assert len(times) == 16
    slow = {name: round(seconds, 2) for name, seconds in times.items() if seconds > 3.0}  # (quadratic: minutes)
    assert slow == {}
