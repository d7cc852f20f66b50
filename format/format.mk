# format/format.mk: the trace format module (record codec, writer, reader, output paths,
# the replay report a REPLAY record carries, the range and Python-stack records, the GPUTIME
# record).
# format/ depends on libc and libzstd only (docs/architecture.md): no common/ header.
CORE_SRCS += format/ktrace_format.c format/format_names.c format/output_path.c \
	format/trace_writer.c format/trace_reader.c format/replay_report.c format/format_range.c \
	format/record_table.c
