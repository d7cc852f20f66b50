#!/usr/bin/env bash
# test/gpu/run.sh: the GPU suite and the GPU benchmarks, area by area.
#
# Run on the GPU machine from the repository root, with build/ made on the
# development machine (`make gpu`) and carried along:
#   bash test/gpu/run.sh [AREA|FILTER...]   # e.g. nvtx-torch, capture-gputimes, hash
#   bash test/gpu/run.sh --list             # the areas, their scripts, measured durations
#   bash test/gpu/run.sh --record SUMMARY   # put a run's AREA lines into areas-measured.tsv
# An argument that names an area (test/gpu/areas.tsv) runs that area's scripts;
# any other argument runs the scripts whose names contain it (e.g. capture-5).
# A bundle (test/gpu/bundle.sh) runs as
#   KT_BUILD=$PWD/.gpu/build bash test/gpu/run.sh graphs-tracing
# Each test/gpu/[0-9][0-9]-*.sh script prints result lines
#   RESULT|<name>|PASS|FAIL|SKIP|<detail>
#   BENCH|<name>|<value>|<unit>|<detail>
# and writes logs under $KT_LOGS.  An area has KT_AREA_BUDGET seconds (480:
# 8 minutes) for all its scripts; each script runs for at most what is left
# of it and at most KT_SCRIPT_TIMEOUT (400) seconds, and sees the smaller of
# the two as KT_SCRIPT_TIMEOUT (the scripts with budgets of their own size
# them by it).  The summary ends with one line per area run in full:
#   AREA|<area>|<seconds>|PASS|FAIL|SKIP
# and this script exits non-zero if any test failed.  Without a GPU every
# test reports SKIP.
set -u
cd "$(dirname "$0")/../.." || exit 2
AREAS=test/gpu/areas.tsv
MEASURED=test/gpu/areas-measured.tsv

# area_scripts AREA: the scripts of AREA, in order (none if AREA is not an area)
area_scripts() { awk -v a="$1" '$1==a { for (i = 2; i <= NF; i++) print $i }' "$AREAS"; }
area_names() { awk '!/^#/ && NF { print $1 }' "$AREAS"; }
# area_of SCRIPT: the area SCRIPT belongs to
area_of() { awk -v s="$1" '!/^#/ { for (i = 2; i <= NF; i++) if ($i == s) print $1 }' "$AREAS"; }

list_areas() {
	local a m secs res dev day
	printf '%-26s %8s  %-6s %-10s %-44s %s\n' area measured result date device scripts
	for a in $(area_names); do
		m=$(awk -F'\t' -v a="$a" '$1==a { print $2 "|" $3 "|" $4 "|" $5 }' "$MEASURED" 2>/dev/null)
		IFS='|' read -r secs res dev day <<<"$m"
		secs=${secs:+$secs s}
		printf '%-26s %8s  %-6s %-10s %-44s %s\n' "$a" "${secs:--}" "${res:--}" "${day:--}" \
			"${dev:-not measured}" "$(area_scripts "$a" | tr '\n' ' ')"
	done
}

# record SUMMARY: replace the rows of areas-measured.tsv for the areas SUMMARY ran
record() {
	local sum=$1 dev day tmp
	[ -r "$sum" ] || { echo "run.sh: cannot read $sum" >&2; exit 2; }
	dev=$(sed -n 's/^DEVICE|//p' "$sum" | head -n 1)
	day=$(sed -n 's/^DATE|//p' "$sum" | head -n 1 | cut -c1-10)
	[ -n "$dev" ] || { echo "run.sh: $sum names no device (not a GPU run)" >&2; exit 2; }
	tmp=$(mktemp)
	awk -F'|' -v dev="$dev" -v day="$day" '$1=="AREA" { printf "%s\t%s\t%s\t%s\t%s\n", $2, $3, $4, dev, day }' \
		"$sum" >"$tmp"
	if [ ! -s "$tmp" ]; then
		rm -f "$tmp"
		echo "run.sh: $sum has no AREA lines (no area ran in full)" >&2
		exit 2
	fi
	if [ -f "$MEASURED" ]; then
		awk -F'\t' 'NR==FNR { new[$1] = 1; next } !($1 in new)' "$tmp" "$MEASURED" >"$tmp.old"
		cat "$tmp.old" >>"$tmp"
		rm -f "$tmp.old"
	fi
	{
		echo "# area	seconds	result	device	date   (written by test/gpu/run.sh --record)"
		grep -v '^#' "$tmp" | sort
	} >"$MEASURED"
	rm -f "$tmp"
	list_areas
}

case "${1:-}" in
--list) list_areas; exit 0 ;;
--record) record "${2:?usage: run.sh --record SUMMARY}"; exit 0 ;;
-h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

