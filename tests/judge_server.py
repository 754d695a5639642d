"""A judge model on 127.0.0.1 speaking the OpenAI chat completions wire format, for the judge tests.

Built on :class:`tests.fakeservers.FakeServer`. The test decides each verdict with a
``decide(model, answer, expected, question) -> str`` function returning the raw reply text
(usually :func:`verdict`), scripts odd replies first with ``server.fake.queue(...)``, and
reads ``calls`` to count requests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from commet.format.dataset import Dataset
from commet.sources import load_dataset
from tests.fakeservers import FakeServer, RecordedRequest, Reply, openai_reply

Decide = Callable[[str, str, list[str], str], str]

_ANSWER = re.compile(r"Answer to grade:\n<<<\n(.*)\n>>>", re.DOTALL)
_EXPECTED = re.compile(r"Expected answer\(s\):\n(.*?)\n\n(?:Several|Grading rubric|Pictures|Answer to grade)", re.DOTALL)
_QUESTION = re.compile(r"Question:\n(.*?)\n\n(?:Options shown|Expected)", re.DOTALL)


def prompt_text(content: str | list[dict]) -> str:
    """The text of a chat message's content: a string, or the text parts of a list (pictures attached)."""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part.get("type") == "text")


def verdict(correct: bool, matched: int | None = None, reason: str = "because the test says so") -> str:
    """A well-formed verdict reply (``matched`` is 1-based, as the prompt asks)."""
    return json.dumps({"verdict": "correct" if correct else "incorrect", "matched_answer": matched, "reason": reason})


class JudgeServer:
    """``with JudgeServer(decide) as server: server.spec("judge-a") ... server.calls``."""

    def __init__(self, decide: Decide):
        self.decide = decide
        self.fake = FakeServer("openai", responder=self._respond)

    def _respond(self, request: RecordedRequest) -> Reply:
        body = request.json
        # the first user message is the grading request; later ones are retry prompts
        prompt = prompt_text(next(m["content"] for m in body["messages"] if m["role"] == "user"))
        answer = _ANSWER.search(prompt)
        expected = _EXPECTED.search(prompt)
        question = _QUESTION.search(prompt)
        assert answer and expected and question, prompt
        items = [re.sub(r"^\d+\. ", "", line) for line in expected.group(1).splitlines()]
        return openai_reply(self.decide(body["model"], answer.group(1), items, question.group(1)), model=body["model"])

    @property
    def calls(self) -> int:
        return len(self.fake.requests)

    def models_called(self) -> list[str]:
        return [r.json["model"] for r in self.fake.requests]

    def spec(self, model: str = "judge-model") -> str:
        return f"openai:{model}?base_url={self.fake.url}/v1"

    def __enter__(self) -> JudgeServer:
        self.fake.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.fake.stop()


#: Two small stories: a false belief with "why" questions and right/wrong feedback, and a
#: diverse desire with a branch point, answer-keyed feedback and a "why" question.
STORIES = [
    {"id": "fb", "task": "implicit_false_belief", "category": "Belief", "turns": [
        {"story": "Jonah puts his ball in the shed and goes in for lunch. Bea moves it to the garage. "
                  "Jonah does not see her.",
         "question": "Where will Jonah look for his ball, the shed or the garage?", "answers": ["The shed"]},
        {"question": "Why will he look there?",
         "answers": ["Because he left it in the shed and did not see Bea move it."]},
        {"feedback": {"right": "That's right, he did not see.", "wrong": "Remember, Jonah did not see Bea."},
         "question": "Will Jonah find his ball there?", "answers": ["No"]},
    ]},
    {"id": "dd", "task": "diverse_desire", "category": "Desire", "turns": [
        {"story": "Sam may have one snack: an apple or a chocolate bar.",
         "question": "Which snack do you like best, the apple or the chocolate?", "answers": ["Apple", "Chocolate"]},
        {"story": "Sam likes the other snack better.",
         "feedback": {"by_answer": [{"answer": "Apple", "text": "You like the apple!"},
                                    {"answer": "Chocolate", "text": "You like the chocolate!"}]},
         "question": "So which snack will Sam pick, the apple or the chocolate?", "answers": ["Chocolate", "Apple"]},
        {"feedback": {"right": "That's right, Sam picks the other one.", "wrong": "Remember, Sam likes the other one."},
         "question": "Why will Sam pick that one?", "answers": ["Because Sam likes a different snack from you."]},
    ]},
]

#: Candidate answers: in each story the rules judge decides turns 0 and 1 (and fb's yes/no turn 2);
#: the "why" answers need an LLM judge.
REPLIES = {
    "fb": ["The shed.", "He never saw his sister move it, so he thinks it is still in the shed.",
           "No, he will not."],
    "dd": ["I like the apple best.", "Sam will pick the chocolate.", "Because Sam has different taste than me."],
}


def write_dataset(folder: Path) -> Dataset:
    """The two stories as a dataset folder, loaded back (so its hash is the one a CLI run sees)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "storyturns.jsonl").open("w", encoding="utf-8") as out:
        for story in STORIES:
            out.write(json.dumps(story) + "\n")
    return load_dataset(folder)


def write_replies(path: Path, replies: dict[str, list[str]] | None = None) -> str:
    """A replay file; returns its model spec."""
    path.write_text(json.dumps(replies or REPLIES), encoding="utf-8")
    return f"replay:{path}"
