# tools/ktrace-hash.mk: ktrace-hash, the KT64V1 digest of files (tools/hash.c).
TOOLS += ktrace-hash
ktrace-hash_SRCS := tools/hash.c
