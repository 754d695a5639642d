"""Dataset validation: every problem located to file, line, story, turn and field.

:func:`load_checked` is the one gate every command that runs a dataset goes through
(``eval``, ``sweep``, ``study build``, ``review serve``): it loads and validates exactly as
``commet validate`` does and refuses a dataset with errors, so nothing is run (and no run row
is written) on data that ``validate`` rejects.
"""

from __future__ import annotations

import functools
import io
import os
import re
import time
import warnings
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from commet.format.dataset import Dataset
from commet.format.loading import load_dataset
from commet.format.model import StoryTurn, Turn
from commet.format.problems import FormatError, Problem, Severity
from commet.taxonomy import BOOKLET, Taxonomy
from commet.text import fold, normalize

#: Largest picture accepted, in pixels (a 20000x20000 PNG can be a few KiB and decode to 1.6 GB).
MAX_IMAGE_PIXELS = 50_000_000
#: Largest picture file accepted, in bytes.
MAX_IMAGE_BYTES = 50 * 1024 * 1024
#: Pictures are checked one by one for this long, the rest in threads (:func:`image_problems`).
SEQUENTIAL_CHECKS_S = 0.02
#: Longest StoryTurn id accepted.
MAX_ID_LENGTH = 200
#: Formats every part of CoMMET (engine, web apps, HTML report) handles.
IMAGE_FORMATS = ("PNG", "JPEG", "GIF", "WEBP")

_LEAD_WORDS = re.compile(r"^(?:(?:yes|no)\s+)?(?:because\s+)?")  # the inference is what must not leak
_CONDITIONAL_LOOKING = re.compile(r"(?i)^\s*if\b[^:]{0,80}:")
#: Turn metadata marking an answer that is meant to be found in the story (reading-comprehension
#: benchmarks such as ToMi): the leak check does not apply to it.
ANSWER_IN_STORY = "answer_in_story"


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split())


def _contains_phrase(haystack: str, needle: str) -> bool:
    return bool(needle) and re.search(rf"(?<![a-z0-9']){re.escape(needle)}(?![a-z0-9'])", haystack) is not None


def id_problem(story_id: str) -> str | None:
    """Why a StoryTurn id is refused, or None. Ids end up in file names, URLs, terminals and reports."""
    if not story_id.strip():
        return "blank id"
    if not story_id.isprintable():
        return "id contains control or invisible characters (shown escaped)"
    if story_id != story_id.strip():
        return "id has leading or trailing blanks"
    if "/" in story_id or "\\" in story_id or story_id in (".", ".."):
        return "id contains a path separator or is '.' or '..'"
    if len(story_id) > MAX_ID_LENGTH:
        return f"id is {len(story_id)} characters long (at most {MAX_ID_LENGTH})"
    return None


def taxonomy_problems(st: StoryTurn, taxonomy: Taxonomy = BOOKLET) -> list[tuple[str, str, Severity]]:
    """``(field, message, severity)`` for the task, category and mental states: all taxonomy checks in one place.

    ``taxonomy`` is the dataset's (declared in dataset.json, else the 18 booklet tasks).
    """
    found: list[tuple[str, str, Severity]] = []
    where = "declared in dataset.json" if taxonomy.declared else "known"
    task = taxonomy.task(st.task)
    if task is None:
        found.append(("task", "no task given (add a 'task' field, or `commet convert --task TASK`)"
                      if st.task == "unknown" else f"unknown task {st.task!r}"
                      + (" (not one of the tasks declared in dataset.json)" if taxonomy.declared else ""), "error"))
    if st.category not in taxonomy.categories:
        if not (task is None and st.category == "unknown"):  # the missing task is the one problem
            found.append(("category", f"unknown category {st.category!r} ({where}: {', '.join(taxonomy.categories)})",
                          "error"))
    elif task is not None and st.category not in task.categories:
        found.append(("category", f"category {st.category!r} does not match task {st.task!r} "
                                  f"(expected {task.category_for(st.image_dependent)!r})", "warning"))
    found.extend(("mental_states", f"unknown mental state {state!r}", "warning")
                 for state in st.mental_states if state not in taxonomy.mental_states)
    return found


