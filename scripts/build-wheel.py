#!/usr/bin/env python3
"""scripts/build-wheel.py: the ktrace wheel, from a build made for it (make wheel).

Lays out the package (python/ktrace plus bin/ with the tools, lib/ with
libktrace.so, libktrace-reader.so, the Python start-up hook (ktrace-pyhook/) and the
vendored libraries, include/ktrace.h,
the man pages as data under share/man/man1) and writes it with the standard
library's zipfile: WHEEL, METADATA, entry_points.txt and a RECORD of sha256
digests, no network and no packaging tools.

What it checks before writing:
  - every shared library the ELF files need resolves, from the build's own
    libraries or from the vendored ones, or is one a stock Debian/Ubuntu system
    always has (PORTABLE below); anything else stops the build;
  - the platform tag: manylinux_2_<N>_<arch> where 2.N is the newest GLIBC_
    symbol version any of the ELF files (vendored ones included) needs, read
    with readelf -V, and <arch> the ELF files' machine.

A build for another architecture (make wheel-aarch64: cross-compiled) is read
the same way; its libraries are resolved as its dynamic linker would, from
each file's RUNPATH and the architecture's Debian multiarch folders
(/usr/lib/aarch64-linux-gnu), not with ldd and ldconfig, which know the host's.

  build-wheel.py --build DIR --version V --tools "ktrace ktrace-dump ..." [--out dist]
"""
import argparse
import base64
import hashlib
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Libraries every glibc system has (the manylinux policy's), and three that
# dpkg itself pre-depends on, so every Debian and Ubuntu system has them too.
PORTABLE = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "ld-linux-x86-64.so.2",
            "ld-linux-aarch64.so.1", "linux-vdso.so.1", "libgcc_s.so.1",
            "libz.so.1", "liblzma.so.5", "libbz2.so.1.0"}
# Vendored beside libktrace.so (lib/): NEEDED ones found with ldd, and libdw,
# which meta/dwarf.c opens with dlopen (found first in lib/ through RUNPATH
# $ORIGIN), so that it is the same elfutils release as the libelf it uses.
DLOPENED = ["libdw.so.1"]
ENTRY_POINTS = {"ktrace": "ktrace", "ktrace-dump": "dump", "ktrace-diff": "diff", "ktrace-export": "export",
                "ktrace-inspect": "inspect", "ktrace-hash": "hash"}


def die(msg):
    sys.stderr.write("build-wheel: %s\n" % msg)
    sys.exit(1)


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


TRIPLETS = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}


def needed(path):
    """{soname: resolved path, or None when not found} of what path needs: ldd's answer for the
    host's architecture, the dynamic linker's search done here for another."""
    arch = arch_of(path)
    if arch != platform.machine():
        return needed_foreign(path, arch)
    out = {}
    for line in run("ldd", path).splitlines():
        line = line.strip()
        if " => " in line:
            name, rest = line.split(" => ", 1)
            out[name] = None if rest.startswith("not found") else rest.split(" (")[0]
        elif line:
            first = line.split()[0]  # the vDSO, the dynamic linker: "name (address)"
            out[os.path.basename(first)] = first
    return out


def needed_foreign(path, arch):
    """The NEEDED entries of path, each found in its RUNPATH ($ORIGIN expanded) or the
    architecture's multiarch folders, directly (what the dynamic linker does without a cache)."""
    dynamic = run("readelf", "-d", "-W", path)
    sonames = re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", dynamic)
    runpath = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[([^]]*)\]", dynamic)
    dirs = [d.replace("$ORIGIN", os.path.dirname(os.path.abspath(path)))
            for d in (runpath.group(1).split(":") if runpath else []) if d]
    dirs += ["/lib/" + TRIPLETS[arch], "/usr/lib/" + TRIPLETS[arch]]
    out = {}
    for soname in sonames:
        out[soname] = next((os.path.join(d, soname) for d in dirs if os.path.exists(os.path.join(d, soname))), None)
    return out


def glibc_needed(path):
    versions = re.findall(r"\bGLIBC_(\d+)\.(\d+)", run("readelf", "-V", "-W", path))
    return max(((int(a), int(b)) for a, b in versions), default=(2, 0))


def arch_of(path):
    header = run("readelf", "-h", path)
    if "X86-64" in header:
        return "x86_64"
    if "AArch64" in header:
        return "aarch64"
    die("%s: an architecture this script does not tag" % path)


