"""Surface cues about people: where each is mentioned, where each stands in the pictures, what the feedback said.

Why: a generator can leak an answer through who is named first, through the n-th mention of a
person falling before or after another's, through where a role is drawn in the pictures, or
through the words of earlier feedback, without any single story word doing it. Each function
here turns one such surface into **pseudo-words** about the person the question asks about (the
first person it names); the audit's cue readers (:mod:`commet.generation.shallow_readers`) learn
one pseudo-word per (task, turn) that switches between two answers, on one dataset, and are
scored on another. None of them reads what anyone sees, knows or wants.

* :func:`mention_cues`: the asked person's rank by first and by last mention among the people
  the story names, and, for each of their first :data:`MENTIONS` mentions, who is named just
  before and just after it and whether it comes before each other person's mention of the same
  rank;
* :func:`picture_cues`: in each picture shown so far (and the latest) where the asked person is, their
  rank from the left among the people, which tenth of the width they stand in, which half, their
  size (a grown-up or a child) and their shirt colour. Whether they are in a picture at all is the
  story's own fact (who was in the room), so the reader only uses pictures that show the asked
  person in every item it was trained on (:func:`always_shown`). Beside the asked person, it reads
  which tenths of the width are taken by a child and by a grown-up, whoever they are (a role always
  drawn at one spot tells who is there without looking at anyone's clothes);
* :func:`feedback_cues`: the words of the feedback texts shown so far, and whether they name the
  asked person;
* :func:`statistics_cues`: sizes and counts (sentences, words and pronouns of the turn and of the
  story so far, the question's words, the pictures' count, width, places and screens): a story fact
  told in longer sentences or with more pronouns, whatever the words;
* :func:`census_cues`: what a reviewer's blunter readers count: the story's exact length as thresholds (a fact
  told in a few more words is read off a learned cut, which tens of words hide), how many people it names and
  whether the asked person is the last named, the first-named person's gender (the first she- or he-form after
  them), and the latest picture's people, grown-ups, things and thing colours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

#: Mentions of the asked person read one by one (the n-th mention's neighbours and order).
MENTIONS = 6
_NAME = re.compile(r"(?:(?:Mrs?|Ms|Dr)\. )?[A-Z][a-z]+(?: [A-Z][a-z]+)?")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]['\u2019\"]?\s+|['\u2018\"]\s*)$")
_WORD = re.compile(r"[a-z0-9]+")
#: Capitalised words that are never people.
_NOT_PEOPLE = frozenset({
    "I", "Mmm", "Oh", "Yes", "No", "Great", "Sorry", "Bad", "Then", "The", "A", "An", "It", "Later", "When", "While",
    "At", "Back", "From", "Feeling", "Whoever", "Just", "Soon", "Today", "This", "Last", "After", "Before", "Now",
    "Out", "Inside", "Outside", "Either", "One", "Of", "There", "In", "On", "Every", "During", "Over", "As", "But",
    "First", "Look", "Not", "Think", "Why", "What", "How", "Is", "Does", "Did", "Was", "Where", "Which", "Who",
    "Should", "Can", "Please", "Get", "Right", "Suddenly", "Remember", "Actually", "Good", "Well", "That", "Because",
    "Both", "Nothing", "Some", "Here", "Let", "With", "For", "Once", "Later on", "Wow", "Mum", "Sadly"})


def people(texts: Iterable[str]) -> list[str]:
    """The people a text names, in order of first mention: capitalised words (or titled names) that occur at least
    once where no sentence starts, or whose lower-case form the text never uses (a name that only ever starts a
    sentence is still a name)."""
    texts = list(texts)
    lower = {w for text in texts for w in _WORD.findall(text)}
    found: dict[str, bool] = {}
    for text in texts:
        for match in _NAME.finditer(text):
            name, start = match.group(), match.start()
            if name.split()[0] in _NOT_PEOPLE:  # "Later Sam": the word that starts the sentence is no name
                if " " not in name or name.split()[1] in _NOT_PEOPLE:
                    continue
                name, start = name.split()[1], start + len(name.split()[0]) + 1
            inner = not _SENTENCE_START.search(text[:start]) or name.split()[0].lower() not in lower
            found[name] = found.get(name, False) or inner
    return [name for name, inner in found.items() if inner]


#: where a word starts: a known person's mention can begin only there
_WORD_START = re.compile(r"\b\w")


def _sequence(text: str, names: Sequence[str]) -> list[str]:
    """Every mention of a known person in ``text``, in order (longest names first, so "Mrs. Lee" is one): each
    name is tried where a word starts and must end where a word ends (no pattern built from the names)."""
    if not names:
        return []
    longest_first = sorted(set(names), key=len, reverse=True)
    found: list[str] = []
    at = 0
    for start in _WORD_START.finditer(text):
        if start.start() < at:
            continue
        for name in longest_first:
            end = start.start() + len(name)
            if text.startswith(name, start.start()) and (end == len(text) or not (text[end].isalnum() or
                                                                                   text[end] == "_")):
                found.append(name)
                at = end
                break
    return found


def asked_person(question: str, names: Sequence[str]) -> str | None:
    """The first known person the question names."""
    sequence = _sequence(question, names)
    return sequence[0] if sequence else None


def mention_cues(question: str, story: str, names: Sequence[str]) -> frozenset[str]:
    """Pseudo-words on where the asked person is mentioned among the others (see the module docstring)."""
    asked = asked_person(question, names)
    sequence = _sequence(story, names)
    if asked is None or asked not in sequence:
        return frozenset({"@m:asked-unnamed"})
    first = list(dict.fromkeys(sequence))
    last = list(dict.fromkeys(reversed(sequence)))
    rank = {name: k + 1 for k, name in enumerate(first)}
    cues = {f"@m:first-rank={rank[asked]}", f"@m:last-rank={last.index(asked) + 1}",
            f"@m:count={min(sequence.count(asked), 9)}"}
    at: dict[str, list[int]] = {}
    for position, name in enumerate(sequence):
        at.setdefault(name, []).append(position)
    for n, position in enumerate(at[asked][:MENTIONS], start=1):
        before = f"P{rank[sequence[position - 1]]}" if position > 0 else "start"
        after = f"P{rank[sequence[position + 1]]}" if position + 1 < len(sequence) else "end"
        cues |= {f"@m:n{n}-prev={before}", f"@m:n{n}-next={after}"}
        for other, positions in at.items():
            if other != asked and len(positions) >= n:
                cues.add(f"@m:n{n}-{'before' if position < positions[n - 1] else 'after'}-P{rank[other]}")
    return frozenset(cues)


def _box(entity: Mapping[str, object]) -> tuple[float, float, float, float] | None:
    box = entity.get("bbox")
    if not isinstance(box, list) or len(box) != 4 or not all(isinstance(v, (int, float)) for v in box):
        return None
    return float(box[0]), float(box[1]), float(box[2]), float(box[3])


def picture_cues(question: str, pictures: Sequence[Mapping[str, object]], names: Sequence[str]) -> frozenset[str]:
    """Pseudo-words on the asked person in each picture shown so far (``@p1:``, ``@p2:`` ...) and the latest
    (``@pl:``): ``@p1:shown`` when they are in it, then their rank from the left among the people, tenth and
    half of the width, size and shirt."""
    asked = asked_person(question, names)
    cues: set[str] = set()
    labelled = [(f"p{k + 1}", scene) for k, scene in enumerate(pictures[:8])] + [("pl", s) for s in pictures[-1:]]
    for label, scene in labelled:
        listed = scene.get("agents")
        agents = [a for a in listed if isinstance(a, dict) and _box(a) is not None] if isinstance(listed, list) else []
        width = float(scene.get("width", 640) or 640)  # type: ignore[arg-type]
        placed = sorted(agents, key=lambda a: _box(a)[0])  # type: ignore[index]
        for agent in placed:
            x0, _, x1, _ = _box(agent)  # type: ignore[misc]
            who = "adult" if agent.get("adult") else "child"
            cues.add(f"@{label}:{who}-at-tenth={min(int((x0 + x1) / 2 / width * 10), 9)}")
        mine = [k for k, a in enumerate(placed) if a.get("name") == asked]
        if not mine:
            continue
        k = mine[0]
        cues.add(f"@{label}:shown")
        x0, y0, x1, y1 = _box(placed[k])  # type: ignore[misc]
        centre = (x0 + x1) / 2 / width
        cues |= {f"@{label}:rank={k + 1}", f"@{label}:rank-from-right={len(placed) - k}",
                 f"@{label}:tenth={min(int(centre * 10), 9)}", f"@{label}:{'left' if centre < 0.5 else 'right'}-half",
                 f"@{label}:tall={int((y1 - y0) // 40)}", f"@{label}:shirt={placed[k].get('colour')}"}
    return frozenset(cues)


def always_shown(cue_sets: Iterable[frozenset[str]], words: Iterable[str]) -> list[str]:
    """The anonymous words, and the asked person's words of pictures that show them in every one of ``cue_sets``:
    whether someone is in a picture is what the story tells (who was there), not a surface feature, so no rule
    may switch on it."""
    labels: set[str] | None = None
    for cues in cue_sets:
        mine = {w[1:].split(":")[0] for w in cues if w.endswith(":shown")}
        labels = mine if labels is None else labels & mine
    return [w for w in words if "-at-tenth=" in w
            or (labels and w[1:].split(":")[0] in labels and not w.endswith(":shown"))]


def feedback_cues(question: str, feedback: Sequence[str], names: Sequence[str]) -> frozenset[str]:
    """The words of the feedback shown so far (``F:word``), and whether it names the asked person first or at all."""
    text = " ".join(t for t in feedback if t)
    cues = {f"F:{w}" for w in _WORD.findall(text.lower())}
    asked = asked_person(question, names)
    sequence = _sequence(text, names)
    if asked is not None and asked in sequence:
        cues.add("F:@asked-named")
        if sequence[0] == asked:
            cues.add("F:@asked-named-first")
    return frozenset(cues)


_PRONOUN = re.compile(r"\b(?:she|her|hers|herself|he|him|his|himself|they|them|their|themselves)\b")
_SENTENCE = re.compile(r"(?<![.!?])[.!?]+['\u2019\"]?(?:\s|$)")  # (from a run's first mark only: linear time)


def statistics_cues(stories: Sequence[str], question: str, pictures: Sequence[Mapping[str, object]]) -> frozenset[str]:
    """Pseudo-words on sizes and counts that say nothing about anyone's mind: sentences, words and pronouns of the
    turn's own story and of the story so far (words in tens), words of the question, pictures shown so far, and the
    latest picture's width and how many places and screens it draws (not who or what is in it: that is the story's
    own fact). A frame or a crossed story fact told in longer sentences, or with more pronouns, is read off them."""
    turn, story = (stories[-1] if stories else "") or "", " ".join(s for s in stories if s)
    cues = {f"#turn-sentences={len(_SENTENCE.findall(turn))}", f"#story-sentences={len(_SENTENCE.findall(story))}",
            f"#turn-words={len(turn.split()) // 10}", f"#story-words={len(story.split()) // 10}",
            f"#turn-pronouns={len(_PRONOUN.findall(turn.lower()))}",
            f"#story-pronouns={len(_PRONOUN.findall(story.lower()))}",
            f"#question-words={len(question.split())}", f"#pictures={len(pictures)}"}
    if pictures:
        scene = pictures[-1]
        cues.add(f"#width={scene.get('width')}")
        for key in ("places", "occluders"):
            listed = scene.get(key)
            cues.add(f"#{key}={len(listed) if isinstance(listed, list) else 0}")
    return frozenset(cues)


_SHE_HE = re.compile(r"\b(she|her|herself|he|him|his|himself)\b")
#: Steps of the story-length thresholds (``#words>=k``, ``#chars>=k``).
WORD_STEP, CHAR_STEP = 4, 20


def census_cues(stories: Sequence[str], question: str, pictures: Sequence[Mapping[str, object]],
                names: Sequence[str]) -> frozenset[str]:
    """Pseudo-words of :func:`census_cues`'s kind (module docstring): counts and firsts and lasts of people and
    picture elements, none of which says what anyone sees, knows or wants."""
    story = " ".join(s for s in stories if s)
    words, chars = len(story.split()), len(story)
    cues = {f"#words>={k}" for k in range(WORD_STEP, words + 1, WORD_STEP)}
    cues |= {f"#chars>={k}" for k in range(CHAR_STEP, chars + 1, CHAR_STEP)}
    sequence = _sequence(story, names)
    turn_sequence = _sequence((stories[-1] if stories else "") or "", names)
    asked = asked_person(question, names)
    cues |= {f"#people={len(set(sequence))}", f"#turn-people={len(set(turn_sequence))}"}
    if sequence:
        cues.add(f"@last-named-asked={sequence[-1] == asked}")
        after = story[story.find(sequence[0]):]
        gender = _SHE_HE.search(after.lower())
        cues.add(f"@first-named-{'she' if gender and gender.group(1) in ('she', 'her', 'herself') else 'he'}")
    if turn_sequence:
        cues.add(f"@turn-last-named-asked={turn_sequence[-1] == asked}")
    if pictures:
        scene = pictures[-1]
        agents, things = ([e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
                          for listed in (scene.get("agents"), scene.get("objects")))
        things = [o for o in things if o.get("visible", True) is not False]
        cues |= {f"#agents={len(agents)}", f"#adults={sum(bool(a.get('adult')) for a in agents)}",
                 f"#things={len(things)}", f"#thing-colours={len({o.get('colour') for o in things})}"}
    return frozenset(cues)
