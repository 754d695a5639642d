#!/usr/bin/env bash
# Regenerate docs/example-report.md and docs/example-report.html: the two honest baselines on the
# bundled sample, pictures on and off, judged by the rules judge. Deterministic: no API key, no network.
set -euo pipefail
cd "$(dirname "$0")/.."

commet validate sample
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
db="$work/example.sqlite"
for model in baseline:first-option baseline:random-option; do
  for images in on off; do
    commet eval --model "$model" --images "$images" --db "$db" --quiet > /dev/null
  done
done
commet report --db "$db" --format markdown --out docs/example-report.md
commet report --db "$db" --format html --out docs/example-report.html --dataset sample
