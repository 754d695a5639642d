"""OpenToM (Xu et al., 2024): the ``data/opentom_data`` folder of the authors' repository, or ``opentom.json``.

``meta_data.json`` (``metadata.json`` on the Hub) maps each story id to its plot, ``plot_info``
(the mover, the entity, its ``original_place`` and ``move_to_place``) and ``narrative``; one file
per question genre (``location_cg_fo.json``, ``location_cg_so.json``, ``location_fg_fo_new.json``,
``location_fg_so_new.json``, ``multihop_fo.json``, ``multihop_so.json``, ``attitude.json``) maps
story ids to lists of ``{"question", "answer", "type"}``. A genre file that is absent is skipped;
a question for a story the metadata lacks is an error. ``--context long`` reads OpenToM-L
(``meta_data_long.json``, its ``long_narrative``; the 100 stories it has). ``opentom.json`` holds
the same questions as one record per question. The answer spaces are the paper's: yes/no
(coarse location), one of the two places (fine location: the places are the judge-only
candidates, as the authors' evaluator chooses between them), more/equally/less full or
accessible (multihop) and positive/neutral/negative (attitude).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from commet.format.model import Option
from commet.sources.importers import base
from commet.text import normalize

TASK = base.declared_task("opentom", "OpenToM", "Belief", ("belief", "emotion", "intention"),
                          "characters' beliefs about locations, fullness, accessibility, and their attitudes")
LONG_TASK = base.declared_task("opentom_long", "OpenToM (long narratives)", "Belief",
                               ("belief", "emotion", "intention"), "OpenToM questions over the long narratives")

#: Question files in the order their questions are asked, with the genre each holds.
GENRE_FILES = (
    (("location_cg_fo.json",), "location_coarse"),
    (("location_cg_so.json",), "location_coarse"),
    (("location_fg_fo_new.json", "location_fg_fo.json"), "location_fine"),
    (("location_fg_so_new.json", "location_fg_so.json"), "location_fine"),
    (("multihop_fo.json",), "multihop"),
    (("multihop_so.json",), "multihop"),
    (("attitude.json",), "attitude"),
)
#: how alike (difflib ratio) a published place and an answer must be to count as the same place misspelt
TYPO_SIMILARITY = 0.9
ANSWER_SPACES = {
    "location_coarse": ("Yes", "No"),
    "fullness": ("more full", "equally full", "less full"),
    "accessibility": ("more accessible", "equally accessible", "less accessible"),
    "attitude": ("positive", "neutral", "negative"),
}


#: ``--context``: the normal narratives (``narrative``) or OpenToM-L's long ones (``long_narrative``)
CONTEXTS = {"short": "narrative", "long": "long_narrative"}


def variant(source: Path, options: base.ImportOptions) -> str | None:
    """The long narratives are a dataset of their own (``opentom-long-...``): asked for with ``--context long``, or
    given as the file the authors publish them in (``opentom_long.json``, read as OpenToM-L's task whatever the
    context, :func:`_read_records`), so that its runs never share a name with the normal narratives'."""
    return "long" if options.context == "long" or (source.is_file() and "long" in source.stem.lower()) else None


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    if options.context not in CONTEXTS:
        raise base.source_error(source, None, "context", f"OpenToM has 'short' (the normal narratives) and 'long' "
                                                         f"(OpenToM-L) contexts, not {options.context!r}")
    if source.is_file():
        return _read_records(source, options.context)
    if not source.is_dir():
        raise base.source_error(source, None, None,
                                "expected the opentom_data folder (meta_data.json and question files) or opentom.json")
    names: tuple[str, ...] = ("meta_data_long.json", "metadata_long.json") if options.context == "long" else \
        ("meta_data.json", "metadata.json", "meta_data_long.json", "metadata_long.json")
    meta_path = next((source / name for name in names if (source / name).is_file()), None)
    if meta_path is None:
        raise base.source_error(source / names[0], None, None, "file not found")
    metadata = base.read_json(meta_path)
    if not isinstance(metadata, dict):
        raise base.source_error(meta_path, 1, None, "expected an object mapping story ids to story records")
    meta_text = base.read_text(meta_path)
    field_name = CONTEXTS[options.context]
    task = LONG_TASK if options.context == "long" else TASK
    stories: dict[str, base.SourceStory] = {}
    for key, record in metadata.items():
        line = base.json_line(meta_text, f'"{key}"')
        narrative = record.get(field_name) if isinstance(record, dict) else None
        if not isinstance(narrative, str) or not narrative.strip():
            raise base.source_error(meta_path, line, field_name, "missing or empty", story=key)
        stories[key] = base.SourceStory(key=str(key), task=task, story=narrative.strip(), questions=[], line=line,
                                        meta={"plot_info": record.get("plot_info"), "observed": record.get("observed")})
    found_any = False
    for names, genre in GENRE_FILES:
        path = next((source / name for name in names if (source / name).is_file()), None)
        if path is None:
            continue
        found_any = True
        _add_questions(path, genre, stories, every_story="long" not in meta_path.name)
    if not found_any:
        raise base.source_error(source, None, None,
                                "no OpenToM question files (location_cg_fo.json, ...) in this folder")
    return [story for story in stories.values() if story.questions]


