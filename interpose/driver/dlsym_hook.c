/* interpose/driver/dlsym_hook.c: ktrace's dlsym override.
 *
 * Owns the exported `dlsym`.  A handle-scoped lookup (dlsym(libcuda_handle,
 * "cuLaunchKernel"), what Triton's and Inductor's launchers and cudart do)
 * never sees LD_PRELOAD definitions, so ktrace overrides dlsym itself: it
 * calls glibc's dlsym, and when the answer is a driver function ktrace wraps
 * (compared by address with the real functions resolved from libcuda.so.1,
 * so a versioned name such as "cuMemAlloc_v2" maps to exactly its own
 * wrapper and an old-ABI "cuMemAlloc" is left alone) it returns the wrapper.
 *
 * RTLD_DEFAULT and RTLD_NEXT lookups depend on who calls dlsym (glibc reads
 * the caller's return address), so the entry point is a small assembly
 * trampoline that jumps to glibc's dlsym with the caller's return address
 * untouched for those two handles.  They need no mapping: the global scope
 * finds ktrace's exported wrappers before libcuda.so.1.
 *
 * Everything else runs in C with no heavy initialisation: one real dlsym, a
 * three-byte name test, and for "cuX*" names a table look-up (the first one
 * fills the driver table, only if the application has loaded libcuda.so.1:
 * a lookup in some other library never loads the driver).  A thread-local guard answers re-entrant
 * calls (from inside the driver loader) with the plain result.  dlerror() is
 * left as glibc's dlsym left it: the extra work happens only after a
 * successful lookup, whose error state is "none", and its own errors are
 * consumed.
 *
 * May call: glibc's dlsym (driver_real.h), ktrace_wrapper_for_real() (wrap.h).
 */
#include <dlfcn.h>
#include <stddef.h>

#include "interpose/driver/wrap.h"

static __thread __attribute__((tls_model("initial-exec"))) int in_hook;

/* Called by the trampoline when glibc's dlsym is not known yet: finds it
 * (or returns NULL, and the trampoline returns NULL to the caller). */
void *ktrace_dlsym_real_slow(void) KTRACE_HIDDEN;
void *ktrace_dlsym_real_slow(void)
{
	return (void *)ktrace_real_dlsym_get();
}

/* Exposed to the trampoline: glibc's dlsym once known. */
void *ktrace_dlsym_real_ptr KTRACE_HIDDEN;

void *ktrace_dlsym_handle(void *handle, const char *name) KTRACE_HIDDEN;
void *ktrace_dlsym_handle(void *handle, const char *name)
{
	ktrace_dlsym_fn real_dlsym = ktrace_real_dlsym_get();
	void *found, *wrapper;

	if (kt_unlikely(!real_dlsym))
		return NULL;
	found = real_dlsym(handle, name);
	/* Driver entry points are cuXxx; "curl_easy_init" and the like pass. */
	if (!found || in_hook || !name || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z')
		return found;
	in_hook = 1;
	wrapper = ktrace_wrapper_for_real(found);
	in_hook = 0;
	return wrapper ? wrapper : found;
}

#if defined(__x86_64__)
__asm__(
	".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	".p2align 4\n"
	"dlsym:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	testq %rdi, %rdi\n"              /* RTLD_DEFAULT */
	"	je 1f\n"
	"	cmpq $-1, %rdi\n"                /* RTLD_NEXT */
	"	je 1f\n"
	"	jmp ktrace_dlsym_handle\n"
	"1:	movq ktrace_dlsym_real_ptr(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	je 2f\n"
	"	jmp *%rax\n"
	"2:	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call ktrace_dlsym_real_slow\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testq %rax, %rax\n"
	"	je 3f\n"
	"	movq %rax, ktrace_dlsym_real_ptr(%rip)\n"
	"	jmp *%rax\n"
	"3:	ret\n"
	"	.cfi_endproc\n"
	".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
__asm__(
	".text\n"
	".globl dlsym\n"
	".type dlsym, %function\n"
	".p2align 4\n"
	"dlsym:\n"
	"	.cfi_startproc\n"
	"	cbz x0, 1f\n"                    /* RTLD_DEFAULT */
	"	cmn x0, #1\n"                    /* RTLD_NEXT */
	"	b.eq 1f\n"
	"	b ktrace_dlsym_handle\n"
	"1:	adrp x16, ktrace_dlsym_real_ptr\n"
	"	ldr x16, [x16, #:lo12:ktrace_dlsym_real_ptr]\n"
	"	cbz x16, 2f\n"
	"	br x16\n"
	"2:	stp x29, x30, [sp, #-32]!\n"
	"	.cfi_def_cfa_offset 32\n"
	"	.cfi_offset 29, -32\n"
	"	.cfi_offset 30, -24\n"
	"	mov x29, sp\n"
	"	stp x0, x1, [sp, #16]\n"
	"	bl ktrace_dlsym_real_slow\n"
	"	mov x16, x0\n"
	"	ldp x0, x1, [sp, #16]\n"
	"	ldp x29, x30, [sp], #32\n"
	"	.cfi_def_cfa_offset 0\n"
	"	.cfi_restore 29\n"
	"	.cfi_restore 30\n"
	"	cbz x16, 3f\n"
	"	adrp x17, ktrace_dlsym_real_ptr\n"
	"	str x16, [x17, #:lo12:ktrace_dlsym_real_ptr]\n"
	"	br x16\n"
	"3:	mov x0, #0\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size dlsym, .-dlsym\n");
#else
#error "ktrace's dlsym trampoline supports x86-64 and AArch64"
#endif
