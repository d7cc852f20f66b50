# test/tools/tools.mk: build/ktgen, the test-only synthetic trace generator
# (used by test/unit/format_cli.sh and to make the fuzz seed corpus).
TEST_DEPS += $(BUILD)/ktgen
$(BUILD)/ktgen: $(BUILD)/obj/test/tools/ktgen.o $(BUILD)/libktcore.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $< $(BUILD)/libktcore.a $(LDFLAGS_ALL) $(PKG_LIBS) -ldl -lm
