# interpose/registry/registry.mk: modules, kernels and their metadata (handle map,
# KERNEL records, module images, the metadata worker).
LIB_SRCS += interpose/registry/registry.c interpose/registry/handle_map.c \
	interpose/registry/kernel_record.c interpose/registry/meta_worker.c interpose/registry/module_image.c
