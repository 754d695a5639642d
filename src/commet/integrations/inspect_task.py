"""The inspect_ai task ``commet/storyturns``: CoMMET's StoryTurn protocol inside inspect.

``pip install -e '.[inspect]'`` (in a clone) registers this module under inspect's ``inspect_ai``
entry point, so ``inspect eval commet/storyturns -T dataset=sample --model openai/gpt-4o``
runs every StoryTurn as one conversation: feedback chosen by the previous answer
(:func:`~commet.engine.conversation.open_turn`), messages composed by
:func:`~commet.engine.conversation.user_text`, each reply judged online by a CoMMET judge
(:func:`~commet.engine.conversation.judge_request`) and the story's branch rules applied
(:func:`~commet.engine.conversation.apply_branch_rules`), exactly as ``commet eval`` does. The
scorer reports story accuracy (all-or-nothing), overall and per category, in a normal inspect
log; each sample's score metadata keeps the per-turn verdicts.

Judges: ``-T judge=rules`` (default), ``-T judge=grader`` (rules first, the rest by an LLM judge
with CoMMET's prompt, through inspect's model role ``grader``: ``--model-role grader=openai/gpt-4o``),
``-T judge=role:NAME`` for another role, or any ``commet eval --judge`` spec.

Only inspect loads this module; ``import commet`` never imports inspect_ai.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TypeVar

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    get_model,
)
from inspect_ai.model import Model as InspectModel
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    metric,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import registry_info

from commet.conditions import FeedbackCondition, ImagePolicy, JudgeImages, UndecidedFeedback
from commet.engine.conversation import (
    PreviousOutcome,
    apply_branch_rules,
    judge_request,
    open_turn,
    user_text,
)
from commet.engine.outcome import StoryOutcome, story_outcome
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn
from commet.integrations.inspect_models import CURRENT_TURN
from commet.judges.base import Judge
from commet.models.base import ImagePart, Message, Model, ModelRequest, ModelResponse, Usage
from commet.sources.loading import load_dataset
from commet.store.records import StoryStatus
from commet.store.settings import DEFAULT_SYSTEM_PROMPT
from commet.taxonomy import CATEGORIES, TABLE1_CATEGORIES, TABLE2_CATEGORIES

SUBSETS = ("text-complete", "image-dependent")  # the paper's Table 1 and Table 2, never pooled

Choice = TypeVar("Choice", ImagePolicy, FeedbackCondition, UndecidedFeedback, JudgeImages)


def _choice(kind: type[Choice], name: str, value: str) -> Choice:
    """A task argument (``-T images=on`` arrives as a string) as its enum, or one clear error naming it."""
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"storyturns: {name} must be one of {', '.join(c.value for c in kind)}, "
                         f"not {value!r}") from None


#: Generation defaults of ``commet eval`` (inspect's own --temperature / --max-tokens override them).
DEFAULT_CONFIG = GenerateConfig(temperature=0.0, max_tokens=512)


@dataclass(frozen=True)
class TurnRecord:
    """One judged turn, kept in the score's metadata (what ``commet eval`` stores per turn)."""

    turn: int
    prompt: str
    feedback_kind: str
    response: str
    outcome: str
    correct: bool | None
    branch: int | None
    active_branch: int | None
    judge: str
    rationale: str


class InspectRoleModel(Model):
    """An inspect model (a model role) seen through CoMMET's model interface, for CoMMET's LLM judge."""

    def __init__(self, model: InspectModel, role: str):
        self.model = model
        self.spec = f"inspect:{model}"
        self.role = role

    def identity(self) -> dict[str, object]:
        return {"spec": self.spec, "role": self.role}

    async def generate(self, request: ModelRequest) -> ModelResponse:
        output = await self.model.generate(
            [_chat_message(message) for message in request.messages],
            config=GenerateConfig(temperature=request.settings.temperature, max_tokens=request.settings.max_tokens,
                                  seed=request.settings.seed))
        usage = output.usage
        return ModelResponse(output.completion,
                             Usage(usage.input_tokens, usage.output_tokens) if usage is not None else Usage(),
                             finish_reason=output.stop_reason)


