"""`commet generate llm` against real local HTTP servers speaking the chat and image wire formats."""

from __future__ import annotations

import base64
import io
import json
import sys
from pathlib import Path

import pytest
import typer
from PIL import Image
from typer.testing import CliRunner

from commet.cli.generate_llm import register_into
from commet.format import Feedback, StoryTurn, Turn, validate_dataset
from commet.format.validate import has_errors
from commet.generation.llm import GenerationOptions, create_image_model, generate_storyturns, lint_storyturn
from commet.generation.llm.parse import ReplyError, parse_reply
from commet.models.base import ModelCallError, ModelSpecError, UnknownModelError
from commet.models.registry import create_model
from commet.sources import load_dataset
from commet.taxonomy import get_task
from tests.fakeservers import FakeServer, Reply, google_reply, openai_reply
from tests.llm_gen_servers import gemini_image_reply, openai_image_reply, small_png

GOOD = {
    "task": "diverse_desire", "image_dependent": False, "mental_states": ["desire"],
    "turns": [
        {"story": "Meet Lila. It is play time! On the rug there is a red kite and a wooden train.", "feedback": None,
         "question": "Which toy do you like best, the kite or the train?", "answers": ["Kite", "Train"],
         "picture": {"segment": "On the rug there is a red kite and a wooden train.",
                     "scene": "A girl sits on a rug; a red kite lies on her left, a wooden train on her right."}},
        {"story": "You do? That is great! But look, Lila likes the other toy better.", "feedback": None,
         "question": "So which toy will Lila pick, the kite or the train?", "answers": ["Train", "Kite"],
         "picture": None},
    ],
}
EXEMPLAR = {
    "id": "dd-1", "task": "diverse_desire", "category": "Desire", "image_dependent": False,
    "storyturn": [
        "Meet Kim. It is snack time! There is a ripe pear and a warm cookie. | | Which snack do you like best, "
        "the pear or the cookie? | snack:table:1 | Pear; Cookie",
        "You do? That is great! But look, Kim likes the other snack better. | | So which snack will Kim pick, the "
        "pear or the cookie? | | Cookie; Pear",
    ],
}
#: The paper's main textual defect: feedback placed in the same turn as its answer.
BAD = {**GOOD, "turns": [{**GOOD["turns"][0], "feedback": {"right": "Well done!", "wrong": "Try again."}},
                         GOOD["turns"][1]]}


@pytest.fixture
def exemplars(tmp_path: Path) -> Path:
    """A dataset folder holding one exemplar in the pipe format, with its picture."""
    source = tmp_path / "src.jsonl"
    source.write_text(json.dumps(EXEMPLAR) + "\n")
    dataset = load_dataset(source)
    dataset.images["snack_table_1.png"] = small_png()
    return dataset.save(tmp_path / "exemplars")


def _is_png(data: bytes) -> bool:
    with Image.open(io.BytesIO(data)) as image:
        return image.format == "PNG" and image.size == (96, 72)


