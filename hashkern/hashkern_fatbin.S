/* hashkern/hashkern_fatbin.S: embeds the checksum-kernel fatbin (built from
 * hashkern.cu by hashkern/hashkern.mk) in libktrace.so as
 *   ktrace_hashkern_fatbin[] .. ktrace_hashkern_fatbin_end
 * (hidden symbols), which interpose/hash/hash_pipeline.c gives to
 * cuModuleLoadData.  Owns those two symbols; includes nothing (the
 * assembler finds hashkern.fatbin through -I $(BUILD)/hashkern).
 */
	.section .rodata.ktrace_hashkern, "a"
	.balign 64
	.globl ktrace_hashkern_fatbin
	.hidden ktrace_hashkern_fatbin
	.type ktrace_hashkern_fatbin, @object
ktrace_hashkern_fatbin:
	.incbin "hashkern.fatbin"
	.globl ktrace_hashkern_fatbin_end
	.hidden ktrace_hashkern_fatbin_end
ktrace_hashkern_fatbin_end:
	.byte 0
	.size ktrace_hashkern_fatbin, . - ktrace_hashkern_fatbin

	.section .note.GNU-stack, "", @progbits
