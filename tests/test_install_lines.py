"""Install lines that work for how CoMMET was installed (issue 45, point 6): a checkout's, a folder's, an index's.

The package is not on a package index: ``pip install 'commet-bench[X]'`` cannot work for someone who cloned
the repository. Each case below installs a real (tiny) distribution's record the way pip writes it (PEP 610's
``direct_url.json``) and asks the advice a missing extra gets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
CHECKOUT = SRC.parent


def advice(cwd: Path, path: list[Path]) -> str:
    """The install line for the 'datasets' extra, as a fresh interpreter started in ``cwd`` computes it."""
    done = subprocess.run([sys.executable, "-c", "from commet.extras import install_command as i; "
                           "print(i('datasets'))"], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(map(str, path))})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_checkout_says_pip_install_e_of_the_checkout(tmp_path: Path) -> None:
    assert advice(CHECKOUT, [SRC]) == "pip install -e '.[datasets]'"  # inside the checkout: the README's form
    assert advice(tmp_path, [SRC]) == f"pip install -e '{CHECKOUT}[datasets]'"  # elsewhere: where it is


def _installed_copy(site: Path, direct_url: dict[str, object] | None) -> None:
    """The package copied into ``site`` as an installer puts it, with its dist-info (and direct_url.json)."""
    import shutil

    shutil.copytree(SRC / "commet", site / "commet", ignore=shutil.ignore_patterns("__pycache__"))
    info = site / "commet_bench-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: commet-bench\nVersion: 0\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))


@pytest.mark.parametrize(("direct_url", "expected"), [
    (None, "pip install 'commet-bench[datasets]'"),  # from an index
    ({"url": "file:///opt/src/commet", "dir_info": {}}, "pip install '/opt/src/commet[datasets]'"),  # from a folder
    ({"url": "file:///opt/src/commet", "dir_info": {"editable": True}}, "pip install -e '/opt/src/commet[datasets]'"),
    ({"url": "https://example.org/commet_bench-0-py3-none-any.whl", "archive_info": {}},
     "pip install 'commet-bench[datasets]'"),
])
def test_an_installed_copy_says_what_reinstalls_it_with_the_extra(tmp_path: Path, direct_url: dict[str, object] | None,
                                                                   expected: str) -> None:
    site = tmp_path / "site"
    _installed_copy(site, direct_url)
    assert advice(tmp_path, [site]) == expected
