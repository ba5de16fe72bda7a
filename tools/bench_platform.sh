#!/usr/bin/env bash
# Platform build benchmark: runs bench_platform_build for 64, 512, 4,096 and 16,384 GPUs (8 per
# node; TOPOLOGY nvl72: 576, 4,608 and 16,416 GPUs in 72-GPU NVLink domains), RUNS times each
# (default 3), one process per run, and prints the medians as a markdown table (wall time of
# make_engine + Platform::build, and the process's peak RSS).
#
# usage: tools/bench_platform.sh [BUILD_DIR] [TOPOLOGY]
#   BUILD_DIR  where bench_platform_build lives (default: build)
#   TOPOLOGY   fat-tree | rail-optimized | shared | nvl72 (default: fat-tree)
#   RUNS=5 tools/bench_platform.sh   to change the number of runs
set -euo pipefail

build_dir="${1:-build}"
topology="${2:-fat-tree}"
runs="${RUNS:-3}"
bench="${build_dir}/bench_platform_build"
if [[ ! -x "${bench}" ]]; then
  echo "bench_platform.sh: ${bench} not found; build it with: cmake --build ${build_dir} --target bench_platform_build" >&2
  exit 2
fi

# median of the numbers on stdin (one per line)
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# value of key=VALUE in a bench output line
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }

echo "Platform build, ${topology}, median of ${runs} runs ($(nproc) CPUs, $(date -u +%Y-%m-%d))"
echo
echo "| GPUs | nodes | switch levels | hosts | links | build (ms) | peak RSS (MB) |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
sizes="64 512 4096 16384"
[[ "${topology}" == nvl72 ]] && sizes="576 4608 16416"
for gpus in ${sizes}; do
  lines=()
  for ((i = 0; i < runs; i++)); do
    lines+=("$("${bench}" "${gpus}" "${topology}")")
  done
  first="${lines[0]}"
  build_s=$(printf '%s\n' "${lines[@]}" | while read -r l; do echo "$l" | field build_s; done | median)
  rss_mb=$(printf '%s\n' "${lines[@]}" | while read -r l; do echo "$l" | field max_rss_mb; done | median)
  printf '| %s | %s | %s | %s | %s | %.1f | %.0f |\n' "${gpus}" "$(echo "$first" | field nodes)" \
    "$(echo "$first" | field levels)" "$(echo "$first" | field hosts)" "$(echo "$first" | field links)" \
    "$(awk -v s="${build_s}" 'BEGIN { print s * 1000 }')" "${rss_mb}"
done
