#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run it (lint + pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
# torch's CPU build, explicitly: from PyTorch's CPU wheel index where it can be reached (the plain name on
# PyPI is the multi-gigabyte CUDA build on Linux); else by name, for machines whose own mirror serves CPU wheels.
TORCH=torch==2.13.0
if ! python -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '${TORCH#torch==}')" 2>/dev/null; then
  python -m pip install --quiet --disable-pip-version-check --retries 1 --timeout 20 \
    --index-url https://download.pytorch.org/whl/cpu "$TORCH" \
    || python -m pip install --quiet --disable-pip-version-check "$TORCH"
fi
python -m pip install --quiet --disable-pip-version-check -e ".[test]"
if ! command -v chromium >/dev/null 2>&1; then  # headless browser for the web-app tests (Debian's package)
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if [ ! -f .node/node_modules/axe-core/axe.min.js ]; then  # accessibility checks of the web pages (npm registry)
  if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
  fi
  npm install --silent --no-audit --no-fund --prefix .node axe-core
fi
ruff check src tests bench scripts
mypy  # the package, strict ([tool.mypy] in pyproject.toml)
# Every test, on every core (at most 4: each worker holds its own browsers and tiny models; COMMET_TEST_WORKERS
# sets the number), a whole file to a worker so that a file's shared set-up is made once, the files marked slow
# first (tests/conftest.py's SLOW_FILES). docs/performance.md, "Test suite time", has the figures.
python -m pytest -q -p no:cacheprovider -n "${COMMET_TEST_WORKERS:-auto}" --maxprocesses 4 \
  --dist loadfile --no-loadscope-reorder
# Floors job: the lowest versions pyproject.toml allows, in a separate venv, with the fast tests
# (scripts/floors.sh, a few minutes). COMMET_SKIP_FLOORS=1 skips it locally.
if [ "${COMMET_SKIP_FLOORS:-0}" != "1" ]; then
  bash scripts/floors.sh
fi
