/* interpose/pystack/python_api.c: CPython as libktrace.so uses it, found at
 * run time (pystack.h).
 *
 * The functions come from the process's global symbols (the python
 * executable exports them; so does a libpython loaded with RTLD_GLOBAL),
 * looked up once with the real dlsym; without them nothing here does
 * anything.  Only the stable C API is used: frames through
 * PyEval_GetFrame / PyFrame_GetBack / PyFrame_GetCode /
 * PyFrame_GetLineNumber (3.9+), names through the code object's attributes,
 * and PyEval_SetProfile(AllThreads) for the profile function.  Every call is
 * made by a thread that holds the GIL: one that PyGILState_Check says holds
 * it, or CPython calling the profile function.
 *
 * Owns the profile function and the thread's armed state, and the two
 * functions the Python start-up hook calls through ctypes.PyDLL (the GIL
 * held): ktrace_pyhook_start (every thread) and ktrace_pyhook_thread (the
 * calling thread).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "interpose/driver/driver_real.h"
#include "interpose/pystack/pystack.h"

typedef struct kt_pyobject PyObject; /* opaque: only pointers are handled */
typedef struct kt_pyframe PyFrameObject;
typedef int (*kt_py_tracefunc)(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg);

#define KT_PYTRACE_CALL 0 /* a Python function starts: the frame given is the callee's */

static struct {
	int (*IsInitialized)(void);
	int (*GILState_Check)(void);
	PyFrameObject *(*Eval_GetFrame)(void);
	int (*Frame_GetLineNumber)(PyFrameObject *);
	PyObject *(*Frame_GetCode)(PyFrameObject *);
	PyFrameObject *(*Frame_GetBack)(PyFrameObject *);
	PyObject *(*Object_GetAttrString)(PyObject *, const char *);
	const char *(*Unicode_AsUTF8AndSize)(PyObject *, ssize_t *);
	void (*DecRef)(PyObject *);
	void (*Err_Clear)(void);
	void (*Eval_SetProfile)(kt_py_tracefunc, PyObject *);
	void (*Eval_SetProfileAllThreads)(kt_py_tracefunc, PyObject *); /* 3.12+ */
} py;
static int py_ok;
static pthread_once_t py_once = PTHREAD_ONCE_INIT;

/* The calling thread's armed capture. */
static __thread struct {
	uint32_t kind; /* 0: not armed */
	uint64_t launch_seq, fw_seq;
} armed __attribute__((tls_model("initial-exec")));

static void *sym(ktrace_dlsym_fn real, const char *name)
{
	return real ? real(RTLD_DEFAULT, name) : NULL;
}

#define LOOK(field, name) (py.field = (__typeof__(py.field))sym(real, name))

static void resolve(void)
{
	ktrace_dlsym_fn real = ktrace_real_dlsym_get();

	LOOK(IsInitialized, "Py_IsInitialized");
	LOOK(GILState_Check, "PyGILState_Check");
	LOOK(Eval_GetFrame, "PyEval_GetFrame");
	LOOK(Frame_GetLineNumber, "PyFrame_GetLineNumber");
	LOOK(Frame_GetCode, "PyFrame_GetCode");
	LOOK(Frame_GetBack, "PyFrame_GetBack");
	LOOK(Object_GetAttrString, "PyObject_GetAttrString");
	LOOK(Unicode_AsUTF8AndSize, "PyUnicode_AsUTF8AndSize");
	LOOK(DecRef, "Py_DecRef");
	LOOK(Err_Clear, "PyErr_Clear");
	LOOK(Eval_SetProfile, "PyEval_SetProfile");
	LOOK(Eval_SetProfileAllThreads, "PyEval_SetProfileAllThreads");
	py_ok = py.IsInitialized && py.GILState_Check && py.Eval_GetFrame && py.Frame_GetLineNumber &&
		py.Frame_GetCode && py.Frame_GetBack && py.Object_GetAttrString && py.Unicode_AsUTF8AndSize &&
		py.DecRef && py.Err_Clear && py.Eval_SetProfile;
}

static int python_here(void)
{
	pthread_once(&py_once, resolve);
	return py_ok && py.IsInitialized();
}

int ktrace_py_holds_gil(void)
{
	return python_here() && py.GILState_Check() == 1;
}

