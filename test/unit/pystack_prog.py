"""test/unit/pystack_prog.py: a Python program whose native library launches
kernels the way frameworks do, for test/unit/pystack_test.c.

Usage: pystack_prog.py LIB.  It prints, for each place a Python stack may be
taken, the file, function and line the innermost frame must name:
  WHERE <name> <file> <function> <line>
and exits 0 when every native call returned 0.
"""
import ctypes
import inspect
import sys
import threading

released = ctypes.CDLL(sys.argv[1])  # the GIL released around each call
held = ctypes.PyDLL(sys.argv[1])     # the GIL held
released.kt_op.argtypes = [ctypes.c_char_p]
released.kt_backward.argtypes = [ctypes.c_ulong]
failures = []


def where(name, back=0):
    f = inspect.currentframe().f_back
    code = f.f_code
    print("WHERE %s %s %s %d" % (name, code.co_filename, getattr(code, "co_qualname", code.co_name), f.f_lineno + back))


def check(r):
    if r != 0:
        failures.append(r)


class Net:
    def forward(self):
        where("forward_op", 1)
        check(released.kt_op(b"aten::upsample_bilinear2d, seq = 7, op_id = 1"))


def step():
    Net().forward()
    check(released.kt_backward(7))


def in_thread():
    where("thread_launch", 1)
    check(released.kt_launch_a())


check(released.kt_setup())
step()
where("held_launch", 1)
check(held.kt_launch_a())
t = threading.Thread(target=in_thread)
t.start()
t.join()
sys.stdout.flush()
sys.exit(1 if failures else 0)