@contextmanager
def _bombs_refused() -> Iterator[None]:
    """Pillow's decompression-bomb warning (a picture over its own pixel limit) raised as an error.

    The warnings filter is process-wide: threads that check pictures inside this block, the
    thread that entered it waiting for them, refuse bombs the same way.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        yield


def picture_problem(data: bytes) -> str | None:
    """Why picture bytes are refused (read after "image 'ID' "), or None: decoded in full under a pixel limit."""
    with _bombs_refused():
        return _decoded_problem(data)


def _decoded_problem(data: bytes) -> str | None:
    """:func:`picture_problem` inside :func:`_bombs_refused` (entered once for many pictures)."""
    if not data:
        return "is an empty file (0 bytes)"
    if len(data) > MAX_IMAGE_BYTES:
        return f"is {len(data):,} bytes (at most {MAX_IMAGE_BYTES:,})"
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > MAX_IMAGE_PIXELS:
                return (f"declares {width}x{height} pixels, more than the limit of {MAX_IMAGE_PIXELS:,} "
                        "(a decompression bomb?)")
            if image.format not in IMAGE_FORMATS:
                return f"is a {image.format} picture (use {', '.join(IMAGE_FORMATS)})"
            image.load()
            image.getexif()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        return f"is a decompression bomb: {exc}"
    except UnidentifiedImageError:
        return "is not a picture (not PNG, JPEG, GIF or WebP data)"
    except Exception as exc:  # noqa: BLE001 - Pillow's decoders raise many kinds; each is a broken picture
        return f"is truncated or corrupt: {exc}"
    return None


def image_problem(dataset: Dataset, image_id: str) -> str | None:
    """Why an image id does not lead to a readable picture of this dataset, or None."""
    with _bombs_refused():
        return _image_problem(dataset, image_id)


def _image_problem(dataset: Dataset, image_id: str) -> str | None:
    for name in (image_id, image_id.replace(":", "_")):
        if name in dataset.images:
            return _decoded_problem(dataset.images[name])
    path, reason = dataset.locate_image(image_id)
    if path is None:
        return reason
    try:
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            return f"is {size:,} bytes (at most {MAX_IMAGE_BYTES:,})"
        return _decoded_problem(path.read_bytes())
    except OSError as exc:
        return f"cannot be read ({path}: {exc.strerror or exc})"


def image_problems(dataset: Dataset, image_ids: Iterable[str]) -> dict[str, str | None]:
    """:func:`image_problem` of each distinct id; pictures that take long are read and decoded in threads.

    Decoding is most of validation's time on a dataset of photographs (about 4 ms a megapixel),
    and Pillow's decoders and file reads release the GIL, so a thread per core divides it. Small
    pictures are quicker one by one (a thread's hand-over costs more than their decoding): the
    pictures are checked in order until ``SEQUENTIAL_CHECKS_S`` has passed, and the rest in threads.
    """
    ids = list(dict.fromkeys(image_ids))
    found: dict[str, str | None] = {}
    with _bombs_refused():
        started = time.perf_counter()
        pending = iter(ids)
        for image_id in pending:
            found[image_id] = _image_problem(dataset, image_id)
            if time.perf_counter() - started >= SEQUENTIAL_CHECKS_S:
                break
        rest = list(pending)
        threads = min(len(rest), os.cpu_count() or 1)
        if threads < 2:
            found.update((image_id, _image_problem(dataset, image_id)) for image_id in rest)
        else:
            with ThreadPoolExecutor(threads, thread_name_prefix="commet-picture-check") as pool:
                found.update(zip(rest, pool.map(functools.partial(_image_problem, dataset), rest), strict=True))
    return found


def _repeated_choices(turn: Turn) -> list[tuple[str, str]]:
    """Expected answers, option texts or option labels a judge cannot tell apart (the same once case,
    punctuation and articles are set aside): which branch or option a reply names would be a guess."""
    found = []
    for field, what, values, key in (
            ("answers", "answers", turn.answers, normalize),
            ("options", "options", [o.text for o in turn.options], normalize),
            ("options", "option labels", [o.label for o in turn.options if o.label is not None], fold)):
        first: dict[str, int] = {}
        for i, value in enumerate(values):
            same = key(value).strip()
            if not same:
                continue
            if same in first:
                j = first[same]
                found.append((field, f"{what} {j} and {i} are the same once case, punctuation and articles are "
                                     f"set aside ({values[j]!r}, {value!r}): a judge cannot tell them apart"))
            else:
                first[same] = i
    return found


def validate_storyturn(st: StoryTurn, dataset: Dataset, line: int | None = None,
                       pictures: dict[str, str | None] | None = None, *, decode_pictures: bool = True) -> list[Problem]:
    """Problems of one StoryTurn (id, taxonomy, structure, feedback, branches, pictures, leaks).

    ``pictures`` caches picture checks by image id across StoryTurns (each picture is decoded once).
    ``decode_pictures=False`` only asks whether each picture is there: for checking a StoryTurn whose
    pictures are made or kept elsewhere (the LLM pipeline before painting, the review app).
    """
    file = dataset.source_file
    line = line if line is not None else dataset.lines.get(st.id)
    problems: list[Problem] = []
    pictures = {} if pictures is None else pictures

    def add(turn: int | None, field: str | None, message: str, severity: Severity = "error") -> None:
        problems.append(Problem(file, line, st.id, turn, field, message, severity))

    bad_id = id_problem(st.id)
    if bad_id:
        add(None, "id", bad_id)
    for field, message, severity in taxonomy_problems(st, dataset.taxonomy):
        add(None, field, message, severity)
    if st.image_dependent and not st.images:
        add(None, "image_dependent", "image-dependent StoryTurn has no image")

    branch_counts = {k: len(t.answers) for k, t in enumerate(st.turns) if t.is_branch_point}
    if len(set(branch_counts.values())) > 1:
        first_turn, first_count = next(iter(branch_counts.items()))
        for k, count in branch_counts.items():
            if count != first_count:
                add(k, "answer", f"{count} branch answers, but turn {first_turn} has {first_count}: "
                                 "branch counts must line up across the story")

    for k, turn in enumerate(st.turns):
        fb = turn.feedback
        if fb is not None and not fb.is_empty():
            if k == 0:
                conditional = fb.right or fb.wrong or fb.by_answer
                add(k, "feedback", "feedback on the first turn: there is no previous answer to react to",
                    "error" if conditional else "warning")
            if fb.always and _CONDITIONAL_LOOKING.match(fb.always):
                add(k, "feedback", f"unrecognised feedback condition in {fb.always[:40]!r}; "
                                   "write 'If right: ...; If wrong: ...' or 'If the previous answer is A: ...'")
            if k > 0 and fb.by_answer:
                previous = {_norm(a): a for a in st.turns[k - 1].answers}
                keyed = {_norm(entry.answer) for entry in fb.by_answer}
                unmatched = [entry for entry in fb.by_answer if _norm(entry.answer) not in previous]
                for entry in unmatched:
                    add(k, "feedback", f"feedback keyed by answer {entry.answer!r}, which is not an expected "
                                       f"answer of turn {k - 1} ({'; '.join(st.turns[k - 1].answers)})")
                for norm, answer in previous.items():  # an unmatched key is most likely that answer misspelt
                    if norm not in keyed and fb.right is None and not unmatched:
                        add(k, "feedback", f"no feedback for the previous answer {answer!r}", "warning")
            for name, text in (("right", fb.right), ("wrong", fb.wrong)):
                if text is not None and not text.strip():
                    add(k, "feedback", f"empty 'If {name}' feedback text")
        if turn.image:
            if turn.image not in pictures:
                pictures[turn.image] = (image_problem(dataset, turn.image) if decode_pictures
                                        else None if dataset.has_image(turn.image) else "not found")
            if pictures[turn.image]:
                add(k, "image", f"image {turn.image!r} {pictures[turn.image]}")
        if not turn.question.strip():
            add(k, "question", "empty question")
        for field, message in _repeated_choices(turn):
            add(k, field, message)
        story = _norm(turn.story)
        question = _norm(turn.question)
        for answer in turn.answers:
            if not answer.strip():
                add(k, "answer", "empty answer")
                continue
            norm = _LEAD_WORDS.sub("", _norm(answer))
            if not _contains_phrase(story, norm) or _contains_phrase(question, norm) or turn.meta.get(ANSWER_IN_STORY):
                continue
            if len(norm.split()) >= 3:
                add(k, "answer", f"answer {answer!r} appears verbatim in this turn's story text (leak)")
            else:
                add(k, "answer", f"answer {answer!r} appears in this turn's story text and is not an option "
                                 "named by the question (possible leak)", "warning")
    return problems


def validate_dataset(dataset: Dataset) -> list[Problem]:
    """Every problem of a loaded dataset: the loader's warnings, emptiness, duplicate ids, each StoryTurn."""
    problems = list(dataset.warnings)
    if not dataset.storyturns:
        problems.append(Problem(dataset.source_file, None, None, None, None, "empty dataset: no StoryTurns"))
    seen: dict[str, int | None] = {}
    pictures = image_problems(dataset, (turn.image for st in dataset.storyturns for turn in st.turns if turn.image))
    for index, st in enumerate(dataset.storyturns):
        line = dataset.line_list[index] if index < len(dataset.line_list) else dataset.lines.get(st.id)
        if st.id in seen:
            problems.append(Problem(dataset.source_file, line, st.id, None, "id",
                                    f"duplicate id (first at line {seen[st.id]})"))
        else:
            seen[st.id] = line
        problems.extend(validate_storyturn(st, dataset, line, pictures))
    return problems


def load_and_validate(path: str | Path, columns: str | None = None) -> tuple[Dataset | None, list[Problem]]:
    """The dataset (None when it cannot be read) and every problem of it, as ``commet validate`` finds them."""
    return _load_and_validate(path, columns)


def _load_and_validate(path: str | Path, columns: str | None = None) -> tuple[Dataset | None, list[Problem]]:
    try:
        dataset = load_dataset(path, columns=columns)
    except FormatError as exc:
        return None, exc.problems
    return dataset, validate_dataset(dataset)


def validate_path(path: str | Path, columns: str | None = None) -> list[Problem]:
    """Load and validate; a file that cannot be read yields its located problems instead of raising.
    ``columns``: the ``--columns`` mapping of a table's columns (:mod:`commet.format.columns`)."""
    return _load_and_validate(path, columns)[1]


def has_errors(problems: list[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)


class DatasetRefused(FormatError):
    """A dataset nothing may run on: it has errors, or warnings and the caller did not force it."""

    def __init__(self, problems: list[Problem], *, forced: bool = False):
        super().__init__(problems)
        self.errors = sum(p.severity == "error" for p in problems)
        self.warning_count = len(problems) - self.errors
        self.forced = forced

    def summary(self) -> str | None:
        """A closing line after the located problems where they alone do not say why nothing ran."""
        if self.errors:
            return None
        return (f"dataset refused: {self.warning_count} warning(s) and no error; "
                "--force runs a dataset whose only problems are warnings")


def load_checked(path: str | Path, *, force: bool = False,
                 columns: str | None = None) -> tuple[Dataset, list[Problem]]:
    """Load and validate exactly as ``commet validate``; return the dataset and its warnings.

    Raises :class:`DatasetRefused` with every problem when the dataset has an error, or a warning
    and ``force`` is false. ``force`` never lets an error through.
    """
    dataset, problems = _load_and_validate(path, columns)
    if dataset is None or has_errors(problems) or (problems and not force):
        raise DatasetRefused(problems, forced=force)
    return dataset, problems
