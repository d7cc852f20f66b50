"""ktrace.load(): a trace file as Python objects, read by ktrace's own C reader.

The reading is done by libktrace-reader.so (tools/reader/reader_lib.c), the same model
the tools load traces with, through ctypes: this module holds no parser of the
format. Rows come from C in batches of fixed structs, mirrored below (checked
against ktpy_row_size()). Names of enums and flags are ktrace-dump --json's;
pointers and handles are ints (a pointer argument's value too, where ktrace-dump
--json writes "0x..."), digests 16-hex-digit strings (as in ktrace-dump).
"""
import array
import ctypes
import errno
import json
import os
import stat
import struct
import warnings

_U64, _U32, _I32, _P = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int32, ctypes.c_char_p

KERNELS, PARAMS, LAUNCHES, REGIONS, OPS, NOTES, ORDERS, GPUTIMES = range(1, 9)
NOTE_CODE_MARK = 260
_REGION_PRE, _REGION_POST = 0x02, 0x04
_COPYF_ASYNC, _COPYF_SRC_DIGEST = 0x1, 0x8
_GPUTIMEF_GRAPH = 0x1


def _struct(name, fields):
    return type(name, (ctypes.Structure,), {"_fields_": fields})


_Header = _struct("_Header", [("start_realtime_ns", _U64), ("start_monotonic_ns", _U64), ("nrecords", _U64),
                              ("pid", _U32), ("rank", _U32), ("digest_alg", _U32), ("format_minor", _U32),
                              ("have_end", _I32), ("end_reason", _I32), ("end_status", _I32), ("truncated", _I32),
                              ("host", _P), ("cmdline", _P), ("version", _P), ("config", _P),
                              ("truncated_msg", _P)])
_ROWS = {
    KERNELS: _struct("_Kernel", [("id", _U64), ("module_id", _U64), ("handle", _U64), ("module_digest", _U64),
                                 ("layout_source", _U32), ("param_bytes", _U32), ("nparams", _U32), ("known", _U32),
                                 ("first_param", _U64), ("name", _P), ("demangled", _P)]),
    PARAMS: _struct("_Param", [("kernel_index", _U64), ("ordinal", _U32), ("kind", _U32), ("name_source", _U32),
                               ("offset", _U32), ("size", _U32), ("flags", _U32), ("written", _U32),
                               ("written_source", _U32), ("name", _P), ("type", _P)]),
    LAUNCHES: _struct("_Launch", [("launch_seq", _U64), ("rec_seq", _U64), ("time_ns", _U64), ("kernel_id", _U64),
                                  ("kernel_index", _U64), ("context", _U64), ("stream", _U64), ("first_region", _U64),
                                  ("tid", _U32), ("api", _U32), ("flags", _U32), ("shared_mem", _U32),
                                  ("nregions", _U32), ("param_bytes_len", _U32), ("device", _I32), ("result", _I32),
                                  ("grid", _U32 * 3), ("block", _U32 * 3), ("cluster", _U32 * 3), ("reserved", _U32)]),
    REGIONS: _struct("_Region", [("launch_index", _U64), ("ptr", _U64), ("alloc_base", _U64), ("alloc_size", _U64),
                                 ("hash_len", _U64), ("pre_hash", _U64), ("post_hash", _U64), ("param_offset", _U32),
                                 ("ordinal", _U32), ("flags", _U32), ("reserved", _U32)]),
    OPS: _struct("_Op", [("op_seq", _U64), ("time_ns", _U64), ("dst", _U64), ("src", _U64), ("bytes", _U64),
                         ("value", _U64), ("stream", _U64), ("context", _U64), ("src_digest", _U64),
                         ("dst_digest", _U64), ("type", _U32), ("dir", _U32), ("dir_inferred", _U32), ("flags", _U32),
                         ("elem_size", _U32), ("tid", _U32), ("dst_digest_state", _U32), ("result", _I32)]),
    NOTES: _struct("_Note", [("rec_seq", _U64), ("time_ns", _U64), ("level", _U32), ("code", _U32), ("text", _P)]),
    ORDERS: _struct("_Order", [("seq_before", _U64), ("rec_seq", _U64), ("time_ns", _U64), ("stream", _U64),
                               ("event", _U64), ("context", _U64), ("op", _U32), ("tid", _U32), ("stream_flags", _U32),
                               ("device", _I32), ("priority", _I32), ("reserved", _I32)]),
    GPUTIMES: _struct("_GpuTime", [("op_seq", _U64), ("rec_seq", _U64), ("context", _U64), ("stream", _U64),
                                   ("start_ns", _U64), ("end_ns", _U64), ("ref_ns", _U64), ("ref_err_ns", _U32),
                                   ("flags", _U32), ("tid", _U32), ("device", _I32)]),
}