def _add_questions(path: Path, genre: str, stories: dict[str, base.SourceStory], *, every_story: bool) -> None:
    """One genre file's questions, added to their stories (OpenToM-L has 100 of the 596: the rest are skipped)."""
    document = base.read_json(path)
    if not isinstance(document, dict):
        raise base.source_error(path, 1, None, "expected an object mapping story ids to lists of questions")
    text = base.read_text(path)
    for key, questions in document.items():
        line = base.json_line(text, f'"{key}"')
        if key not in stories:
            if not every_story:
                continue
            raise base.source_error(path, line, None, "story id not in the metadata file", story=key)
        if not isinstance(questions, list):
            raise base.source_error(path, line, None, "expected a list of questions", story=key)
        for index, item in enumerate(questions):
            if not isinstance(item, dict) or not all(isinstance(item.get(f), str) and item[f].strip()
                                                     for f in ("question", "answer", "type")):
                raise base.source_error(path, line, f"[{index}]", "a question needs 'question', 'answer' and 'type'",
                                        story=key)
            story = stories[key]
            story.questions.append(_question(item, genre, story.meta.get("plot_info"), path, line, key))


def _read_records(source: Path, context: str) -> list[base.SourceStory]:
    """``opentom.json`` / ``opentom_long.json``: one record per question, each with its story's fields (``narrative``,
    ``plot_info``, ...) and ``question`` (``{question, answer, type}``); consecutive records with the same
    narrative are one story. The genre follows from the type and the answer (a yes/no location answer is coarse)."""
    document = base.read_json(source)
    if not isinstance(document, list):
        raise base.source_error(source, 1, None, "expected a JSON list of question records (opentom.json) or the "
                                                 "opentom_data folder")
    lines = base.key_lines(base.read_text(source), "narrative", len(document))
    field_name = CONTEXTS[context] if any(isinstance(r, dict) and CONTEXTS[context] in r for r in document) \
        else "narrative"
    task = LONG_TASK if context == "long" or field_name == "long_narrative" or "long" in source.stem.lower() else TASK
    stories: list[base.SourceStory] = []
    for index, record in enumerate(document):
        line = lines[index]
        where = f"[{index}]"
        item = record.get("question") if isinstance(record, dict) else None
        narrative = record.get(field_name) if isinstance(record, dict) else None
        if not isinstance(narrative, str) or not narrative.strip():
            raise base.source_error(source, line, f"{where}.{field_name}", "missing or empty")
        if not isinstance(item, dict) or not all(isinstance(item.get(f), str) and item[f].strip()
                                                 for f in ("question", "answer", "type")):
            raise base.source_error(source, line, f"{where}.question",
                                    "expected an object with 'question', 'answer' and 'type'")
        if not stories or stories[-1].story != narrative.strip():
            stories.append(base.SourceStory(key=f"{len(stories) + 1:04d}", task=task, story=narrative.strip(),
                                            questions=[], line=line,
                                            meta={"plot_info": record.get("plot_info"),
                                                  "observed": record.get("observed")}))
        genre = _genre(item["type"], item["answer"])
        stories[-1].questions.append(_question(item, genre, record.get("plot_info"), source, line, stories[-1].key))
    return stories


def _genre(kind: str, answer: str) -> str:
    kind = kind.strip().lower()
    if kind.startswith("location"):
        return "location_coarse" if answer.strip().lower() in ("yes", "no") else "location_fine"
    return "multihop" if kind.startswith("multihop") else "attitude" if kind.startswith("attitude") else kind


