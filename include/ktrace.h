/* include/ktrace.h: the control API of libktrace.so.
 *
 * A program that runs under LD_PRELOAD=libktrace.so can narrow what is traced
 * to a region of interest: launches and copies between ktrace_pause() and
 * ktrace_resume() run untouched and are not recorded (they still take launch
 * sequence numbers, so the gap is visible, and the COUNTERS record counts them
 * as launches_paused).  Allocations keep being tracked while paused, so
 * pointer arguments are still recognised after ktrace_resume().  Each call
 * that changes the state writes a NOTE record naming the launch sequence
 * number where tracing paused or resumed.  ktrace_mark() writes a NOTE record of
 * its own text (a step number, a phase), which ktrace-dump prints and the
 * timeline export (ktrace export --perfetto) shows as an instant.
 *
 * The functions are resolved at run time, so the program needs no link
 * dependency on ktrace and runs unchanged without it:
 *
 *     C:       void (*pause)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "ktrace_pause");
 *              if (pause) pause();
 *     Python:  lib = ctypes.CDLL(None)
 *              if hasattr(lib, "ktrace_pause"): lib.ktrace_pause()
 *
 * All of them are thread-safe; pause, resume and is_paused are
 * async-signal-safe in effect (one atomic store and one record append), and
 * cost nothing on the launch path beyond one relaxed atomic load.
 */
#ifndef KTRACE_H
#define KTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Stop recording launches, copies and sets (idempotent). */
void ktrace_pause(void);
/* Record them again (idempotent). */
void ktrace_resume(void);
/* 1 while paused, 0 while recording. */
int ktrace_is_paused(void);
/* Write a NOTE record holding text (a NUL-terminated string, cut at 511
 * bytes; NULL is ""), paused or not. */
void ktrace_mark(const char *text);

#ifdef __cplusplus
}
#endif

#endif