_lib = None


def library_path():
    """libktrace-reader.so: $KTRACE_READER_LIB, else the one bundled in this package (lib/)."""
    env = os.environ.get("KTRACE_READER_LIB")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "libktrace-reader.so")


def _library():
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(library_path())
    lib.ktpy_abi.restype = _U32
    lib.ktpy_row_size.restype, lib.ktpy_row_size.argtypes = ctypes.c_size_t, [ctypes.c_int]
    lib.ktpy_open.restype = ctypes.c_void_p
    lib.ktpy_open.argtypes = [_P, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    lib.ktpy_close.argtypes = [ctypes.c_void_p]
    lib.ktpy_header.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Header)]
    lib.ktpy_counter.restype, lib.ktpy_counter.argtypes = _U64, [ctypes.c_void_p, _U32]
    lib.ktpy_count.restype, lib.ktpy_count.argtypes = ctypes.c_size_t, [ctypes.c_void_p, ctypes.c_int]
    lib.ktpy_rows.restype = ctypes.c_size_t
    lib.ktpy_rows.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
    lib.ktpy_arg_value.restype = _P
    lib.ktpy_arg_value.argtypes = [ctypes.c_void_p, ctypes.c_size_t, _U32, ctypes.c_char_p, ctypes.c_size_t]
    lib.ktpy_name.restype, lib.ktpy_name.argtypes = _P, [ctypes.c_int, _U32, ctypes.c_char_p, ctypes.c_size_t]
    lib.ktpy_records_json.restype = ctypes.c_int
    lib.ktpy_records_json.argtypes = [_P, _P, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                      ctypes.c_char_p, ctypes.c_size_t]
    lib.ktpy_column.restype = ctypes.c_size_t
    lib.ktpy_column.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
    lib.ktpy_record_table.restype = ctypes.c_void_p
    lib.ktpy_free.argtypes = [ctypes.c_void_p]
    if lib.ktpy_abi() != 1:
        raise ImportError("%s: reader ABI %d, this package reads 1" % (library_path(), lib.ktpy_abi()))
    for table, row in [(0, _Header)] + list(_ROWS.items()):
        if lib.ktpy_row_size(table) != ctypes.sizeof(row):
            raise ImportError("%s: row %d is %d bytes, this package expects %d"
                              % (library_path(), table, lib.ktpy_row_size(table), ctypes.sizeof(row)))
    _lib = lib
    return lib


def _s(b):
    return b.decode("utf-8", "replace") if b is not None else ""


_names = {}


def _name(what, value):
    key = (what, value)
    if key not in _names:
        buf = ctypes.create_string_buffer(512)
        _names[key] = _s(_library().ktpy_name(what, value, buf, len(buf)))
    return _names[key]


_flag_tuples = {}


def _flags(what, value):
    key = (what, value)
    got = _flag_tuples.get(key)
    if got is None:
        text = _name(what, value)
        got = _flag_tuples[key] = tuple(text.split(",")) if text else ()
    return got


def _digest(valid, v):
    return format(v, "016x") if valid else None


def _renamed(old, new):
    """A read-only attribute under its name before the JSON conventions (docs/json.md):
    it returns the new one's value and warns once per place (DeprecationWarning)."""
    def get(self):
        warnings.warn("ktrace: %s.%s is now .%s" % (type(self).__name__, old, new), DeprecationWarning, stacklevel=2)
        return getattr(self, new)
    return property(get, doc="Deprecated: .%s." % new)


