# test/unit/hash.mk: CPU tests of the digest, the allocation map, the hash
# pipeline (against a simulated driver) and ktrace-hash.
TESTS += hash_digest_test
hash_digest_test_SRCS := test/unit/hash_digest_test.c
hash_digest_test_LIBS := -lcmocka
TESTS += hash_tool_test
hash_tool_test_SRCS := test/unit/hash_tool_test.c
hash_tool_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/ktrace-hash
TESTS += hash_alloc_map_test
hash_alloc_map_test_SRCS := test/unit/hash_alloc_map_test.c interpose/alloc_map.c
hash_alloc_map_test_LIBS := -lcmocka
TESTS += hash_pipeline_test
hash_pipeline_test_SRCS := test/unit/hash_pipeline_test.c interpose/hash_pipeline.c
hash_pipeline_test_LIBS := $(HASHKERN_FATBIN_OBJ) -lcmocka
TEST_DEPS += $(HASHKERN_FATBIN_OBJ)
$(BUILD)/hash_pipeline_test: $(HASHKERN_FATBIN_OBJ)
