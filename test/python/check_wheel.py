#!/usr/bin/env python3
"""test/python/check_wheel.py: checks of a built wheel file (test/python/wheel_test.sh).

  check_wheel.py record WHEEL        RECORD lists every file of the archive once, with the
                                     sha256 (urlsafe base64, unpadded) and size of its bytes
  check_wheel.py tag WHEEL DIR       the file name's and WHEEL's platform tag is
                                     manylinux_2_N_<arch> where 2.N is the newest GLIBC_
                                     version any ELF file of DIR (the wheel extracted) needs
  check_wheel.py ldd DIR             every shared library those ELF files need resolves:
                                     inside DIR, or to one every Debian/Ubuntu system has
"""
import base64
import hashlib
import os
import re
import subprocess
import sys
import zipfile

EVERYWHERE = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "ld-linux-x86-64.so.2",
              "linux-vdso.so.1", "libgcc_s.so.1", "libz.so.1", "liblzma.so.5", "libbz2.so.1.0"}


def fail(msg):
    print("check_wheel: " + msg)
    sys.exit(1)


def record(path):
    z = zipfile.ZipFile(path)
    names = z.namelist()
    rec = [n for n in names if n.endswith(".dist-info/RECORD")]
    if len(rec) != 1:
        fail("%d RECORD files" % len(rec))
    listed = {}
    for line in z.read(rec[0]).decode().splitlines():
        name, digest, size = line.rsplit(",", 2)
        listed[name] = (digest, size)
    if sorted(listed) != sorted(names) or len(names) != len(set(names)):
        fail("RECORD and the archive differ: %s" % sorted(set(listed) ^ set(names)))
    for name in names:
        if name == rec[0]:
            continue
        data = z.read(name)
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        if listed[name] != (want, str(len(data))):
            fail("%s: RECORD says %s, the bytes are %s,%d" % (name, listed[name], want, len(data)))
    print("%d files, digests and sizes match" % len(names))


def elves(root):
    for top, _, names in os.walk(root):
        for n in names:
            p = os.path.join(top, n)
            with open(p, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    yield p


def tag(path, root):
    newest = (2, 0)
    for p in elves(root):
        for a, b in re.findall(r"\bGLIBC_(\d+)\.(\d+)", subprocess.run(["objdump", "-T", p], capture_output=True,
                                                                         text=True, check=True).stdout):
            newest = max(newest, (int(a), int(b)))
    want = "py3-none-manylinux_%d_%d_x86_64" % newest
    wheel = zipfile.ZipFile(path)
    info = [n for n in wheel.namelist() if n.endswith(".dist-info/WHEEL")][0]
    tags = re.findall(r"^Tag: (\S+)$", wheel.read(info).decode(), re.M)
    if tags != [want] or not os.path.basename(path).endswith("-" + want + ".whl"):
        fail("tag %s (file %s); the ELF files need GLIBC %d.%d: %s" % (tags, os.path.basename(path), *newest, want))
    print(want)


def ldd(root):
    root = os.path.realpath(root)
    for p in elves(root):
        out = subprocess.run(["ldd", p], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            m = re.match(r"\s*(\S+)(?: => (\S+))?", line)
            name, where = os.path.basename(m.group(1)), m.group(2) or m.group(1)
            if where == "not":
                fail("%s: %s not found" % (p, name))
            if name not in EVERYWHERE and not os.path.realpath(where).startswith(root + os.sep):
                # a vendored library needing another one is fine: libktrace.so loads it first
                if not os.path.exists(os.path.join(root, "ktrace", "lib", name)):
                    fail("%s: %s resolves outside the wheel, to %s" % (p, name, where))
        print("%s: %s" % (os.path.relpath(p, root), " ".join(sorted(
            l.split()[0] for l in out.splitlines() if l.strip() and "=>" in l))))


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "record" and len(sys.argv) == 3:
        record(sys.argv[2])
    elif cmd == "tag" and len(sys.argv) == 4:
        tag(sys.argv[2], sys.argv[3])
    elif cmd == "ldd" and len(sys.argv) == 3:
        ldd(sys.argv[2])
    else:
        fail(__doc__)
