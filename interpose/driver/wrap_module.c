/* interpose/driver/wrap_module.c: module, library and kernel-handle entry points.
 *
 * Owns the exported wrappers of cuModuleLoad*, cuLibraryLoad*, their
 * unloads, cuModuleGetFunction, cuLibraryGetKernel, cuKernelGetFunction and
 * the two enumerations.  Successful loads and look-ups are reported to the
 * module hooks (hooks.h) after the real call; unloads are reported BEFORE the
 * real call, so a handle value the driver reuses for a module loaded by
 * another thread right after the unload is never dropped by mistake.
 * May call: the real driver through ktrace_real, the module hooks of hooks.h.
 */
#include <stddef.h>

#include "format/ktrace_format.h"
#include "interpose/driver/hooks.h"
#include "interpose/driver/wrap.h"

#define LIBRARY_LOAD_OPTIONS CUjit_option *jo, void **jv, unsigned njo, CUlibraryOption *lo, void **lv, unsigned nlo

/* Real call; then, when tracing and the call succeeded, `after`. */
#define REPORT_SUCCESS_AFTER(name, args, after) KT_WRAP_REPORT_AFTER(name, args, KT_IF_OK(after))

KTRACE_EXPORT CUresult cuModuleLoad(CUmodule *m, const char *fname)
{
	REPORT_SUCCESS_AFTER(cuModuleLoad, (m, fname),
			     ktrace_hooks.module_loaded(*m, 0, NULL, 0, fname, KTRACE_MODSRC_MODULE_LOAD))
}

KTRACE_EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	REPORT_SUCCESS_AFTER(cuModuleLoadData, (m, image),
			     ktrace_hooks.module_loaded(*m, 0, image, 0, NULL, KTRACE_MODSRC_MODULE_LOAD_DATA))
}

KTRACE_EXPORT CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v)
{
	REPORT_SUCCESS_AFTER(cuModuleLoadDataEx, (m, image, n, o, v),
			     ktrace_hooks.module_loaded(*m, 0, image, 0, NULL, KTRACE_MODSRC_MODULE_LOAD_DATA))
}

KTRACE_EXPORT CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fat)
{
	REPORT_SUCCESS_AFTER(cuModuleLoadFatBinary, (m, fat),
			     ktrace_hooks.module_loaded(*m, 0, fat, 0, NULL, KTRACE_MODSRC_MODULE_LOAD_FATBIN))
}

KTRACE_EXPORT CUresult cuLibraryLoadData(CUlibrary *l, const void *code, LIBRARY_LOAD_OPTIONS)
{
	REPORT_SUCCESS_AFTER(cuLibraryLoadData, (l, code, jo, jv, njo, lo, lv, nlo),
			     ktrace_hooks.module_loaded(*l, 1, code, 0, NULL, KTRACE_MODSRC_LIBRARY_LOAD_DATA))
}

KTRACE_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *l, const char *fname, LIBRARY_LOAD_OPTIONS)
{
	REPORT_SUCCESS_AFTER(cuLibraryLoadFromFile, (l, fname, jo, jv, njo, lo, lv, nlo),
			     ktrace_hooks.module_loaded(*l, 1, NULL, 0, fname, KTRACE_MODSRC_LIBRARY_LOAD_FILE))
}

KTRACE_EXPORT CUresult cuModuleUnload(CUmodule m)
{
	KT_WRAP_REPORT_BEFORE(cuModuleUnload, (m), m, ktrace_hooks.module_unloaded(m, 0))
}

KTRACE_EXPORT CUresult cuLibraryUnload(CUlibrary l)
{
	KT_WRAP_REPORT_BEFORE(cuLibraryUnload, (l), l, ktrace_hooks.module_unloaded(l, 1))
}

KTRACE_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	REPORT_SUCCESS_AFTER(cuModuleGetFunction, (f, m, name), ktrace_hooks.function(*f, m, name))
}

KTRACE_EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
	REPORT_SUCCESS_AFTER(cuLibraryGetKernel, (k, l, name), ktrace_hooks.kernel(*k, l, name))
}

KTRACE_EXPORT CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
	REPORT_SUCCESS_AFTER(cuKernelGetFunction, (f, k), ktrace_hooks.kernel_function(k, *f))
}

KTRACE_EXPORT CUresult cuModuleEnumerateFunctions(CUfunction *fs, unsigned n, CUmodule m)
{
	REPORT_SUCCESS_AFTER(cuModuleEnumerateFunctions, (fs, n, m),
			     if (fs && n) ktrace_hooks.module_functions(m, fs, n))
}

KTRACE_EXPORT CUresult cuLibraryEnumerateKernels(CUkernel *ks, unsigned n, CUlibrary l)
{
	REPORT_SUCCESS_AFTER(cuLibraryEnumerateKernels, (ks, n, l),
			     if (ks && n) ktrace_hooks.library_kernels(l, ks, n))
}
