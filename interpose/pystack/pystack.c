/* interpose/pystack/pystack.c: selecting the launch and the forward op whose
 * Python stacks KTRACE_PYSTACK asks for, taking or arming each once, and
 * the PYSTACK records (pystack.h).  Everything here runs only in a run that
 * set the variable; the launch path then calls ktrace_pystack_on_launch for
 * each traced launch, and the NVTX ranges call ktrace_pystack_forward_op for
 * the op range with the wanted number (both through the services table).
 * Calls the registry (kernel names: the kernel_lookup service), the
 * thread's id (model/), format/ (codec, writer) and python_api.c.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format/trace_writer.h"
#include "interpose/model/capture_thread.h"
#include "interpose/model/kernels.h"
#include "interpose/model/services.h"
#include "interpose/pystack/pystack.h"

#define MATCH_CACHE 512 /* kernel entries whose match is remembered */

static struct {
	const struct ktrace_pystack_spec *spec;
	atomic_int launch_done, fw_done;
	pthread_mutex_t lock;
	uint64_t seen; /* launches of matching kernels so far */
	struct {
		const struct ktrace_kernel_entry *entry;
		int match;
	} cache[MATCH_CACHE];
} ps = { .lock = PTHREAD_MUTEX_INITIALIZER };

void ktrace_pystack_configure(const struct ktrace_pystack_spec *s)
{
	ps.spec = s;
	atomic_store(&ps.launch_done, !s || !(s->have_launch || s->have_kernel));
	atomic_store(&ps.fw_done, !s || !s->have_fw_seq);
	atomic_store(&ktrace_tracer.pystack_fw_wanted, s && s->have_fw_seq ? s->fw_seq + 1 : 0);
}

static int name_matches(const char *name)
{
	return name && regexec(&ps.spec->kernel, name, 0, NULL, 0) == 0;
}

/* Under the lock: does entry e's kernel match kernel=REGEX? */
static int entry_matches(const struct ktrace_kernel_entry *e)
{
	size_t h = ((uintptr_t)e >> 4) % MATCH_CACHE;

	for (size_t k = 0; k < MATCH_CACHE; k++) {
		size_t i = (h + k) % MATCH_CACHE;

		if (ps.cache[i].entry == e)
			return ps.cache[i].match;
		if (!ps.cache[i].entry) {
			ps.cache[i].entry = e;
			ps.cache[i].match = name_matches(e->name) || name_matches(e->demangled);
			return ps.cache[i].match;
		}
	}
	return name_matches(e->name) || name_matches(e->demangled); /* the cache is full */
}

/* The launch numbered seq of the kernel at handle: the one selected? */
static int selected(uint64_t seq, uint64_t handle)
{
	const struct ktrace_kernel_entry *e;
	int take = 0;

	if (ps.spec->have_launch)
		return seq == ps.spec->launch;
	if (!(e = ktrace_services.kernel_lookup(handle)))
		return 0;
	pthread_mutex_lock(&ps.lock);
	if (entry_matches(e))
		take = ps.seen++ == ps.spec->occurrence;
	pthread_mutex_unlock(&ps.lock);
	return take;
}

/* The calling thread's stack now, when it holds the GIL (kind now_kind), or
 * at its next Python event (kind later_kind). */
static void take_or_arm(uint32_t now_kind, uint32_t later_kind, uint64_t launch_seq, uint64_t fw_seq)
{
	struct ktrace_py_stack *s;

	if (!ktrace_py_holds_gil()) {
		ktrace_py_arm(later_kind, launch_seq, fw_seq);
		return;
	}
	s = malloc(sizeof *s);
	if (s && !ktrace_py_stack_now(s))
		ktrace_pystack_fire(now_kind, launch_seq, fw_seq, s);
	free(s);
}

void ktrace_pystack_on_launch(uint64_t seq, uint64_t handle)
{
	if (atomic_load_explicit(&ps.launch_done, memory_order_relaxed) || !selected(seq, handle) ||
	    atomic_exchange(&ps.launch_done, 1))
		return;
	take_or_arm(KTRACE_PYSTACK_AT_LAUNCH, KTRACE_PYSTACK_AFTER_LAUNCH, seq, 0);
}

void ktrace_pystack_forward_op(uint64_t fw_seq)
{
	if (atomic_exchange(&ps.fw_done, 1))
		return;
	atomic_store(&ktrace_tracer.pystack_fw_wanted, 0);
	take_or_arm(KTRACE_PYSTACK_FORWARD_OP, KTRACE_PYSTACK_FORWARD_OP, 0, fw_seq);
}

void ktrace_pystack_fire(uint32_t kind, uint64_t launch_seq, uint64_t fw_seq, const struct ktrace_py_stack *s)
{
	struct ktrace_rec_pystack r = { .launch_seq = launch_seq, .fw_seq = fw_seq, .tid = 0, .kind = kind,
					.nframes = s->nframes, .frames = s->frames };
	struct ktrace_writer *w = ktrace_tracer.writer;
	size_t size = ktrace_encode_pystack(NULL, 0, &r);
	void *buf;

	if (!w || !(buf = malloc(size)))
		return;
	r.tid = ktrace_capture_tid();
	ktrace_encode_pystack(buf, size, &r);
	ktrace_writer_append(w, buf, size);
	free(buf);
}
