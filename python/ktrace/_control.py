"""ktrace's control API from Python: pause, resume and mark what libktrace.so records.

The functions look the library's exports up in the running process
(include/ktrace.h: ktrace_pause, ktrace_resume, ktrace_is_paused, ktrace_mark).
Without the library preloaded (the program runs untraced) every call does
nothing, so a program can call them unconditionally.
"""
import contextlib
import ctypes
import threading

_lock = threading.Lock()
_funcs = None


def _lookup():
    """The library's control functions, found once: a dict (empty without the library)."""
    global _funcs
    with _lock:
        if _funcs is None:
            found = {}
            try:
                process = ctypes.CDLL(None)
            except OSError:
                process = None
            for name, restype, argtypes in (("ktrace_pause", None, []), ("ktrace_resume", None, []),
                                            ("ktrace_is_paused", ctypes.c_int, []),
                                            ("ktrace_mark", None, [ctypes.c_char_p])):
                fn = getattr(process, name, None) if process is not None else None
                if fn is not None:
                    fn.restype, fn.argtypes = restype, argtypes
                    found[name] = fn
            _funcs = found
        return _funcs


def active():
    """True when libktrace.so is loaded in this process (the program is being traced)."""
    return "ktrace_is_paused" in _lookup()


def pause():
    """Stop recording launches, copies and memsets (they still run); a no-op untraced."""
    fn = _lookup().get("ktrace_pause")
    if fn is not None:
        fn()


def resume():
    """Record them again; a no-op untraced."""
    fn = _lookup().get("ktrace_resume")
    if fn is not None:
        fn()


def is_paused():
    """True while paused; False while recording or untraced."""
    fn = _lookup().get("ktrace_is_paused")
    return bool(fn()) if fn is not None else False


def mark(text):
    """Write a NOTE record of text into the trace (cut at 511 bytes); a no-op untraced.

    The timeline export shows it as an instant, ktrace-dump prints it, and
    ktrace.load() lists it in Trace.marks.
    """
    fn = _lookup().get("ktrace_mark")
    if fn is None:
        return
    data = text if isinstance(text, bytes) else str(text).encode("utf-8", "replace")
    fn(data.split(b"\0", 1)[0])


@contextlib.contextmanager
def paused():
    """with ktrace.paused(): ... runs its body untraced (then resumes, unless it was paused before)."""
    was = is_paused()
    pause()
    try:
        yield
    finally:
        if not was:
            resume()
