#!/usr/bin/env bash
# The OpenAPI document the API serves, linted by Redocly (recommended, warnings as errors) and
# Spectral (spectral:oas, failing on warnings): both must report 0 errors and 0 warnings.
set -euo pipefail
cd "$(dirname "$0")/.."
doc="$(mktemp -d)/openapi.json"
npx tsx scripts/openapi-document.ts "$doc"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx redocly lint "$doc" --config redocly.yaml --format=summary 2>&1 | grep -v '[║╔╚]'
npx spectral lint "$doc" --ruleset .spectral.yaml --fail-severity=warn
