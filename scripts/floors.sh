#!/usr/bin/env bash
# Floors job: install the LOWEST versions pyproject.toml allows for every direct dependency (base and
# the extras below) into a fresh venv and run the fast tests there. Proves the lower bounds work.
# pip has no --resolution=lowest-direct: scripts/floors.py writes a constraints file pinning each
# direct dependency to its floor and pip resolves everything else as a user's install would.
# The hf/diffusers/vllm extras (torch) and the browser tests of the web apps are left to the main suite.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="providers,datasets,reports,web"
VENV="${COMMET_FLOORS_VENV:-${TMPDIR:-/tmp}/commet-floors-venv}"
python -m venv --clear "$VENV"
PY="$VENV/bin/python"
PIP=(--quiet --disable-pip-version-check)
"$PY" -m pip install "${PIP[@]}" --upgrade pip
"$PY" scripts/floors.py "$EXTRAS" > "$VENV/constraints.txt"
echo "floors: $(tr '\n' ' ' < "$VENV/constraints.txt")"
"$PY" -m pip install "${PIP[@]}" -c "$VENV/constraints.txt" -e ".[$EXTRAS]" \
  "pytest>=8.0" "pytest-asyncio>=0.23" "pytest-timeout>=2.3" "hypothesis>=6.0" "jsonschema>=4.0" "pyyaml>=6.0"
"$PY" -m pip check
# The fast tests that touch the floored packages (format + HF, engine, providers on local fake servers,
# reports, optional extras, the web apps over HTTP without a browser); each file runs in under a minute.
"$PY" -m pytest -q -p no:cacheprovider \
  tests/test_taxonomy_declared.py tests/test_hf.py tests/test_dataset_io.py tests/test_validate.py \
  tests/test_pipe_format.py tests/test_engine.py tests/test_rules_and_options.py tests/test_models_remote.py \
  tests/test_reports_analyses.py tests/test_reports_cli.py tests/test_reports_stats.py tests/test_optional_extras.py \
  tests/test_report_by.py tests/test_review_security.py tests/test_study_limits.py

# The plain install (base dependencies at their floors, no extra): the main job runs, and a command that
# needs an extra says which one in one line (exit 2) instead of a traceback.
BASE="$VENV-base"
python -m venv --clear "$BASE"
"$BASE/bin/python" -m pip install "${PIP[@]}" -c "$VENV/constraints.txt" -e .
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$BASE/bin/commet" validate sample
"$BASE/bin/commet" eval --model baseline:first-option --db "$WORK/base.sqlite" > /dev/null
for command in "report --db $WORK/base.sqlite --format html --out $WORK/report.html" \
               "convert sample --to hf --out $WORK/hf"; do
  status=0
  "$BASE/bin/commet" $command 2> "$WORK/err" || status=$?
  if [ "$status" != 2 ] || [ "$(grep -c . "$WORK/err")" != 1 ] || ! grep -q "commet-bench\[" "$WORK/err"; then
    echo "floors: 'commet $command' on the plain install should print one line naming the extra (exit $status):"
    cat "$WORK/err"
    exit 1
  fi
  echo "plain install: commet ${command%% *}: $(cat "$WORK/err")"
done