class _Record:
    __slots__ = ()

    def __init__(self, *values):
        for k, v in zip(self.__slots__, values):
            setattr(self, k, v)

    def _public(self):
        return [k for k in getattr(self, "_fields", self.__slots__) if not k.startswith("_")]

    def __repr__(self):
        shown = ", ".join("%s=%r" % (k, getattr(self, k)) for k in self._public()[:6])
        return "%s(%s, ...)" % (type(self).__name__, shown)

    def as_dict(self):
        return {k: getattr(self, k) for k in self._public()}


class Param(_Record):
    """A kernel parameter: its ordinal, name, type, kind, offset and size in the parameter buffer,
    and whether the kernel's code can write through it (written: "read_only", "written" or
    "unknown"; written_source: "ttir", "ptx" or "none"; format 1.14)."""
    __slots__ = ("ordinal", "name", "type", "kind", "name_source", "offset", "size", "flags", "written",
                 "written_source")


class Kernel(_Record):
    """A kernel: mangled and demangled name, module, parameters."""
    __slots__ = ("id", "name", "demangled", "module_id", "module_digest", "layout_source", "params", "known")

    @property
    def display_name(self):
        return self.demangled or self.name or "kernel#%d" % self.id


class Region(_Record):
    """A pointer word of a launch's parameters and the digests of the bytes hashed from it."""
    __slots__ = ("param_offset", "ordinal", "ptr", "alloc_base", "alloc_size", "hash_len", "pre", "post",
                 "written", "flags")

    def __init__(self, param_offset, ordinal, ptr, alloc_base, alloc_size, hash_len, pre, post, written, flags):
        self.param_offset, self.ordinal, self.ptr, self.alloc_base = param_offset, ordinal, ptr, alloc_base
        self.alloc_size, self.hash_len, self.pre, self.post = alloc_size, hash_len, pre, post
        self.written, self.flags = written, flags


class Arg(_Record):
    """A launch argument: name, type, kind, value and its region's digests.

    value is as ktrace-dump --json shows it (a number, hex bytes of a struct, None when
    not captured), except a pointer's: an int, as Region.ptr (ktrace-dump --json and the
    args table of rows() write it "0x...")."""
    __slots__ = ("ordinal", "name", "type", "kind", "value", "pre", "post", "written")


def _launch_field(field, convert=None):
    """A Launch attribute read from the trace's column of field (loaded on first use)."""
    if convert is None:
        return property(lambda self: self._trace._column(LAUNCHES, field)[self._index])
    return property(lambda self: convert(self._trace._column(LAUNCHES, field)[self._index]))


def _launch_shape(field):
    def get(self):
        i = 3 * self._index
        return tuple(self._trace._column(LAUNCHES, field)[i:i + 3])
    return property(get)


class Launch(_Record):
    """One kernel launch (op_seq: its number among the trace's launches, copies and memsets, as
    ktrace-dump --json names it); .args decodes the arguments' values on first use.

    A launch holds only its trace and index: its fields are read from the trace's columns
    (one array per field, loaded when first used), its regions made when asked for, so
    that a trace of millions of launches loads in little memory."""
    __slots__ = ("_trace", "_index", "_args")
    _fields = ("op_seq", "time_ns", "kernel", "kernel_name", "stream", "context", "device", "tid", "api", "flags",
               "grid", "block", "cluster", "shared_mem", "result", "regions")

    launch_seq = _renamed("launch_seq", "op_seq")
    op_seq = _launch_field("launch_seq")
    time_ns = _launch_field("time_ns")
    stream = _launch_field("stream")
    context = _launch_field("context")
    device = _launch_field("device")
    tid = _launch_field("tid")
    shared_mem = _launch_field("shared_mem")
    result = _launch_field("result")
    api = _launch_field("api", lambda v: _name(1, v))
    flags = _launch_field("flags", lambda v: _flags(11, v))
    grid = _launch_shape("grid")
    block = _launch_shape("block")
    cluster = _launch_shape("cluster")

    def __init__(self, trace, index):
        self._trace, self._index, self._args = trace, index, None

    @property
    def kernel(self):
        return self._trace.kernels[self._trace._column(LAUNCHES, "kernel_index")[self._index]]

    @property
    def kernel_name(self):
        return self.kernel.display_name

    @property
    def regions(self):
        """The launch's regions (made on each use from the trace's region columns)."""
        return self._trace._regions(self._index)

    @property
    def args(self):
        if self._args is None:
            self._args = self._trace._launch_args(self)
        return self._args


