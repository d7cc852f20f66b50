/* common/pystack_spec.h: the value of KTRACE_PYSTACK (`ktrace run
 * --python-stack`): which launch or framework op to take the Python stack
 * of (interpose/pystack/pystack.h does it; docs/ranges.md).  Parsed here,
 * once, for the library and for the tools that check the value first.
 *
 *   [launch=N][,fw_seq=S][,occurrence=K][,kernel=REGEX]
 *
 *   launch=N      the launch (or copy) numbered N: its op number
 *   kernel=REGEX  a kernel whose mangled or demangled name matches (POSIX
 *                 extended); the rest of the value, commas included, so it
 *                 comes last
 *   occurrence=K  with kernel: the K-th traced launch of such a kernel
 *                 (from 0; default 0)
 *   fw_seq=S      the forward op whose range carries framework sequence
 *                 number S (PyTorch's emit_nvtx `seq = S`)
 *
 * At least one of launch, kernel, fw_seq; not launch and kernel together.
 */
#ifndef KTRACE_COMMON_PYSTACK_SPEC_H
#define KTRACE_COMMON_PYSTACK_SPEC_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

struct ktrace_pystack_spec {
	int have_launch;
	uint64_t launch;
	int have_kernel;
	regex_t kernel;       /* compiled when have_kernel */
	uint64_t occurrence;
	int have_fw_seq;
	uint64_t fw_seq;
	char text[1280];      /* the value as given */
};

/* 0, or -1 with the reason in why (one line, without the value). */
int ktrace_pystack_spec_parse(const char *v, struct ktrace_pystack_spec *s, char *why, size_t whylen)
	__attribute__((visibility("hidden")));
void ktrace_pystack_spec_free(struct ktrace_pystack_spec *s) __attribute__((visibility("hidden")));

#endif
