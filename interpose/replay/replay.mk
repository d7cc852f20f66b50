# interpose/replay/replay.mk: confirming a suspected non-deterministic kernel by
# replaying one launch in isolation (spec and matcher, snapshot and replays,
# difference measures, the report as text and blob).
LIB_SRCS += interpose/replay/replay_spec.c interpose/replay/replay_confirm.c \
	interpose/replay/replay_snapshot.c interpose/replay/replay_diff.c \
	interpose/replay/replay_report.c interpose/replay/replay_driver.c