async def test_openai_chat_and_images_end_to_end(exemplars: Path, tmp_path: Path) -> None:
    png = small_png()
    with FakeServer("openai") as chat, FakeServer("openai", lambda r: openai_image_reply(png)) as images:
        chat.queue(openai_reply(json.dumps(BAD)), openai_reply("```json\n" + json.dumps(GOOD) + "\n```"))
        model = create_model(f"openai:gen-test?base_url={chat.url}/v1")
        painter = create_image_model(f"openai:gpt-image-1?base_url={images.url}/v1&size=1024x1024")
        report = await generate_storyturns(model, painter, load_dataset(exemplars),
                                           GenerationOptions(task="diverse_desire", count=1, seed=7))
        await model.aclose()
        await painter.aclose()

    assert not report.failures
    item = report.items[0]
    assert item.attempts == 2  # the first reply put feedback on the first turn and was sent back for repair
    first = chat.requests[0].json
    assert chat.requests[0].path == "/v1/chat/completions" and first["seed"] == 8
    prompt = first["messages"][1]["content"]
    assert "diverse_desire" in prompt and "Meet Kim" in prompt  # one-shot: the exemplar, in the reply's JSON shape
    repair = chat.requests[1].json["messages"]
    assert repair[2]["role"] == "assistant" and "feedback" in repair[3]["content"] and "first turn" in repair[3]["content"]

    assert images.requests[0].path == "/v1/images/generations"
    body = images.requests[0].json
    assert body["model"] == "gpt-image-1" and body["n"] == 1 and "response_format" not in body
    assert "On the rug there is a red kite and a wooden train." in body["prompt"]  # the chosen segment
    assert "no text" in body["prompt"].lower()

    st = item.storyturn
    assert st.id == "llm-diverse_desire-0001" and st.category == "Desire" and st.source == "llm:openai:gen-test"
    assert st.turns[0].image == "llm-diverse_desire-0001_1.png" and st.turns[1].answers == ["Train", "Kite"]
    assert st.meta["generator"]["exemplar"] == "dd-1" and st.meta["image_prompts"][st.turns[0].image] == body["prompt"]

    dataset, problems = __import__("commet.generation.llm", fromlist=["x"]).write_generated(tmp_path / "out", report)
    assert not has_errors(problems), problems
    assert _is_png((tmp_path / "out" / "images" / "llm-diverse_desire-0001_1.png").read_bytes())
    assert dataset.get(st.id).meta["lint"] == []
    log = [json.loads(line) for line in (tmp_path / "out" / "generation.jsonl").read_text().splitlines()]
    assert log[0]["attempts"] == 2 and len(log[0]["transcript"]) == 5


async def test_gemini_chat_and_image_generation(exemplars: Path) -> None:
    png = small_png((200, 60, 60))
    with FakeServer("google", lambda r: google_reply(json.dumps(GOOD))) as chat, \
            FakeServer("google", lambda r: gemini_image_reply(png)) as images:
        model = create_model(f"google:gemini-test?base_url={chat.url}")
        painter = create_image_model(f"google:gemini-img?base_url={images.url}&aspect_ratio=4:3")
        report = await generate_storyturns(model, painter, load_dataset(exemplars),
                                           GenerationOptions(task="diverse_desire", count=2, concurrency=2))
        await model.aclose()
        await painter.aclose()
    assert [i.storyturn.id for i in report.items] == ["llm-diverse_desire-0001", "llm-diverse_desire-0002"]
    assert len(images.requests) == 2 and images.requests[0].path.endswith("/models/gemini-img:generateContent")
    body = images.requests[0].json
    assert body["generationConfig"]["responseModalities"] == ["TEXT", "IMAGE"]
    assert body["generationConfig"]["imageConfig"]["aspectRatio"] == "4:3"
    assert "wooden train" in body["contents"][0]["parts"][0]["text"]
    picture = report.items[0].images["llm-diverse_desire-0001_1.png"]
    with Image.open(io.BytesIO(picture)) as image:
        assert image.getpixel((48, 36)) == (200, 60, 60)


async def test_failures_are_reported_not_raised(exemplars: Path) -> None:
    with FakeServer("openai", lambda r: openai_reply("Sorry, I cannot do that.")) as chat, \
            FakeServer("openai", lambda r: Reply(body={"data": [{"b64_json": base64.b64encode(b"nope").decode()}]})) as images:
        model = create_model(f"openai:gen?base_url={chat.url}/v1")
        painter = create_image_model(f"openai:img?base_url={images.url}/v1&max_attempts=1")
        report = await generate_storyturns(model, painter, load_dataset(exemplars),
                                           GenerationOptions(task="diverse_desire", attempts=2))
        assert "no JSON object" in report.failures[0].error and len(chat.requests) == 2
        with pytest.raises(ModelCallError, match="not a picture"):
            await painter.generate("a cat")
        await model.aclose()
        await painter.aclose()


