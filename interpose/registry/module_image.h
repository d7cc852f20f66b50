/* interpose/registry/module_image.h: the bytes of module images.
 *
 * At load, an image is kept in place when it lies in a read-only segment of a
 * loaded ELF object (cudart's fatbins in libtorch_cuda.so etc. live as long as
 * the object; the module's path then names that object and the image is not
 * written to the trace, only its digest), copied otherwise (JIT output:
 * Triton, Inductor, XLA, NVRTC), or read from its file (cuModuleLoad,
 * cuLibraryLoadFromFile).  A __cudaRegisterFatBinary wrapper is replaced by
 * the container it points to.  Copied and file images of modules with a
 * launched kernel are written as MODULE_IMAGE records, once per digest, in
 * KTRACE_IMAGE_CHUNK pieces paced to the writer (KTRACE_STORE_MODULES=0: never).
 * Declarations only (module_image.c).
 */
#ifndef KTRACE_MODULE_IMAGE_H
#define KTRACE_MODULE_IMAGE_H

#include <stddef.h>

struct ktrace_module_entry;

/* Fill m->image, image_size, image_owned, in_place, kind and path. */
void ktrace_module_image_keep(struct ktrace_module_entry *m, const void *image, size_t len, const char *path)
	__attribute__((visibility("hidden")));

/* Write m's image (digest known) unless in place, stored already or storing
 * is off.  Called without the registry lock, m pinned. */
void ktrace_module_image_store(struct ktrace_module_entry *m) __attribute__((visibility("hidden")));

/* Forget the digests written (fork child: a new trace; tests). */
void ktrace_module_image_fork_child(void) __attribute__((visibility("hidden")));
void ktrace_module_image_reset(void) __attribute__((visibility("hidden")));

#endif
