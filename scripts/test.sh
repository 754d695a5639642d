#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run it (lint + pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --disable-pip-version-check torch==2.13.0  # the CPU build; plain torch pulls CUDA
python -m pip install --quiet --disable-pip-version-check -e ".[test]"
if ! command -v chromium >/dev/null 2>&1; then  # headless browser for the web-app tests (Debian's package)
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if [ ! -f .node/node_modules/axe-core/axe.min.js ]; then  # accessibility checks of the web pages (npm registry)
  npm install --silent --no-audit --no-fund --prefix .node axe-core
fi
ruff check src tests bench scripts
python -m pytest -q -p no:cacheprovider
# Floors job: the lowest versions pyproject.toml allows, in a separate venv, with the fast tests
# (scripts/floors.sh, a few minutes). COMMET_SKIP_FLOORS=1 skips it locally.
if [ "${COMMET_SKIP_FLOORS:-0}" != "1" ]; then
  bash scripts/floors.sh
fi