def test_cli_generates_a_valid_dataset(exemplars: Path, tmp_path: Path) -> None:
    generate = typer.Typer()
    register_into(generate)
    generate.command("noop")(lambda: None)  # two commands keep `llm` a named subcommand
    out = tmp_path / "generated"
    with FakeServer("openai", lambda r: openai_reply(json.dumps(GOOD))) as chat, \
            FakeServer("openai", lambda r: openai_image_reply(small_png())) as images:
        args = ["llm", "--model", f"openai:m?base_url={chat.url}/v1", "--image-model",
                f"openai:dall-e-3?base_url={images.url}/v1", "--task", "diverse_desire", "--count", "2",
                "--out", str(out), "--exemplars", str(exemplars)]
        result = CliRunner().invoke(generate, args)
        assert result.exit_code == 0, result.output
        assert images.requests[0].json["response_format"] == "b64_json"  # dall-e models need it asked for
        again = CliRunner().invoke(generate, args[:-4] + ["--count", "1", "--out", str(out), "--exemplars",
                                                          str(exemplars)])
        assert again.exit_code == 0, again.output
    dataset = load_dataset(out)
    assert [st.id for st in dataset] == [f"llm-diverse_desire-000{n}" for n in (1, 2, 3)]
    assert not has_errors(validate_dataset(dataset))
    missing = CliRunner().invoke(generate, ["llm", "--model", "openai:m?base_url=http://127.0.0.1:9/v1",
                                            "--image-model", "openai:i?base_url=http://127.0.0.1:9/v1",
                                            "--task", "sarcasm", "--out", str(tmp_path / "x"),
                                            "--exemplars", str(exemplars)])
    assert missing.exit_code == 2 and "no exemplar of task 'sarcasm'" in missing.output


def test_image_specs_fail_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY"):
        create_image_model("openai:gpt-image-1")
    monkeypatch.setitem(sys.modules, "diffusers", None)  # as if the optional extra were not installed
    with pytest.raises(ModelSpecError, match="pip install diffusers"):
        create_image_model("diffusers:stabilityai/sd-turbo")
    with pytest.raises(UnknownModelError, match="unknown image provider"):
        create_image_model("midjourney:v6")
    with pytest.raises(UnknownModelError, match=r"unknown image provider 'googel' \(did you mean 'google'\?\) in"):
        create_image_model("googel:gemini-2.5-flash-image")


def test_image_specs_share_the_chat_models_option_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-images-000")
    with pytest.raises(ModelSpecError, match=r"unknown option\(s\) 'qualty' \(did you mean 'quality'\?\)"):
        create_image_model("openai:gpt-image-1?qualty=high")
    # token budgets and token prices do not apply to pictures: refused, never silently ignored
    for option in ("tpm=1000", "price_in=1", "price_out=2"):
        with pytest.raises(ModelSpecError, match=f"option {option.split('=')[0]} does not apply to picture models"):
            create_image_model(f"openai:gpt-image-1?{option}")
    with pytest.raises(ModelSpecError, match="2 problems"):  # every problem at once
        create_image_model("openai:gpt-image-1?tpm=1&bogus=2")
    with pytest.raises(ModelSpecError, match="must look like provider:name"):
        create_image_model("openai:")


async def test_image_model_keeps_its_requests_per_minute() -> None:
    """rpm=120 is two pictures a second: after the bucket's one-second burst (two pictures), one every 0.5 s."""
    import time

    png = small_png()
    arrivals: list[float] = []

    def reply(request: object) -> Reply:
        arrivals.append(time.monotonic())
        return openai_image_reply(png)

    with FakeServer("openai", reply) as images:
        painter = create_image_model(f"openai:gpt-image-1?base_url={images.url}/v1&rpm=120&api_key_env=NO_SUCH_KEY_ENV")
        try:
            pictures = [await painter.generate(f"picture {i}") for i in range(4)]
        finally:
            await painter.aclose()
    assert all(picture.startswith(b"\x89PNG") for picture in pictures)
    gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[1:], strict=False)]
    # arrivals are stamped by the server's thread, so a loaded machine moves each by tens of milliseconds
    # either way: the spacing holds within that, and without the limit every gap would be about 0
    assert len(arrivals) == 4 and all(gap >= 0.3 for gap in gaps[1:]), gaps
    assert arrivals[-1] - arrivals[0] >= 0.9, gaps


