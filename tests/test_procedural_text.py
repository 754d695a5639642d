"""The procedural generator's text: grammar, rubrics re-derived from the world, coherence and variety.

* Every word comes from the generator's own sources (no word mangled by a substitution, "on the
  helf"); pronouns agree with the characters a sentence names ("his" for a boy, never "hers").
* What a rubric or an explanation says someone saw, heard, can see or thinks is re-derived here
  from the event log and the pictures' boxes, independently of the world model: the key inference
  must be true and every checkable false inference false.
* Coherence: who was where at each event (replayed from who left and came back), memories of the
  place the child is at, every "saw" of the lie item resting on a witnessing sentence, the
  second-order item never stating what the child thinks the grown-up heard.
* Variety: at least 3 wordings of each question and 5 frames of each critical sentence per task.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from commet.format.model import StoryTurn
from commet.generation.procedural import GENERATORS, IMAGE_DEPENDENT_TASKS, generate_storyturn
from commet.generation.procedural.builder import MIN_FRAMES, MIN_WORDINGS

SOURCES = Path(__file__).resolve().parents[1] / "src" / "commet" / "generation" / "procedural"
FEMALE = {"she", "her", "hers", "herself"}
MALE = {"he", "him", "his", "himself"}
_WORD = re.compile(r"[a-z]+")


def items(per_task: int = 24, seed: int = 8) -> list[tuple[StoryTurn, dict]]:
    out = []
    for task in sorted(GENERATORS):
        for k in range(per_task):
            storyturn, builder = generate_storyturn(task, k, seed, task in IMAGE_DEPENDENT_TASKS and k % 4 == 3)
            out.append((storyturn, builder.scenes))
    return out


@pytest.fixture(scope="module")
def sample() -> list[tuple[StoryTurn, dict]]:
    return items()


def texts(storyturn: StoryTurn) -> list[tuple[str, str, str]]:
    """(where, text, context) for everything a StoryTurn says; ``context`` is the text a pronoun in it may
    refer back to (the question, for an answer; the rubric's key inference, for a false inference)."""
    out = []
    asked = ""  # the questions so far, latest first: who an answer's "she" is
    for k, turn in enumerate(storyturn.turns):
        asked = f"{turn.question} {asked}"
        if turn.feedback is not None:
            for text in (turn.feedback.right, turn.feedback.wrong, *(f.text for f in turn.feedback.by_answer)):
                if text:
                    out.append((f"turn {k} feedback", text, asked))
        out.append((f"turn {k} story", turn.story, ""))
        out.append((f"turn {k} question", turn.question, f"{turn.story} {asked}"))
        out += [(f"turn {k} answer", a, asked) for a in turn.answers]
        if turn.rubric is not None:
            out.append((f"turn {k} key", turn.rubric.key_inference, asked))
            out += [(f"turn {k} false", f, f"{turn.rubric.key_inference} {asked}")
                    for f in turn.rubric.false_inferences]
    return [x for x in out if x[1]]


# --- grammar -------------------------------------------------------------------------------------

def source_vocabulary() -> set[str]:
    words: set[str] = set()
    for path in SOURCES.rglob("*.py"):
        words.update(_WORD.findall(path.read_text(encoding="utf-8").lower()))
    return words


def test_every_word_comes_from_the_generators_sources(sample) -> None:  # noqa: ANN001
    """A substitution that mangles a word ("on the helf") writes a word no template or pool has."""
    known = source_vocabulary()
    strays = {(st.id, where, word) for st, _ in sample for where, text, _ in texts(st)
              for word in _WORD.findall(text.lower()) if word not in known}
    assert not strays, sorted(strays)[:10]


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;:])\s+", text) if s]


def named(text: str, people: dict[str, str]) -> set[str]:
    """The pronouns ("she" / "he") of the characters a text names."""
    return {pronoun for name, pronoun in people.items() if re.search(rf"\b{re.escape(name)}\b", text)}


