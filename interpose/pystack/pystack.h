/* interpose/pystack/pystack.h: the Python stack behind a selected launch or
 * framework op (KTRACE_PYSTACK, PYSTACK records; docs/ranges.md).
 *
 *   KTRACE_PYSTACK=[launch=N][,fw_seq=S][,occurrence=K][,kernel=REGEX]
 *
 * selects the launch numbered N (op numbers), or the K-th (from 0, default
 * 0) traced launch of a kernel whose mangled or demangled name matches REGEX,
 * and the forward op whose NVTX range carries framework sequence number S
 * (PyTorch's emit_nvtx `seq = S`; a backward kernel's record names it); the
 * value is parsed by common/pystack_spec.c.
 *
 * The library never takes the GIL.  At the selected launch it takes the
 * launching thread's stack at once when that thread holds the GIL; when it
 * does not (a framework released it around the call that launched, as
 * PyTorch's bindings and Triton's launchers do), it arms the thread, and
 * the thread gives its stack at its next Python event, when it holds the
 * GIL again: the call that launched returning.  The forward op's thread is
 * armed likewise when the op's range opens.  Those events reach the library
 * through its C profile function, which the Python start-up hook installs
 * in every thread (python/pyhook/sitecustomize.py calls ktrace_pyhook_start
 * and, in threads started later, ktrace_pyhook_thread; libktrace.map
 * exports both).  CPython is found at run time with dlsym: the library
 * links no libpython, and a program that is not Python is left alone.
 *
 * Owns the spec, the matching, the arming and the PYSTACK records (pystack.c)
 * and CPython's API as the library uses it (python_api.c).  Calls the
 * registry (kernel names), format/ (codec, writer) and the real dlsym.
 */
#ifndef KTRACE_PYSTACK_H
#define KTRACE_PYSTACK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pystack_spec.h"
#include "format/ktrace_format.h"
#include "interpose/model/tracer.h"

#define KTRACE_PYSTACK_ENV "KTRACE_PYSTACK"

/* The initialisation, once the configuration is loaded (its pystack_spec). */
void ktrace_pystack_configure(const struct ktrace_pystack_spec *s) KTRACE_HIDDEN;

/* The launch path of a run with KTRACE_PYSTACK: a traced launch numbered
 * seq of the kernel launched through handle.  Cold. */
void ktrace_pystack_on_launch(uint64_t seq, uint64_t handle) KTRACE_HIDDEN;

/* The forward op fw_seq, the one wanted (ktrace_tracer.pystack_fw_wanted,
 * which interpose/nvtx/ tests at every op range that carries a number:
 * ktrace_pystack_on_forward_op(), model/services.h), began. */
void ktrace_pystack_forward_op(uint64_t fw_seq) KTRACE_HIDDEN;

/* ---- python_api.c: CPython, found at run time ---------------------------------------- */

/* What a stack capture takes (pystack.c writes it as a PYSTACK record). */
#define KTRACE_PY_FRAMES_MAX 64
struct ktrace_py_stack {
	uint32_t nframes;
	struct ktrace_py_frame frames[KTRACE_PY_FRAMES_MAX]; /* views into text */
	char text[KTRACE_PY_FRAMES_MAX * 384];
};

/* 1 when this process runs CPython and the calling thread holds its GIL
 * (PyGILState_Check); 0 otherwise, and when CPython is not there. */
int ktrace_py_holds_gil(void) KTRACE_HIDDEN;
/* The calling thread's stack, which must hold the GIL: 0, or -1. */
int ktrace_py_stack_now(struct ktrace_py_stack *s) KTRACE_HIDDEN;
/* Arm the calling thread: its next Python event calls pystack.c's
 * ktrace_pystack_fire() with its stack (kind, launch_seq, fw_seq kept). */
void ktrace_py_arm(uint32_t kind, uint64_t launch_seq, uint64_t fw_seq) KTRACE_HIDDEN;
/* pystack.c: an armed thread's stack, taken at its Python event. */
void ktrace_pystack_fire(uint32_t kind, uint64_t launch_seq, uint64_t fw_seq, const struct ktrace_py_stack *s)
	KTRACE_HIDDEN;

#endif
