"""ktrace: find the first non-deterministic CUDA kernel of a program.

    ktrace check -- python train.py        # the command line (installed with this package)

In the traced program (or not: untraced, these do nothing):

    import ktrace
    ktrace.pause(); ...; ktrace.resume()   # leave warm-up out of the trace
    with ktrace.paused(): ...
    ktrace.mark("epoch 3")                 # a note in the trace, an instant on the timeline

Reading traces:

    t = ktrace.load("run1.ktrace")         # launches, kernels, copies, notes as objects
    t.launches[0].kernel_name, t.launches[0].args
    tables = ktrace.load("run1.ktrace", tables="pandas")   # or "arrow"
    t.records("gputime")                   # any record type, fields as ktrace-dump --json's
    cols = ktrace.columns("run1.ktrace")   # one numpy array per field, no object per record
    ktrace.record_table()                  # every record type and field of the format
"""
from ._cli import bin_path, lib_path
from ._control import active, is_paused, mark, pause, paused, resume
from ._reader import Columns, Record, Trace, columns, load, record_table

__version__ = "0.1.0"
__all__ = ["active", "bin_path", "columns", "Columns", "is_paused", "lib_path", "load", "mark", "pause", "paused", "record_table",
           "Record", "resume", "Trace", "__version__"]
