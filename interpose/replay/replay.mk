# interpose/replay/replay.mk: confirming a suspected non-deterministic kernel by
# replaying one launch in isolation (the matcher, snapshot and replays,
# difference measures, the launch path's side; the report's text and blob are
# format/replay_report.c).
LIB_SRCS += interpose/replay/replay_match.c interpose/replay/replay_confirm.c \
	interpose/replay/replay_snapshot.c interpose/replay/replay_diff.c \
	interpose/replay/replay_launch.c interpose/replay/replay_body.c
