"""``commet judges --probe position|length`` against loopback judges that are biased by construction.

The judges are one OpenAI-compatible server on 127.0.0.1 answering the real chat-completions wire format. Model
``biased`` grades honestly, except that on a share ``B`` of the requests (decided by a hash of the request text, so the
same request always gets the same verdict and the probed one an independent draw) it says "correct" exactly when the
reply names the FIRST option shown (position) or is longer than 60 characters (length). Model ``fair`` always grades
honestly. With two options per question, reversing them changes the verdict of the biased judge on every answer with
probability exactly B (whichever option the reply names and whichever was first), and padding a reply changes it with
probability B too (a biased draw on a short reply says wrong, on a padded one right): the flip rate is B by
construction. The fair judge never flips. Model ``noisy`` is fair but answers at random on a share N of its calls
(a new draw on every call, as a judge that samples its reply): asked again unchanged it flips as often as probed, so
the probe must not call it biased.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import importlib.util
import io
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import evaluate_async
from commet.engine.probes import bias_test
from commet.format.dataset import Dataset
from commet.format.model import Option, StoryTurn, Turn
from commet.sources import load_dataset
from tests.fakeservers import FakeServer, RecordedRequest, Reply, openai_reply
from tests.judge_server import prompt_text, verdict

B = 0.3
N = 0.4
#: the noisy judge's calls so far per request text: each call draws its coin anew from a hash of the text and the call's
#: number (the probe asks the unchanged request first, then again), so every run of the test gets the same verdicts
CALLS: Counter[str] = Counter()
PLACES = [("the basket", "the box"), ("the shed", "the garage"), ("the drawer", "the shelf"), ("the bag", "the car")]
STORIES = 70

_ANSWER = re.compile(r"Answer to grade:\n<<<\n(.*)\n>>>", re.DOTALL)
_OPTIONS = re.compile(r"Options shown:\n(.*?)\n\n", re.DOTALL)
_EXPECTED = re.compile(r"Expected answer\(s\):\n1\. (.*?)\n", re.DOTALL)


def biased_judge(request: RecordedRequest) -> Reply:
    body = request.json
    prompt = prompt_text(next(m["content"] for m in body["messages"] if m["role"] == "user"))
    answer, expected = _ANSWER.search(prompt).group(1), _EXPECTED.search(prompt).group(1)  # type: ignore[union-attr]
    options = [line.split(". ", 1)[1] for line in _OPTIONS.search(prompt).group(1).splitlines()]  # type: ignore[union-attr]
    draw = int(hashlib.sha256(f"bias:{prompt}".encode()).hexdigest(), 16) / 16 ** 64
    if body["model"] == "biased" and draw < B:  # the bias: the first option shown, or a long reply, is right
        right = options[0].lower() in answer.lower() if MODE["probe"] == "position" else len(answer) > 60
    elif body["model"] == "noisy" and _coin(prompt, "noise") < N:  # no bias, only noise
        right = _coin(prompt, "verdict") < 0.5
    else:
        right = expected.lower() in answer.lower()
    return openai_reply(verdict(right, 1 if right else None), model=body["model"])


def _coin(prompt: str, what: str) -> float:
    if what == "noise":
        CALLS[prompt] += 1
    return int(hashlib.sha256(f"{what}:{CALLS[prompt]}:{prompt}".encode()).hexdigest(), 16) / 16 ** 64


#: which bias the server has (set by each test)
MODE = {"probe": "position"}


def _dataset(folder: Path) -> Dataset:
    stories = []
    for i in range(STORIES):
        first, second = PLACES[i % len(PLACES)]
        options = [Option(label="A", text=first), Option(label="B", text=second)]
        if i % 2:  # the right option is first in half the questions, second in the others
            options.reverse()
        stories.append(StoryTurn(id=f"s{i:02d}", task="false_belief_location", category="Belief", turns=[
            Turn(story=f"Story {i}: Ana leaves her ball in {first}; Ben moves it to {second}.",
                 question="Where will Ana look for her ball?", options=options, answers=[first]),
            Turn(question="Where is the ball really?", options=list(reversed(options)), answers=[second])]))
    Dataset(stories, name="probes").save(folder)
    return load_dataset(folder)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("probes")
    data = _dataset(root / "dataset")
    replies = {}
    for i, story in enumerate(data.storyturns):  # right, wrong, both right or both wrong: a quarter each
        first, second = (t.answers[0] for t in story.turns)
        replies[story.id] = [first if i % 4 in (0, 1) else second, second if i % 4 in (0, 2) else first]
    (root / "r.json").write_text(json.dumps(replies))
    db = root / "results.sqlite"
    asyncio.run(evaluate_async(f"replay:{root / 'r.json'}", data, judge="rules", db=db, run="base"))
    return db


runner = CliRunner()
BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_calibration.py"


def _bench():  # noqa: ANN202 - the bench module
    spec = importlib.util.spec_from_file_location("bench_calibration", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _flips(output: str) -> dict[str, dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(output)))
    return {row["Judge"]: row for row in rows}


@pytest.mark.parametrize("probe", ["position", "length"])
def test_a_biased_judge_is_found_and_a_noisy_fair_one_is_not(world: Path, probe: str) -> None:
    MODE["probe"] = probe
    CALLS.clear()
    with FakeServer("openai", responder=biased_judge) as server:
        specs = [f"llm-only:openai:{name}?base_url={server.url}/v1" for name in ("biased", "fair", "noisy")]
        result = runner.invoke(app, ["judges", "--db", str(world), "--run", "base", "--probe", probe, "--sample", "140",
                                     "--seed", "3", "--format", "csv",
                                     *(a for s in specs for a in ("--judge", s))])
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 3 * 3 * 140  # each judge, each answer: as asked, again, as probed
    rows = _flips(result.stdout)
    biased, fair, noisy = (rows[f"llm:openai:{name}@judge-v2"] for name in ("biased", "fair", "noisy"))
    assert biased["Answers"] == fair["Answers"] == noisy["Answers"] == "140"
    low, high = (float(x) for x in re.search(r"\[([\d.]+), ([\d.]+)\]", biased["Flip rate (%, 95% CI)"]).groups())
    assert low <= 100 * B <= high and high - low < 17  # Wilson at n = 140: about +-7.6 points
    assert int(biased["Flips"]) == int(biased["Right → wrong"]) + int(biased["Wrong → right"])
    assert biased["Re-asked flips"] == "0" and biased["Verdict"] == "biased" and float(biased["p (one-sided)"]) < 1e-6
    assert fair["Flips"] == "0" and fair["Flip rate (%, 95% CI)"].startswith("0.00 [0.00, 2.6")
    assert fair["Verdict"] == "no evidence of bias" and fair["p (one-sided)"] == "1"
    # the noisy judge flips about N / 2 of its verdicts either way: as many when asked again as when probed
    assert 20 < int(noisy["Flips"]) < 60 and 20 < int(noisy["Re-asked flips"]) < 60
    assert noisy["Verdict"] == "no evidence of bias", noisy
    excess = re.search(r"^([-+\d.]+) \[([-+\d.]+), ([-+\d.]+)\]", noisy["Bias beyond noise (points, 95% CI)"])
    assert excess is not None and float(excess.group(2)) <= 0 <= float(excess.group(3))


def test_a_noisy_fair_judge_is_flagged_at_most_at_the_nominal_rate_over_many_seeds() -> None:
    """bench/bench_calibration.py's probe simulation: 400 seeds of 100 answers each. A fair judge answering at
    random on 20 % or 50 % of its calls is flagged in at most 5 % of them (plus the simulation's error, 2 points);
    counting flips alone (Wilson's interval of the flip rate above 0) would flag it every time. A judge biased on
    10 % of the answers is flagged in most."""
    bench = _bench()
    for noise in (0.2, 0.5):
        assert bench.probe_alarms(noise, 0.0, answers=100, seeds=400, seed=7) <= 7.0
    assert bench.probe_alarms(0.2, 0.1, answers=200, seeds=200, seed=8) >= 50
    assert bench.probe_alarms(0.0, 0.1, answers=100, seeds=200, seed=9) >= 90
    flips = [bias_test(k, 0, 0, 100) for k in (0, 4, 5)]  # a deterministic judge: 5 flips of 5 discordant
    assert [t.flagged for t in flips] == [False, False, True] and flips[2].p_value == pytest.approx(1 / 32)
    assert bias_test(30, 30, 10, 100).p_value > 0.5  # as many flips asked again as probed


def test_the_rules_judge_is_position_fair_and_a_panel_shows_its_members_per_answer(world: Path) -> None:
    MODE["probe"] = "position"
    with FakeServer("openai", responder=biased_judge) as server:
        panel = f"llm-only:panel:openai:biased?base_url={server.url}/v1,openai:fair?base_url={server.url}/v1"
        result = runner.invoke(app, ["judges", "--db", str(world), "--run", "base", "--probe", "position",
                                     "--sample", "40", "--judge", "rules", "--judge", panel, "--format", "markdown"])
        assert result.exit_code == 0, result.output
    text = result.stdout
    rules_row = next(line for line in text.splitlines() if line.startswith("| rules |"))
    assert rules_row.startswith("| rules | 40 | 0 | 0.00 [")  # the rules read labels and texts, not their order
    assert "members per answer (position probe)" in text
    # on every answer where the biased member flipped, the two members now disagree (a panel of two: undecided)
    panel_rows = [line for line in text.splitlines() if line.startswith("| s")]
    assert panel_rows and all("→" in line for line in panel_rows)
    assert any(line.rstrip().endswith("| yes |") for line in panel_rows)


def test_a_probe_needs_one_run_and_named_judges(world: Path, tmp_path: Path) -> None:
    assert runner.invoke(app, ["judges", "--db", str(world), "--probe", "position"]).exit_code == 2
    missing = runner.invoke(app, ["judges", "--db", str(world), "--run", "nosuch", "--probe", "length"])
    assert missing.exit_code == 2 and "no run named 'nosuch'" in missing.output
    stray = runner.invoke(app, ["judges", "--db", str(world), "--judge", "rules"])
    assert stray.exit_code == 2 and "--judge chooses the judges of a --probe" in stray.output
