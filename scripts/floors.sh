#!/usr/bin/env bash
# Floors job: install the LOWEST versions allowed for every direct dependency (the base ones in pyproject.toml
# and those of the extras below, src/commet/builtin_plugins.py's Extra rows) into a fresh venv of the LOWEST
# Python pyproject.toml declares (requires-python), and run the fast tests there. Proves the lower bounds work
# where users with the oldest supported setup will run them.
# pip has no --resolution=lowest-direct: scripts/floors.py writes a constraints file pinning each
# direct dependency to its floor and pip resolves everything else as a user's install would.
# The hf/diffusers/vllm extras (torch) and the browser tests of the web apps are left to the main suite.
#
# The interpreter: COMMET_FLOORS_PYTHON if set; else the declared minimum (python3.10, or pyenv's 3.10.x)
# where one is installed; else this machine's python, saying so (the job then proves the floors on it only).
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="providers,datasets,reports,web"
# inspect-ai (from the floor the inspect extra declares) requires Python 3.11: on an older Python its floor is
# proven in a second venv of the first Python >= 3.11 found
LATE_EXTRA="inspect"
LATE_PYTHON="3.11"
MINIMUM="$(sed -n 's/^requires-python *= *">= *\([0-9.]*\)".*/\1/p' pyproject.toml)"
find_python() {  # an interpreter of version $1 exactly ("$1+": or later), else nothing
  local wanted="${1%+}" candidate
  for candidate in "python$wanted" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$wanted".*/bin/python python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import sys; v = sys.version_info[:2]; \
        w = tuple(map(int, '$wanted'.split('.'))); sys.exit(not (v >= w if '$1'.endswith('+') else v == w))" \
        2>/dev/null; then
      echo "$candidate"; return
    fi
  done
}
PYTHON="${COMMET_FLOORS_PYTHON:-$(find_python "$MINIMUM")}"
PYTHON="${PYTHON:-python}"
VERSION="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [ "$VERSION" != "$MINIMUM" ]; then
  echo "floors: Python $MINIMUM (requires-python) is not installed here; running on Python $VERSION," \
       "so the floors are proven on $VERSION only (set COMMET_FLOORS_PYTHON to a $MINIMUM interpreter)"
fi
echo "floors: Python $VERSION ($PYTHON)"
INSPECT_TESTS=()
if "$PYTHON" -c "import sys; sys.exit(sys.version_info[:2] < (${LATE_PYTHON/./, }))"; then
  EXTRAS="$EXTRAS,$LATE_EXTRA"
  INSPECT_TESTS=(tests/test_inspect_task.py)
fi
VENV="${COMMET_FLOORS_VENV:-${TMPDIR:-/tmp}/commet-floors-venv}"
"$PYTHON" -m venv --clear "$VENV"
PY="$VENV/bin/python"
PIP=(--quiet --disable-pip-version-check)
"$PY" -m pip install "${PIP[@]}" --upgrade pip
# floors.py reads pyproject.toml with tomllib, which Python 3.10 lacks: tomli, as the base install has it there
"$PY" -c "import tomllib" 2>/dev/null || "$PY" -m pip install "${PIP[@]}" "tomli>=2.0"
"$PY" scripts/floors.py "$EXTRAS" > "$VENV/constraints.txt"
echo "floors: $(tr '\n' ' ' < "$VENV/constraints.txt")"
"$PY" -m pip install "${PIP[@]}" -c "$VENV/constraints.txt" -e ".[$EXTRAS]" \
  "pytest>=8.0" "pytest-asyncio>=0.23" "pytest-timeout>=2.3" "hypothesis>=6.0" "jsonschema>=4.0" "httpx>=0.28.1"
"$PY" -m pip check
# The fast tests that touch the floored packages (format + HF and Hub datasets, engine, providers on local fake
# servers, reports, optional extras, the web apps over HTTP without a browser, the inspect task); each file runs
# in under a minute.
"$PY" -m pytest -q -p no:cacheprovider \
  tests/test_taxonomy_declared.py tests/test_hf.py tests/test_hub_datasets.py tests/test_dataset_io.py \
  tests/test_validate.py tests/test_pipe_format.py tests/test_engine.py tests/test_rules_and_options.py \
  tests/test_models_remote.py tests/test_reports_analyses.py tests/test_reports_cli.py tests/test_reports_stats.py \
  tests/test_optional_extras.py tests/test_report_by.py tests/test_review_security.py tests/test_study_limits.py \
  tests/test_dependencies.py "${INSPECT_TESTS[@]}"

if [ "${#INSPECT_TESTS[@]}" = 0 ]; then  # the inspect extra at its floors, on the first Python that can have it
  LATE="$(find_python "$LATE_PYTHON+")"
  if [ -z "$LATE" ]; then
    echo "floors: no Python >= $LATE_PYTHON here: the '$LATE_EXTRA' extra's floors are not proven"
  else
    echo "floors: the '$LATE_EXTRA' extra on Python $("$LATE" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    "$LATE" -m venv --clear "$VENV-$LATE_EXTRA"
    LPY="$VENV-$LATE_EXTRA/bin/python"
    "$LPY" -m pip install "${PIP[@]}" --upgrade pip
    # its own dependencies at their floors; the base ones as it needs them (inspect-ai 0.3.285 wants pydantic 2.13)
    "$LPY" scripts/floors.py "$LATE_EXTRA" --only-extras > "$VENV-$LATE_EXTRA/constraints.txt"
    echo "floors: $(tr '\n' ' ' < "$VENV-$LATE_EXTRA/constraints.txt")"
    "$LPY" -m pip install "${PIP[@]}" -c "$VENV-$LATE_EXTRA/constraints.txt" -e ".[$LATE_EXTRA]" "pytest>=8.0" \
      "pytest-asyncio>=0.23" "pytest-timeout>=2.3"
    "$LPY" -m pip check
    "$LPY" -m pytest -q -p no:cacheprovider tests/test_inspect_task.py
  fi
fi

# The plain install (base dependencies at their floors, no extra): the main job runs, and a command that
# needs an extra says which one in one line (exit 2) instead of a traceback.
BASE="$VENV-base"
"$PYTHON" -m venv --clear "$BASE"
"$BASE/bin/python" -m pip install "${PIP[@]}" -c "$VENV/constraints.txt" -e .
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$BASE/bin/commet" validate sample
"$BASE/bin/commet" eval --model baseline:first-option --db "$WORK/base.sqlite" > /dev/null
printf 'db = "%s"\nout = "%s"\nformat = "markdown"\nmodels = ["baseline:first-option"]\nlimit = 2\n' \
  "$WORK/sweep.sqlite" "$WORK/sweep.md" > "$WORK/sweep.toml"
"$BASE/bin/commet" sweep "$WORK/sweep.toml" > /dev/null  # reads TOML: tomllib, or tomli on Python 3.10
for command in "report --db $WORK/base.sqlite --format html --out $WORK/report.html" \
               "convert sample --to hf --out $WORK/hf" "stats hf:someone/some-dataset"; do
  status=0
  "$BASE/bin/commet" $command 2> "$WORK/err" || status=$?
  if [ "$status" != 2 ] || [ "$(grep -c . "$WORK/err")" != 1 ] || ! grep -qE "\[[a-z,]+\]'" "$WORK/err"; then
    echo "floors: 'commet $command' on the plain install should print one line naming the extra (exit $status):"
    cat "$WORK/err"
    exit 1
  fi
  echo "plain install: commet ${command%% *}: $(cat "$WORK/err")"
done