class Op(_Record):
    """A copy (kind "memcpy", dir "HtoD"...) or memset (kind "memset")."""
    __slots__ = ("op_seq", "time_ns", "kind", "dir", "bytes", "dst", "src", "value", "stream", "context",
                 "tid", "is_async", "src_digest", "delivered_digest", "delivered_digest_state", "result")
    direction = _renamed("direction", "dir")


class Note(_Record):
    """A NOTE record: tracing paused or resumed, a mark, a warning..."""
    __slots__ = ("time_ns", "level", "code", "text", "is_mark")


class Order(_Record):
    """An ORDER record: a stream, event or synchronisation call (format 1.2); op_seq_before: the
    number the next launch, copy or memset took."""
    __slots__ = ("op", "op_seq_before", "time_ns", "stream", "event", "context", "device", "tid")
    launch_seq_before = _renamed("launch_seq_before", "op_seq_before")


class GpuTime(_Record):
    """A GPUTIME record (format 1.10): the measured GPU start and end (CLOCK_MONOTONIC ns, the
    trace's clock) of a sampled launch, or of a whole graph launch (graph_launch: op_seq is its
    first node's); ref_err_ns bounds the error of the reference event the times were aligned with."""
    __slots__ = ("op_seq", "start_ns", "end_ns", "duration_ns", "graph_launch", "stream", "context", "device",
                 "tid", "ref_ns", "ref_err_ns")


class Record:
    """A record of any type, its fields as attributes named as ktrace-dump --json names them
    (Trace.records(type)); as_dict() gives them all.  type is the record type's name."""

    def __init__(self, fields):
        self.__dict__.update(fields)

    def as_dict(self):
        return dict(self.__dict__)

    def __repr__(self):
        shown = ", ".join("%s=%r" % kv for kv in list(self.__dict__.items())[:6])
        return "Record(%s, ...)" % shown


def _taken(address, length):
    """The bytes a ktpy_* function returned (malloc'ed), freed."""
    try:
        return ctypes.string_at(address, length) if address else b""
    finally:
        if address:
            _library().ktpy_free(address)


def record_table():
    """The record table (format/record_table.def): every record type with its fields, their
    offsets, types and names, as ktrace-dump --record-table prints it."""
    address = _library().ktpy_record_table()
    if not address:
        raise MemoryError("ktrace: the record table")
    return json.loads(_taken(address, len(ctypes.string_at(address))))


def _make(cls, **kw):
    o = cls.__new__(cls)
    for k, v in kw.items():
        setattr(o, k, v)
    return o


def _unpacker(row):
    """A struct.Struct reading one row as a tuple in field order (arrays as their elements;
    char* as an address): struct.iter_unpack is far faster than ctypes field access."""
    codes = {_U64: "Q", _U32: "I", _I32: "i", _P: "P"}
    fmt = "@"
    for _, ctype in row._fields_:
        fmt += "%d%s" % (ctype._length_, codes[ctype._type_]) if hasattr(ctype, "_length_") else codes[ctype]
    unpacker = struct.Struct(fmt)
    if unpacker.size != ctypes.sizeof(row):
        raise ImportError("row %s: %d bytes unpacked, %d in C" % (row.__name__, unpacker.size, ctypes.sizeof(row)))
    return unpacker


_UNPACK = {table: _unpacker(row) for table, row in _ROWS.items()}


def _rows(lib, handle, table, batch=65536):
    """The rows of table as tuples, in field order (see _ROWS)."""
    total = lib.ktpy_count(handle, table)
    row, unpacker = _ROWS[table], _UNPACK[table]
    first = 0
    while first < total:
        n = min(batch, total - first)
        buf = (row * n)()
        got = lib.ktpy_rows(handle, table, first, n, buf)
        yield from unpacker.iter_unpack(memoryview(buf).cast("B")[:got * ctypes.sizeof(row)])
        first += got


def _cstr(address):
    return ctypes.string_at(address).decode("utf-8", "replace") if address else ""


_TYPECODES = {(_U64, 8): "Q", (_U32, 4): "I", (_I32, 4): "i"}


