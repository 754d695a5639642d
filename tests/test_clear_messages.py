"""Refusals are told plainly (issue 44, point 8): one line saying what is wrong, no stray log lines from
``datasets``, and a ``--columns`` mapping that gives one column two roles refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.sources.columns import ColumnMapping, ColumnsError
from tests.test_reads_confined import PNG, image_cells

runner = CliRunner()


@pytest.mark.parametrize("text", ["question=q,answer=q", "id=x,question=q,answer=x", "question=q, answer = q ",
                                  "image=pic,image_id=pic"])
def test_one_column_cannot_have_two_roles(text: str) -> None:
    with pytest.raises(ColumnsError, match="is given two roles"):
        ColumnMapping.parse(text)
    result = runner.invoke(app, ["validate", "sample", "--columns", text])
    assert result.exit_code == 2 and "is given two roles" in result.output


def test_a_truncated_parquet_is_one_line_without_datasets_logging(tmp_path: Path) -> None:
    folder = image_cells(tmp_path / "cut", "x.png")
    data = (folder / "data.parquet").read_bytes()
    (folder / "data.parquet").write_bytes(data[: len(data) - 40])
    for extra in ([], ["--columns", "id=story_id,question=question,answer=answer"]):
        result = runner.invoke(app, ["validate", str(folder), *extra])
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 2 and len(lines) == 2, result.output  # the problem, then the count
        assert "Failed to read schema" not in result.output and "magic bytes" in lines[0]


def test_a_picture_named_by_file_that_links_out_is_told_as_such(tmp_path: Path) -> None:
    (tmp_path / "outside.png").write_bytes(PNG)
    folder = tmp_path / "folder"
    (folder / "images").mkdir(parents=True)
    os.symlink(tmp_path / "outside.png", folder / "images" / "x.png")
    (folder / "turns.jsonl").write_text('{"id": "s1", "task": "false_belief_location", "category": "Belief", '
                                        '"story": "Ana.", "question": "Where, the box or the bag?", "answer": "The box",'
                                        ' "image": "x.png"}\n')
    result = runner.invoke(app, ["validate", str(folder / "turns.jsonl"), "--columns",
                                 "id=id,story=story,question=question,answer=answer,image=image"])
    assert result.exit_code == 2 and "symbolic link pointing out" in result.output, result.output
    assert "not found" not in result.output
