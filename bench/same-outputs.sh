#!/usr/bin/env bash
# Fingerprints what this build writes, so that a refactor can prove it changed nothing:
#
#   bench/same-outputs.sh <snapshot-dir> [bird-dev-dir]
#   diff <snapshot-before>/SHA256SUMS <snapshot-after>/SHA256SUMS
#   bench/same-outputs.sh --rehash <snapshot-dir>     # fingerprint an existing snapshot again
#
# Generates, each with a fresh cache: the embedded demo, BIRD dev (all formulations) in
# process, and BIRD dev on the queue backend (REDIS_URL, default redis://127.0.0.1:6379).
# SHA256SUMS lists every output file but stats.json (timing). ISO timestamps and the card's
# hash in the manifest are masked: builds before the fixed reference time (config
# referenceTime) stamped clock-reading samples with the moment they ran.
set -euo pipefail

fingerprint() { # <snapshot-dir>
  cd "$1"
  find demo bird bird-queue -type f -not -path '*/.cache/*' -not -name stats.json | sort | while read -r file; do
    local hash
    hash=$({ if [[ $file == */manifest.json ]]; then jq '(.files[] | select(.path == "README.md") | .sha256) = "…"' "$file"; else cat "$file"; fi; } |
      sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/…/g' | sha256sum | cut -d' ' -f1)
    printf '%s  %s\n' "$hash" "$file"
  done >SHA256SUMS
  # The queue run must write what the in-process run writes.
  if diff <(grep ' bird/' SHA256SUMS | sed 's# bird/# #') <(grep ' bird-queue/' SHA256SUMS | sed 's# bird-queue/# #'); then
    echo "in-process and queue outputs identical"
  else
    echo "in-process and queue outputs DIFFER"
  fi
  wc -l <SHA256SUMS | xargs echo "files fingerprinted:"
}

if [[ $1 == --rehash ]]; then fingerprint "$(realpath "$2")"; exit; fi

snapshot=$(realpath -m "$1")
bird=$(realpath "${2:-../shared/bird-dev}")
redis=${REDIS_URL:-redis://127.0.0.1:6379}
cli="node $(dirname "$(realpath "$0")")/../dist/cli/main.js"
rm -rf "$snapshot" && mkdir -p "$snapshot"

run() { # <name> <command> <args…>
  local name=$1 command=$2; shift 2
  $cli "$command" --progress none --out "$snapshot/$name" "$@" >"$snapshot/$name.log" 2>&1
}
run demo demo
run bird generate --source "$bird"
run bird-queue generate --source "$bird" --queue "$redis" --queue-prefix "same-outputs-$$"
fingerprint "$snapshot"
