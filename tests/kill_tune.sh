#!/usr/bin/env bash
# Durability of the tuning database: `tessera tune` is killed with SIGKILL at
# random moments, KILLS times, each run resuming from the file the last one
# left. Fails when a kill tears more than one record, when a line other than
# the last is unreadable, or when a resumed run does not count every record
# the file holds.
#   kill_tune.sh TESSERA DB [KILLS]
set -euo pipefail
tessera=$1
db=$2
kills=${3:-20}
rm -f "$db"
count() {  # prints "valid torn": parseable records and unreadable lines
  python3 - "$db" <<'PY'
import json, sys
valid = torn = 0
try:
    lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n")
except FileNotFoundError:
    lines = []
for i, line in enumerate(lines):
    if not line:
        continue
    try:
        json.loads(line)
        valid += 1
    except ValueError:
        torn += 1
print(valid, torn)
PY
}
torn_total=0
RANDOM=7
for k in $(seq 1 "$kills"); do
  read -r before _ < <(count)
  "$tessera" tune --gemm 48x40x32 --trials 100000 --records "$db" --json > /dev/null 2>&1 &
  pid=$!
  # Let it append at least one record, then kill it at a random moment.
  for _ in $(seq 1 200); do
    read -r now _ < <(count)
    [ "$now" -gt "$before" ] && break
    sleep 0.05
  done
  sleep "0.$(( RANDOM % 10 ))$(( RANDOM % 10 ))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  read -r after torn < <(count)
  [ "$after" -gt "$before" ] || { echo "kill $k: no record was appended in 10 s"; exit 1; }
  torn_total=$torn
  [ "$torn_total" -le "$k" ] || { echo "kill $k: $torn_total torn lines after $k kills"; exit 1; }
done
# Every readable record is seen by a resumed run (the lines of other kinds,
# baselines and confirmations, are not trials and are not counted there).
out=$("$tessera" tune --gemm 48x40x32 --trials 1 --records "$db" --json 2>&1 | tail -n 1)
read -r valid torn < <(count)
echo "kills: $kills, records: $valid, torn lines: $torn (at most one per kill)"
echo "resume: $out"
echo "$out" | grep -q '"resumed":[1-9]' || { echo "the resumed run did not read the records"; exit 1; }
