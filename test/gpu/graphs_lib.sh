# shellcheck shell=bash disable=SC2034 # the variables are for the scripts that source this
# test/gpu/graphs_lib.sh: what the 70-graphs-*.sh scripts share (sourced, not
# run by run.sh): the paths, the settings, and the commands that run them.
#
# The settings (docs/testing.md, "CUDA graphs"): NAME, whether it is a Python
# workload, the regex of its planted kernel, and its command (the plant and
# profile options are added by the callers):
#   capture      build/gpu/graph_capture: stream capture (fork/join, memset and
#                memcpy nodes), 20 replays
#   explicit     build/gpu/graph_explicit: the explicit graph API, child graph,
#                host node, node parameter update, exec update
#   torch_graph  torch.cuda.graph capture + replays
#   torch_ro     torch.compile(mode="reduce-overhead") training step
#   jax_step     jitted JAX training step, default XLA flags (command buffers)
# and two settings for coverage only: capture_to_graph (capture into an
# existing graph, instantiated with parameters) and conditional (a WHILE node).
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}/graphs
L=${KT_LOGS:-$T}/graphs
W=$R/test/gpu/workloads
lib=$B/libktrace.so
dump=$B/ktrace-dump
kt=$B/ktrace
mkdir -p "$T" "$L"
# Compile caches shared by every run of the area (the traced runs find them warm).
export TRITON_CACHE_DIR=$T/triton-cache TORCHINDUCTOR_CACHE_DIR=$T/inductor-cache
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 CUBLAS_WORKSPACE_CONFIG=:4096:8
export XLA_PYTHON_CLIENT_PREALLOCATE=false

result() { echo "RESULT|$1|$2|$3"; }

# graphs_ready NAME FILE...: 0 when a GPU and FILEs are there, else prints SKIP for NAME.
graphs_ready() {
	local name=$1 f
	shift
	if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
		result "$name" SKIP "no GPU"
		return 1
	fi
	for f in "$@"; do
		[ -e "$f" ] || { result "$name" SKIP "$f not built (make gpu)"; return 1; }
	done
	return 0
}

# setting_is_python NAME
setting_is_python() {
	case $1 in torch_* | jax_*) return 0 ;; esac
	return 1
}

# setting_culprit NAME: the regex of the planted kernel (demangled or mangled name).
setting_culprit() {
	case $1 in
	capture | explicit) echo 'kt_g_atomic_sum' ;;
	torch_graph) echo 'indexFunc|index_add' ;;
	torch_ro) echo 'index_add|index_put|scatter' ;;
	jax_step) echo 'scatter' ;;
	esac
}

# setting_timeout NAME: seconds for one run of it.
setting_timeout() {
	case $1 in
	torch_ro) echo 240 ;;
	torch_* | jax_*) echo 150 ;;
	*) echo 60 ;;
	esac
}

# setting_cmd NAME [--plant]: the command words, one per line (for mapfile).
setting_cmd() {
	local name=$1
	shift
	case $name in
	capture) printf '%s\n' "$B/gpu/graph_capture" "$@" ;;
	capture_to_graph) printf '%s\n' "$B/gpu/graph_capture" --to-graph "$@" ;;
	explicit) printf '%s\n' "$B/gpu/graph_explicit" "$@" ;;
	conditional) printf '%s\n' "$B/gpu/graph_explicit" --conditional "$@" ;;
	*) printf '%s\n' python3 "$W/graph_workloads.py" "$name" "$@" ;;
	esac
}

# missing_framework FILE: the first "not installed" line of a run's output, if any.
missing_framework() {
	grep -m1 -h "^UNAVAILABLE\|ModuleNotFoundError\|ImportError" "$@" 2>/dev/null | cut -c1-200
}

# seconds since T0 (date +%s.%N) with two decimals
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", b - a }'; }
