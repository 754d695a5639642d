"""The inspect_ai task `commet/storyturns`: offline with inspect's mock model, against `commet eval`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval  # the test extra includes commet-bench[inspect]
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from typer.testing import CliRunner

from commet.cli import app
from commet.engine.outcome import StoryOutcome
from commet.integrations.inspect_task import SCORE_VALUES, storyturns
from commet.reports.analyses import load_run
from commet.reports.metrics import run_metrics, select_runs
from commet.sources import load_dataset
from commet.store import Store
from tests.conftest import mixed_outcome_replies

SRC = Path(__file__).resolve().parents[1] / "src"


def output(text: str) -> ModelOutput:
    """A mock reply with its usage given (else mockllm counts tokens with tiktoken, which downloads its tables)."""
    reply = ModelOutput.from_content(model="mockllm", content=text)
    reply.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return reply


def paper_figures(store: Store, run) -> dict[str, float]:  # noqa: ANN001 - a RunRecord
    """A run's story accuracy as inspect's metrics name it, both ends of each range, from `commet report`'s
    own story results: overall and per subset (Tables 1 and 2) and category."""
    stories = [s for s in load_run(store, run).stories if s.counted]
    groups: dict[str, list] = {"overall": stories}
    for story in stories:
        groups.setdefault(f"{story.subset} overall", []).append(story)
        groups.setdefault(f"{story.subset} {story.category}", []).append(story)
    figures = {}
    for name, members in groups.items():
        figures[name] = sum(s.correct is True for s in members) / len(members)
        figures[f"{name} (undecided right)"] = sum(s.correct_if_undecided_right for s in members) / len(members)
    return figures


def commet_run(tmp_path: Path, model: str, *extra: str):
    """`commet eval` on the sample: its metrics and (prompts so far -> (reply, pictures sent)) for every turn."""
    db = tmp_path / "commet.sqlite"
    result = CliRunner().invoke(app, ["eval", "--model", model, "--db", str(db), "--run", "ref", "--quiet", *extra])
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        run = select_runs(store, ["ref"])[0]
        metrics = run_metrics(store, run)
        metrics.figures = paper_figures(store, run)  # type: ignore[attr-defined]
        metrics.counts = load_run(store, run).counts  # type: ignore[attr-defined]
        replies: dict[tuple[str, ...], tuple[str, int]] = {}
        prompts: dict[str, list[str]] = {}
        for row in store.turn_rows(run.id):
            so_far = prompts.setdefault(row.story_id, [])
            so_far.append(row.prompt)
            replies[tuple(so_far)] = (row.response, len(row.images))
    return metrics, replies


def images_in(message) -> int:  # noqa: ANN001 - an inspect ChatMessage
    return sum(1 for part in message.content if part.type == "image") if isinstance(message.content, list) else 0


def replaying(replies: dict[tuple[str, ...], tuple[str, int]]):  # noqa: ANN201 - a mockllm custom_outputs callable
    """Inspect's mock model answering each conversation as the CoMMET run did; an unseen one fails the run."""

    def reply(messages, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        key = tuple(m.text for m in messages if m.role == "user")
        if key not in replies:
            raise AssertionError(f"inspect sent a conversation commet eval never sent: {key[-1][:80]!r}")
        text, pictures = replies[key]
        if images_in(messages[-1]) != pictures:
            raise AssertionError(f"{images_in(messages[-1])} pictures where commet eval sent {pictures}")
        return output(text)

    return reply


@pytest.mark.parametrize("feedback", ["original", "correctness"])
def test_reproduces_commet_eval_on_the_sample(tmp_path: Path, feedback: str) -> None:
    replay = tmp_path / "replies.json"  # right, wrong, undecided and stopped stories, as a model gives them
    replay.write_text(json.dumps(mixed_outcome_replies(load_dataset("sample"))))
    metrics, replies = commet_run(tmp_path, f"replay:{replay}", "--feedback", feedback)
    assert 0 < metrics.stories.correct < metrics.stories.total  # a discriminating reference: some right, some wrong
    assert metrics.stopped_stories > 0  # and some stopped at an undecided answer (counted not right, in both)
    model = get_model("mockllm/model", custom_outputs=replaying(replies), memoize=False)
    [log] = inspect_eval(storyturns(dataset="sample", feedback=feedback), model=model, log_dir=str(tmp_path / "logs"),
                         display="none", max_samples=4)
    assert log.status == "success", log.error
    scores = {s.name: s for s in log.results.scores}["story_accuracy"].metrics
    assert scores["overall"].value == pytest.approx(metrics.stories.correct / metrics.stories.total)
    counts = metrics.counts  # every output's counts (commet.engine.outcome.count_run)
    assert scores["stopped"].value == metrics.stopped_stories == counts.stopped
    assert scores["undecided"].value == counts.of(StoryOutcome.undecided) > 0
    figures = {name: metric.value for name, metric in scores.items() if name not in ("stopped", "undecided")}
    assert figures == pytest.approx(metrics.figures)  # both ends of every range, Tables 1 and 2 apart
    assert figures["overall (undecided right)"] > figures["overall"]  # the sample's ranges are real ranges
    assert "text-complete Percept" in figures and "image-dependent Percept" in figures  # never pooled
    assert not any(name in figures for name in metrics.per_category)  # no pooled category figure
    samples = read_eval_log(log.location).samples
    assert len(samples) == metrics.stories.total
    # inspect view shows each sample's outcome as the report counts it: undecided and stopped are not incorrect
    shown = Counter(s.scores["story_accuracy"].value for s in samples)
    assert shown == {value: counts.of(outcome) for outcome, value in SCORE_VALUES.items() if counts.of(outcome)}
    right = sum(s.scores["story_accuracy"].metadata["questions_right"] for s in samples)
    undecided = sum(s.scores["story_accuracy"].metadata["undecided"] for s in samples)
    assert (right, undecided) == (metrics.questions.correct, metrics.undecided_turns)
    assert sum(len(s.messages) for s in samples) > 2 * metrics.questions.total  # system + user/assistant per turn


def test_llm_judge_through_the_grader_role(tmp_path: Path) -> None:
    """Replies the rules cannot decide go to CoMMET's LLM judge, run by inspect's `grader` model role."""
    asked: list[str] = []

    def grader(messages, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        asked.append(messages[-1].text)
        return output(json.dumps({"verdict": "incorrect", "matched_answer": None, "reason": "it does not answer"}))

    candidate = get_model("mockllm/model", custom_outputs=lambda *a: output("Let me think about the story a little more."),
                          memoize=False)
    [log] = inspect_eval(storyturns(dataset="sample", judge="grader", limit=2), model=candidate,
                         model_roles={"grader": get_model("mockllm/model", custom_outputs=grader, memoize=False)},
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    turns = [t for s in read_eval_log(log.location).samples for t in s.scores["story_accuracy"].metadata["turns"]]
    assert asked and len(asked) == len(turns)  # every undecidable reply went to the grader
    assert all(t["judge"].startswith("llm:inspect:") and t["correct"] is False for t in turns)
    assert "Let me think about the story" in asked[0]  # CoMMET's judge prompt carries the reply


def test_pictures_only_where_needed(tmp_path: Path) -> None:
    """`-T images=needed`: pictures only in image-dependent StoryTurns (with `on`, the test above checks each turn)."""
    seen: list[int] = []

    def count_images(messages, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        seen.append(images_in(messages[-1]))
        return output("I do not know.")

    model = get_model("mockllm/model", custom_outputs=count_images, memoize=False)
    [log] = inspect_eval(storyturns(dataset="sample", images="needed", undecided_feedback="wrong"), model=model,
                         log_dir=str(tmp_path / "needed"), display="none")
    assert log.status == "success"
    from commet.sources import load_dataset

    sample = load_dataset("sample")
    assert 0 < sum(seen) == sum(len(st.images) for st in sample if st.image_dependent) < sum(len(st.images) for st in sample)


def test_inspect_command_line_runs_offline_with_a_commet_model(tmp_path: Path) -> None:
    """`inspect eval commet/storyturns --model commet/baseline:first-option` as docs/inspect.md shows it: the task
    found through the package's entry point, no network (proxies to a closed port, an empty tiktoken cache), the
    same figures as `commet eval`."""
    metrics, _ = commet_run(tmp_path, "baseline:first-option", "--images", "needed")
    dist = tmp_path / "site" / "commet_bench_ep-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: commet-bench-ep\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[inspect_ai]\ncommet = commet.integrations.inspect_task\n")
    env = {"PYTHONPATH": f"{SRC}:{tmp_path / 'site'}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "INSPECT_LOG_DIR": str(tmp_path / "logs"), "TIKTOKEN_CACHE_DIR": str(tmp_path / "no-tables"),
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "",
           "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "commet/storyturns", "-T", "dataset=sample",
                           "-T", "images=needed", "--model", "commet/baseline:first-option", "--display", "none"],
                          capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    [location] = list((tmp_path / "logs").glob("*.eval"))
    log = read_eval_log(str(location))
    assert log.eval.task == "commet/storyturns"  # found through the entry point, under its registered name
    assert log.status == "success" and len(log.samples) == metrics.stories.total
    scores = log.results.scores[0].metrics
    assert {n: m.value for n, m in scores.items() if n not in ("stopped", "undecided")} == pytest.approx(metrics.figures)
    assert scores["stopped"].value == metrics.stopped_stories
    assert not (tmp_path / "no-tables").exists()  # no tokenizer table was fetched


def test_import_commet_does_not_import_inspect() -> None:
    code = ("import sys, commet, commet.cli, commet.format, commet.engine, commet.integrations; "
            "print('inspect_ai' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_the_task_takes_a_hub_dataset_and_a_column_mapping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")  # the datasets extra (the floors job runs this file without it)

    from tests import hub_fixtures

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    folder = hub_fixtures.layout_b(tmp_path / "release", columns={"question": "prompt_text"})
    task = storyturns(dataset=f"hf:{folder}", columns="question=prompt_text", limit=5)
    assert len(task.dataset) == 5
    assert task.metadata["commet_dataset_columns"] == "question=prompt_text"
    assert task.metadata["commet_dataset_layout"].startswith("layout (b)")
    with pytest.raises(Exception, match="cannot tell which columns"):
        storyturns(dataset=f"hf:{folder}")