def _chat_message(message: Message) -> ChatMessage:
    text = message.text_content
    if message.role == "system":
        return ChatMessageSystem(content=text)
    if message.role == "assistant":
        return ChatMessageAssistant(content=text)
    images = message.images
    if not images:
        return ChatMessageUser(content=text)
    return ChatMessageUser(content=[ContentText(text=text), *(_image(image) for image in images)])


def _image(image: ImagePart) -> ContentImage:
    return ContentImage(image=f"data:{image.mime};base64,{image.base64}")


def create_judge(spec: str) -> Judge:
    """``rules``, ``grader`` / ``role:NAME`` (rules, then CoMMET's LLM judge on an inspect model role) or a CoMMET spec."""
    from commet.judges.cascade import CascadeJudge
    from commet.judges.llm import LLMJudge
    from commet.judges.registry import create_judge as create_commet_judge

    role = "grader" if spec == "grader" else spec.removeprefix("role:") if spec.startswith("role:") else None
    if role is None:
        return create_commet_judge(spec)
    return CascadeJudge(LLMJudge(InspectRoleModel(get_model(role=role, required=True), role)))


@solver
def storyturn_protocol(dataset: Dataset, images: ImagePolicy = ImagePolicy.on,
                       feedback: FeedbackCondition = FeedbackCondition.original,
                       judge: str = "rules", system_prompt: str = DEFAULT_SYSTEM_PROMPT,
                       undecided_feedback: UndecidedFeedback = UndecidedFeedback.STOP,
                       judge_images: JudgeImages = JudgeImages.NEEDED) -> Solver:
    """Runs one StoryTurn per sample as CoMMET's engine does, judging each reply before the next turn."""
    stories = {st.id: st for st in dataset}
    pictures: dict[str, ImagePart] = {}

    def picture(image_id: str) -> ImagePart:
        if image_id not in pictures:  # the engine's size and format policy, applied once per picture
            from commet.models.images import prepared_picture

            data, mime = prepared_picture(dataset.image_bytes(image_id), max_side=1024, fmt="png")
            pictures[image_id] = ImagePart(data=data, mime=mime, image_id=image_id)
        return pictures[image_id]

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        storyturn: StoryTurn = stories[str(state.sample_id)]
        the_judge = create_judge(judge)
        show = images.shows_pictures(storyturn.image_dependent)
        judge_sees = judge_images is JudgeImages.ON or (judge_images is JudgeImages.NEEDED
                                                        and storyturn.image_dependent)
        state.messages = [ChatMessageSystem(content=system_prompt)] if system_prompt else []
        previous: PreviousOutcome | None = None
        active_branch: int | None = None
        earlier: list[tuple[str, str]] = []
        shown: list[ImagePart] = []
        records: list[TurnRecord] = []
        status = "done"
        try:
            for k, turn in enumerate(storyturn.turns):
                opening = open_turn(turn, previous, feedback, undecided=undecided_feedback)
                if opening is None:  # the next turn would rest on a guess: not scored
                    status = "stopped"
                    break
                text, feedback_kind = opening.message, opening.feedback_kind
                content: str | list[Content] = text
                if turn.image and show:
                    shown.append(picture(turn.image))
                    content = [ContentText(text=text), _image(shown[-1])]
                state.messages.append(ChatMessageUser(content=content))
                called = CURRENT_TURN.set((storyturn.id, k))  # for CoMMET's own models (commet/SPEC)
                try:
                    state = await generate(state)
                finally:
                    CURRENT_TURN.reset(called)
                reply = state.output.completion
                verdict = await the_judge.judge(judge_request(storyturn, k, text, reply, earlier,
                                                              shown if judge_sees else ()))
                score = apply_branch_rules(turn, verdict, active_branch)
                active_branch = score.active_branch
                records.append(TurnRecord(k, text, feedback_kind, reply, verdict.outcome, score.correct, score.branch,
                                          active_branch, verdict.judge or the_judge.name, score.reason))
                earlier.append((text, reply))
                previous = PreviousOutcome(score.correct, score.branch, tuple(turn.answers))
        finally:
            await the_judge.aclose()
        state.metadata["commet_turns"] = [asdict(record) for record in records]
        state.metadata["commet_status"] = status
        return state

    return solve