def _column(lib, handle, table, field):
    """Field of every row of table as an array.array (a shape field, grid: 3 numbers a row),
    gathered by the C reader without a Python object per row."""
    row = _ROWS[table]
    ctype = dict(row._fields_)[field]
    base = getattr(ctype, "_type_", ctype) if hasattr(ctype, "_length_") else ctype
    desc = getattr(row, field)
    per_row = desc.size // ctypes.sizeof(base)
    n = lib.ktpy_count(handle, table)
    out = array.array(_TYPECODES[(base, ctypes.sizeof(base))], [0]) * (n * per_row)
    if n and lib.ktpy_column(handle, table, desc.offset, desc.size, out.buffer_info()[0]) != n:
        raise MemoryError("ktrace: column %s" % field)
    return out


class Trace:
    """A trace file loaded with ktrace's reader (ktrace.load(path)).

    Attributes: path, pid, rank, host, cmdline, ktrace_version, config,
    start_realtime_ns, start_monotonic_ns, format_version ("1.7"), ended (an END
    record was written), end_reason, end_status, truncated, counters (name ->
    value), kernels, launches (by launch_seq), ops (copies and memsets, by
    op_seq), notes, marks (the program's ktrace.mark() notes), orders,
    gpu_times (measured GPU times of sampled launches and graph launches, by op_seq).
    to_pandas() and to_arrow() give the same as tables.
    """

    def __init__(self, path, partial=False):
        lib, handle = _open(path, partial)
        self._lib, self._handle, self.path = lib, handle, path
        try:
            self._read_header()
            self._read_kernels()
            self._read_launches()
            self._read_rest()
        except BaseException:
            self._release()
            raise

    def _read_header(self):
        h = _Header()
        self._lib.ktpy_header(self._handle, ctypes.byref(h))
        self.pid, self.rank, self.host, self.cmdline = h.pid, h.rank, _s(h.host), _s(h.cmdline)
        self.ktrace_version, self.config = _s(h.version), _s(h.config)
        self.start_realtime_ns, self.start_monotonic_ns = h.start_realtime_ns, h.start_monotonic_ns
        self.format_version = "1.%d" % h.format_minor
        self.ended, self.end_status = bool(h.have_end), h.end_status
        self.end_reason = _name(5, h.end_reason) if h.have_end else None
        self.truncated, self.truncated_message = bool(h.truncated), _s(h.truncated_msg)
        self.counters = {}
        for cid in range(1, 32):
            v = self._lib.ktpy_counter(self._handle, cid)
            if v:
                self.counters[_name(10, cid)] = v

    def _read_kernels(self):
        params = [_make(Param, ordinal=p[1], name=_cstr(p[9]), type=_cstr(p[10]), kind=_name(6, p[2]),
                        name_source=_name(7, p[3]), offset=p[4], size=p[5], flags=p[6], written=_name(13, p[7]),
                        written_source=_name(14, p[8]))
                  for p in _rows(self._lib, self._handle, PARAMS)]
        # id, module_id, handle, module_digest, layout_source, param_bytes, nparams, known, first_param, name, demangled
        self.kernels = [_make(Kernel, id=k[0], name=_cstr(k[9]), demangled=_cstr(k[10]), module_id=k[1],
                              module_digest=_digest(k[3], k[3]), layout_source=_name(8, k[4]), known=bool(k[7]),
                              params=tuple(params[k[8]:k[8] + k[6]]))
                        for k in _rows(self._lib, self._handle, KERNELS)]

    def _read_launches(self):
        self._columns = {}
        self.launches = [Launch(self, i) for i in range(self._lib.ktpy_count(self._handle, LAUNCHES))]

    def _column(self, table, field):
        """The column of field in table, an array.array (loaded from the C reader on first use)."""
        got = self._columns.get((table, field))
        if got is None:
            if self._handle is None:
                raise ValueError("%s: the trace was closed" % self.path)
            got = self._columns[(table, field)] = _column(self._lib, self._handle, table, field)
        return got

    def _regions(self, i):
        col = self._column
        first = col(LAUNCHES, "first_region")[i]
        regions = []
        for r in range(first, first + col(LAUNCHES, "nregions")[i]):
            flags, pre, post = col(REGIONS, "flags")[r], col(REGIONS, "pre_hash")[r], col(REGIONS, "post_hash")[r]
            both = flags & _REGION_PRE and flags & _REGION_POST
            regions.append(Region(col(REGIONS, "param_offset")[r], col(REGIONS, "ordinal")[r], col(REGIONS, "ptr")[r],
                                  col(REGIONS, "alloc_base")[r], col(REGIONS, "alloc_size")[r],
                                  col(REGIONS, "hash_len")[r], _digest(flags & _REGION_PRE, pre),
                                  _digest(flags & _REGION_POST, post), bool(both and pre != post),
                                  _flags(12, flags)))
        return regions

    def _read_rest(self):
        self.ops = []
        for o in _rows(self._lib, self._handle, OPS):
            # op_seq, time_ns, dst, src, bytes, value, stream, context, src_digest, dst_digest,
            # type, dir, dir_inferred, flags, elem_size, tid, dst_digest_state, result
            copy = o[10] == 1
            self.ops.append(_make(Op, op_seq=o[0], time_ns=o[1], kind="memcpy" if copy else "memset",
                                  dir=_name(2, o[11]) if copy else None, bytes=o[4], dst=o[2],
                                  src=o[3] if copy else None, value=None if copy else o[5], stream=o[6],
                                  context=o[7], tid=o[15], is_async=bool(o[13] & _COPYF_ASYNC),
                                  src_digest=_digest(o[13] & _COPYF_SRC_DIGEST, o[8]),
                                  delivered_digest=_digest(o[16] in (1, 5), o[9]),
                                  delivered_digest_state=_name(3, o[16]), result=o[17]))
        self.notes = [_make(Note, time_ns=n[1], level=_name(4, n[2]), code=n[3], text=_cstr(n[4]),
                            is_mark=n[3] == NOTE_CODE_MARK)
                      for n in _rows(self._lib, self._handle, NOTES)]
        # seq_before, rec_seq, time_ns, stream, event, context, op, tid, stream_flags, device, priority, reserved
        self.orders = [_make(Order, op=_name(9, r[6]), op_seq_before=r[0], time_ns=r[2], stream=r[3],
                             event=r[4], context=r[5], device=r[9], tid=r[7])
                       for r in _rows(self._lib, self._handle, ORDERS)]
        # op_seq, rec_seq, context, stream, start_ns, end_ns, ref_ns, ref_err_ns, flags, tid, device
        self.gpu_times = [_make(GpuTime, op_seq=g[0], start_ns=g[4], end_ns=g[5], duration_ns=g[5] - g[4],
                                graph_launch=bool(g[8] & _GPUTIMEF_GRAPH), stream=g[3], context=g[2], device=g[10],
                                tid=g[9], ref_ns=g[6], ref_err_ns=g[7])
                          for g in _rows(self._lib, self._handle, GPUTIMES)]

    def records(self, type):
        """Every record of a type (its name, as ktrace-dump --json's "type": "gputime", "order",
        "alloc", ... record_table() lists them) as Record objects, in file order, their fields
        those of ktrace-dump --json: a type this module has no class for is read the same way."""
        lib, out, n = _library(), ctypes.c_void_p(), ctypes.c_size_t()
        err = ctypes.create_string_buffer(1024)
        rc = lib.ktpy_records_json(os.fsencode(self.path), type.encode(), ctypes.byref(out), ctypes.byref(n),
                                   err, len(err))
        text = _taken(out.value, n.value).decode("utf-8", "replace")
        if rc and not self.truncated:
            raise ValueError(_s(err.value))
        return [Record(json.loads(line)) for line in text.splitlines() if line]

    @property
    def marks(self):
        """The notes written by ktrace.mark() / ktrace_mark(), in time order."""
        return sorted((n for n in self.notes if n.is_mark), key=lambda n: n.time_ns)

    def _launch_args(self, launch):
        if self._handle is None:
            raise ValueError("%s: the trace was closed" % self.path)
        buf = ctypes.create_string_buffer(1024)
        args = []
        regions = launch.regions
        for j, p in enumerate(launch.kernel.params):
            value = json.loads(_s(self._lib.ktpy_arg_value(self._handle, launch._index, j, buf, len(buf))))
            if p.kind == "pointer" and isinstance(value, str) and value.startswith("0x"):
                value = int(value, 16)
            own = next((g for g in regions if g.ordinal == p.ordinal and g.param_offset == p.offset), None)
            args.append(_make(Arg, ordinal=p.ordinal, name=p.name or "arg%d" % p.ordinal, type=p.type,
                              kind=p.kind, value=value, pre=own.pre if own else None,
                              post=own.post if own else None, written=own.written if own else False))
        return args

    def close(self):
        """Release the C reader's copy of the trace: the launches' fields and regions are read
        in full first (their columns), their args not read yet become unreadable."""
        if getattr(self, "_handle", None) is not None and self.launches:
            for table, row in ((LAUNCHES, _ROWS[LAUNCHES]), (REGIONS, _ROWS[REGIONS])):
                for field, _ in row._fields_:
                    self._column(table, field)
        self._release()

    def _release(self):
        if getattr(self, "_handle", None) is not None:
            self._lib.ktpy_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self._release()

    def __repr__(self):
        return "<ktrace.Trace %s: pid %d, %d launches of %d kernels, %d copies/memsets, format %s>" % (
            self.path, self.pid, len(self.launches), len(self.kernels), len(self.ops), self.format_version)

    # ---- tables -------------------------------------------------------------

    def rows(self):
        """The trace as plain rows: {table name: [dict, ...]} for kernels, launches, args,
        regions, ops, notes, orders and gpu_times (what to_pandas() and to_arrow() are made of)."""
        def written(l):
            return ",".join(a.name for a in l.args if a.written) if any(g.written for g in l.regions) else ""
        tables = {
            "kernels": [dict(k.as_dict(), params=len(k.params)) for k in self.kernels],
            "launches": [], "args": [], "regions": [],
            "ops": [o.as_dict() for o in self.ops],
            "notes": [n.as_dict() for n in self.notes],
            "orders": [r.as_dict() for r in self.orders],
            "gpu_times": [g.as_dict() for g in self.gpu_times],
        }
        for l in self.launches:
            d = {k: getattr(l, k) for k in ("op_seq", "time_ns", "kernel_name", "stream", "context", "device",
                                            "tid", "api", "shared_mem", "result")}
            d["kernel_id"] = l.kernel.id
            d["flags"] = ",".join(l.flags)
            for axis, i in (("x", 0), ("y", 1), ("z", 2)):
                d["grid_" + axis], d["block_" + axis] = l.grid[i], l.block[i]
            d["written"] = written(l)
            tables["launches"].append(d)
            for a in l.args:
                tables["args"].append(dict(a.as_dict(), op_seq=l.op_seq, kernel_name=l.kernel_name,
                                           value=_table_value(a)))
            for g in l.regions:
                tables["regions"].append(dict(g.as_dict(), op_seq=l.op_seq, flags=",".join(g.flags)))
        return tables

    def to_pandas(self):
        """{table name: pandas.DataFrame} (pandas must be installed)."""
        import pandas
        return {name: pandas.DataFrame(rows) for name, rows in self.rows().items()}

    def to_arrow(self):
        """{table name: pyarrow.Table} (pyarrow must be installed)."""
        import pyarrow
        return {name: pyarrow.Table.from_pylist(rows) for name, rows in self.rows().items()}


