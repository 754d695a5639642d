"""OpenToM (Xu et al., 2024): the ``data/opentom_data`` folder of the authors' repository.

``meta_data.json`` maps each story id to its plot, characters and ``narrative``; one file per
question genre (``location_cg_fo.json``, ``location_cg_so.json``, ``location_fg_fo_new.json``,
``location_fg_so_new.json``, ``multihop_fo.json``, ``multihop_so.json``, ``attitude.json``)
maps story ids to lists of ``{"question", "answer", "type"}``. A genre file that is absent is
skipped; a question for a story the metadata lacks is an error. The answer spaces are the
paper's: yes/no (coarse location), a place (fine location), more/equally/less full or
accessible (multihop) and positive/neutral/negative (attitude).
"""

from __future__ import annotations

from pathlib import Path

from commet.format.importers import base
from commet.format.model import Option

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
ANSWER_SPACES = {
    "location_coarse": ("Yes", "No"),
    "fullness": ("more full", "equally full", "less full"),
    "accessibility": ("more accessible", "equally accessible", "less accessible"),
    "attitude": ("positive", "neutral", "negative"),
}


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    if not source.is_dir():
        raise base.source_error(source, None, None,
                                "expected the opentom_data folder (meta_data.json and question files)")
    meta_path = next((source / name for name in ("meta_data.json", "meta_data_long.json")
                      if (source / name).is_file()), None)
    if meta_path is None:
        raise base.source_error(source / "meta_data.json", None, None, "file not found")
    metadata = base.read_json(meta_path)
    if not isinstance(metadata, dict):
        raise base.source_error(meta_path, 1, None, "expected an object mapping story ids to story records")
    meta_text = base.read_text(meta_path)
    task = LONG_TASK if meta_path.name == "meta_data_long.json" else TASK
    stories: dict[str, base.SourceStory] = {}
    for key, record in metadata.items():
        line = base.json_line(meta_text, f'"{key}"')
        narrative = record.get("narrative") if isinstance(record, dict) else None
        if not isinstance(narrative, str) or not narrative.strip():
            raise base.source_error(meta_path, line, "narrative", "missing or empty", story=key)
        stories[key] = base.SourceStory(key=str(key), task=task, story=narrative.strip(), questions=[], line=line,
                                        meta={"plot_info": record.get("plot_info"), "observed": record.get("observed")})
    found_any = False
    for names, genre in GENRE_FILES:
        path = next((source / name for name in names if (source / name).is_file()), None)
        if path is None:
            continue
        found_any = True
        _add_questions(path, genre, stories)
    if not found_any:
        raise base.source_error(source, None, None,
                                "no OpenToM question files (location_cg_fo.json, ...) in this folder")
    return [story for story in stories.values() if story.questions]


def _add_questions(path: Path, genre: str, stories: dict[str, base.SourceStory]) -> None:
    document = base.read_json(path)
    if not isinstance(document, dict):
        raise base.source_error(path, 1, None, "expected an object mapping story ids to lists of questions")
    text = base.read_text(path)
    for key, questions in document.items():
        line = base.json_line(text, f'"{key}"')
        if key not in stories:
            raise base.source_error(path, line, None, "story id not in the metadata file", story=key)
        if not isinstance(questions, list):
            raise base.source_error(path, line, None, "expected a list of questions", story=key)
        for index, item in enumerate(questions):
            if not isinstance(item, dict) or not all(isinstance(item.get(f), str) and item[f].strip()
                                                     for f in ("question", "answer", "type")):
                raise base.source_error(path, line, f"[{index}]", "a question needs 'question', 'answer' and 'type'",
                                        story=key)
            stories[key].questions.append(_question(item, genre, path, line, key))


def _question(item: dict[str, str], genre: str, path: Path, line: int | None, key: str) -> base.SourceQuestion:
    text, answer, kind = item["question"].strip(), item["answer"].strip(), item["type"].strip()
    space_name = genre
    if genre == "multihop":
        space_name = "fullness" if "fullness" in text else "accessibility"
    space = ANSWER_SPACES.get(space_name)
    order = 2 if kind.endswith("-so") else 1
    meta: dict[str, object] = {"question_type": space_name if genre == "multihop" else genre, "order": order,
                               "opentom_type": kind}
    if space is None:  # fine location: an open answer
        return base.SourceQuestion(text=text, answer=answer, line=line, meta=meta)
    matching = [option for option in space if option.lower() == answer.lower()]
    if not matching:
        raise base.source_error(path, line, "answer", f"answer {answer!r} is not one of {', '.join(space)}", story=key)
    options = [Option(text=option) for option in space]
    prompt = "Answer yes or no." if space_name == "location_coarse" else f"Answer with one of: {', '.join(space)}."
    return base.SourceQuestion(text=f"{text} {prompt}", answer=matching[0], line=line, options=options, meta=meta)
