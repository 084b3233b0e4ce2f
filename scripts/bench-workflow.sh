#!/usr/bin/env bash
# The Snakemake workflow on a real one-node Slurm cluster (scripts/slurm-cluster.sh) against
# `nightly`, on N generated scans of F frames (default 16 x 3,000, 256x192 LZ4): the wall time
# of each, and for every Slurm job where its time went: scheduler latency (on one node the
# jobs queue, so: the idle gap before each job starts, sacct), the job's start and end beyond
# the stage work (started -> ended, minus the seconds in the run records the jobs wrote), and
# the status polling after the last job ended.
# Also the time the main Snakemake process takes to list the scans (`depthpose scans --json`).
# usage: scripts/bench-workflow.sh [SCANS=16] [FRAMES=3000]
set -euo pipefail
cd "$(dirname "$0")/.."
scans=${1:-16}; frames=${2:-3000}
data=${BENCH_DATA:-/tmp/depthpose-bench}/workflow-${scans}x$frames
python=$(scripts/setup.sh --tests | tail -n 1)
swift build -c release 2>&1 | grep -v '^\[' || true
dp=$PWD/.build/release/depthpose
for i in $(seq 1 "$scans"); do
  [ -d "$data/dataset/scan$i" ] || $dp synth --out "$data/dataset/scan$i" --frames "$frames" --seed "$i" --gestures 1 >/dev/null
done
scripts/slurm-cluster.sh install
cluster=$(mktemp -d /tmp/depthpose-slurm.XXXXXX)
trap 'scripts/slurm-cluster.sh stop "$cluster" || true; rm -rf "$cluster"' EXIT
eval "$(scripts/slurm-cluster.sh start "$cluster")"

rm -rf "$data/nightly" "$data/smk"
t0=$(date +%s.%N)
$dp nightly "$data/dataset" --out "$data/nightly" --quiet
t1=$(date +%s.%N)
list0=$(date +%s.%N); $dp scans "$data/dataset" --json >/dev/null; list1=$(date +%s.%N)
since=$(date +%Y-%m-%dT%H:%M:%S)
"$(dirname "$python")/snakemake" -s Pipelines/Snakefile --profile Pipelines/profiles/slurm --directory "$data" \
  --config dataset="$data/dataset" out="$data/smk" depthpose="$dp" > "$data/smk.log" 2>&1
t2=$(date +%s.%N)
sleep 2   # accounting may show a job a moment after it ended
sacct -X -n -P -S "$since" -o JobID,JobName,Submit,Start,End,AllocCPUS,State > "$data/sacct.txt"

"$python" - "$data" "$t0" "$t1" "$t2" "$list0" "$list1" <<'EOF'
import datetime, glob, json, os, re, sys
data, t0, t1, t2, l0, l1 = sys.argv[1], *map(float, sys.argv[2:])
def ts(s): return datetime.datetime.fromisoformat(s).timestamp()
jobs = [l.split("|") for l in open(data + "/sacct.txt").read().split("\n") if l.count("|") == 6]
# the stage seconds of each job, from the records it wrote (run-light.json, run-cloud.json)
stage = {"light": 0.0, "cloud": 0.0}
for f in glob.glob(data + "/smk/*/run-*.json"):
    r = json.load(open(f)); stage[os.path.basename(f)[4:-5]] += r["seconds"]
jobs.sort(key=lambda j: ts(j[3]))
# One node: the jobs queue behind each other, so the scheduler's own latency is the idle gap
# between a job's end and the next one's start (and the first job's submit -> start).
latency = [ts(jobs[0][3]) - ts(jobs[0][2])] + [max(0.0, ts(b[3]) - ts(a[4])) for a, b in zip(jobs, jobs[1:])]
elapsed = [ts(j[4]) - ts(j[3]) for j in jobs]
ends = max(ts(j[4]) for j in jobs)
work = stage["light"] + stage["cloud"]
print(f"scans {len(glob.glob(data + '/smk/*/run-cloud.json'))}, Slurm jobs {len(jobs)}, states {sorted(set(j[6] for j in jobs))}")
print(f"nightly wall {t1 - t0:.1f} s; workflow wall {t2 - l1:.1f} s (ratio {(t2 - l1) / (t1 - t0):.2f})")
print(f"stage work in the records: light {stage['light']:.1f} s, cloud {stage['cloud']:.1f} s")
print(f"scheduler latency (first: submit -> start; then the idle gap before each job): median {sorted(latency)[len(latency) // 2]:.1f} s, max {max(latency):.1f} s, total {sum(latency):.1f} s")
print(f"job time beyond its stages (start -> end minus stage seconds): {sum(elapsed) - work:.1f} s over {len(jobs)} jobs = {(sum(elapsed) - work) / len(jobs):.1f} s a job")
print(f"status polling after the last job ended: {t2 - ends:.1f} s")
print(f"listing the scans (depthpose scans --json, once per run in the main process): {l1 - l0:.2f} s")
EOF
