#!/usr/bin/env python3
"""test/python/ktrace_py_test.py: the Python package (python/ktrace) from the source tree.

Run by build/python_cli (make test) with BUILD set: ktrace.load() on the generator's
traces and the example traces, checked field by field against `ktrace-dump --json`
of the same files (ktrace-dump decodes the records itself; the package reads them
through libktrace-reader.so); bad and truncated files; pause/resume/mark without
the library (no-ops) and with it, under the fake CUDA driver, down to the marks
in the trace written; the tables (pandas and pyarrow when installed); ktrace.columns()
against the objects, with numpy and without.

    BUILD=build python3 test/python/ktrace_py_test.py
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
os.environ.setdefault("KTRACE_READER_LIB", os.path.join(BUILD, "libktrace-reader.so"))
sys.path.insert(0, os.path.join(ROOT, "python"))

import ktrace  # noqa: E402

TMP = tempfile.mkdtemp(prefix="ktrace-py.")  # under $TMPDIR, removed at exit
atexit.register(shutil.rmtree, TMP, ignore_errors=True)


def ktgen(name, *args):
    path = os.path.join(TMP, name + ".ktrace")
    if not os.path.exists(path):
        subprocess.run([os.path.join(BUILD, "ktgen")] + list(args) + [path], check=True)
    return path


def dump(path):
    out = subprocess.run([os.path.join(BUILD, "ktrace-dump"), "--json", path], check=True, capture_output=True,
                         text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def hexint(s):
    return int(s, 16)


def arg_value(a):
    """What ktrace.load() makes of an argument ktrace-dump --json printed: a pointer's
    "0x..." as an int (as Region.ptr), every other value as it is."""
    v = a["value"]
    return hexint(v) if a["kind"] == "pointer" and isinstance(v, str) and v.startswith("0x") else v


class LoadMatchesDump(unittest.TestCase):
    """Every launch, argument, digest, copy, memset, note and ORDER record agrees with ktrace-dump --json."""

    def check(self, path):
        recs = dump(path)
        t = ktrace.load(path)
        header = next(r for r in recs if r["type"] == "header")
        self.assertEqual((t.pid, t.host, t.cmdline, t.config), (header["pid"], header["host"], header["cmdline"],
                                                                 header["config"]))
        self.assertEqual(t.start_monotonic_ns, header["start_monotonic_ns"])
        launches = sorted((r for r in recs if r["type"] == "launch"), key=lambda r: r["op_seq"])
        self.assertEqual([l.op_seq for l in t.launches], [r["op_seq"] for r in launches])
        for l, r in zip(t.launches, launches):
            self.assertEqual(l.time_ns, r["time_ns"])
            self.assertEqual((l.stream, l.context), (hexint(r["stream"]), hexint(r["context"])))
            self.assertEqual(list(l.grid), r["grid"])
            self.assertEqual(list(l.flags), r["launch_flags"])
            if r.get("mangled"):
                self.assertEqual((l.kernel.name, l.kernel_name), (r["mangled"], r["kernel"]))
            self.assertEqual([(a.name, a.value) for a in l.args], [(a["name"] or "arg%d" % a["ordinal"], arg_value(a))
                                                                   for a in r.get("args", [])])
            self.assertEqual([(g.param_offset, g.pre, g.post, g.written) for g in l.regions],
                             [(g["param_offset"], g.get("pre_hash"), g.get("post_hash"), g["out"])
                              for g in sorted(r["regions"], key=lambda g: g["param_offset"])])
        kernels = {r["kernel_id"]: r for r in recs if r["type"] == "kernel"}
        for k in t.kernels:
            if k.id in kernels:  # what the kernel writes through each parameter (format 1.14)
                self.assertEqual([(p.written, p.written_source) for p in k.params],
                                 [(q.get("written", "unknown"), q.get("written_source", "none"))
                                  for q in kernels[k.id]["params"]])
        ops = sorted((r for r in recs if r["type"] in ("memcpy", "memset")), key=lambda r: r["op_seq"])
        self.assertEqual([(o.op_seq, o.kind, o.time_ns) for o in t.ops], [(r["op_seq"], r["type"], r["time_ns"])
                                                                          for r in ops])
        for o, r in zip(t.ops, ops):
            if o.kind == "memcpy":
                self.assertEqual((o.bytes, o.dir, o.src_digest, o.delivered_digest),
                                 (r["bytes"], r["dir"], r.get("src_digest"), r.get("dst_digest")))
        notes = [r for r in recs if r["type"] == "note"]
        self.assertEqual(sorted(n.text for n in t.notes), sorted(r["text"] for r in notes))
        orders = [r for r in recs if r["type"] == "order"]
        self.assertEqual(sorted((o.op, o.op_seq_before) for o in t.orders),
                         sorted((r["op"], r["op_seq_before"]) for r in orders))
        gputimes = sorted((r for r in recs if r["type"] == "gputime"), key=lambda r: r["op_seq"])
        self.assertEqual([(g.op_seq, g.start_ns, g.end_ns, g.duration_ns, g.graph_launch, g.ref_err_ns)
                          for g in t.gpu_times],
                         [(r["op_seq"], r["start_ns"], r["end_ns"], r["duration_ns"], "graph" in r["gputime_flags"],
                           r["ref_err_ns"]) for r in gputimes])
        return t

    def test_basic(self):
        t = self.check(ktgen("basic"))
        self.assertTrue(any(not k.known for k in t.kernels))  # a launch whose kernel never appears
        vecadd = next(k for k in t.kernels if k.name == "_Z6vecAddPKfS0_Pfi")
        self.assertEqual([p.written for p in vecadd.params], ["read_only", "read_only", "written", "unknown"])

    def test_many(self):
        t = self.check(ktgen("many", "--scenario", "many", "--frame-bytes", "4096"))
        self.assertEqual(len(t.launches), 300)

    def test_order(self):
        self.check(ktgen("order", "--scenario", "order"))

    def test_old_names_warn(self):
        """The names before the JSON conventions still read, with a DeprecationWarning."""
        launch = self.check(ktgen("basic")).launches[0]
        order = self.check(ktgen("order", "--scenario", "order")).orders[0]
        copy = next(o for o in self.check(ktgen("graph", "--scenario", "graph")).ops if o.kind == "memcpy")
        for obj, old, new in ((launch, "launch_seq", "op_seq"), (order, "launch_seq_before", "op_seq_before"),
                              (copy, "direction", "dir")):
            with self.assertWarnsRegex(DeprecationWarning, r"\.%s is now \.%s" % (old, new)):
                self.assertEqual(getattr(obj, old), getattr(obj, new))

    def test_gputimes(self):
        t = self.check(ktgen("gputimes", "--scenario", "gputimes"))
        self.assertEqual([(g.op_seq, g.duration_ns, g.graph_launch) for g in t.gpu_times],
                         [(1, 10000, False), (4, 10000, False), (5, 4000, True)])
        self.assertEqual(len(t.rows()["gpu_times"]), 3)
        self.assertEqual(t.counters["gpu_times"], 3)

    def test_examples(self):
        for run in ("atomic_sum-run1", "atomic_sum-run2"):
            t = self.check(os.path.join(ROOT, "examples", "traces", run + ".ktrace"))
            self.assertTrue(t.ended)

    def test_read_only_regions_unchanged(self):
        """A parameter proven read-only keeps its region's digest across the launch (the
        example's kernels ran on the CPU under the test driver, hashed before and after)."""
        t = ktrace.load(os.path.join(ROOT, "examples", "traces", "atomic_sum-run1.ktrace"))
        compared = 0
        for l in t.launches:
            kinds = {p.ordinal: p.written for p in l.kernel.params}
            spans = [(g, kinds.get(g.ordinal)) for g in l.regions if g.pre is not None and g.post is not None]
            for g, w in spans:
                aliased = any(o is not g and ow != "read_only" and g.ptr < o.ptr + o.hash_len and o.ptr < g.ptr + g.hash_len
                              for o, ow in spans)
                if w == "read_only" and not aliased:
                    compared += 1
                    self.assertEqual(g.pre, g.post, "%s arg %d" % (l.kernel_name, g.ordinal))
        self.assertGreater(compared, 0)

    def test_pointer_values_are_ints(self):
        """A pointer argument's value is an int, the same as its region's ptr (the args
        table keeps ktrace-dump's "0x..." text)."""
        t = ktrace.load(os.path.join(ROOT, "examples", "traces", "atomic_sum-run1.ktrace"))
        pointers = 0
        for l in t.launches:
            for a in l.args:
                region = next((g for g in l.regions if g.ordinal == a.ordinal), None)
                if a.kind == "pointer":
                    pointers += 1
                    self.assertIsInstance(a.value, int)
                    self.assertEqual(a.value, region.ptr)
                else:
                    self.assertNotIsInstance(a.value, str)  # the example's scalars are numbers
        self.assertGreater(pointers, 0)
        table = t.rows()["args"]
        first = t.launches[0].args[0]
        self.assertEqual(table[0]["value"], "0x%x" % first.value)


