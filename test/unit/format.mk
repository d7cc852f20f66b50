# test/unit/format.mk: tests of the trace format module and ktrace-dump, and the
# trace-reader fuzzer (make fuzz-trace; see test/fuzz/fuzz_trace_reader.c).

TESTS += format_codec format_reader format_writer format_output_path format_cli
format_codec_SRCS := test/unit/format_codec.c
format_codec_LIBS := -lcmocka
format_reader_SRCS := test/unit/format_reader.c test/unit/format_testutil.c
format_reader_LIBS := -lcmocka
format_writer_SRCS := test/unit/format_writer.c test/unit/format_testutil.c
format_writer_LIBS := -lcmocka
format_output_path_SRCS := test/unit/format_output_path.c test/unit/format_testutil.c
format_output_path_LIBS := -lcmocka
format_cli_SRCS := test/unit/format_cli.c
format_cli_LIBS := -lcmocka

FUZZ_CC ?= clang
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I. $(shell pkg-config --cflags libzstd)
FUZZ_TRACE_SRCS := test/fuzz/fuzz_trace_reader.c format/ktrace_format.c format/format_names.c \
	format/trace_reader.c
.PHONY: fuzz-trace
fuzz-trace: $(BUILD)/fuzz/fuzz_trace_reader
$(BUILD)/fuzz/fuzz_trace_reader: $(FUZZ_TRACE_SRCS) format/ktrace_format.h format/trace_reader.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_TRACE_SRCS) $(shell pkg-config --libs libzstd)