/* The attribute `name` of a code object, as UTF-8, copied into out. */
static size_t code_str(PyObject *code, const char *name, char *out, size_t cap)
{
	PyObject *v = py.Object_GetAttrString(code, name);
	const char *s;
	ssize_t n = 0;

	if (!v) {
		py.Err_Clear();
		return 0;
	}
	s = py.Unicode_AsUTF8AndSize(v, &n);
	if (!s || n < 0) {
		py.Err_Clear();
		n = 0;
	}
	if ((size_t)n > cap)
		n = (ssize_t)cap;
	memcpy(out, s ? s : "", (size_t)n);
	py.DecRef(v);
	return (size_t)n;
}

/* One frame into s (its strings into s->text from *used). */
static void take_frame(PyFrameObject *f, struct ktrace_py_stack *s, size_t *used)
{
	struct ktrace_py_frame *fr = &s->frames[s->nframes++];
	PyObject *code = py.Frame_GetCode(f);
	size_t left = sizeof s->text - *used, n;

	fr->line = (uint32_t)py.Frame_GetLineNumber(f);
	fr->file = (struct ktrace_str){ s->text + *used, 0 };
	fr->function = (struct ktrace_str){ "", 0 };
	if (!code)
		return;
	n = code_str(code, "co_filename", s->text + *used, left > 256 ? 256 : left);
	fr->file.len = (uint16_t)n;
	*used += n;
	left -= n;
	n = code_str(code, "co_qualname", s->text + *used, left > 128 ? 128 : left);
	if (!n)
		n = code_str(code, "co_name", s->text + *used, left > 128 ? 128 : left);
	fr->function = (struct ktrace_str){ s->text + *used, (uint16_t)n };
	*used += n;
	py.DecRef(code);
}

/* The stack from frame f outwards (f borrowed). */
static void walk(PyFrameObject *f, struct ktrace_py_stack *s)
{
	PyFrameObject *cur = f, *back;
	int owned = 0;
	size_t used = 0;

	s->nframes = 0;
	while (cur && s->nframes < KTRACE_PY_FRAMES_MAX) {
		take_frame(cur, s, &used);
		back = py.Frame_GetBack(cur); /* a new reference */
		if (owned)
			py.DecRef((PyObject *)cur);
		cur = back;
		owned = 1;
	}
	if (owned && cur)
		py.DecRef((PyObject *)cur);
}

int ktrace_py_stack_now(struct ktrace_py_stack *s)
{
	PyFrameObject *f;

	if (!ktrace_py_holds_gil() || !(f = py.Eval_GetFrame()))
		return -1;
	walk(f, s);
	return 0;
}

void ktrace_py_arm(uint32_t kind, uint64_t launch_seq, uint64_t fw_seq)
{
	armed.launch_seq = launch_seq;
	armed.fw_seq = fw_seq;
	armed.kind = kind;
}

/* CPython's profile events of every hooked thread: nothing unless armed.  A
 * call event's frame is the callee's, just entered: the stack that matters
 * starts at its caller. */
static int profile_cb(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	struct ktrace_py_stack *s;
	PyFrameObject *from = frame;
	uint32_t kind = armed.kind;

	(void)obj;
	(void)arg;
	if (kt_likely(!kind) || !frame)
		return 0;
	armed.kind = 0;
	if (what == KT_PYTRACE_CALL && !(from = py.Frame_GetBack(frame)))
		return 0;
	s = malloc(sizeof *s);
	if (s) {
		walk(from, s);
		ktrace_pystack_fire(kind, armed.launch_seq, armed.fw_seq, s);
		free(s);
	}
	if (from != frame)
		py.DecRef((PyObject *)from);
	return 0;
}

/* The Python start-up hook, GIL held: the profile function in every thread
 * (3.12+), or in this one (the hook covers threads started later). */
KTRACE_EXPORT int ktrace_pyhook_start(void)
{
	if (!python_here() || py.GILState_Check() != 1)
		return -1;
	if (py.Eval_SetProfileAllThreads)
		py.Eval_SetProfileAllThreads(profile_cb, NULL);
	else
		py.Eval_SetProfile(profile_cb, NULL);
	return 0;
}

/* A thread started after the hook ran, at its first Python event (GIL held). */
KTRACE_EXPORT int ktrace_pyhook_thread(void)
{
	if (!python_here() || py.GILState_Check() != 1)
		return -1;
	py.Eval_SetProfile(profile_cb, NULL);
	return 0;
}