class GenericRecords(unittest.TestCase):
    """Trace.records(type) and ktrace.record_table(): every record type, named as ktrace-dump names it."""

    def test_records_equal_dump(self):
        for name, args in (("gputimes", ("--scenario", "gputimes")), ("order", ("--scenario", "order")),
                           ("graph", ("--scenario", "graph")), ("ranges", ("--scenario", "ranges"))):
            path = ktgen(name, *args)
            t = ktrace.load(path)
            recs = dump(path)
            for kind in {r["type"] for r in recs} - {"launch"}:
                want = [r for r in recs if r["type"] == kind]
                got = [r.as_dict() for r in t.records(kind)]
                self.assertEqual(got, want, "%s: %s" % (name, kind))

    def test_record_of_each_field(self):
        g = ktrace.load(ktgen("gputimes", "--scenario", "gputimes")).records("gputime")[0]
        self.assertEqual((g.type, g.op_seq, g.duration_ns), ("gputime", 1, 10000))
        self.assertEqual(ktrace.load(ktgen("basic")).records("end")[0].reason, "exit")

    def test_unknown_type(self):
        t = ktrace.load(ktgen("basic"))
        with self.assertRaisesRegex(ValueError, "no record type named 'nosuch'"):
            t.records("nosuch")

    def test_table(self):
        table = ktrace.record_table()
        self.assertEqual(table["format"], ktrace.load(ktgen("basic")).format_version)
        names = [r["name"] for r in table["records"]]
        self.assertEqual(names[:5], ["header", "module", "module_image", "kernel", "launch"])
        alloc = table["records"][names.index("alloc")]
        self.assertEqual([(f["name"], f["offset"]) for f in alloc["fields"]],
                         [("base", 24), ("bytes", 32), ("stream", 40), ("device", 48), ("kind", 52)])


