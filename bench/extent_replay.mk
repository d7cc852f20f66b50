# bench/extent_replay.mk: build/extent_replay, the hash extent policy replayed
# on a recorded trace (no GPU; see docs/hashing.md).
BENCHES += extent_replay
extent_replay_SRCS := bench/extent_replay.c interpose/alloc_map.c
