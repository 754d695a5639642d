"""The dataset card of a Hugging Face folder: written on export, read on import (docs/huggingface.md).

The card (``README.md``) opens with YAML front matter that the Hub and ``datasets`` read: licence,
languages, task categories, tags, size, ``configs`` (which files make which split) and
``dataset_info`` (the features, and each split's example count and size), then prose for people.
On import a third party's card gives the data files of its first config, and the dataset's name,
licence and languages.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from commet.sources.bounded import InputFileError, files_under, read_regular_file

if TYPE_CHECKING:
    from commet.format.dataset import Dataset
    from commet.format.model import StoryTurn

SPLIT = "test"
#: how deep a card's data_files patterns are looked for (CONFIG/SPLIT/0000.parquet and a folder more)
CARD_PATTERN_DEPTH = 4
#: most folder names a card's data_files pattern may have
MAX_PATTERN_PARTS = 64
DATA_DIR = "data"
CARD_FILE = "README.md"


@dataclass(frozen=True)
class SplitSizes:
    """What ``dataset_info`` says of the written split, as ``datasets`` itself records it.

    ``num_bytes`` is the Arrow size of the rows read back from the written files (what ``datasets``
    counts when it prepares them); ``download_size`` is the size of the files.
    """

    features: Any  # datasets.Features
    num_examples: int
    num_bytes: int
    download_size: int
    #: each split's name, example count and Arrow size, in order (one ``test`` split when empty)
    splits: tuple[tuple[str, int, int], ...] = ()

    def each(self) -> tuple[tuple[str, int, int], ...]:
        return self.splits or ((SPLIT, self.num_examples, self.num_bytes),)


def dataset_info_yaml(info: SplitSizes) -> list[str]:
    """The ``dataset_info`` lines of the front matter, written by ``datasets``' own card writer."""
    import yaml
    from huggingface_hub import DatasetCardData

    from commet.extras import require

    datasets = require("datasets", "the Hugging Face format")

    splits = datasets.SplitDict()
    for name, examples, size in info.each():
        splits.add(datasets.SplitInfo(name=name, num_bytes=size, num_examples=examples))
    described = datasets.DatasetInfo(features=info.features, splits=splits, download_size=info.download_size,
                                     dataset_size=info.num_bytes)
    card = DatasetCardData()
    datasets.info.DatasetInfosDict({"default": described}).to_dataset_card_data(card)
    text: str = yaml.safe_dump({"dataset_info": card.to_dict()["dataset_info"]}, sort_keys=False, allow_unicode=True)
    return text.rstrip("\n").split("\n")


_HUB_LICENSES = {"apache-2.0", "mit", "cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "cc-by-nc-sa-4.0",
                 "cc-by-nd-4.0", "cc-by-nc-nd-4.0", "cc0-1.0", "cc-by-3.0", "cc-by-sa-3.0", "cc-by-nc-3.0",
                 "odc-by", "odbl", "pddl", "gpl-3.0", "bsd-3-clause", "bsd-2-clause", "openrail", "llama2",
                 "unknown", "other"}


def hub_license(licence: str) -> str:
    """The Hub's licence id for an SPDX-style licence ("CC-BY-4.0" -> "cc-by-4.0"; unknown ones -> "other")."""
    lowered = licence.strip().lower()
    if lowered in ("", "unspecified", "unknown"):
        return "unknown"
    return lowered if lowered in _HUB_LICENSES else "other"