class BadFiles(unittest.TestCase):
    def test_not_a_trace(self):
        path = os.path.join(TMP, "garbage.ktrace")
        with open(path, "w") as f:
            f.write("hello, this is not a trace\n")
        with self.assertRaises(ValueError) as cm:
            ktrace.load(path)
        self.assertIn(path, str(cm.exception))

    def test_missing(self):
        """A file that cannot be opened is the OSError open() raises, naming it; a file
        that is not a trace is a ValueError."""
        path = os.path.join(TMP, "nosuch.ktrace")
        with self.assertRaises(FileNotFoundError) as cm:
            ktrace.load(path)
        self.assertEqual(cm.exception.filename, path)
        self.assertNotIsInstance(cm.exception, ValueError)
        with self.assertRaises(IsADirectoryError):
            ktrace.load(TMP)
        with self.assertRaises(NotADirectoryError):
            ktrace.load(os.path.join(ktgen("basic"), "x.ktrace"))

    def test_unreadable(self):
        if os.geteuid() == 0:
            self.skipTest("root reads any file")
        path = os.path.join(TMP, "unreadable.ktrace")
        with open(path, "wb") as f:
            f.write(b"x")
        os.chmod(path, 0)
        with self.assertRaises(PermissionError):
            ktrace.load(path)

    def test_empty(self):
        path = os.path.join(TMP, "empty.ktrace")
        open(path, "wb").close()
        with self.assertRaises(ValueError) as cm:
            ktrace.load(path)
        self.assertIn(path, str(cm.exception))

    def test_truncated(self):
        path = ktgen("cut", "--cut-at-flush", "2")
        with self.assertRaises(ValueError):
            ktrace.load(path)
        t = ktrace.load(path, partial=True)
        self.assertTrue(t.truncated)
        self.assertGreater(len(t.launches) + len(t.ops), 0)


