# tools/ktrace-dump.mk: build/ktrace-dump (print trace files as text or JSON Lines).
TOOLS += ktrace-dump
ktrace-dump_SRCS := tools/dump.c tools/dump_text.c tools/dump_json.c tools/dump_value.c
