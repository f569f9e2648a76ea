#!/bin/bash
# Measures what the machine's load does to a run's wall time. Each round
# runs, one process at a time at nice 5 and --jobs 1, the cells CELLS of
# table1 at smoke (seed 1; default: a DPZO run, DP-SGD's four runs) with
# GOMAXPROCS 1 and 2, each into an empty results folder that holds only the
# smoke base (copied from BASE/pretrain, not rebuilt), and appends one line
# per process to OUT/runs.txt:
#
#   procs cell wall user sys load_before load_after run_seconds run_load
#
# wall, user and sys are /usr/bin/time's (the whole process); run_seconds
# and run_load are the sum of its runs' manifest seconds and the mean of
# their recorded load_start/load_end. A process with GOMAXPROCS=1 runs on
# one thread, so on a quiet machine its wall time is its CPU time: its
# wall / (user + sys) is its slowdown at the load it ran under, with no
# quiet run needed. fit.py fits the share of a core against the load.
#
#   $ make build
#   $ BASE=results OUT=/tmp/load ROUNDS=3 bench/load/measure.sh
#   $ python3 bench/load/fit.py /tmp/load/runs.txt
set -e
: "${BASE:?set BASE, a results folder whose pretrain/ holds the smoke base}" "${OUT:?set OUT}"
bin=$(realpath "${BIN:-bin/repro}")
base=$(realpath "$BASE")
out=$(realpath -m "$OUT")
cells=${CELLS:-"method=dpzo,epsilon=3,task=fashion-vqa method=dpsgd,task=fashion-vqa"}
mkdir -p "$out"
load() { cut -d' ' -f1 /proc/loadavg; }
for round in $(seq "${ROUNDS:-3}"); do
  for cell in $cells; do
    for procs in 1 2; do
      dir=$(mktemp -d)
      mkdir -p "$dir/pretrain"
      cp -r "$base"/pretrain/tinymllm-smoke-* "$dir/pretrain/"
      before=$(load)
      GOMAXPROCS=$procs /usr/bin/time -f "%e %U %S" -o "$dir/time" nice -n 5 \
        "$bin" run table1 --scale smoke --jobs 1 --seeds 1 --only "$cell" --results "$dir" \
        > "$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
      after=$(load)
      run=$(python3 - "$dir" <<'PY'
import glob, json, sys
secs, loads = 0.0, []
for f in glob.glob(sys.argv[1] + "/table1/runs/*/manifest.json"):
    m = json.load(open(f))
    secs += m["seconds"]
    loads.append((m["load_start"] + m["load_end"]) / 2)
print(f"{secs:.3f} {sum(loads) / len(loads):.2f}")
PY
)
      echo "$procs $cell $(cat "$dir/time") $before $after $run" >> "$out/runs.txt"
      rm -rf "$dir"
    done
  done
done
