"""Report section keys are spelled once (commet.reports.sections) and composed in the reports layer.

Every table a report holds has a declared key, the keys docs/reproducing-the-paper.md lists are
the code's, and the composition ``commet report`` is a thin layer over (``--by`` tables, the
tables chosen, a CSV folder, the brief table ``commet eval`` prints) refuses what it cannot do.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from commet.format.dataset import Dataset
from commet.reports import Bootstrap, build_report
from commet.reports.composition import BRIEF_TABLES, brief_tables, compose, grouping_keys, write_csv_folder
from commet.reports.render import ReportTargetError
from commet.reports.sections import BY_PREFIX, SOURCE_PREFIX, SUBSET_KEYS, SectionKey, by_key, source_key
from commet.sources.loading import load_dataset
from commet.store import Store
from tests.test_reports_analyses import store_path, toy_dataset  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parent.parent


def built(store_path: Path, dataset: Dataset | None = None, **options: object):  # noqa: ANN201, F811 - a Report
    """The report of every run in the store (of those made on ``dataset``, when given)."""
    with Store(store_path, read_only=True) as store:
        runs = [r for r in store.runs() if dataset is None or r.dataset_hash == dataset.content_hash()]
        assert runs
        return build_report(store, runs, bootstrap=Bootstrap(resamples=100), **options)


def test_every_table_of_a_report_has_a_declared_key(store_path: Path) -> None:  # noqa: F811
    dataset = load_dataset(store_path.parent / "toy")  # the StoryTurns the runs were made on
    report = compose(built(store_path, dataset, pool=True), by=["task", "category"], dataset=dataset)
    keys = [s.key for s in report.sections]
    made = [k for k in keys if not isinstance(k, SectionKey)]
    assert made and all(k.startswith((SOURCE_PREFIX, BY_PREFIX)) for k in made), made
    assert {"source-sample", "source-procedural", "by-task", "by-category"} <= set(made)
    assert keys[:3] == [*SUBSET_KEYS, SectionKey.SUMMARY]  # the paper's order: Tables 1 and 2, then the summary
    assert [f"{k}" for k in keys[:2]] == ["text-complete", "image-dependent"]  # written as their values


def test_keys_made_per_value() -> None:
    assert source_key("Booklet (2019)") == "source-booklet-2019"
    assert source_key("!!") == "source-none"
    assert by_key("question_type") == "by-question_type"
    assert set(BRIEF_TABLES) == set(SUBSET_KEYS)


def test_the_documented_keys_are_the_codes() -> None:
    text = (ROOT / "docs" / "reproducing-the-paper.md").read_text(encoding="utf-8")
    paragraph = text.split("Table keys (for `--table`", 1)[1].split("\n\n", 1)[0]
    documented = set(re.findall(r"`([a-z][a-z-]*(?:-[A-Z]+)?)`", paragraph))
    assert documented == {*(k.value for k in SectionKey), f"{SOURCE_PREFIX}NAME", f"{BY_PREFIX}KEY"}


def test_composition_refuses_a_table_the_report_has_not(store_path: Path) -> None:  # noqa: F811
    with pytest.raises(ReportTargetError, match=r"no table 'turn' in this report \(tables: text-complete, "):
        compose(built(store_path), tables=["summary", "turn"])
    chosen = compose(built(store_path), tables=["turns", SectionKey.SUMMARY])
    assert [s.key for s in chosen.sections] == [SectionKey.SUMMARY, SectionKey.TURNS]  # the report's order


def test_task_is_added_only_for_a_dataset_with_controls() -> None:
    plain = toy_dataset()
    assert grouping_keys(None, None) == [] and grouping_keys(["source"], plain) == ["source"]
    controlled = Dataset([st.model_copy(update={"meta": {"item": "control"}}) if k == 0 else st
                          for k, st in enumerate(plain.storyturns)], name="toy")
    assert grouping_keys(["source"], controlled) == ["source", "task"]
    assert grouping_keys(["task"], controlled) == ["task"]


def test_a_csv_folder_is_one_file_per_table_and_never_a_file(store_path: Path, tmp_path: Path) -> None:  # noqa: F811
    report = built(store_path)
    write_csv_folder(report, tmp_path / "new" / "csv")
    assert sorted(p.name for p in (tmp_path / "new" / "csv").iterdir()) == sorted(
        [f"{s.key}.csv" for s in report.sections] + (["notices.txt"] if report.notices else []))
    (tmp_path / "file").write_text("mine")
    with pytest.raises(ReportTargetError, match="is a file"):
        write_csv_folder(report, tmp_path / "file")
    assert (tmp_path / "file").read_text() == "mine"


def test_the_brief_table_shows_the_summary_and_tables_1_and_2_per_run(store_path: Path) -> None:  # noqa: F811
    from rich.console import Console

    report = built(store_path, brief=True)
    console = Console(width=80, record=True)
    for renderable in brief_tables(report):
        console.print(renderable)
    shown = console.export_text()
    assert max(len(line) for line in shown.splitlines()) <= 80
    assert shown.count("Table 1, text-complete: stories") == len(report.runs)
    assert shown.count("Table 2, image-dependent: stories") == len(report.runs)
    assert "Story accuracy" in shown and "Belief" in shown and "Percept" in shown