def _open(path, partial):
    """The C reader and its handle on the trace at path (loaded), or the OSError or
    ValueError load() documents."""
    _check_opens(path)
    lib = _library()
    err = ctypes.create_string_buffer(1024)
    handle = lib.ktpy_open(os.fsencode(path), 1 if partial else 0, err, len(err))
    if not handle:
        raise ValueError(_s(err.value) or "%s: cannot read the trace" % path)
    return lib, handle


def _check_opens(path):
    """Raise the OSError of a path that cannot be opened for reading (FileNotFoundError,
    PermissionError, IsADirectoryError...), as open() would; "-" is standard input."""
    if path == "-":
        return
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))  # a FIFO: no wait
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    finally:
        os.close(fd)


def _table_value(arg):
    """An argument's value in the args table: text, as ktrace-dump --json writes it."""
    if arg.kind == "pointer" and isinstance(arg.value, int):
        return "0x%x" % arg.value
    return arg.value if isinstance(arg.value, str) else json.dumps(arg.value)


def load(path, partial=False, tables=None):
    """Read the trace at path.

    Returns a Trace (launches, kernels, ops, notes, orders as Python objects);
    tables="pandas" or "arrow" returns its tables instead ({name: DataFrame or
    pyarrow.Table}), and tables="auto" pandas if installed, else pyarrow if
    installed, else the Trace.  partial=True accepts a truncated trace (a
    crashed run).  Raises OSError when the file cannot be opened (FileNotFoundError,
    PermissionError, IsADirectoryError...), ValueError naming the file when it is
    not a trace it can read (not a ktrace trace, corrupt, truncated, a newer format).
    """
    trace = Trace(path, partial=partial)
    if tables == "auto":
        for name in ("pandas", "pyarrow"):
            try:
                __import__(name)
                tables = "arrow" if name == "pyarrow" else name
                break
            except ImportError:
                continue
        else:
            return trace
    if tables is None:
        return trace
    with trace:
        if tables == "pandas":
            return trace.to_pandas()
        if tables == "arrow":
            return trace.to_arrow()
    raise ValueError("tables: 'pandas', 'arrow', 'auto' or None, not %r" % (tables,))


