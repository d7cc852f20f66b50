# meta/meta.mk: kernel parameter metadata (cubin/fatbin/PTX/host ELF layouts;
# names from DWARF, Triton and Inductor caches, PTX and demangled C++ names).
CORE_SRCS += meta/meta_image.c meta/cubin.c meta/fatbin.c meta/host_elf.c meta/ptx.c \
	meta/names.c meta/demangle.c meta/dwarf.c meta/triton_cache.c meta/inductor.c
# Which words of a parameter hold pointers, from its type (and which ATen types hold
# offset calculators, for how many tensors).
CORE_SRCS += meta/pointer_words.c meta/aten_closure.c
# How far an Inductor kernel reaches from each pointer argument.
CORE_SRCS += meta/inductor_extent.c
# What a kernel can write through each parameter, from its PTX or Triton TTIR.
CORE_SRCS += meta/write_flow.c meta/ptx_writes.c meta/ttir_writes.c
