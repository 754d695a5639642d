"""Every walk of a folder CoMMET does is safe against symbolic links that loop (``ln -s . again``).

A walk that follows such links grows as links^depth: 45 self-links made one take 30 s and 1.5 GB.
Each case here runs in a fresh process under a time limit, so a walk that loops fails the test
instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FALSE_BELIEF

SOURCE = str(Path(__file__).resolve().parent.parent / "src")
LINKS = 45


def looping(folder: Path) -> Path:
    """``folder`` with 45 symbolic links to itself."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(LINKS):
        os.symlink(".", folder / f"again{n}")
    return folder


def within(seconds: float, code: str) -> str:
    """Run ``code`` in a fresh Python with CoMMET's source first on the path; its stdout, or fail past ``seconds``."""
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=seconds,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join([SOURCE, os.environ.get("PYTHONPATH", "")])})
    except subprocess.TimeoutExpired:
        pytest.fail(f"a walk did not end within {seconds} s: it follows looping links")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_folder_of_json_lines_beside_looping_links_loads(tmp_path: Path) -> None:
    folder = looping(tmp_path / "table")
    (folder / "data").mkdir()
    (folder / "data" / "test.jsonl").write_text(json.dumps(FALSE_BELIEF) + "\n")
    out = within(30, f"from commet.sources import load_dataset; print(len(load_dataset({str(folder)!r})))")
    assert out.strip() == "1"


def test_a_dataset_card_whose_pattern_says_everywhere_reads_each_file_once(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    from commet.sources import load_dataset
    from commet.sources.hf import save_hf

    folder = tmp_path / "hub"
    save_hf(load_dataset("sample"), folder)
    card = (folder / "README.md").read_text()
    assert "path: data/test-*.parquet" in card
    (folder / "README.md").write_text(card.replace("path: data/test-*.parquet", "path: '**/*.parquet'"))
    looping(folder)
    out = within(30, f"from commet.sources import load_dataset; print(len(load_dataset({str(folder)!r})))")
    assert out.strip() == str(len(load_dataset("sample")))


def test_a_local_model_folder_with_a_link_back_up_is_fingerprinted(tmp_path: Path) -> None:
    folder = looping(tmp_path / "model")
    (folder / "config.json").write_text("{}")
    code = ("from pathlib import Path; from commet.models.transformers_model import files_fingerprint; "
            f"print(files_fingerprint(Path({str(folder)!r})))")
    first = within(30, code)
    (folder / "config.json").write_text('{"changed": true}')
    assert within(30, code) != first  # the file's content still counts