#: the name a figure's high end carries: undecided answers (and stories stopped at one) counted right
UNDECIDED_RIGHT = " (undecided right)"

#: a sample's score value per outcome (what ``inspect view`` shows): inspect's own C and I for right and wrong,
#: and values of their own for the outcomes that are neither yet (never shown as incorrect)
SCORE_VALUES = {StoryOutcome.right: CORRECT, StoryOutcome.wrong: INCORRECT, StoryOutcome.undecided: "U",
                StoryOutcome.stopped: "S"}


def _outcome(score: SampleScore) -> StoryOutcome:
    """The outcome :func:`story_accuracy` gave the sample (its score's metadata)."""
    return StoryOutcome(str((score.score.metadata or {})["outcome"]))


def _ends(scores: list[SampleScore], name: str) -> dict[str, float]:
    """Story accuracy of ``scores`` at both ends of its range: undecided counted wrong (``name``), and counted
    right (``name (undecided right)``), as ``commet report`` shows ``a–b`` (the outcomes :mod:`commet.engine.outcome`
    decides, the same as the report's)."""
    if not scores:
        return {}
    outcomes = [_outcome(s) for s in scores]
    low = sum(o is StoryOutcome.right for o in outcomes) / len(scores)
    high = sum(o.right_if_undecided_right for o in outcomes) / len(scores)
    return {name: low, name + UNDECIDED_RIGHT: high}


@metric
def overall() -> Metric:
    """Share of StoryTurns with every question right, both ends of its range (all StoryTurns)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return _ends(scores, "overall")

    return compute


def _subset_metric(image_dependent: bool) -> Metric:
    """Story accuracy overall and per category on one subset, never pooled with the other (Tables 1 and 2)."""
    subset = SUBSETS[1] if image_dependent else SUBSETS[0]

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        mine = [s for s in scores if bool((s.sample_metadata or {}).get("image_dependent")) is image_dependent]
        groups: dict[str, list[SampleScore]] = {}
        for item in mine:
            groups.setdefault(str((item.sample_metadata or {}).get("category")), []).append(item)
        paper = TABLE2_CATEGORIES if image_dependent else TABLE1_CATEGORIES
        known = [*paper, *(c for c in CATEGORIES if c not in paper)]  # the paper's columns first, in its order
        order = [c for c in known if c in groups] + sorted(set(groups) - set(known))
        figures = _ends(mine, f"{subset} overall")
        for category in order:
            figures.update(_ends(groups[category], f"{subset} {category}"))
        return figures

    return compute


@metric
def text_complete() -> Metric:
    """The paper's Table 1: story accuracy on the text-complete StoryTurns, overall and per category."""
    return _subset_metric(image_dependent=False)


@metric
def image_dependent() -> Metric:
    """The paper's Table 2: story accuracy on the image-dependent StoryTurns, overall and per category."""
    return _subset_metric(image_dependent=True)


def _counted(outcome: StoryOutcome) -> Metric:
    def compute(scores: list[SampleScore]) -> int:
        return sum(_outcome(s) is outcome for s in scores)

    return compute


@metric
def undecided() -> Metric:
    """StoryTurns finished with none wrong and some answers undecided (``commet report``'s outcome undecided)."""
    return _counted(StoryOutcome.undecided)


@metric
def stopped() -> Metric:
    """StoryTurns stopped at an undecided answer with none wrong before (``commet report``'s "Stopped at
    undecided"; one stopped after a wrong answer is wrong)."""
    return _counted(StoryOutcome.stopped)