def library_license(path):
    """The copyright file Debian ships with the package holding the library at path, or None."""
    try:
        owner = run("dpkg", "-S", os.path.realpath(path)).split(":")[0]
    except (OSError, subprocess.CalledProcessError):
        return None
    doc = "/usr/share/doc/%s/copyright" % owner
    return doc if os.path.exists(doc) else None


def find_system(soname, arch):
    """Where the dynamic linker finds soname for the architecture arch (its multiarch folders
    for another than the host's: install the package for it, e.g. libdw1:arm64)."""
    if arch != platform.machine():
        for d in ("/lib/" + TRIPLETS[arch], "/usr/lib/" + TRIPLETS[arch]):
            if os.path.exists(os.path.join(d, soname)):
                return os.path.join(d, soname)
        die("%s: not found for %s (install the %s package that holds it)" % (soname, arch, TRIPLETS[arch]))
    tag = {"x86_64": "x86-64", "aarch64": "AArch64"}[arch]
    for line in run("ldconfig", "-p").splitlines():
        parts = line.strip().split(" => ")
        if len(parts) == 2 and parts[0].split(" ")[0] == soname and tag in parts[0]:
            return parts[1]
    die("%s: not found on this system (install the package that holds it)" % soname)


def layout(args, stage):
    """Copy everything into stage/ as it lies in the wheel; returns the ELF files."""
    pkg = os.path.join(stage, "ktrace")
    shutil.copytree(os.path.join(ROOT, "python", "ktrace"), pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for sub in ("bin", "lib", "include", "lib/licenses"):
        os.makedirs(os.path.join(pkg, sub), exist_ok=True)
    elves = []
    for tool in args.tools.split():
        elves.append(shutil.copy2(os.path.join(args.build, tool), os.path.join(pkg, "bin", tool)))
    for lib in ("libktrace.so", "libktrace-reader.so"):
        elves.append(shutil.copy2(os.path.join(args.build, lib), os.path.join(pkg, "lib", lib)))
    shutil.copy2(os.path.join(ROOT, "include", "ktrace.h"), os.path.join(pkg, "include", "ktrace.h"))
    hook = os.path.join(pkg, "lib", "ktrace-pyhook")  # the Python start-up hook, beside libktrace.so
    os.makedirs(hook)
    shutil.copy2(os.path.join(ROOT, "python", "pyhook", "sitecustomize.py"), os.path.join(hook, "sitecustomize.py"))
    man = os.path.join(stage, "ktrace-%s.data" % args.version, "data", "share", "man", "man1")
    os.makedirs(man)
    for page in sorted(os.listdir(os.path.join(ROOT, "docs", "man"))):
        if page.endswith(".1"):
            shutil.copy2(os.path.join(ROOT, "docs", "man", page), os.path.join(man, page))
    return pkg, elves


def vendor(pkg, elves):
    """Copy the libraries the ELF files need and a stock system lacks into lib/; check the rest resolve."""
    libdir = os.path.join(pkg, "lib")
    arch = arch_of(elves[0])
    origin = {name: find_system(name, arch) for name in DLOPENED}
    todo = list(elves)
    for name, where in origin.items():
        todo.append(shutil.copy(where, os.path.join(libdir, name)))
    while todo:
        path = todo.pop()
        for soname, where in needed(path).items():
            if soname in PORTABLE or os.path.exists(os.path.join(libdir, soname)):
                continue
            if where is None:
                die("%s needs %s, which is not found" % (path, soname))
            origin[soname] = where
            todo.append(shutil.copy(where, os.path.join(libdir, soname)))
    vendored = sorted(origin)
    for soname in vendored:
        lic = library_license(origin[soname])
        if lic:
            shutil.copy(lic, os.path.join(libdir, "licenses", soname + ".copyright"))
    # Each needed library resolves inside the package (RUNPATH $ORIGIN), is one
    # vendored (loaded by libktrace.so before anything dlopens the one needing
    # it: the same soname is not loaded twice) or is on every system.
    for path in elves + [os.path.join(libdir, v) for v in vendored]:
        for soname, where in needed(path).items():
            inside = where and os.path.realpath(where).startswith(os.path.realpath(pkg) + os.sep)
            if where is None or not (soname in PORTABLE or soname in vendored or inside):
                die("%s: %s resolves to %s, neither bundled nor on every system" % (path, soname, where))
    return [os.path.join(libdir, v) for v in vendored], vendored


def record_line(stage, path):
    data = open(path, "rb").read()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (os.path.relpath(path, stage), digest, len(data))


def metadata(version, tag):
    readme = os.path.join(ROOT, "README.md")
    summary = "Find the first non-deterministic CUDA kernel of a program: trace every launch with " \
              "argument names and GPU digests, diff runs, confirm by replay"
    meta = ["Metadata-Version: 2.1", "Name: ktrace", "Version: " + version, "Summary: " + summary,
            "Requires-Python: >=3.8", "Platform: Linux",
            "Classifier: Operating System :: POSIX :: Linux", "Classifier: Environment :: GPU :: NVIDIA CUDA",
            "Provides-Extra: pandas", "Requires-Dist: pandas; extra == \"pandas\"",
            "Provides-Extra: arrow", "Requires-Dist: pyarrow; extra == \"arrow\"",
            "Description-Content-Type: text/markdown", "", open(readme, encoding="utf-8").read()]
    wheel = ["Wheel-Version: 1.0", "Generator: ktrace scripts/build-wheel.py", "Root-Is-Purelib: false",
             "Tag: " + tag, ""]
    entry = ["[console_scripts]"] + ["%s = ktrace._cli:%s" % kv for kv in ENTRY_POINTS.items()] + [""]
    return "\n".join(meta), "\n".join(wheel), "\n".join(entry)


def write_wheel(stage, out, name, version, tag):
    info = os.path.join(stage, "ktrace-%s.dist-info" % version)
    os.makedirs(info)
    meta, wheel, entry = metadata(version, tag)
    for fname, text in (("METADATA", meta), ("WHEEL", wheel), ("entry_points.txt", entry)):
        with open(os.path.join(info, fname), "w", encoding="utf-8") as f:
            f.write(text)
    files = []
    for top, dirs, names in os.walk(stage):
        dirs.sort()
        files += [os.path.join(top, n) for n in sorted(names)]
    record = os.path.join(info, "RECORD")
    lines = [record_line(stage, p) for p in files] + [os.path.relpath(record, stage) + ",,"]
    with open(record, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    files.append(record)
    os.makedirs(out, exist_ok=True)
    target = os.path.join(out, name)
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # reproducible: 1980-01-01 by default
    stamp = __import__("time").gmtime(max(epoch, 315532800))[:6]
    with zipfile.ZipFile(target + ".part", "w", zipfile.ZIP_DEFLATED) as z:
        for path in files:
            zi = zipfile.ZipInfo(os.path.relpath(path, stage), stamp)
            # a regular file's type bits too: pip sets the executable bit only for S_IFREG modes
            zi.external_attr = (stat.S_IFREG | (0o755 if os.access(path, os.X_OK) else 0o644)) << 16
            zi.create_system = 3  # Unix
            zi.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as f:
                z.writestr(zi, f.read())
    os.replace(target + ".part", target)
    return target


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="the build folder (make wheel's)")
    ap.add_argument("--version", required=True)
    ap.add_argument("--tools", required=True, help="the tool programs, space-separated")
    ap.add_argument("--out", default="dist")
    ap.add_argument("--stage", help="lay the package out here (kept) instead of a temporary folder")
    args = ap.parse_args()
    pyver = re.search(r'"([^"]+)"', open(os.path.join(ROOT, "python", "ktrace", "__init__.py")).read().split("__version__")[1])
    if not pyver or pyver.group(1) != args.version:
        die("python/ktrace/__init__.py's __version__ is not %s (the Makefile's VERSION)" % args.version)
    import tempfile
    with tempfile.TemporaryDirectory(prefix="ktrace-wheel.") as tmp:
        stage = args.stage or tmp
        if args.stage:
            shutil.rmtree(stage, ignore_errors=True)
            os.makedirs(stage)
        pkg, elves = layout(args, stage)
        vendored_paths, vendored = vendor(pkg, elves)
        everything = elves + vendored_paths
        glibc = max(glibc_needed(p) for p in everything)
        arch = arch_of(elves[0])
        tag = "py3-none-manylinux_%d_%d_%s" % (glibc[0], glibc[1], arch)
        name = "ktrace-%s-%s.whl" % (args.version, tag)
        target = write_wheel(stage, args.out, name, args.version, tag)
    print("build-wheel: %s (GLIBC %d.%d at most; vendored: %s)" % (target, glibc[0], glibc[1], ", ".join(vendored) or "none"))


if __name__ == "__main__":
    main()