def test_pronouns_agree_with_the_characters_named(sample) -> None:  # noqa: ANN001
    """Where a sentence and what it follows (the sentence before, the question an answer answers) name
    characters of one gender only, every third-person pronoun is of that gender: no "his" for a girl, no
    "looked like hers" for a boy."""
    problems = []
    for st, _ in sample:
        people = {info["name"]: info["pronoun"] for info in st.meta["world"]["log"]["agents"].values()}
        for where, text, context in texts(st):
            previous = next((g for g in (named(q, people) for q in context.split("?")) if g), set())
            for sentence in sentences(re.sub(r"'[^']*[.!?]'", " ", text)):  # what people say is in the first person
                genders = named(sentence, people) | previous
                previous = named(sentence, people) or previous
                found = {w for w in _WORD.findall(sentence.lower()) if w in FEMALE | MALE}
                if len(genders) == 1 and found:
                    wrong = found - (FEMALE if genders == {"she"} else MALE)
                    if wrong:
                        problems.append((st.id, where, sentence))
    assert not problems, problems[:5]


def test_no_substitution_leftovers(sample) -> None:  # noqa: ANN001
    bad = re.compile(r"\b(him/her|her/him|his/her|he/she|she/he)\b|\{|\}|\s{2,}|\s[,.;:!?]|\b(\w+) \2\b", re.I)
    found = [(st.id, where, text) for st, _ in sample for where, text, _ in texts(st) if bad.search(text)]
    assert not found, found[:5]


# --- rubrics re-derived --------------------------------------------------------------------------

def replay_places(log: dict) -> list[dict[str, str]]:
    """Where each agent is before each event: everyone starts in the room (or where the record says
    they ended, if they never moved); ``leave`` takes them to its ``dst``, ``enter`` brings them back."""
    where = {}
    for agent, info in log["agents"].items():  # out from the start: never moves and ends out, or first comes in
        moves = [e["kind"] for e in log["events"] if e["kind"] in ("enter", "leave") and e["actor"] == agent]
        where[agent] = "?" if (moves[:1] == ["enter"] or not moves and not info["present"]) else "room"
    states = []
    for event in log["events"]:
        states.append(dict(where))
        if event["kind"] == "leave":
            where[event["actor"]] = event.get("dst", "away")
        elif event["kind"] == "enter":
            where[event["actor"]] = "room"
    return states


def relevant(log: dict, verb: str, actor_name: str | None, back: bool = False) -> list[dict]:
    """The logged events a "saw X <verb>" claim is about. A swap is two moves; where a story swaps and then swaps
    back, "swap" is the first two and "swap ... back" the last two."""
    agents = {info["name"]: a for a, info in log["agents"].items()}
    actor = agents.get(actor_name or "")
    events = log["events"]
    if verb in ("swap", "swap the two toys", "swap the papers", "swap the lunches", "pack"):
        found = [e for e in events if e["kind"] in ("move", "put") and e["actor"] == actor
                 and e.get("dst") in ("lunchbox", "lunchbox2", *(p for p in log["places"] if p.startswith("place")))]
        found = [e for e in found if e["kind"] == "move" or e.get("dst", "").startswith("lunchbox")]
        assert len(found) % 2 == 0 and (len(found) == 4 or not back), found
        return found[2:] if back else found[:2]
    if verb == "take":
        return [e for e in events if e["kind"] == "take"]
    if verb == "say":
        return [e for e in events if e["kind"] == "say" and e["actor"] == actor]
    raise AssertionError(verb)


def claim_patterns(log: dict) -> tuple[re.Pattern, re.Pattern]:
    """Claims about who saw or heard whom doing what, and who can see which things, with the story's names."""
    names = "|".join(re.escape(info["name"]) for info in sorted(log["agents"].values(), key=lambda i: -len(i["name"])))
    claim = re.compile(rf"(?P<who>{names}|\b[Ss]he|\b[Hh]e) (?P<neg>did not |)(?P<verb>see|saw|hear|heard) "
                       rf"(?P<whom>{names}|who) (?P<act>swap|pack|take|took|say)(?P<back> (?:them|the (?:two )?\w+) back)?")
    sight = re.compile(rf"(?P<who>{names}) (?P<neg>can|cannot) see (?P<only>only )?(?P<what>(?:the|all|both) [^;]+?)"
                       r"(?=;| and cannot|,|$|\.)")
    return claim, sight