def test_reply_parsing_errors_are_specific() -> None:
    task = get_task("diverse_desire")
    with pytest.raises(ReplyError, match=r"turns\[1\].answers"):
        parse_reply(json.dumps({**GOOD, "turns": [GOOD["turns"][0], {**GOOD["turns"][1], "answers": []}]}),
                    task=task, story_id="x", source="t")
    parsed = parse_reply("Sure! Here it is: " + json.dumps({**GOOD, "image_dependent": True}), task=task,
                         story_id="x", source="t")
    assert parsed.storyturn.image_dependent and parsed.pictures[0].turn == 0


def _st(task: str, turns: list[Turn]) -> StoryTurn:
    return StoryTurn(id="s", task=task, category="Desire", turns=turns)


def test_lint_finds_the_papers_text_defects() -> None:
    same_turn = _st("false_belief_location", [
        Turn(story="Ana puts her ball in the basket and goes out. Ben moves it to the box.",
             question="Where will Ana look for her ball?", answers=["The basket"]),
        Turn(story="If you said the basket, well done!", question="Why?", answers=["She did not see Ben move it"],
             feedback=Feedback(by_answer=[])),
    ])
    codes = {(f.code, f.turn, f.field) for f in lint_storyturn(same_turn)}
    assert ("feedback_same_turn", 1, "story") in codes

    keyed_to_itself = _st("false_belief_location", [
        Turn(story="Ana puts her ball in the basket and goes out.", question="Where is the ball?",
             answers=["The basket"]),
        Turn(story="Ben moves it to the box.", question="Did Ana see that?", answers=["No"],
             feedback=Feedback(by_answer=[{"answer": "No", "text": "Right, she was outside."}])),
    ])
    assert ("feedback_same_turn", 1, "feedback") in {(f.code, f.turn, f.field) for f in lint_storyturn(keyed_to_itself)}
    first_turn = _st("false_belief_location", [Turn(question="Where?", answers=["Box"], feedback=Feedback(right="Yes"))])
    assert lint_storyturn(first_turn)[0].severity == "error"

    reveal = _st("false_belief_location", [
        Turn(story="Ana puts her ball in the basket and goes out. Ben moves the ball to the box. Ana will look for "
                   "her ball in the basket, because she did not see Ben move the ball to the box.",
             question="Where will Ana look for her ball?", answers=["the basket"]),
        Turn(story="", question="Why will she look there?",
             answers=["Because she did not see Ben move the ball to the box"]),
    ])
    found = [f for f in lint_storyturn(reveal) if f.code == "reveals_answer"]
    assert [f.turn for f in found] == [0, 1]

    options_only = _st("diverse_desire", [
        Turn(story="Sam will pick a snack: an apple or a cookie.", question="Which do you like, the apple or the "
             "cookie?", answers=["Apple", "Cookie"]),
        Turn(story="Sam likes the other snack.", question="Which will Sam pick?", answers=["Cookie", "Apple"]),
    ])
    assert lint_storyturn(options_only) == []


def test_lint_finds_items_of_another_task() -> None:
    labelled_non_sarcasm = _st("non_sarcasm", [
        Turn(story="Mia asked for strawberry ice cream but got mint, which she hates. She rolled her eyes and said "
                   "in a flat voice: 'Mmm, my favourite.'", question="Why did Mia say that?",
             answers=["She did not mean it; she is upset"]),
        Turn(story="", question="Is Mia happy or sad?", answers=["Sad"]),
    ])
    assert any(f.code == "other_task" and "sarcasm" in f.message for f in lint_storyturn(labelled_non_sarcasm))
    common_shape = _st("diverse_desire", [
        Turn(story="There is a pear and a cookie.", question="Which do you like, the pear or the cookie?",
             answers=["Pear", "Cookie"]),
        Turn(story="Kim likes the same one.", question="Which will Kim pick?", answers=["Pear", "Cookie"]),
    ])
    assert [f.severity for f in lint_storyturn(common_shape) if f.code == "other_task"] == ["error"]
    declared = lint_storyturn(_st("diverse_desire", [Turn(question="q", answers=["a", "b"])]), "common_desire")
    assert declared[0].code == "other_task" and declared[0].severity == "error"
