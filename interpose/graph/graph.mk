# interpose/graph/graph.mk: CUDA graphs and stream capture (graph ids, executable
# graphs ktrace follows, describing a graph from the driver, conditional handles and
# nodes as the program made them, ktrace's instrumented copy that hashes kernel nodes
# in the graph (built node by node for graphs of conditional nodes), the records of
# graph launches and the queue of those whose digests are in flight).
LIB_SRCS += interpose/graph/graph_capture.c interpose/graph/graph_registry.c interpose/graph/graph_model.c interpose/graph/graph_exec.c \
	interpose/graph/graph_hash.c interpose/graph/graph_hash_plan.c interpose/graph/graph_record.c interpose/graph/graph_queue.c \
	interpose/graph/graph_replay.c interpose/graph/graph_body.c interpose/graph/graph_cond.c interpose/graph/graph_build.c
