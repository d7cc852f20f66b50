"""ktrace's Python start-up hook: the `sitecustomize` that `ktrace run --torch-ops`,
`ktrace run --python-stack` and `ktrace check` put first on PYTHONPATH (docs/ranges.md).

In every Python process of the traced command it may:

- KTRACE_TORCH_OPS=1: once `torch` is imported, turn on PyTorch's NVTX op ranges
  (torch.autograd.profiler.emit_nvtx) on the importing thread (and so on the autograd
  engine's threads, which inherit its state), without the CUDA synchronisation
  emit_nvtx does on entry.  If the program starts a profiler of its own on that
  thread, the op ranges pause until that profiler stops.
- KTRACE_PYSTACK=...: ask libktrace.so (through its ktrace_pyhook_* functions) to
  install its C profile function in every Python thread, so that a thread it armed
  at a selected launch or framework op gives its Python stack when it next runs
  Python code (the library never takes the GIL itself).

Then it runs the `sitecustomize` it hides, as site.py would have.  It never raises:
anything that fails leaves the program as it would be without ktrace (KTRACE_DEBUG=1
says what failed on stderr).
"""
import os
import sys


def _debug(msg):
    if os.environ.get("KTRACE_DEBUG") not in (None, "", "0"):
        sys.stderr.write("ktrace[%d]: python hook: %s\n" % (os.getpid(), msg))


def _after_import(name, callback):
    """Call callback(module) once the top-level module `name` has been imported."""
    import importlib.abc
    import importlib.util

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(self)  # once; the real finders do the import
            spec = importlib.util.find_spec(fullname)
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            real_exec = spec.loader.exec_module

            def exec_module(module):
                real_exec(module)
                try:
                    callback(module)
                except Exception as e:  # the program's import must not fail because of ktrace
                    _debug("after importing %s: %r" % (name, e))

            spec.loader.exec_module = exec_module
            return spec

    if name in sys.modules:
        callback(sys.modules[name])
    else:
        sys.meta_path.insert(0, Finder())


def _torch_ops(torch):
    """emit_nvtx on this thread, kept on around the program's own profilers."""
    import threading

    prof = torch.autograd.profiler
    real_enable, real_disable = prof._enable_profiler, prof._disable_profiler
    state = {"on": False, "paused": False, "thread": threading.get_ident()}

    def start():
        ctx = prof.emit_nvtx(record_shapes=False)
        sync = torch.cuda.synchronize
        torch.cuda.synchronize = lambda *a, **k: None  # emit_nvtx would initialise CUDA here
        try:
            ctx.__enter__()
        finally:
            torch.cuda.synchronize = sync
        state["on"] = True

    def enable(*args, **kwargs):
        if state["on"] and threading.get_ident() == state["thread"]:
            real_disable()
            state["on"], state["paused"] = False, True
        return real_enable(*args, **kwargs)

    def disable(*args, **kwargs):
        result = real_disable(*args, **kwargs)
        if state["paused"] and threading.get_ident() == state["thread"]:
            state["paused"] = False
            try:
                start()
            except Exception as e:
                _debug("op ranges not resumed: %r" % (e,))
        return result

    prof._enable_profiler, prof._disable_profiler = enable, disable
    start()
    _debug("PyTorch op ranges on (emit_nvtx)")


def _python_stacks():
    """libktrace.so's profile function in every Python thread, now and to come."""
    import ctypes
    import threading

    try:
        lib = ctypes.PyDLL(None)  # the GIL stays held during these calls
        start, thread = lib.ktrace_pyhook_start, lib.ktrace_pyhook_thread
    except (OSError, AttributeError):
        _debug("libktrace.so is not loaded: no Python stacks")
        return
    start.restype = thread.restype = ctypes.c_int
    if start() != 0:
        _debug("libktrace.so could not hook this Python")
        return

    def bootstrap(frame, event, arg):  # a new thread's first event: hand over to the library
        sys.setprofile(None)
        thread()

    threading.setprofile(bootstrap)


def _chain():
    """Run the sitecustomize this one hides (the next on sys.path), as site.py would."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def _setup():
    try:
        if os.environ.get("KTRACE_TORCH_OPS") == "1":
            _after_import("torch", _torch_ops)
        if os.environ.get("KTRACE_PYSTACK"):
            _python_stacks()
    except Exception as e:
        _debug("not set up: %r" % (e,))


_setup()
_chain()
