#!/usr/bin/env bash
# Refresh the screenshots of docs/study.md and docs/calibration.md (study app, panel walkthrough, labelling,
# HTML report) from the browser tests:
# the tests photograph each main page at 1400x900 and 390x844 when COMMET_SCREENSHOTS is set.
set -euo pipefail
cd "$(dirname "$0")/.."
COMMET_SCREENSHOTS="$PWD/docs/study" python -m pytest -q -p no:cacheprovider \
  tests/test_study_volunteer.py tests/test_study_panel.py tests/test_calibration_labelling.py tests/test_report_browser.py
