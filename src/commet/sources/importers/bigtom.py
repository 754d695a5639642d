"""BigToM (Gandhi et al., 2023): ``data/bigtom/bigtom.csv``, one causal template per row.

The file has no header; fields are separated by ``;`` in this order: story, aware of event,
not aware of event, action aware, action not aware, belief question, desire question,
action question, belief/desire/action answers when aware, the same when not aware, random
event, aware of random event, not aware of random event (later fields are ignored). The
test items are built from each row as the authors' ``generate_conditions.py`` builds them
(initial belief hidden): forward belief, forward action and backward belief questions under
the true-belief, false-belief and the two control conditions, each a two-option question
whose option order is fixed per item (the paper shuffles it).
"""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

from commet.format.model import Option
from commet.sources.importers import base

CONDITIONS = {
    "true_belief": "the agent perceives the change",
    "false_belief": "the agent does not perceive the change",
    "true_control": "an unrelated event the agent perceives",
    "false_control": "an unrelated event the agent does not perceive",
}
TASKS = {name: base.declared_task(f"bigtom_{name}", f"BigToM {name.replace('_', ' ')}", "Belief",
                                  ("belief", "percept", "intention"), description)
         for name, description in CONDITIONS.items()}

FIELDS = ("story", "aware", "not_aware", "action_aware", "action_not_aware", "belief_question", "desire_question",
          "action_question", "belief_answer_aware", "desire_answer_aware", "action_answer_aware",
          "belief_answer_not_aware", "desire_answer_not_aware", "action_answer_not_aware", "random_event",
          "aware_random", "not_aware_random")


#: the two fields after the content in the published file: how the row was made and its number ("auto;0")
TRAILER = ("method", "number")


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    reader = csv.reader(io.StringIO(base.read_text(source)), delimiter=";")
    stories: list[base.SourceStory] = []
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) not in (len(FIELDS), len(FIELDS) + len(TRAILER)):
            # an earlier bigtom.csv (the authors' 513c8bd) has an "alternate desire" column before the random event:
            # read by position, every later field would be the one before it (no error, every control wrong)
            raise base.source_error(source, line, None,
                                    f"{len(row)} ';'-separated fields, expected {len(FIELDS)} (or {len(FIELDS) + 2} "
                                    "with the generator's two trailing fields): this is not the layout of the "
                                    "published bigtom.csv (an earlier version with an 'alternate desire' column "
                                    "has one more)")
        values = {name: cell.strip() for name, cell in zip(FIELDS, row, strict=False)}
        for name, value in values.items():
            if not value:
                raise base.source_error(source, line, name, "empty field")
        stories.extend(_items(values, len(stories) // 8 + 1, line, source))
    return stories


def _items(v: dict[str, str], row: int, line: int, source: Path) -> list[base.SourceStory]:
    """The row's eight stories: a forward story (belief, action) and a backward one per condition."""
    parts = v["story"].split(".")
    if len(parts) < 5:
        raise base.source_error(source, line, "story", "the story needs at least five sentences (setting, desire, "
                                                       "percept, belief, causal event)")
    story = ".".join(parts[i] for i in (0, 1, 2, 4)) + "."
    control = ".".join(parts[:3] + [" " + v["random_event"]])
    belief = (v["belief_answer_aware"], v["belief_answer_not_aware"])
    action = (v["action_answer_aware"], v["action_answer_not_aware"])
    for name, pair in (("belief_answer_not_aware", belief), ("action_answer_not_aware", action)):
        if pair[0] == pair[1]:
            raise base.source_error(source, line, name, "the aware and the unaware answers are the same")
    forward = {"true_belief": f"{story} {v['aware']}", "false_belief": f"{story} {v['not_aware']}",
               "true_control": f"{control} {v['aware_random']}", "false_control": f"{control} {v['not_aware_random']}"}
    backward = {"true_belief": f"{story} {v['action_aware']}", "false_belief": f"{story} {v['action_not_aware']}",
                "true_control": f"{control} {v['action_not_aware']}",
                "false_control": f"{control} {v['action_not_aware']}"}
    items: list[base.SourceStory] = []
    for condition in CONDITIONS:
        right = 0 if condition == "true_belief" else 1  # the authors' answer column for the condition
        key = f"{row:04d}-{condition}"
        items.append(base.SourceStory(
            key=f"{key}-forward", task=TASKS[condition], story=forward[condition].strip(), line=line,
            meta={"row": row, "condition": condition, "direction": "forward", "initial_belief": False},
            questions=[_question(v["belief_question"], belief, right, "forward_belief", key, line),
                       _question(v["action_question"], action, right, "forward_action", key, line)]))
        items.append(base.SourceStory(
            key=f"{key}-backward", task=TASKS[condition], story=backward[condition].strip(), line=line,
            meta={"row": row, "condition": condition, "direction": "backward", "initial_belief": False},
            questions=[_question(v["belief_question"], belief, right, "backward_belief", key, line)]))
    return items


def _question(text: str, answers: tuple[str, str], right: int, kind: str, key: str, line: int) -> base.SourceQuestion:
    pair = [answers[right], answers[1 - right]]
    random.Random(f"{key}-{kind}").shuffle(pair)  # fixed per item: the same file imports the same way
    options = [Option(label="a", text=pair[0]), Option(label="b", text=pair[1])]
    question = base.SourceQuestion(
        text=f"{text}\nChoose one of the following:\n{base.option_lines(options, template='{label}) {text}')}",
        answer=answers[right], line=line, options=options,
        meta={"question_type": kind, "order": 1})
    return base.with_answer_label(question)
