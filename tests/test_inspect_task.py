"""The inspect_ai task `commet/storyturns`: offline with inspect's mock model, against `commet eval`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval  # the test extra includes commet-bench[inspect]
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from typer.testing import CliRunner

from commet.cli import app
from commet.integrations.inspect_task import storyturns
from commet.reports.metrics import run_metrics, select_runs
from commet.store import Store

SRC = Path(__file__).resolve().parents[1] / "src"


def output(text: str) -> ModelOutput:
    """A mock reply with its usage given (else mockllm counts tokens with tiktoken, which downloads its tables)."""
    reply = ModelOutput.from_content(model="mockllm", content=text)
    reply.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return reply


def commet_run(tmp_path: Path, model: str, *extra: str):
    """`commet eval` on the sample: its metrics and (prompts so far -> (reply, pictures sent)) for every turn."""
    db = tmp_path / "commet.sqlite"
    result = CliRunner().invoke(app, ["eval", "--model", model, "--db", str(db), "--run", "ref", "--quiet", *extra])
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        run = select_runs(store, ["ref"])[0]
        metrics = run_metrics(store, run)
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
    metrics, replies = commet_run(tmp_path, "baseline:first-option", "--feedback", feedback)
    assert 0 < metrics.stories.correct < metrics.stories.total  # a discriminating reference: some right, some wrong
    assert metrics.stopped_stories > 0  # and some stopped at an undecided answer (counted not right, in both)
    model = get_model("mockllm/model", custom_outputs=replaying(replies), memoize=False)
    [log] = inspect_eval(storyturns(dataset="sample", feedback=feedback), model=model, log_dir=str(tmp_path / "logs"),
                         display="none", max_samples=4)
    assert log.status == "success", log.error
    scores = {s.name: s for s in log.results.scores}["story_accuracy"].metrics
    assert scores["overall"].value == pytest.approx(metrics.stories.correct / metrics.stories.total)
    assert scores["stopped"].value == metrics.stopped_stories
    for category, tally in metrics.per_category.items():
        assert scores[category].value == pytest.approx(tally.correct / tally.total), category
    samples = read_eval_log(log.location).samples
    assert len(samples) == metrics.stories.total
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
    from commet.format import load_dataset

    sample = load_dataset("sample")
    assert 0 < sum(seen) == sum(len(st.images) for st in sample if st.image_dependent) < sum(len(st.images) for st in sample)


def test_registered_name_entry_point_and_cli(tmp_path: Path) -> None:
    """`inspect eval commet/storyturns -T dataset=sample` finds the task through the entry point and logs it."""
    dist = tmp_path / "site" / "commet_bench_ep-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: commet-bench-ep\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[inspect_ai]\ncommet = commet.integrations.inspect_task\n")
    # inspect's own command line; only mockllm's token estimate is replaced (it would download tiktoken's tables)
    driver = tmp_path / "inspect_offline.py"
    driver.write_text("import sys\nfrom inspect_ai.model._providers.mockllm import MockLLM\n\n\n"
                      "async def count_text_tokens(self, text):\n    return max(1, len(text) // 4)\n\n\n"
                      "MockLLM.count_text_tokens = count_text_tokens\n"
                      "from inspect_ai._cli.main import main\n\nsys.argv[0] = 'inspect'\nmain()\n")
    env = {"PYTHONPATH": f"{SRC}:{tmp_path / 'site'}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "INSPECT_LOG_DIR": str(tmp_path / "logs")}
    done = subprocess.run([sys.executable, str(driver), "eval", "commet/storyturns", "-T", "dataset=sample",
                           "-T", "limit=3", "-T", "undecided_feedback=wrong", "--model", "mockllm/model", "--display", "none"],
                          capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    [location] = list((tmp_path / "logs").glob("*.eval"))
    log = read_eval_log(str(location))
    assert log.eval.task == "commet/storyturns" and log.status == "success"
    metrics = log.results.scores[0].metrics
    assert len(log.samples) == 3 and metrics["overall"].value == 0.0 and metrics["stopped"].value == 0


def test_import_commet_does_not_import_inspect() -> None:
    code = ("import sys, commet, commet.cli, commet.format, commet.engine, commet.integrations; "
            "print('inspect_ai' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
