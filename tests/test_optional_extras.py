"""A command that needs a missing optional extra says which one, in one line, exit 2, no traceback.

Each case runs the real ``commet`` entry point in a subprocess whose ``sys.modules`` hides the
extra's modules (a ``None`` entry makes ``import`` fail as if the package were not installed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app

SCRIPT = """
import sys
for name in {hidden!r}:
    sys.modules[name] = None
sys.argv = ["commet", *{argv!r}]
from commet.cli import main
main()
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results store with one finished run, and a one-row parquet file."""
    root = tmp_path_factory.mktemp("extras")
    result = CliRunner().invoke(app, ["eval", "--model", "baseline:first-option", "--db", str(root / "r.sqlite")])
    assert result.exit_code == 0, result.output
    return root


def run_hidden(hidden: list[str], argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "test", "GEMINI_API_KEY": "test",
           "GOOGLE_API_KEY": "test", "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, "-c", SCRIPT.format(hidden=hidden, argv=argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


CASES = [
    ("reports", ["jinja2"], ["report", "--db", "r.sqlite", "--format", "html", "--out", "out.html"]),
    ("reports", ["matplotlib"], ["report", "--db", "r.sqlite", "--format", "html", "--out", "out.html"]),
    ("datasets", ["datasets"], ["convert", "sample", "--to", "hf", "--out", "hub"]),
    ("datasets", ["pyarrow", "pyarrow.parquet"], ["stats", "one.parquet"]),
    ("openai", ["openai"], ["eval", "--model", "openai:gpt-4o-mini", "--db", "o.sqlite"]),
    ("openai", ["openai"], ["eval", "--model", "baseline:first-option", "--judge", "openai:gpt-4o", "--db", "j.sqlite"]),
    ("anthropic", ["anthropic"], ["eval", "--model", "anthropic:claude-test", "--db", "a.sqlite"]),
    ("google", ["google.genai"], ["eval", "--model", "google:gemini-test", "--db", "g.sqlite"]),
    ("hf", ["torch", "transformers"], ["eval", "--model", "hf:some/model", "--db", "h.sqlite"]),
    ("vllm", ["vllm"], ["eval", "--model", "vllm:some/model", "--db", "v.sqlite"]),
    ("web", ["fastapi", "uvicorn"], ["review", "serve", "--dataset", "sample", "--db", "review.sqlite"]),
    ("diffusers", ["diffusers"], ["generate", "llm", "--model", "baseline:first-option", "--image-model",
                                  "diffusers:some/model", "--task", "diverse_desire", "--out", "gen"]),
]


@pytest.mark.parametrize(("extra", "hidden", "argv"), CASES, ids=[f"{c[0]}-{c[1][0]}-{c[2][0]}" for c in CASES])
def test_missing_extra_is_one_line_naming_it(workspace: Path, extra: str, hidden: list[str], argv: list[str]) -> None:
    if argv[0] == "stats":
        (workspace / "one.parquet").write_bytes(b"PAR1")  # never opened: pyarrow is missing first
    result = run_hidden(hidden, argv, workspace)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr and len(lines) == 1, result.stderr[-2000:]
    assert f"[{extra}]'" in lines[0] and "pip install " in lines[0], lines[0]  # as CoMMET was installed
    assert not any((workspace / name).exists() for name in ("out.html", "hub", "gen"))