@scorer(metrics=[overall(), text_complete(), image_dependent(), undecided(), stopped()])
def story_accuracy() -> Scorer:
    """A StoryTurn's outcome as ``commet report`` decides it (:func:`~commet.engine.outcome.story_outcome`): C
    right, I wrong, U undecided, S stopped at an undecided answer; the metrics count U and S wrong in a figure
    and right in its ``(undecided right)`` twin."""

    async def score(state: TaskState, target: Target) -> Score:
        turns = state.metadata.get("commet_turns", [])
        status = StoryStatus(state.metadata.get("commet_status", "done"))
        right = sum(1 for t in turns if t["correct"] is True)
        undecided_answers = sum(1 for t in turns if t["correct"] is None)
        outcome = story_outcome(status, (t["correct"] for t in turns))
        value = SCORE_VALUES[outcome]
        high = outcome.right_if_undecided_right
        return Score(value=value,
                     answer=" | ".join(t["response"] for t in turns),
                     explanation="; ".join(f"turn {t['turn']}: {t['outcome']} ({t['judge']}: {t['rationale']})"
                                           for t in turns) + ("; stopped at an undecided answer"
                                                              if status is StoryStatus.stopped else ""),
                     metadata={"status": status.value, "outcome": outcome.value, "questions": len(target.target),
                               "questions_right": right, "undecided": undecided_answers, "right_if_undecided_right": high,
                               "turns": turns})

    return score


def to_sample(storyturn: StoryTurn) -> Sample:
    """One sample per StoryTurn: the first turn as input, every turn's expected answers as target."""
    return Sample(id=storyturn.id, input=user_text("", storyturn.turns[0]),
                  target=["; ".join(turn.answers) for turn in storyturn.turns],
                  metadata={"category": storyturn.category, "task": storyturn.task,
                            "image_dependent": storyturn.image_dependent, "source": storyturn.source})


def storyturns(dataset: str = "sample", images: str = "on", feedback: str = "original",
               judge: str = "rules", system_prompt: str | None = None, limit: int | None = None,
               undecided_feedback: str = "stop", judge_images: str = "needed", columns: str | None = None,
               adapter: str | None = None) -> Task:
    """CoMMET's StoryTurns: multi-turn ToM stories with adaptive feedback and online judging.

    Args:
      dataset: a dataset folder or file, a Hugging Face folder, ``hf:OWNER/NAME[@REVISION]``, or ``sample``.
      images: ``on``, ``off`` or ``needed`` (pictures only in image-dependent StoryTurns).
      feedback: ``original``, ``correctness`` or ``none``.
      judge: ``rules``, ``grader`` (model role), ``role:NAME``, or a ``commet eval --judge`` spec.
      system_prompt: the system prompt (default: CoMMET's).
      limit: only the first N StoryTurns.
      undecided_feedback: ``stop``, ``skip`` or ``wrong``: feedback after an answer no judge could decide.
      judge_images: ``needed``, ``on`` or ``off``: which pictures the answerer saw an LLM judge sees too.
      columns: ``role=column,...``: which column of a table is which part of a StoryTurn (``commet eval --columns``).
      adapter: ``FILE.py:FUNCTION`` that makes the StoryTurns of a table (``commet eval --adapter``).
    """
    conditions = (_choice(ImagePolicy, "images", images), _choice(FeedbackCondition, "feedback", feedback))
    undecided, judge_pictures = (_choice(UndecidedFeedback, "undecided_feedback", undecided_feedback),
                                 _choice(JudgeImages, "judge_images", judge_images))
    data = load_dataset(dataset, columns=columns, adapter=adapter)
    if limit is not None:
        data.storyturns = data.storyturns[: int(limit)]
    return Task(dataset=MemoryDataset([to_sample(st) for st in data], name=data.name),
                solver=storyturn_protocol(data, *conditions, judge,
                                          DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt,
                                          undecided, judge_pictures),
                scorer=story_accuracy(), config=DEFAULT_CONFIG,
                metadata={"commet_dataset": data.name, "commet_dataset_hash": data.content_hash(),
                          **({"commet_dataset_read": data.origin.location, "commet_dataset_layout": data.origin.layout,
                              "commet_dataset_columns": data.origin.columns,
                              "commet_dataset_adapter": data.origin.adapter} if data.origin is not None else {}),
                          "images": images, "feedback": feedback, "judge": judge,
                          "undecided_feedback": undecided_feedback, "judge_images": judge_images})


#: Registered as ``commet/storyturns``. Inspect namespaces tasks of installed packages itself; in an
#: editable or source-path install it does not, so the namespaced name is given explicitly there.
TASK_NAME = "commet/storyturns"
storyturns_task = task(name="storyturns")(storyturns)
if registry_info(storyturns_task).name != TASK_NAME:
    storyturns_task = task(name=TASK_NAME)(storyturns)
