"""Dataset validation: every problem located to file, line, story, turn and field.

:func:`commet.sources.checked.load_checked` is the one gate every command that runs a dataset goes through
(``eval``, ``sweep``, ``study build``, ``review serve``): it loads and validates exactly as
``commet validate`` does and refuses a dataset with errors, so nothing is run (and no run row
is written) on data that ``validate`` rejects.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import time
import unicodedata
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TypeVar

from commet.format.dataset import Dataset
from commet.format.model import Feedback, Option, StoryTurn, Turn
from commet.format.pictures import (  # noqa: F401 - the limits, re-exported where they were
    IMAGE_FORMATS,
    MAX_IMAGE_BYTES,
    MAX_IMAGE_PIXELS,
    PictureError,
    bombs_refused,
    header_problem,
    picture_problem,
)
from commet.format.problems import EMPTY_DATASET, FormatError, Problem, Severity
from commet.taxonomy import BOOKLET, Taxonomy
from commet.text import _LABEL_MARK, char_kind, contains_phrase, fold, labelled_options, normalize

#: from this many StoryTurns, :func:`validate_and_hash` checks their own rules in a forked child: below, the fork
#: (milliseconds, and memory pages copied as either process writes to them) costs more than it saves
CHECKED_BESIDE_FROM = 2000
#: what a picture's check gives (:func:`_spread`)
Checked = TypeVar("Checked")
#: Pictures are checked one by one for this long, then the rest in threads where they are slow (:func:`_spread`).
SEQUENTIAL_CHECKS_S = 0.02
#: A picture whose check takes this long (reading, hashing, decoding: work done without the GIL) is worth a thread.
THREADED_CHECK_S = 0.0005
#: Contiguous shares of the pictures each checking thread takes in turn (:func:`_spread`).
SHARES_PER_THREAD = 4
#: Longest StoryTurn id accepted.
MAX_ID_LENGTH = 200

#: characters no text of a StoryTurn holds unless its file was damaged or mis-decoded: C0 and C1 controls and DEL,
#: a model would be sent them and a person shown them; tab and the line and paragraph breaks (those
#: ``str.splitlines`` breaks at: vertical tab, form feed, file, group and record separators, NEL) are text
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]")
_CONDITIONAL_LOOKING = re.compile(r"(?i)^\s*if\b[^:]{0,80}:")
#: Turn metadata marking an answer that is meant to be found in the story (reading-comprehension
#: benchmarks such as ToMi): the leak check does not apply to it.
ANSWER_IN_STORY = "answer_in_story"
#: Leak warnings listed one by one in a dataset; the rest are counted in one closing warning.
LEAK_WARNINGS_LISTED = 10
#: An answer of this many words (a character of Chinese or Japanese counts as half a word) found in its
#: story is a verbatim leak (an error under ``--strict``); a shorter one may be a name the story must use.
VERBATIM_LEAK_WORDS = 3


def _norm(text: str) -> str:
    """The comparison form of the leak check and of answer keys: :func:`commet.text.normalize`, articles kept."""
    return normalize(text, drop_articles=False)


def _leaked_core(answer: str) -> str:
    """The part of an answer that must not be in its story: without a leading yes/no and "because"."""
    tokens = _norm(answer).split()
    if tokens[:1] in (["yes"], ["no"]) and len(tokens) > 1:
        tokens = tokens[1:]
    if tokens[:1] == ["because"] and len(tokens) > 1:
        tokens = tokens[1:]
    return " ".join(tokens)


class _Texts:
    """The comparison forms of the short texts of one validation (answers, option texts and labels, candidates,
    feedback keys) and what is read from its questions, each made once: they repeat across the turns and
    StoryTurns of a dataset (20,000 StoryTurns normalised 360,000 texts, most of them the same few hundred), and
    a benchmark's questions are often one template's ("Where will Sally look for the marble?"). Stories are each
    their own: they are not kept. Each is the function it names, remembered for this validation."""

    def __init__(self) -> None:
        #: :func:`commet.text.normalize` (articles set aside)
        self.normalize: Callable[[str], str] = functools.cache(normalize)
        #: :func:`_norm` (articles kept)
        self.norm: Callable[[str], str] = functools.cache(_norm)
        #: :func:`commet.text.fold`
        self.fold: Callable[[str], str] = functools.cache(fold)
        #: :func:`_leaked_core`
        self.leaked_core: Callable[[str], str] = functools.cache(_leaked_core)
        #: :func:`repeated_option_label`
        self.repeated_label: Callable[[str], str | None] = functools.cache(repeated_option_label)


def _answer_length(core: str) -> float:
    """Words of a normalised answer; a character of a script written without spaces counts half a word."""
    return sum(0.5 if len(token) == 1 and char_kind(token) == "u" else 1.0 for token in core.split())


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
        return f"id is {len(story_id):,} characters long (at most {MAX_ID_LENGTH})"
    return None


def _shown_texts(turn: Turn) -> Iterable[tuple[str, str]]:
    """``(field, text)`` of every text of a turn that a model, a judge or a person reads."""
    yield "story", turn.story
    yield "question", turn.question
    for i, option in enumerate(turn.options):
        yield f"options.{i}.text", option.text
    for i, answer in enumerate(turn.answers):
        yield f"answers.{i}", answer
    for i, candidate in enumerate(turn.candidates):
        yield f"candidates.{i}", candidate
    if turn.feedback is not None:
        for name in ("always", "right", "wrong"):
            if (text := getattr(turn.feedback, name)) is not None:
                yield f"feedback.{name}", text
        for i, entry in enumerate(turn.feedback.by_answer):
            yield f"feedback.by_answer.{i}.text", entry.text
    if turn.rubric is not None:
        yield "rubric.key_inference", turn.rubric.key_inference
        for i, inference in enumerate(turn.rubric.false_inferences):
            yield f"rubric.false_inferences.{i}", inference


def _plain_texts(turn: Turn) -> list[str]:
    """The texts of :func:`_shown_texts`, in its order, without their field names: built as a plain list, half the
    cost of walking the generator (the control-character check runs on every StoryTurn of a first load; a test
    keeps the two in step)."""
    feedback, rubric = turn.feedback, turn.rubric
    texts = [turn.story, turn.question, *[option.text for option in turn.options], *turn.answers, *turn.candidates]
    if feedback is not None:
        texts += [text for text in (feedback.always, feedback.right, feedback.wrong) if text is not None]
        texts += [entry.text for entry in feedback.by_answer]
    if rubric is not None:
        texts += [rubric.key_inference, *rubric.false_inferences]
    return texts


def control_problems(st: StoryTurn) -> list[tuple[int, str, str]]:
    """``(turn, field, message)`` for each text of ``st`` holding a control character (its first, shown by code).
    The StoryTurn's texts are searched together first (nearly every StoryTurn has none: about 4 microseconds for
    one of three turns); only a StoryTurn that has one is walked field by field."""
    if not _CONTROL.search("\n".join(text for turn in st.turns for text in _plain_texts(turn))):
        return []
    return [(k, field, f"holds the control character U+{ord(found.group()):04X} at character {found.start() + 1} "
                       "(a damaged or mis-decoded file?): remove it")
            for k, turn in enumerate(st.turns) for field, text in _shown_texts(turn)
            if (found := _CONTROL.search(text))]


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


def image_problem(dataset: Dataset, image_id: str) -> str | None:
    """Why an image id does not lead to a readable picture of this dataset, or None."""
    with bombs_refused():
        return _image_problem(dataset, image_id)


def _image_problem(dataset: Dataset, image_id: str, decode: bool = False) -> str | None:
    """:func:`image_problem` inside :func:`bombs_refused` (entered once for many pictures)."""
    try:
        data = dataset.image_bytes(image_id)
    except FileNotFoundError:
        return "not found"
    except PictureError as exc:
        return str(exc)
    return header_problem(data, decode=decode)


def image_problems(dataset: Dataset, image_ids: Iterable[str], *, decode: bool = False) -> dict[str, str | None]:
    """:func:`image_problem` of each distinct id: its header and structure, no pixel decoded (tens of microseconds
    a picture, :mod:`commet.format.pictures`), so no verdict is worth keeping: hashing the bytes to look one up
    would cost more. Reading the files is most of the time on a dataset of photographs, and file reads release
    the GIL, so it runs on every core (:func:`_spread`). ``decode``: also decode the pixels (about 1 ms for
    640x480, 4 ms a megapixel; Pillow decodes without the GIL, so the threads use every core).
    """
    ids = list(dict.fromkeys(image_ids))
    with bombs_refused():
        return dict(zip(ids, _spread(functools.partial(_image_problem, dataset, decode=decode), ids), strict=True))


def _spread(work: Callable[[str], Checked], ids: list[str]) -> list[Checked]:
    """``work`` of each id, in order. The first are done one by one for ``SEQUENTIAL_CHECKS_S``; where they took at
    least ``THREADED_CHECK_S`` each (file reads, hashes and decodes, which release the GIL: photographs), the rest go
    to threads (one a core), each a contiguous share of them, else the rest are done one by one too (a small
    picture's check is mostly Python: threads would only take turns holding the GIL)."""
    done: list[Checked] = []
    started = time.perf_counter()
    for image_id in ids:
        if done and time.perf_counter() - started >= SEQUENTIAL_CHECKS_S:
            break
        done.append(work(image_id))
    rest = ids[len(done):]
    threads = min(len(rest), os.cpu_count() or 1)
    if threads < 2 or (time.perf_counter() - started) / len(done) < THREADED_CHECK_S:
        return done + [work(image_id) for image_id in rest]
    size = -(-len(rest) // (threads * SHARES_PER_THREAD))  # several shares a thread: one slow share waits less
    shares = [rest[at:at + size] for at in range(0, len(rest), size)]
    with ThreadPoolExecutor(threads, thread_name_prefix="commet-picture-check") as pool:
        for checked in pool.map(lambda share: [work(image_id) for image_id in share], shares):
            done += checked
    return done


def _keyed_twice(feedback: Feedback, texts: _Texts | None = None) -> list[tuple[str, str]]:
    """``(answer, first key)`` for each answer-keyed feedback whose key another entry already has (as :func:`_norm`
    matches keys to the previous turn's answers: case and punctuation aside)."""
    texts = _Texts() if texts is None else texts
    first: dict[str, str] = {}
    found = []
    for entry in feedback.by_answer:
        key = texts.norm(entry.answer)
        if key in first:
            found.append((entry.answer, first[key]))
        else:
            first[key] = entry.answer
    return found


def repeated_option_label(question: str) -> str | None:
    """Why the labelled options written in a question cannot be read for sure (a label used twice,
    ``A. x B. y A. z``), or None. Read as labelled options, the repeated one is glued onto another."""
    found = labelled_options(question)
    if found is None:
        return None
    stem, options = found
    labels = {label for label, _ in options}
    # in the text before the list only a second start ("A. x A. y B. z") counts: "Mr. B. Smith?" is a name
    for text, used in ((stem, {options[0][0]}), *((body, labels) for _, body in options)):
        for mark in _LABEL_MARK.finditer(text):
            label = mark.group("p") or mark.group("d")
            if label in used:
                return (f"option label {label!r} is used twice in the question: which option a reply names "
                        "would be a guess")
    return None


def _options_from_text(turn: Turn) -> bool:
    """Whether the turn's options are the ones its question's text lists (read from it, as the pipe format does,
    or none given): then a label the text uses twice makes them a guess. Options given as a field of their own
    (an importer's) are what a reply is judged by, whatever a word in the question looks like ("Company B.")."""
    if not turn.options:
        return True
    listed = labelled_options(turn.question)
    return listed is not None and listed[1] == [(o.label, o.text) for o in turn.options]


#: an answer written as an option's label, alone or before that option's text: "B", "(b)", "B. the box", "b) box"
_LABELLED_ANSWER = re.compile(r"\(?([^\W_]{1,3})(?:[.):\]]|\s*$)\s*(.*)", re.DOTALL)


def names_option(answer: str, options: list[Option], texts: _Texts) -> bool:
    """Whether an expected answer is one of the turn's options: its text, its label, or its label and text (the
    forms the judges read a reply by, spec section 7). Why: an answer key of option numbers (0, 1) or letters of
    unlabelled options is scored against nothing the respondent saw."""
    labelled = _LABELLED_ANSWER.fullmatch(answer.strip())
    if labelled is not None:
        label, rest = texts.fold(labelled.group(1)), texts.normalize(labelled.group(2))
        named = [option for option in options if option.label is not None and texts.fold(option.label) == label]
        if named:  # "A. the bag" is option A only when A is the bag
            return not rest or rest == texts.normalize(named[0].text)
    norm = texts.normalize(answer)
    return any(texts.normalize(option.text) == norm for option in options)


def _explains_option(answer: str, options: list[Option], texts: _Texts) -> bool:
    """Whether an answer names exactly one option within its words ("In the basket" for "basket"; "Because she did
    not see it" for "she did not see"): which option it is, is then no guess (an answer naming two, or none, is)."""
    labelled = _LABELLED_ANSWER.fullmatch(answer.strip())
    if labelled is not None and any(o.label is not None and texts.fold(o.label) == texts.fold(labelled.group(1))
                                    for o in options):
        return False  # "A. the bag" where A is the basket: a label says which option, and it is another
    words = texts.normalize(answer).split()
    spans: dict[str, list[tuple[int, int]]] = {}
    for option in options:
        phrase = texts.normalize(option.text).split()
        spans[" ".join(phrase)] = [(i, i + len(phrase)) for i in range(len(words) - len(phrase) + 1)
                                   if phrase and words[i:i + len(phrase)] == phrase]
    every = [span for found in spans.values() for span in found]
    # "On the kitchen table" names "kitchen table", not "kitchen" as well: words inside a longer option's are its
    named = {text for text, found in spans.items()
             if any(not any(o != (a, b) and o[0] <= a and b <= o[1] for o in every) for a, b in found)}
    return len(named) == 1


def _index_hint(answer: str, turn: Turn) -> str:
    """What to do with an answer key of option numbers or letters: which option a number names (counted from 0
    or from 1) is never guessed."""
    if not _LABELLED_ANSWER.fullmatch(answer.strip()) or any(o.label for o in turn.options):
        return ""
    return (" (the options carry no labels: an option number or letter names none of them, and whether numbers "
            "count from 0 or 1 is not guessed; write the option's text as the answer, give the options labels, "
            "or read a table with an adapter, --adapter FILE.py:FUNCTION)")


def _options_said(turn: Turn) -> str:
    said = "; ".join(f"{o.label}. {o.text}" if o.label else repr(o.text) for o in turn.options[:6])
    return said + ("; ..." if len(turn.options) > 6 else "")


def _repeated_choices(turn: Turn, texts: _Texts | None = None) -> list[tuple[str, str]]:
    """Expected answers, option texts or option labels a judge cannot tell apart (the same once case,
    punctuation and articles are set aside): which branch or option a reply names would be a guess.
    One line for each kind, naming the first pair and how many more repeats there are."""
    texts = _Texts() if texts is None else texts
    kinds: list[tuple[str, str, list[str], Callable[[str], str]]] = []  # only those with something to tell apart
    if len(turn.answers) > 1:
        kinds.append(("answers", "answers", turn.answers, texts.normalize))
    if len(turn.options) > 1:
        kinds += [("options", "options", [o.text for o in turn.options], texts.normalize),
                  ("options", "option labels", [o.label for o in turn.options if o.label is not None], texts.fold)]
    if len(turn.candidates) > 1:
        kinds.append(("candidates", "candidates", turn.candidates, texts.normalize))
    found = []
    for field, what, values, key in kinds:
        first: dict[str, int] = {}
        pairs: list[tuple[int, int]] = []
        for i, value in enumerate(values):
            same = key(value).strip()
            if not same:
                continue
            if same in first:
                pairs.append((first[same], i))
            else:
                first[same] = i
        if pairs:
            j, i = pairs[0]
            more = f" (and {len(pairs) - 1} more repeat(s))" if len(pairs) > 1 else ""
            found.append((field, f"{what} {j} and {i} are the same once case, punctuation and articles are "
                                 f"set aside ({values[j]!r}, {values[i]!r}): a judge cannot tell them apart{more}"))
    return found


def candidate_problems(turn: Turn, texts: _Texts | None = None) -> list[str]:
    """Why a turn's judge-only candidates cannot decide its answers: they must be a closed set of at least two
    that holds every expected answer, on a turn without options (options already are the closed set)."""
    if not turn.candidates:
        return []
    if turn.options:
        return ["a turn with options has no candidates: its options already are the closed set the judge uses"]
    texts = _Texts() if texts is None else texts
    problems = [] if len(turn.candidates) >= 2 else ["at least two candidates are needed, or none"]
    known = {texts.normalize(candidate) for candidate in turn.candidates}
    problems += [f"expected answer {answer!r} is not one of the candidates ({'; '.join(turn.candidates)})"
                 for answer in turn.answers if answer.strip() and texts.normalize(answer) not in known]
    return problems


def validate_storyturn(st: StoryTurn, dataset: Dataset, line: int | None = None,
                       pictures: dict[str, str | None] | None = None, *, decode_pictures: bool = True,
                       file: str | None = None, strict: bool = False, texts: _Texts | None = None) -> list[Problem]:
    """Problems of one StoryTurn (id, taxonomy, structure, feedback, branches, pictures, leaks).

    ``pictures`` caches picture checks by image id across StoryTurns (each picture is decoded once).
    ``decode_pictures=False`` only asks whether each picture is there: for checking a StoryTurn whose
    pictures are made or kept elsewhere (the LLM pipeline before painting, the review app).
    An answer found in its own turn's story is a warning: data a user imports was not written by them
    and is never refused for it. ``strict`` (``commet validate --strict``, the LLM pipeline's own
    stories) makes a verbatim leak of three words or more an error. ``texts``: the comparison forms of short texts
    made so far in a validation of many StoryTurns (:func:`validate_dataset`).
    """
    texts = _Texts() if texts is None else texts
    file = file if file is not None else dataset.source_file
    line = line if line is not None else dataset.lines.get(st.id)
    problems: list[Problem] = []
    pictures = {} if pictures is None else pictures

    def add(turn: int | None, field: str | None, message: str, severity: Severity = "error", *,
            gates: bool = True) -> None:
        problems.append(Problem(file, line, st.id, turn, field, message, severity, gates=gates))

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

    for k, field, message in control_problems(st):
        add(k, field, message)
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
            for answer, first in _keyed_twice(fb, texts):
                add(k, "feedback", f"feedback keyed twice by the previous answer {answer!r} (also as {first!r}, "
                                   "the same once case and punctuation are set aside): which text to show would be a guess")
            if k > 0 and fb.by_answer:
                previous = {texts.norm(a): a for a in st.turns[k - 1].answers}
                keyed = {texts.norm(entry.answer) for entry in fb.by_answer}
                unmatched = [entry for entry in fb.by_answer if texts.norm(entry.answer) not in previous]
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
        repeated = texts.repeated_label(turn.question)
        if repeated and not _options_from_text(turn):  # options given as a field are what a reply is judged by
            repeated = None
        if repeated:
            add(k, "question", repeated)
        for field, message in _repeated_choices(turn, texts):
            add(k, field, message)
        for message in candidate_problems(turn, texts):
            add(k, "candidates", message)
        folded: str | None = None  # the story folded: each of its normalised words is a part of it
        story: str | None = None  # normalised only where every word of an answer is in it
        question: str | None = None  # made only where an answer is found in the story (its options may name it)
        for answer in turn.answers:
            if not answer.strip():
                add(k, "answer", "empty answer")
                continue
            named = bool(turn.options) and names_option(answer, turn.options, texts)
            if turn.options and not repeated and not named and not _explains_option(answer, turn.options, texts):
                add(k, "answer", f"answer {answer!r} is none of this turn's options ({_options_said(turn)}): an "
                                 f"answer must be an option's text or its label, or name exactly one option"
                                 f"{_index_hint(answer, turn)}")
            if named:
                continue  # one of the options shown with the question (a label 'A' is no word of the story): no leak
            core = texts.leaked_core(answer)
            folded = fold(turn.story) if folded is None else folded
            if not all(word in folded for word in core.split()):
                continue  # a word of the answer is nowhere in the story: it cannot be found there
            story = _norm(turn.story) if story is None else story
            if not contains_phrase(story, core):
                continue
            question = texts.norm(turn.question) if question is None else question
            if contains_phrase(question, core) or turn.meta.get(ANSWER_IN_STORY):
                continue
            if _answer_length(core) >= VERBATIM_LEAK_WORDS:
                add(k, "answer", f"answer {answer!r} appears verbatim in this turn's story text (leak)",
                    "error" if strict else "warning", gates=False)
            else:
                add(k, "answer", f"answer {answer!r} appears in this turn's story text and is not an option "
                                 "named by the question (possible leak)", "warning", gates=False)
    return problems


def validate_dataset(dataset: Dataset, *, strict: bool = False, decode_pictures: bool = False,
                     pictures: dict[str, str | None] | None = None) -> list[Problem]:
    """Every problem of a loaded dataset: the loader's warnings, emptiness, duplicate ids, each StoryTurn.

    Leak warnings (answers found in their own story, :func:`validate_storyturn`) are listed for the first
    ``LEAK_WARNINGS_LISTED`` turns and counted in one closing warning: a benchmark whose answers are meant
    to be in the story (ToMi's containers) gives one line, not thousands. ``strict`` lists them all and
    makes verbatim ones errors. ``decode_pictures``: decode every picture too (:func:`image_problems`), as
    ``commet validate`` does. ``pictures``: each picture's verdict, found already (:func:`validate_and_hash`).
    """
    problems = list(dataset.warnings)
    if not dataset.storyturns:
        problems.append(Problem(dataset.source_file, None, None, None, None, EMPTY_DATASET))
    seen: dict[str, tuple[str, int | None, str]] = {}  # by the id in NFC: "café" written two ways is one id
    if pictures is None:
        pictures = image_problems(dataset, _picture_ids(dataset), decode=decode_pictures)
    leaks: list[Problem] = []
    texts = _Texts()
    for index, st in enumerate(dataset.storyturns):
        file, line = dataset.where(index)
        key = unicodedata.normalize("NFC", st.id)
        if key in seen:
            first_file, first_line, first_id = seen[key]
            where = f"line {first_line}" if first_file == file else f"{first_file}:{first_line or 0}"
            said = "" if first_id == st.id else (
                f": {ascii(first_id)} and {ascii(st.id)} are one id written with other code points (Unicode NFC and NFD); "
                "write them alike")
            problems.append(Problem(file, line, st.id, None, "id", f"duplicate id (first at {where}){said}"))
        else:
            seen[key] = (file, line, st.id)
        for problem in validate_storyturn(st, dataset, line, pictures, file=file, strict=strict, texts=texts):
            is_leak = problem.field == "answer" and problem.severity == "warning" and not problem.gates
            if is_leak and not strict:
                leaks.append(problem)
                if len(leaks) > LEAK_WARNINGS_LISTED:
                    continue
            problems.append(problem)
    if len(leaks) > LEAK_WARNINGS_LISTED:
        stories = len({leak.story for leak in leaks})
        problems.append(Problem(
            dataset.source_file, None, None, None, "answer",
            f"{len(leaks):,} answers in {stories:,} StoryTurns appear in their own turn's story text, "
            f"{len(leaks) - LEAK_WARNINGS_LISTED:,} of them not listed above (possible leaks: fine where the "
            "answer must be found in the story; `commet validate --strict` lists them all)", "warning",
            gates=False))
    return _one_line_per_picture(problems)


def _picture_ids(dataset: Dataset) -> list[str]:
    """The pictures the StoryTurns show, each once, in the order first shown."""
    return list(dict.fromkeys(turn.image for st in dataset.storyturns for turn in st.turns if turn.image))


def validate_and_hash(dataset: Dataset, *, strict: bool = False,
                      decode_pictures: bool = False) -> tuple[list[Problem], str | None]:
    """:func:`validate_dataset`'s problems and, where they hold no error, the dataset's content hash (None where
    they hold one): what a first load keeps in the validation cache (:mod:`commet.sources.validation_cache`).

    On :data:`CHECKED_BESIDE_FROM` StoryTurns or more, two cores share it: a forked child checks the StoryTurns'
    own rules with every picture taken as readable (:mod:`commet.forked`) while this process checks the pictures
    (reading and hashing each once) and makes the content hash from those very bytes. Where every picture passed,
    the child's problems are those :func:`validate_dataset` finds; where one did not (a refusal), the rules are
    checked here again with the pictures' verdicts. Either way the answer is the one-process answer; where no
    child can be forked (:func:`~commet.forked.fork_is_safe`) or it fails, it is made here.
    """
    from commet.forked import ForkedWork

    ids = _picture_ids(dataset)
    every_picture_readable: dict[str, str | None] = dict.fromkeys(ids)
    rules = functools.partial(validate_dataset, dataset, strict=strict, pictures=every_picture_readable)
    beside = ForkedWork(rules) if len(dataset.storyturns) >= CHECKED_BESIDE_FROM else None
    with beside or contextlib.nullcontext():
        verdicts = image_problems(dataset, ids, decode=decode_pictures)
        if beside is None or not beside.forked or any(verdict is not None for verdict in verdicts.values()):
            # all in this process: no child, or a refused picture (a child not used is stopped as the block ends)
            problems = validate_dataset(dataset, strict=strict, pictures=verdicts)
            return problems, None if has_errors(problems) else _hashed(dataset)
        digest = _hashed(dataset)  # from the bytes just checked (each picture's sha256 made as it was read)
        problems = beside.result()
    return problems, None if has_errors(problems) else digest


def _hashed(dataset: Dataset) -> str:
    """The content hash of a dataset showing its pictures (a run's default), kept by the dataset for its run."""
    digest = dataset.content_hash()
    dataset.remember_content_hash(digest)
    return digest


def _one_line_per_picture(problems: list[Problem]) -> list[Problem]:
    """A refused picture said once, where it is first used, with how many other turns use it: one mistake
    (a missing or broken file) is one line, however many turns show the picture."""
    first: dict[str, int] = {}
    uses: dict[str, int] = {}
    kept: list[Problem] = []
    for problem in problems:
        if problem.field == "image" and problem.severity == "error" and problem.message.startswith("image "):
            uses[problem.message] = uses.get(problem.message, 0) + 1
            if problem.message in first:
                continue
            first[problem.message] = len(kept)
        kept.append(problem)
    for message, index in first.items():
        if uses[message] > 1:
            kept[index] = replace(kept[index], message=f"{message} (and {uses[message] - 1} more turn(s) show it)")
    return kept


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
