"""The console commands of the wheel: each one runs the program of the same name
bundled in this package (bin/), which finds the bundled libktrace.so itself
(<bin>/../lib: `ktrace run` and `ktrace check` preload it)."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def bin_path(name):
    """The bundled program `name` (ktrace, ktrace-dump, ...)."""
    return os.path.join(_HERE, "bin", name)


def lib_path():
    """The bundled libktrace.so, for LD_PRELOAD by hand (ktrace run does it for you)."""
    return os.path.join(_HERE, "lib", "libktrace.so")


def _exec(name):
    path = bin_path(name)
    try:
        os.execv(path, [name] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("%s: cannot run %s: %s\n" % (name, path, e.strerror))
        sys.exit(2)


def ktrace():
    _exec("ktrace")


def dump():
    _exec("ktrace-dump")


def diff():
    _exec("ktrace-diff")


def export():
    _exec("ktrace-export")


def inspect():
    _exec("ktrace-inspect")


def hash():
    _exec("ktrace-hash")
