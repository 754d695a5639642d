"""`commet study build` passes the organiser's participant texts through to study.json, and only those given."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from commet.apps.study.build import DEFAULT_CONTACT, DEFAULT_GUIDANCE
from commet.cli import app as cli


def test_participant_texts_given_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "study.json"
    result = CliRunner().invoke(cli, ["study", "build", "--dataset", "sample", "--out", str(out),
                                      "--contact", "Ada, ada@example.org", "--minutes", "20",
                                      "--adult-confirmation", ""])
    assert result.exit_code == 0, result.output
    participant = json.loads(out.read_text())["participant"]
    # given: the contact, the duration, and an empty adult confirmation (none asked); not given: the guidance
    assert participant == {"contact": "Ada, ada@example.org", "guidance": DEFAULT_GUIDANCE,
                           "adult_confirmation": "", "minutes": 20}
    assert participant["contact"] != DEFAULT_CONTACT


def test_a_duration_under_one_minute_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "study.json"
    result = CliRunner().invoke(cli, ["study", "build", "--dataset", "sample", "--out", str(out), "--minutes", "0"])
    assert result.exit_code == 2
    assert "--minutes must be at least 1" in result.output
    assert not out.exists()
