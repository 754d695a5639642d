#!/usr/bin/env bash
# Regenerate docs/example-report.md and docs/example-report.html: the two honest baselines on the
# bundled sample, pictures on and off, judged by the rules judge. Deterministic: no API key, no network.
# The store lives in a temporary folder and is named relatively, so the report's commands read
# `--db example.sqlite` rather than a temporary path.
set -euo pipefail
cd "$(dirname "$0")/.."
docs="$PWD/docs"

commet validate sample
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
for model in baseline:first-option baseline:random-option; do
  for images in on off; do
    commet eval --model "$model" --images "$images" --db example.sqlite --quiet > /dev/null
  done
done
commet report --db example.sqlite --format markdown --out "$docs/example-report.md" --dataset sample
commet report --db example.sqlite --format html --out "$docs/example-report.html" --dataset sample