def agent_of(log: dict, who: str, context: str) -> str:
    """The agent a claim's subject is: named, or "she" / "he", the first character the questions so far name."""
    agents = {info["name"]: a for a, info in log["agents"].items()}
    if who in agents:
        return agents[who]
    mentioned = sorted((context.find(name), a) for name, a in agents.items() if name in context
                       and log["agents"][a]["pronoun"] == who.lower())
    assert mentioned, (who, context)
    return mentioned[0][1]


def check_claim(log: dict, scenes: list[dict], match: re.Match, context: str) -> bool:
    """Whether a "saw / heard" claim is true of the log."""
    agent = agent_of(log, match["who"], context)
    verb = {"took": "take"}.get(match["act"], match["act"])
    whom = None if match["whom"] == "who" else match["whom"]
    events = relevant(log, verb, whom, bool(match["back"]))
    assert events, match.group(0)
    if match["verb"] in ("hear", "heard"):
        perceived = all(agent in e["present"] and agent not in e.get("busy", []) for e in events)
    else:
        perceived = all(agent in e["present"] for e in events)
    return perceived != bool(match["neg"])


def sees_box(scene: dict, agent_id: str, obj: dict) -> bool:
    agent = next(a for a in scene["agents"] if a["id"] == agent_id)
    ax, ox = (agent["bbox"][0] + agent["bbox"][2]) / 2, (obj["bbox"][0] + obj["bbox"][2]) / 2
    return obj["hidden_by"] is None and not any(min(ax, ox) < (o["bbox"][0] + o["bbox"][2]) / 2 < max(ax, ox)
                                                for o in scene["occluders"])


def check_sight(log: dict, scene: dict, match: re.Match) -> bool:
    """Whether "X can (not) see ..." is true of the picture's boxes; the things named by colour, by noun and
    surface ("the toy car on the table"), or as "all three" / "both books"."""
    agent = agent_of(log, match["who"], "")
    what = match["what"].strip()
    objects = [o for o in scene["objects"]]
    if what == "all three":
        named_ = objects
    elif what.startswith("both "):
        noun = what.split()[1].rstrip("s")
        named_ = [o for o in objects if o["noun"].startswith(noun)]
    else:
        named_ = []
        for part in re.split(r", | and ", what):
            kinds = {p["id"]: p["kind"] for p in scene["places"]}
            found = [o for o in objects if re.fullmatch(rf"the {o['colour']} one", part) or part in (
                f"the {o['noun']} on the {kinds.get(o['location'], '')}", f"the one on the {kinds.get(o['location'], '')}")]
            assert found, (part, what)
            named_ += found
    seen = {o["id"] for o in objects if sees_box(scene, agent, o)}
    if match["neg"] == "cannot":
        return not any(o["id"] in seen for o in named_)
    if match["only"]:
        return {o["id"] for o in named_} == seen & {o["id"] for o in objects if o["noun"] == named_[0]["noun"]}
    return all(o["id"] in seen for o in named_)


def test_what_rubrics_say_people_saw_heard_and_see_is_true_of_the_world(sample) -> None:  # noqa: ANN001
    checked = 0
    for st, scenes_by_id in sample:
        log = st.meta["world"]["log"]
        scenes = [scenes_by_id[t.image] for t in st.turns if t.image]
        for where, text, context in texts(st):
            if where.endswith(("question", "story")):  # questions ask and stories tell; claims are made below
                continue
            claim, sight = claim_patterns(log)
            claims = list(claim.finditer(text)) + [m for m in sight.finditer(text) if scenes]
            for match in claims:
                true = (check_sight(log, scenes[0], match) if match.re is sight else
                        check_claim(log, scenes, match, context))
                is_false_inference = where.endswith("false")
                assert true != is_false_inference, (st.id, where, text)
                checked += 1
    assert checked > 400


def test_the_perspective_rubric_never_says_the_speaker_sees_what_she_cannot(sample) -> None:  # noqa: ANN001
    for st, scenes_by_id in sample:
        if st.task != "reference_hard_perspective":
            continue
        scene = next(iter(scenes_by_id.values()))
        child = next(a for a in scene["agents"] if not a["adult"])
        for _, text, _ in texts(st):
            if re.search(rf"{child['name']} can see all three", text):
                assert len([o for o in scene["objects"] if sees_box(scene, child["id"], o)]) == 3