# ---- columns: one array per field, no Python object per row --------------------------------

_COLUMN_NAMES = {LAUNCHES: {"launch_seq": "op_seq"}}
_SHAPES = ("grid", "block", "cluster")
_STRINGS = {KERNELS: ("name", "demangled"), PARAMS: ("name", "type"), NOTES: ("text",)}
_TABLE_NAMES = {KERNELS: "kernels", PARAMS: "params", LAUNCHES: "launches", REGIONS: "regions", OPS: "ops",
                NOTES: "notes", ORDERS: "orders", GPUTIMES: "gpu_times"}


class Columns(dict):
    """{table name: {field: array}} from ktrace.columns(); to_arrow() gives pyarrow Tables."""

    def to_arrow(self):
        """{table name: pyarrow.Table} (pyarrow must be installed)."""
        import pyarrow
        return {name: pyarrow.table(dict(cols)) for name, cols in self.items()}


def _as_numpy(values, numpy):
    if numpy is None or not isinstance(values, array.array):
        return values
    dtype = {"Q": numpy.uint64, "I": numpy.uint32, "i": numpy.int32}[values.typecode]
    return numpy.frombuffer(values, dtype=dtype) if len(values) else numpy.zeros(0, dtype=dtype)


def _table_columns(lib, handle, table, numpy):
    cols = {}
    strings = _STRINGS.get(table, ())
    if strings:
        texts = {f: [] for f in strings}
        names = [f for f, _ in _ROWS[table]._fields_]
        for row in _rows(lib, handle, table):
            for f in strings:
                texts[f].append(_cstr(row[names.index(f)]))
    for field, _ in _ROWS[table]._fields_:
        if field == "reserved":
            continue
        if field in strings:
            cols[field] = texts[field]
            continue
        values = _column(lib, handle, table, field)
        name = _COLUMN_NAMES.get(table, {}).get(field, field)
        if field in _SHAPES:
            for axis, i in (("x", 0), ("y", 1), ("z", 2)):
                cols["%s_%s" % (field, axis)] = _as_numpy(values[i::3], numpy)
        else:
            cols[name] = _as_numpy(values, numpy)
    return cols


def columns(path, partial=False, numpy=True):
    """Read the trace at path as columns: {table name: {field: array}} for kernels, params,
    launches, regions, ops, notes, orders and gpu_times, one array per field (numpy arrays
    when numpy is importable and numpy=True, else array.array; names and texts as lists of
    str), built without a Python object per record.  The fields are those of the reader's
    rows (docs/install.md, "ktrace.columns()"): numbers as recorded (enums and flags as their
    values, digests as integers), launches' op_seq, kernel_index into kernels, first_region
    and nregions into regions, grid_x ... cluster_z.  Columns.to_arrow() gives pyarrow
    Tables.  Raises as load() does."""
    np = None
    if numpy:
        try:
            import numpy as np
        except ImportError:
            np = None
    lib, handle = _open(path, partial)
    try:
        return Columns((name, _table_columns(lib, handle, table, np)) for table, name in _TABLE_NAMES.items())
    finally:
        lib.ktpy_close(handle)