def size_category(count: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if count < limit:
            return name
    return "1M<n<10M"


def split_of(dataset: Dataset, storyturn: StoryTurn) -> str:
    """The split a StoryTurn is written in: the one it was read from (``meta["split"]``, else the dataset's), else
    ``test``; a name ``datasets`` would refuse is ``test`` too."""
    name = storyturn.meta.get("split")
    name = name if isinstance(name, str) else dataset.split
    return name if isinstance(name, str) and re.fullmatch(r"\w+(\.\w+)*", name) else SPLIT


def _source_prose(dataset: Dataset) -> str:
    """Where the data comes from and its licence notice, which travels with every copy."""
    source = dataset.provenance
    if source is None:
        return ""
    where = f"`{source.repo}`" + (f" at revision `{source.revision}`" if source.revision else "")
    paper = ", ".join(f"[arXiv:{a}](https://arxiv.org/abs/{a})" for a in source.arxiv)
    lines = ["## Source", "", f"Converted by CoMMET from {where}" + (f", the data of {paper}" if paper else "") + ".",
             *([f"Authors: {', '.join(source.authors)}."] if source.authors else []),
             f"Licence: {source.licence}. The source's licence and its notice apply to this copy and travel with it."]
    if source.notice:
        lines += ["", "The source's licence notice:", "", "```text", source.notice, "```"]
    elif source.licence.lower() in ("mit", "bsd-2-clause", "bsd-3-clause"):
        lines += [f"(The {source.licence} licence asks that its copyright and permission notice go with every copy: "
                  f"see {where}.)"]
    return "\n".join(lines) + "\n\n"


def dataset_card(dataset: Dataset, info: SplitSizes | None = None) -> str:
    """The Hub dataset card: YAML front matter the Hub and ``datasets`` read, then the prose; with ``info`` (the
    written files' sizes) the front matter has ``dataset_info`` too."""
    pictures = sum(1 for st in dataset.storyturns for t in st.turns if t.image)
    licence = hub_license(dataset.licence)
    yaml_lines = ["---", f"license: {licence}"]
    if licence == "other":
        yaml_lines.append(f"license_name: {json.dumps(re.sub(r'[^a-z0-9.-]+', '-', dataset.licence.lower()))}")
    yaml_lines += ["language:", *(f"- {json.dumps(code)}" for code in dataset.languages)]
    yaml_lines += ["task_categories:", *(["- visual-question-answering"] if pictures else []),
                   "- question-answering", "tags:", "- theory-of-mind", "- multi-turn", "- commet", "- storyturn",
                   *(["- multimodal"] if pictures else []),
                   f"pretty_name: {json.dumps(dataset.name)}", "size_categories:",
                   f"- {size_category(len(dataset))}", "configs:", "- config_name: default", "  data_files:",
                   *[line for name in dict.fromkeys(split_of(dataset, st) for st in dataset.storyturns) or [SPLIT]
                     for line in (f"  - split: {name}", f"    path: {DATA_DIR}/{name}-*.parquet")],
                   *(dataset_info_yaml(info) if info is not None else []), "---", ""]
    taxonomy = dataset.taxonomy
    counts: dict[str, int] = {}
    for st in dataset.storyturns:
        counts[st.task] = counts.get(st.task, 0) + 1
    task_rows = [f"| `{t.id}` | {t.name} | {', '.join(t.categories)} | {counts.get(t.id, 0)} | "
                 f"{t.description.replace('|', '/')} |" for t in taxonomy.tasks if counts.get(t.id)]
    task_rows += [f"| `{task}` | (not declared) | | {n} | |" for task, n in counts.items() if taxonomy.task(task) is None]
    turns = sum(len(st.turns) for st in dataset.storyturns)
    name = dataset.name
    prose = f"""# {name}

{dataset.description or "StoryTurns for measuring Theory of Mind with CoMMET."}

{_source_prose(dataset)}
{len(dataset)} StoryTurns, {turns} turns, {pictures} pictures. Version {dataset.version}; licence
{dataset.licence}; format `storyturn-1`.

## Format

One row per **StoryTurn**: a short story told across several turns of one conversation, one
question per turn, optional pictures, and feedback at the start of a turn that depends on how the
previous question was answered (CoMMET's `docs/storyturn.md` describes the format).

| column | type | meaning |
|---|---|---|
| `id`, `task`, `category` | string | StoryTurn id, task id, reporting category |
| `mental_states` | list of string | mental states the story probes |
| `image_dependent` | bool | the needed fact is only in a picture |
| `source` | string | where the StoryTurn comes from |
| `meta` | list of `{{key, string, int, float, bool, json}}` | free-form metadata; each value sits in the field of its type, other values as JSON text in `json` |
| `turns` | list of structs | the turns, in order |
| `turns.story`, `turns.question` | string | text told before the question, and the question |
| `turns.feedback` | `{{right, wrong, by_answer: [{{answer, text}}], always}}` or null | text shown at the start of the turn, chosen by the previous answer |
| `turns.image_id`, `turns.image` | string, Image | the picture shown with the turn |
| `turns.answers` | list of string | expected answers; more than one makes the turn a branch point |
| `turns.options` | list of `{{label, text}}` | choices offered by the question |
| `turns.candidates` | list of string | for judging only, never shown: the closed set an open answer is one of |
| `turns.rubric` | `{{key_inference, false_inferences}}` or null | what a right explanation must and must not say |
| `turns.meta` | as `meta` | per-turn metadata (question type, order of belief, ...) |

## Tasks

| task | name | categories | StoryTurns | what it probes |
|---|---|---|---|---|
{chr(10).join(task_rows)}

## Run it with CoMMET

CoMMET reads this repository by name (through `datasets`, with its cache), or a copy of it, as it is:

```bash
pip install 'commet-bench[datasets]'
commet validate hf:OWNER/REPO
commet eval --dataset hf:OWNER/REPO --model openai:gpt-4o-mini --judge openai:gpt-4o
commet report
hf download OWNER/REPO --repo-type dataset --local-dir {name}   # or a copy: commet eval --dataset {name} ...
```

From Python: `commet.load_dataset("hf:OWNER/REPO")`. With `datasets`:
`datasets.load_dataset("{name}", split="{split_of(dataset, dataset.storyturns[0]) if dataset.storyturns else SPLIT}")`.
"""
    return "\n".join(yaml_lines) + prose


#: Largest dataset card read (cards with a full ``dataset_info`` are a few hundred kilobytes).
MAX_CARD_BYTES = 16 * 1024 * 1024


def front_text(text: str) -> str | None:
    """The YAML between a card's first line ``---`` and the next line ``---`` (as ``datasets`` splits it), or None.

    Line by line, in one pass: a pattern with ``\\s*`` before a lazy body took 156 s of CPU on ``---`` and
    100,000 line breaks."""
    lines = text.splitlines()
    if not lines or lines[0] != "---":
        return None
    try:
        end = lines.index("---", 1)
    except ValueError:
        return None
    return "\n".join(lines[1:end])


def front_matter(folder: Path) -> dict[str, Any]:
    """The YAML front matter of the folder's dataset card ({} without a card, PyYAML or valid YAML)."""
    card = folder / CARD_FILE
    if not card.is_file():
        return {}
    try:
        text = read_regular_file(card, max_bytes=MAX_CARD_BYTES, what="dataset card").decode("utf-8", "replace")
    except (InputFileError, OSError):
        return {}
    body = front_text(text)
    if body is None:
        return {}
    try:
        import yaml

        front = yaml.safe_load(body) or {}
    except Exception:  # noqa: BLE001 - no PyYAML or a card that is not YAML: read the data without it
        return {}
    return front if isinstance(front, dict) else {}


def card_data_files(folder: Path) -> list[Path] | None:
    """Parquet files of the card's first config (``configs: data_files``), or None without a usable card."""
    configs = front_matter(folder).get("configs")
    if not isinstance(configs, list) or not configs:
        return None
    config = next((c for c in configs if isinstance(c, dict) and c.get("default")), configs[0])
    data_files = config.get("data_files") if isinstance(config, dict) else None
    if isinstance(data_files, str):
        data_files = [{"path": data_files}]
    patterns: list[str] = []
    for entry in data_files or []:
        paths = entry.get("path") if isinstance(entry, dict) else entry
        patterns += [paths] if isinstance(paths, str) else [p for p in paths or [] if isinstance(p, str)]
    root = folder.resolve()
    # the folder's parquet files, each visited once however links loop (a card's "**" would follow them for ever),
    # kept where one of the card's patterns names it; a card cannot point outside the folder
    present = [f for f in files_under(folder, ".parquet", CARD_PATTERN_DEPTH) if f.resolve().is_relative_to(root)]
    files = [f for pattern in patterns if not Path(pattern).is_absolute()
             for f in present if _glob_matches(f.relative_to(folder).parts, tuple(pattern.strip("/").split("/")))]
    return list(dict.fromkeys(files)) or None


def _glob_matches(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    """Whether a relative path matches a glob pattern as ``Path.glob`` reads it: ``*`` and ``?`` within one
    folder name, ``**`` any number of folders (written as data, never run against the disk).

    Each (folder, pattern part) pair is decided once, so a card of many ``**`` costs their number times the
    path's depth, never their combinations."""
    if len(pattern) > MAX_PATTERN_PARTS:  # (deeper than any folder it could match)
        return False

    @functools.cache
    def matches(at: int, of: int) -> bool:
        if of == len(pattern):
            return at == len(parts)
        if pattern[of] == "**":
            return any(matches(start, of + 1) for start in range(at, len(parts) + 1))
        return at < len(parts) and fnmatch.fnmatchcase(parts[at], pattern[of]) and matches(at + 1, of + 1)

    return matches(0, 0)


def metadata_from_card(dataset: Dataset, folder: Path) -> bool:
    """Name, licence and languages from a third party's dataset card, when it has one."""
    front = front_matter(folder)
    if not front:
        return False
    if isinstance(front.get("pretty_name"), str):
        dataset.name = front["pretty_name"]
    licence = front.get("license")
    if isinstance(licence, list) and licence:
        licence = licence[0]
    if isinstance(licence, str):
        named = front.get("license_name")
        dataset.licence = named if licence == "other" and named else licence
    languages = front.get("language")
    languages = [languages] if isinstance(languages, str) else languages
    if isinstance(languages, list) and languages and all(isinstance(x, str) for x in languages):
        dataset.languages = languages
    return True
