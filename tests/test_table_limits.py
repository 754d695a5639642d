"""Tables are bounded before their rows become Python values (issue 44, point 6): a parquet file of too many
rows or too many decompressed bytes is refused from its footer, unread; a cell over its limit (text, bytes,
inside a list or a struct) is refused naming its row and column, on both readers (CoMMET's own layout and
``datasets``')."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from commet.format.problems import FormatError
from commet.sources import load_dataset
from commet.sources.folders import MAX_TABLE_ROWS, MAX_TEXT_CELL_BYTES, check_cells
from tests.test_reads_confined import ROW


def table_folder(folder: Path, table: pa.Table) -> Path:
    folder.mkdir(parents=True)
    pq.write_table(table, folder / "data.parquet", compression="zstd")
    return folder


def test_too_many_rows_are_refused_from_the_footer(tmp_path: Path) -> None:
    n = MAX_TABLE_ROWS + 1
    folder = table_folder(tmp_path / "rows", pa.table({"story_id": pa.array(range(n)), "question": ["q"] * n}))
    with pytest.raises(FormatError, match=f"has {n:,} rows, more than the {MAX_TABLE_ROWS:,}"):
        load_dataset(str(folder))


@pytest.mark.parametrize("shape", ["text", "list", "struct"])
def test_a_cell_over_its_limit_is_refused_at_its_row_and_column(tmp_path: Path, shape: str) -> None:
    big = "a" * (MAX_TEXT_CELL_BYTES + 1)
    rows = [dict(ROW, story_id=f"s{i}") for i in range(300)]  # the big cell in the second batch of 256
    values: list[object] = [row["story"] for row in rows]
    values[270] = big
    if shape == "list":
        values = [[value, "x"] for value in values]
    elif shape == "struct":
        values = [{"text": value} for value in values]
    table = pa.table({**{key: [row[key] for row in rows] for key in ROW if key != "story"}, "story": values})
    folder = table_folder(tmp_path / shape, table)
    with pytest.raises(FormatError) as caught:
        load_dataset(str(folder))
    assert ":271 " in str(caught.value) and "field=story" in str(caught.value)
    assert f"a cell of {MAX_TEXT_CELL_BYTES + 1:,} bytes" in str(caught.value)


def test_check_cells_passes_what_is_within_limits() -> None:
    check_cells(pa.record_batch({"a": ["x" * 100], "b": [b"y" * 100], "c": [[1, 2]]}), "t", 1)


SCRIPT = """
import sys
from commet.sources import load_dataset
from commet.format.problems import FormatError
try:
    load_dataset(sys.argv[1])
except FormatError as exc:
    print(str(exc).splitlines()[0])
# this process's own peak (VmHWM starts again at exec; ru_maxrss would keep the forking parent's)
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def test_a_sparse_million_row_file_costs_no_gigabytes(tmp_path: Path) -> None:
    """The issue's 4 MB file of a million rows took 3 GB and 150 s: now refused from its footer."""
    n = 1_000_000
    table = pa.table({"story_id": [f"s{i}" for i in range(n)], "task": ["false_belief_location"] * n,
                      "question": ["Where?"] * n, "answer": ["box"] * n})
    folder = table_folder(tmp_path / "million", table)
    del table
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder)], capture_output=True, text=True, timeout=120)
    message, peak_kib = done.stdout.strip().splitlines()
    assert "1,000,000 rows" in message and int(peak_kib) < 600 * 1024, (message, peak_kib)


def test_a_small_file_of_one_huge_cell_is_refused_from_its_footer(tmp_path: Path) -> None:
    """The issue's 9.4 MB parquet of one 200 MB cell took 4.1 GB: a column chunk holding more than a cell's limit
    per row is refused before any page is decompressed."""
    table = pa.table({**{key: [value] for key, value in ROW.items()}, "story": ["a" * 120_000_000]})
    folder = table_folder(tmp_path / "cell", table)
    del table
    assert (folder / "data.parquet").stat().st_size < 2_000_000
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder)], capture_output=True, text=True, timeout=120)
    message, peak_kib = done.stdout.strip().splitlines()
    assert "column 'story' holds 120,000,0" in message and "refused, not read" in message, message
    assert int(peak_kib) < 400 * 1024, peak_kib