class Control(unittest.TestCase):
    def test_untraced_no_ops(self):
        self.assertFalse(ktrace.active())
        self.assertFalse(ktrace.is_paused())
        ktrace.pause()
        ktrace.mark("not traced")
        ktrace.mark(b"bytes too")
        ktrace.resume()
        with ktrace.paused():
            pass

    def test_traced_under_the_fake_driver(self):
        out = os.path.join(TMP, "marks.ktrace")
        # cuInit, then any call ktrace wraps starts tracing (interpose/init.c)
        program = ("import ctypes, ktrace\n"
                   "assert ctypes.CDLL('libcuda.so.1').cuInit(0) == 0\n"
                   "ctypes.CDLL(None).cuCtxSynchronize()\n"
                   "assert ktrace.active()\n"
                   "ktrace.mark('step 1: warm-up')\n"
                   "with ktrace.paused():\n"
                   "    assert ktrace.is_paused()\n"
                   "assert not ktrace.is_paused()\n"
                   "ktrace.mark('step 2 \\u00e9')\n")
        env = dict(os.environ, LD_PRELOAD=os.path.join(BUILD, "libktrace.so"),
                   LD_LIBRARY_PATH=os.path.join(BUILD, "fakecuda"), KTRACE_OUTPUT=out, KTRACE_OVERWRITE="1",
                   KTRACE_QUIET="1", PYTHONPATH=os.path.join(ROOT, "python"))
        subprocess.run([sys.executable, "-c", program], env=env, check=True)
        t = ktrace.load(out)
        self.assertEqual([m.text for m in t.marks], ["step 1: warm-up", "step 2 \u00e9"])
        self.assertEqual([n.code for n in t.notes if not n.is_mark], [256, 257])  # paused, resumed