def _question(item: dict[str, str], genre: str, plot_info: object, path: Path, line: int | None,
              key: str) -> base.SourceQuestion:
    text, answer, kind = item["question"].strip(), item["answer"].strip(), item["type"].strip()
    space_name = genre
    if genre == "multihop":
        space_name = "fullness" if "fullness" in text else "accessibility"
    space = ANSWER_SPACES.get(space_name)
    order = 2 if kind.endswith("-so") else 1
    meta: dict[str, object] = {"question_type": space_name if genre == "multihop" else genre, "order": order,
                               "opentom_type": kind}
    if genre == "location_fine":  # an open answer: one of the two places, as the authors' evaluator scores it
        return base.SourceQuestion(text=text, answer=answer, line=line, meta=meta,
                                   candidates=fine_candidates(plot_info, answer))
    if space is None:
        raise base.source_error(path, line, "type", f"unknown OpenToM question type {kind!r}", story=key)
    matching = [option for option in space if option.lower() == answer.lower()]
    if not matching:
        raise base.source_error(path, line, "answer", f"answer {answer!r} is not one of {', '.join(space)}", story=key)
    options = [Option(text=option) for option in space]
    prompt = "Answer yes or no." if space_name == "location_coarse" else f"Answer with one of: {', '.join(space)}."
    return base.SourceQuestion(text=f"{text} {prompt}", answer=matching[0], line=line, options=options, meta=meta)


def places(plot_info: object, answer: str) -> list[str]:
    """The candidates of a fine location question: the entity's original place and the place it is moved to
    (``plot_info``), which the authors' evaluator chooses between. A place the answer names with another article
    counts as that place; a place that differs from the answer only by a typo in the published plot (one of
    3,576 answers) is written as the answer; anything else leaves the question open (no candidates)."""
    if not isinstance(plot_info, dict):
        return []
    found = [str(plot_info.get(name) or "").strip() for name in ("original_place", "move_to_place")]
    if not all(found) or normalize(found[0]) == normalize(found[1]):
        return []
    same = [i for i, place in enumerate(found) if normalize(place) == normalize(answer)]
    if same:  # written as the answer is ("donation bin" for the plot's "a donation bin")
        found[same[0]] = answer
        return found
    ratios = [difflib.SequenceMatcher(None, normalize(answer), normalize(place)).ratio() for place in found]
    best = max(range(2), key=ratios.__getitem__)
    if ratios[best] < TYPO_SIMILARITY or ratios[1 - best] >= TYPO_SIMILARITY:
        return []
    found[best] = answer
    return found


#: OpenToM's answer words outside the places: the other genres' answer spaces. A fine location question's reply
#: that is exactly one of them ("No" to a where-question) names neither place, which the authors' evaluator
#: scores wrong.
OTHER_ANSWERS = tuple(word for space in ANSWER_SPACES.values() for word in space)


def fine_candidates(plot_info: object, answer: str) -> list[str]:
    """The judge-only candidates of a fine location question: the two places (:func:`places`), then every other
    word of OpenToM's answer vocabulary that the authors' evaluator scores wrong for this question. A word it would
    score right although it is not the answer (it shares words with the expected place) is left out: such a
    reply stays undecided, for an LLM judge."""
    found = places(plot_info, answer)
    if not found or not isinstance(plot_info, dict):
        return found
    original, moved = (str(plot_info.get(name) or "") for name in ("original_place", "move_to_place"))
    wrong = [word for word in OTHER_ANSWERS if not authors_fine_location_right(word, answer, original, moved)]
    return base.closed_vocabulary(found, wrong)


def _remove_determinant(word: str) -> str:
    """As the authors' evaluator writes it (``OpenToMEvaluator.remove_determinant``), prefix test included."""
    for determinant in ("a", "an", "the"):
        if word.startswith(determinant):
            return word[len(determinant):].strip()
    return word


def _lexical_overlap(prediction: str, location: str) -> float:
    """``OpenToMEvaluator.compute_lexical_overlap``: the share of the place's words found in the prediction."""
    said = prediction.lower().replace("_", " ").replace("'s", "").replace(".", "").split()
    words = location.lower().replace("_", " ").replace("'s", "").split()
    return len({word for word in said if word in words}) / len(words) if words else 0.0


def authors_fine_location_right(prediction: str, answer: str, original: str, moved: str) -> bool:
    """Whether the authors' evaluator (``check_answer_for_fg_location`` in ``src/evaluate/opentom_evaluator.py`` of
    github.com/seacowx/OpenToM) scores ``prediction`` right: it picks the place whose words the prediction shares
    most (a tie is neither) and compares it with the place the answer is."""
    answer = _remove_determinant(answer).lower()
    original, moved = _remove_determinant(original).lower(), _remove_determinant(moved).lower()
    to_original, to_moved = _lexical_overlap(prediction, original), _lexical_overlap(prediction, moved)
    said = 1 if to_original > to_moved else 2 if to_moved > to_original else 3
    expected = 1 if original == answer else 2 if moved == answer else None
    return said == expected
