/* interpose/driver/wrap_module.c: module, library and kernel-handle entry points.
 *
 * Owns the exported wrappers of cuModuleLoad*, cuLibraryLoad*, their
 * unloads, cuModuleGetFunction, cuLibraryGetKernel, cuKernelGetFunction and
 * the two enumerations.  Successful loads and look-ups are reported to the
 * registry (registry.c) after the real call; unloads are reported BEFORE the
 * real call, so a handle value the driver reuses for a module loaded by
 * another thread right after the unload is never dropped by mistake.
 */
#include <stddef.h>

#include "format/ktrace_format.h"
#include "interpose/driver/events.h"
#include "interpose/driver/intercept.h"

#define KT_LIB_OPTS CUjit_option *jo, void **jv, unsigned njo, CUlibraryOption *lo, void **lv, unsigned nlo

KT_WRAP_REAL(cuModuleLoad, (CUmodule *m, const char *fname))
KT_WRAP_REAL(cuModuleLoadData, (CUmodule *m, const void *image))
KT_WRAP_REAL(cuModuleLoadDataEx, (CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v))
KT_WRAP_REAL(cuModuleLoadFatBinary, (CUmodule *m, const void *fat))
KT_WRAP_REAL(cuModuleUnload, (CUmodule m))
KT_WRAP_REAL(cuModuleGetFunction, (CUfunction *f, CUmodule m, const char *name))
KT_WRAP_REAL(cuModuleEnumerateFunctions, (CUfunction *fs, unsigned n, CUmodule m))
KT_WRAP_REAL(cuLibraryLoadData, (CUlibrary *l, const void *code, KT_LIB_OPTS))
KT_WRAP_REAL(cuLibraryLoadFromFile, (CUlibrary *l, const char *fname, KT_LIB_OPTS))
KT_WRAP_REAL(cuLibraryUnload, (CUlibrary l))
KT_WRAP_REAL(cuLibraryGetKernel, (CUkernel *k, CUlibrary l, const char *name))
KT_WRAP_REAL(cuLibraryEnumerateKernels, (CUkernel *ks, unsigned n, CUlibrary l))
KT_WRAP_REAL(cuKernelGetFunction, (CUfunction *f, CUkernel k))

/* Real call; then, when tracing and the call succeeded, `after`. */
#define KT_CALL_AFTER(name, args, after) \
	KT_WRAP_FN(name); \
	if (!ktrace_wrap_on()) \
		return fn args; \
	CUresult res = fn args; \
	if (res == CUDA_SUCCESS) { \
		after; \
	} \
	return res;

KTRACE_EXPORT CUresult cuModuleLoad(CUmodule *m, const char *fname)
{
	KT_CALL_AFTER(cuModuleLoad, (m, fname),
		      ktrace_on_module_loaded(*m, 0, NULL, 0, fname, KTRACE_MODSRC_MODULE_LOAD))
}

KTRACE_EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	KT_CALL_AFTER(cuModuleLoadData, (m, image),
		      ktrace_on_module_loaded(*m, 0, image, 0, NULL, KTRACE_MODSRC_MODULE_LOAD_DATA))
}

KTRACE_EXPORT CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v)
{
	KT_CALL_AFTER(cuModuleLoadDataEx, (m, image, n, o, v),
		      ktrace_on_module_loaded(*m, 0, image, 0, NULL, KTRACE_MODSRC_MODULE_LOAD_DATA))
}

KTRACE_EXPORT CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fat)
{
	KT_CALL_AFTER(cuModuleLoadFatBinary, (m, fat),
		      ktrace_on_module_loaded(*m, 0, fat, 0, NULL, KTRACE_MODSRC_MODULE_LOAD_FATBIN))
}

KTRACE_EXPORT CUresult cuLibraryLoadData(CUlibrary *l, const void *code, KT_LIB_OPTS)
{
	KT_CALL_AFTER(cuLibraryLoadData, (l, code, jo, jv, njo, lo, lv, nlo),
		      ktrace_on_module_loaded(*l, 1, code, 0, NULL, KTRACE_MODSRC_LIBRARY_LOAD_DATA))
}

KTRACE_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *l, const char *fname, KT_LIB_OPTS)
{
	KT_CALL_AFTER(cuLibraryLoadFromFile, (l, fname, jo, jv, njo, lo, lv, nlo),
		      ktrace_on_module_loaded(*l, 1, NULL, 0, fname, KTRACE_MODSRC_LIBRARY_LOAD_FILE))
}

KTRACE_EXPORT CUresult cuModuleUnload(CUmodule m)
{
	KT_WRAP_FN(cuModuleUnload);
	if (m && ktrace_wrap_on())
		ktrace_on_module_unloaded(m, 0);
	return fn(m);
}

KTRACE_EXPORT CUresult cuLibraryUnload(CUlibrary l)
{
	KT_WRAP_FN(cuLibraryUnload);
	if (l && ktrace_wrap_on())
		ktrace_on_module_unloaded(l, 1);
	return fn(l);
}

KTRACE_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	KT_CALL_AFTER(cuModuleGetFunction, (f, m, name), ktrace_on_function(*f, m, name))
}

KTRACE_EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
	KT_CALL_AFTER(cuLibraryGetKernel, (k, l, name), ktrace_on_kernel(*k, l, name))
}

KTRACE_EXPORT CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
	KT_CALL_AFTER(cuKernelGetFunction, (f, k), ktrace_on_kernel_function(k, *f))
}

KTRACE_EXPORT CUresult cuModuleEnumerateFunctions(CUfunction *fs, unsigned n, CUmodule m)
{
	KT_CALL_AFTER(cuModuleEnumerateFunctions, (fs, n, m), if (fs && n) ktrace_on_module_functions(m, fs, n))
}

KTRACE_EXPORT CUresult cuLibraryEnumerateKernels(CUkernel *ks, unsigned n, CUlibrary l)
{
	KT_CALL_AFTER(cuLibraryEnumerateKernels, (ks, n, l), if (ks && n) ktrace_on_library_kernels(l, ks, n))
}

const struct ktrace_wrap_entry ktrace_wrap_module[] = {
	KT_WRAP_ENTRY(cuModuleLoad)
	KT_WRAP_ENTRY(cuModuleLoadData)
	KT_WRAP_ENTRY(cuModuleLoadDataEx)
	KT_WRAP_ENTRY(cuModuleLoadFatBinary)
	KT_WRAP_ENTRY(cuModuleUnload)
	KT_WRAP_ENTRY(cuModuleGetFunction)
	KT_WRAP_ENTRY(cuModuleEnumerateFunctions)
	KT_WRAP_ENTRY(cuLibraryLoadData)
	KT_WRAP_ENTRY(cuLibraryLoadFromFile)
	KT_WRAP_ENTRY(cuLibraryUnload)
	KT_WRAP_ENTRY(cuLibraryGetKernel)
	KT_WRAP_ENTRY(cuLibraryEnumerateKernels)
	KT_WRAP_ENTRY(cuKernelGetFunction)
	{ NULL, NULL, NULL },
};
