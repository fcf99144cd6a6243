#!/usr/bin/env bash
# Fingerprints what this build writes, so that a refactor can prove it changed nothing:
#
#   bench/same-outputs.sh <snapshot-dir> [bird-dev-dir]
#   diff <snapshot-before>/SHA256SUMS <snapshot-after>/SHA256SUMS
#
# Generates, each with a fresh cache: the embedded demo, BIRD dev (all formulations) in
# process, and BIRD dev on the queue backend (REDIS_URL, default redis://127.0.0.1:6379).
# SHA256SUMS lists every output file but stats.json (timing). A sample's referenceTime (the
# moment clock-reading gold SQL ran) differs from run to run by design, so it is masked
# before hashing.
set -euo pipefail
snapshot=$(realpath -m "$1")
bird=$(realpath "${2:-../shared/bird-dev}")
redis=${REDIS_URL:-redis://127.0.0.1:6379}
cli="node $(dirname "$0")/../dist/cli/main.js"
rm -rf "$snapshot" && mkdir -p "$snapshot"

run() { # <name> <command> <args…>
  local name=$1 command=$2; shift 2
  $cli "$command" --progress none --out "$snapshot/$name" "$@" >"$snapshot/$name.log" 2>&1
}
run demo demo
run bird generate --source "$bird"
run bird-queue generate --source "$bird" --queue "$redis" --queue-prefix "same-outputs-$$"

cd "$snapshot"
find demo bird bird-queue -type f -not -path '*/.cache/*' -not -name stats.json | sort | while read -r file; do
  printf '%s  %s\n' "$(sed -E 's/"referenceTime": ?"[^"]*"/"referenceTime":"…"/g' "$file" | sha256sum | cut -d' ' -f1)" "$file"
done >SHA256SUMS
# The queue run must write what the in-process run writes.
diff <(grep ' bird/' SHA256SUMS | sed 's# bird/# #') <(grep ' bird-queue/' SHA256SUMS | sed 's# bird-queue/# #') \
  && echo "in-process and queue outputs identical" || echo "in-process and queue outputs DIFFER"
wc -l <SHA256SUMS | xargs echo "files fingerprinted:"