# The scripts to run: areas named, or scripts whose names hold a filter.
selected=()
for s in test/gpu/[0-9][0-9]-*.sh; do
	name=$(basename "$s" .sh)
	want=$([ $# = 0 ] && echo 1 || echo 0)
	for a in "$@"; do
		if [ -n "$(area_scripts "$a")" ]; then
			area_scripts "$a" | grep -qx "$name" && want=1
		else
			case "$name" in *"$a"*) want=1 ;; esac
		fi
	done
	[ "$want" = 1 ] && selected+=("$name")
done
for a in "$@"; do
	[ -n "$(area_scripts "$a")" ] && continue
	printf '%s\n' "${selected[@]}" | grep -q -- "$a" ||
		{ echo "run.sh: no area or script matches '$a' (run.sh --list)" >&2; exit 2; }
done
for name in "${selected[@]}"; do
	[ -n "$(area_of "$name")" ] || { echo "run.sh: $name is in no area of $AREAS" >&2; exit 2; }
done

export KT_ROOT=$PWD
export KT_BUILD=${KT_BUILD:-$PWD/build}
export KT_LOGS=${KT_LOGS:-${OUT:-/tmp}/ktrace-gpu-logs}
KT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-gpu.XXXXXX")
export KT_TMP
trap 'rm -rf "$KT_TMP"' EXIT
mkdir -p "$KT_LOGS"
export PYTHONUNBUFFERED=1
results=$KT_TMP/results.txt
: >"$results"
area_budget=${KT_AREA_BUDGET:-480}
script_limit=${KT_SCRIPT_TIMEOUT:-400}

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	have_gpu=1
	dev=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1 | sed 's/, / (driver /; s/$/)/')
	echo "device: $dev"
	echo "DEVICE|$dev" >>"$results"
fi
export KT_HAVE_GPU=$have_gpu
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "DATE|$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$results"

# run_script NAME LIMIT: one script, its lines into the results
run_script() {
	local name=$1 limit=$2
	echo "=== $name (at most $limit s)"
	if [ $have_gpu = 0 ]; then
		echo "RESULT|$name|SKIP|no GPU" | tee -a "$results"
		return
	fi
	KT_SCRIPT_TIMEOUT=$limit timeout "$limit" bash "test/gpu/$name.sh" 2>&1 | tee "$KT_LOGS/$name.log" |
		grep -v '^RESULT|\|^BENCH|' | tail -n 40
	grep -h '^RESULT|\|^BENCH|' "$KT_LOGS/$name.log" >>"$results"
	grep -q "^RESULT|" "$KT_LOGS/$name.log" ||
		echo "RESULT|$name|FAIL|script printed no result (timeout or crash)" >>"$results"
}

# Areas in table order; an area's scripts share its budget.
for area in $(area_names); do
	scripts=$(area_scripts "$area" | grep -Fx -f <(printf '%s\n' "${selected[@]}"))
	[ -n "$scripts" ] || continue
	echo "##### area $area"
	a_start=$(date +%s)
	first=$(wc -l <"$results")
	for name in $scripts; do
		left=$((area_budget - ($(date +%s) - a_start)))
		limit=$((left < script_limit ? left : script_limit))
		if [ "$limit" -le 10 ]; then
			echo "RESULT|$name|FAIL|area $area over its budget of $area_budget s before this script" >>"$results"
			continue
		fi
		s_start=$(date +%s)
		run_script "$name" "$limit"
		echo "($name: $(($(date +%s) - s_start)) s)"
	done
	secs=$(($(date +%s) - a_start))
	echo "(area $area: $secs s)"
	# an area run in part (a filter picked some of its scripts) has no area line
	[ "$(printf '%s\n' "$scripts" | wc -l)" = "$(area_scripts "$area" | wc -l)" ] || continue
	[ $have_gpu = 1 ] || continue
	verdict=$(tail -n +"$((first + 1))" "$results" | awk -F'|' '$1=="RESULT" { if ($3=="FAIL") f=1; else if ($3=="PASS") p=1 }
		END { print f ? "FAIL" : (p ? "PASS" : "SKIP") }')
	echo "AREA|$area|$secs|$verdict" >>"$results"
	cp "$results" "$KT_LOGS/summary.txt" 2>/dev/null # a run cut short keeps the areas it finished
done

echo
echo "================ summary ================"
awk -F'|' '$1=="RESULT"{printf "%-44s %-5s %s\n", $2, $3, $4}' "$results"
awk -F'|' '$1=="BENCH"{printf "%-44s %12s %-8s %s\n", $2, $3, $4, $5}' "$results"
awk -F'|' '$1=="AREA"{printf "area %-39s %6s s %s\n", $2, $3, $4}' "$results"
pass=$(grep -c '^RESULT|[^|]*|PASS' "$results")
fail=$(grep -c '^RESULT|[^|]*|FAIL' "$results")
skip=$(grep -c '^RESULT|[^|]*|SKIP' "$results")
echo "passed $pass, failed $fail, skipped $skip"
cp "$results" "$KT_LOGS/summary.txt" 2>/dev/null
[ "$fail" = 0 ]
