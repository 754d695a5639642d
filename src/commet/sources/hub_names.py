"""The names of Hub datasets (``hf:...``, the paper's release written alone) and what is known of that
release: all that telling a dataset argument apart needs, without the Hub reader's imports (a plain folder
of JSON lines never loads :mod:`commet.sources.hub`)."""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "hf:"
GRAMMAR = "hf:OWNER/NAME[@REVISION][:config=CONFIG][:split=SPLIT]"
EXAMPLE = "hf:rrchen2026/Theory_of_Mind_CoMMET@main:split=test"


@dataclass(frozen=True)
class OfficialRelease:
    """What is known of the paper's published data (docs/official-data.md), and the paper's counts."""

    repo: str
    name: str
    licence: str
    paper: str
    authors: tuple[str, ...]
    storyturns: int
    questions: int
    pictures: int
    text_complete: int
    image_dependent: int


OFFICIAL = OfficialRelease(repo="rrchen2026/Theory_of_Mind_CoMMET", name="CoMMET", licence="MIT",
                           paper="arXiv:2603.11915",
                           authors=("Ruirui Chen", "Weifeng Jiang", "Chengwei Qin", "Cheston Tan"), storyturns=591, questions=1976, pictures=844,
                           text_complete=399, image_dependent=192)


def is_official(name: str) -> bool:
    return name.strip().lower() == OFFICIAL.repo.lower()


def is_hub_spec(text: str) -> bool:
    """``hf:...``, or the official release's name written alone (what a reader of the paper types)."""
    return text.startswith(PREFIX) or is_official(text)