# --- coherence -----------------------------------------------------------------------------------

def test_who_was_there_agrees_with_who_left_and_came_back(sample) -> None:  # noqa: ANN001
    """Each event's record of who was there is what leaving and coming back make it: nobody is at a
    purchase in a shop they never went to, nobody hears a claim in a room they had left."""
    for st, _ in sample:
        log = st.meta["world"]["log"]
        states = replay_places(log)
        for k, event in enumerate(log["events"]):
            # coming in and going out are recorded with who is in the room once they have done it
            places = states[k + 1] if event["kind"] in ("enter", "leave") and k + 1 < len(states) else states[k]
            if event["kind"] in ("enter", "leave") and k + 1 == len(states):
                places = {**states[k], event["actor"]: "room" if event["kind"] == "enter" else event.get("dst")}
            if event["kind"] in ("harm", "kindness") and "where" in event and event["where"] not in ("room",):
                continue  # before the story: only the one it happened to was there
            here = event.get("where", "room")
            expected = {a for a, p in places.items() if p == here}
            assert set(event["present"]) <= expected | {"?"} or set(event["present"]) == expected, \
                (st.id, event, places)
            if here != "room":
                assert set(event["present"]) == expected, (st.id, event)


def test_stories_keep_their_places_times_and_witnesses(sample) -> None:  # noqa: ANN001
    for st, _ in sample:
        story = " ".join(t.story for t in st.turns)
        log = st.meta["world"]["log"]
        assert not re.search(r"\b(train|station|platform|airport|announcement)\b", story.lower()), st.id
        if st.task == "emotion_reminder":  # the memory is of the place the child is at today
            places = {e["where"] for e in log["events"] if e["kind"] in ("harm", "kindness")}
            assert len(places) == 1 and story.lower().count(f"the {next(iter(places))}") >= 2, story
            assert "last week" in story.lower() and re.search(r"\b(today|this morning)\b", story.lower())
        if st.task == "lie_vs_false_statement":  # every "saw" rests on a sentence saying the person sees it
            for where, text, _ in texts(st):
                if "feedback" in where:
                    continue
                for match in re.finditer(r"([A-Z][a-z]+) saw (?:who|[A-Z][a-z]+) (?:take|took)", text):
                    witness = [s for s in sentences(st.turns[0].story) if match[1] in s and re.search(
                        r"\b(sees|watches)\b", s)]
                    assert witness or st.image_dependent, (st.id, text)
        if st.task == "second_order_belief_desire":  # the key inference is left to the reader
            child = next(info["name"] for info in log["agents"].values() if not info["adult"])
            assert not re.search(rf"{child} (thinks|believes|is sure|knows)", story), story
            assert not re.search(r"\b(knew|thinks|heard)\b", story), story


# --- variety -------------------------------------------------------------------------------------

def test_every_question_has_three_wordings_and_every_critical_sentence_five_frames() -> None:
    wordings: dict[tuple[str, str], set[str]] = defaultdict(set)
    frames: dict[tuple[str, str], set[int]] = defaultdict(set)
    for st, _ in items(per_task=60, seed=9):
        names = [info["name"] for info in st.meta["world"]["log"]["agents"].values()]
        for turn in st.turns:
            question = turn.question
            for text in sorted([*names, *(o.text for o in turn.options)], key=len, reverse=True):
                question = question.replace(text, "_")
            form = " ".join(w for w in _WORD.findall(question.lower()) if len(w) > 2)
            wordings[(st.task, str(turn.meta["asks"]))].add(form)
        for key, frame in st.meta["world"].get("frames", {}).items():
            frames[(st.task, key)].add(frame)
    thin = {k: v for k, v in wordings.items() if len(v) < MIN_WORDINGS}
    assert not thin, thin
    few = {k: len(v) for k, v in frames.items() if len(v) < MIN_FRAMES}
    assert not few, few
    assert {task for task, _ in frames} == set(GENERATORS)