class Tables(unittest.TestCase):
    def setUp(self):
        self.t = ktrace.load(ktgen("many", "--scenario", "many", "--frame-bytes", "4096"))

    def test_rows(self):
        rows = self.t.rows()
        self.assertEqual(len(rows["launches"]), 300)
        self.assertEqual(len(rows["args"]), sum(len(l.args) for l in self.t.launches))
        self.assertTrue(all(isinstance(r["value"], str) for r in rows["args"]))
        self.assertTrue(all(r["value"].startswith("0x") for r in rows["args"] if r["kind"] == "pointer"))

    def test_pandas(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.skipTest("pandas not installed")
        frames = self.t.to_pandas()
        self.assertEqual(len(frames["launches"]), 300)
        self.assertEqual(list(frames["launches"]["op_seq"]), [l.op_seq for l in self.t.launches])

    def test_arrow(self):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            self.skipTest("pyarrow not installed")
        self.assertEqual(self.t.to_arrow()["launches"].num_rows, 300)

    def test_load_tables_without_libraries(self):
        have = []
        for name in ("pandas", "pyarrow"):
            try:
                __import__(name)
                have.append(name)
            except ImportError:
                pass
        got = ktrace.load(ktgen("order", "--scenario", "order"), tables="auto")
        self.assertEqual(isinstance(got, ktrace.Trace), not have)


class Columns(unittest.TestCase):
    """ktrace.columns(): one array per field, the same values as ktrace.load()'s objects."""

    def check(self, path, use_numpy):
        t = ktrace.load(path)
        cols = ktrace.columns(path, numpy=use_numpy)
        launches, regions, kernels = cols["launches"], cols["regions"], cols["kernels"]
        if not use_numpy:
            self.assertTrue(all(type(v).__name__ in ("array", "list") for v in launches.values()))
        self.assertEqual([int(v) for v in launches["op_seq"]], [l.op_seq for l in t.launches])
        self.assertEqual([kernels["id"][int(k)] for k in launches["kernel_index"]], [l.kernel.id for l in t.launches])
        self.assertEqual(list(kernels["name"]), [k.name for k in t.kernels])
        for i, l in enumerate(t.launches):
            self.assertEqual((int(launches["stream"][i]), int(launches["device"][i]), int(launches["tid"][i])),
                             (l.stream, l.device, l.tid))
            self.assertEqual(tuple(int(launches["grid_" + a][i]) for a in "xyz"), l.grid)
            first, n = int(launches["first_region"][i]), int(launches["nregions"][i])
            self.assertEqual(n, len(l.regions))
            for j, g in enumerate(l.regions):
                r = first + j
                self.assertEqual(int(regions["launch_index"][r]), i)
                self.assertEqual((int(regions["param_offset"][r]), int(regions["ptr"][r]), int(regions["hash_len"][r])),
                                 (g.param_offset, g.ptr, g.hash_len))
                if g.pre is not None:
                    self.assertEqual(int(regions["pre_hash"][r]), int(g.pre, 16))
                if g.post is not None:
                    self.assertEqual(int(regions["post_hash"][r]), int(g.post, 16))
        self.assertEqual([int(v) for v in cols["ops"]["op_seq"]], [o.op_seq for o in t.ops])
        self.assertEqual(list(cols["notes"]["text"]), [n.text for n in t.notes])
        self.assertEqual(len(cols["orders"]["stream"]), len(t.orders))
        return cols

    def test_array_module(self):
        for name in ("basic", "order", "gputimes"):
            self.check(ktgen(name, "--scenario", name), use_numpy=False)

    def test_numpy(self):
        try:
            import numpy
        except ImportError:
            self.skipTest("numpy not installed")
        cols = self.check(ktgen("many", "--scenario", "many", "--frame-bytes", "4096"), use_numpy=True)
        self.assertIsInstance(cols["launches"]["op_seq"], numpy.ndarray)
        self.assertEqual(cols["launches"]["op_seq"].dtype, numpy.uint64)
        self.check(ktgen("basic", "--scenario", "basic"), use_numpy=True)

    def test_arrow(self):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            self.skipTest("pyarrow not installed")
        tables = ktrace.columns(ktgen("many", "--scenario", "many", "--frame-bytes", "4096")).to_arrow()
        self.assertEqual(tables["launches"].num_rows, 300)

    def test_bad_file(self):
        with self.assertRaises(FileNotFoundError):
            ktrace.columns(os.path.join(TMP, "missing.ktrace"))


class LazyLaunches(unittest.TestCase):
    """A launch reads its fields from the trace's columns; closing the trace reads them all first."""

    def test_fields_after_close(self):
        def plain(l):
            d = l.as_dict()
            d["kernel"] = d["kernel"].id
            d["regions"] = [g.as_dict() for g in d["regions"]]
            return d, repr(l)
        path = ktgen("basic", "--scenario", "basic")
        before = [plain(l) for l in ktrace.load(path).launches]
        with ktrace.load(path) as t:
            pass
        self.assertEqual([plain(l) for l in t.launches], before)
        self.assertIn("op_seq", before[0][0])
        self.assertTrue(any(d["regions"] for d, _ in before))


if __name__ == "__main__":
    unittest.main(verbosity=2)
