#!/usr/bin/env python3
"""scripts/check-layout.py: the include rules of docs/architecture.md, checked.

Reads every C, C++, CUDA and assembly source of the tree (test fixtures and
fuzz corpora excepted) and reports, one line each (file:line: rule):
  - an #include "..." that is not rooted at the repository root
    ("common/log.h", not "log.h" or "../common/log.h");
  - an #include "..." that names no file of the tree;
  - an #include "..." that the including folder may not use (RULES below);
  - an #include <...> of a library (LIBRARY_HEADERS below: zstd, lz4, libelf,
    libdw, cmocka, CUDA) that the including folder may not use (RULES below);
  - an #include "..." from one subfolder of tools/ into another that is part of
    a cycle of folders (ACYCLIC below);
  - a source in a folder that RULES does not know.
Exit 0 when there is none, 1 otherwise, 2 on a usage error.

    python3 scripts/check-layout.py [--root DIR]

The sources are the files git knows (tracked, and untracked but not ignored)
when DIR is a git work tree, else every file under DIR.  RULES mirrors the
"Dependency rules" of docs/architecture.md: change both together.
"""
import collections
import os
import re
import subprocess
import sys

ANY = None  # no limit

# folder (the longest matching prefix applies) -> Rule(
#   includes:  what its #include "..." may name (a folder ends in '/', else one file),
#   libraries: the libraries whose headers (LIBRARY_HEADERS) its #include <...> may name;
#              libc's own headers are always allowed)
Rule = collections.namedtuple("Rule", "includes libraries")
DRIVER_API = ["interpose/driver/driver_real.h", "interpose/driver/hooks.h", "interpose/driver/symbols.h"]
CONCERNS = ["interpose/model/", "interpose/registry/", "interpose/capture/", "interpose/hash/", "interpose/replay/",
            "interpose/graph/", "interpose/nvtx/", "interpose/pystack/"]
TOOLS_BELOW = ["format/", "meta/", "hashkern/", "common/"]
TOOLS_COMMAND = ["tools/model/", "tools/cli/cli_options.h"] + TOOLS_BELOW
RULES = {
    "common/": Rule(["common/"], []),
    "format/": Rule(["format/"], ["libzstd"]),
    "hashkern/": Rule(["hashkern/", "common/"], []),
    "meta/": Rule(["meta/", "format/ktrace_format.h", "common/"], ["libelf", "liblz4", "libzstd", "libdw"]),
    # tools/: model/ is what several tools share; cli/ the ktrace command and every tool's
    # command-line helpers (cli_options.h); one folder per other command, which may include
    # model/ and cli/cli_options.h but no other command's folder
    "tools/model/": Rule(["tools/model/"] + TOOLS_BELOW, []),
    "tools/cli/": Rule(["tools/cli/", "tools/model/"] + TOOLS_BELOW, []),
    "tools/diff/": Rule(["tools/diff/"] + TOOLS_COMMAND, []),
    "tools/dump/": Rule(["tools/dump/"] + TOOLS_COMMAND, []),
    "tools/export/": Rule(["tools/export/"] + TOOLS_COMMAND, []),
    "tools/inspect/": Rule(["tools/inspect/"] + TOOLS_COMMAND, []),
    "tools/reader/": Rule(["tools/reader/"] + TOOLS_COMMAND, []),
    "include/": Rule([], []),
    # interpose/'s top, the lifecycle: init, config, control, notes, the fork handler
    "interpose/": Rule(["interpose/", "common/", "format/", "meta/", "hashkern/", "include/"], ANY),
    # the subfolders: of the top only tracer.h; of driver/ only its table and its events
    "interpose/driver/": Rule(["interpose/driver/", "common/", "format/"], ANY),
    "interpose/registry/": Rule(CONCERNS + DRIVER_API + ["interpose/tracer.h", "common/", "format/",
                                                         "meta/", "hashkern/"], ANY),
    "interpose/capture/": Rule(CONCERNS + DRIVER_API + ["interpose/tracer.h", "common/", "format/",
                                                        "hashkern/"], ANY),
    "interpose/hash/": Rule(CONCERNS + DRIVER_API + ["interpose/tracer.h", "common/", "format/",
                                                     "hashkern/"], ANY),
    "interpose/replay/": Rule(CONCERNS + DRIVER_API + ["interpose/tracer.h", "common/", "format/",
                                                       "meta/", "hashkern/"], ANY),
    "interpose/graph/": Rule(CONCERNS + DRIVER_API + ["interpose/tracer.h", "common/", "format/",
                                                      "hashkern/"], ANY),
    "interpose/nvtx/": Rule(CONCERNS + DRIVER_API + ["interpose/tracer.h", "common/", "format/"], ANY),
    "interpose/pystack/": Rule(CONCERNS + DRIVER_API + ["interpose/tracer.h", "common/", "format/"], ANY),
    "interpose/model/": Rule(CONCERNS + DRIVER_API + ["common/", "format/", "meta/", "hashkern/"], ANY),
    "test/": Rule(ANY, ANY),
    "bench/": Rule(ANY, ANY),
    "examples/": Rule([], ["CUDA"]),
}

# Headers of the libraries the rules name ("CUDA": the driver and runtime API).
LIBRARY_HEADERS = {
    "zstd.h": "libzstd", "zstd_errors.h": "libzstd", "lz4.h": "liblz4", "lz4hc.h": "liblz4",
    "lz4frame.h": "liblz4", "libelf.h": "libelf", "gelf.h": "libelf", "dwarf.h": "libdw",
    "elfutils/libdw.h": "libdw", "elfutils/libdwfl.h": "libdw", "cmocka.h": "cmocka",
    "cuda.h": "CUDA", "cudaTypedefs.h": "CUDA", "cuda_runtime.h": "CUDA",
    "cuda_runtime_api.h": "CUDA", "nvtx3/nvToolsExt.h": "CUDA", "nvtx3/nvToolsExtPayload.h": "CUDA",
}

# Folders whose subfolders may depend on each other one way only: an include from one
# subfolder into another and back, directly or through others, is a cycle of folders.
ACYCLIC = ("tools/",)

# Not sources of the product: inputs that tests feed to parsers.
EXCLUDED = ("test/fixtures/", "test/fuzz/corpus/")

SOURCE_EXTS = (".c", ".h", ".cu", ".cuh", ".cc", ".cpp", ".hpp", ".S")

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]')


def strip_comments(text):
    """The text with its comments blanked, line numbers kept (string and
    character literals are copied as they are, so a "/*" inside one starts
    no comment)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] not in (c, "\n"):
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n) if j < n and text[j] == c else j
            out.append(text[i:j])
        else:
            j = i + 1
            out.append(c)
        i = j
    return "".join(out)


def list_sources(root):
    try:
        names = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                                "--exclude-standard"], capture_output=True, check=True).stdout
        paths = sorted(set(p for p in names.decode().split("\0") if p))
    except (OSError, subprocess.CalledProcessError):
        paths = []
        for d, dirs, files in os.walk(root):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            rel = os.path.relpath(d, root)
            paths += [os.path.normpath(os.path.join(rel, f)) for f in files]
        paths.sort()
    return [p for p in paths
            if p.endswith(SOURCE_EXTS) and not p.startswith(EXCLUDED)
            and os.path.isfile(os.path.join(root, p))]


def rule_of(path):
    best = None
    for folder in RULES:
        if path.startswith(folder) and (best is None or len(folder) > len(best)):
            best = folder
    return best


def allowed(targets, include):
    if targets is ANY:
        return True
    return any(include.startswith(t) if t.endswith("/") else include == t for t in targets)


def describe(targets, none):
    return ", ".join(targets) if targets else none


def check_include(root, path, folder, quote, name):
    """The rule an include breaks, or None."""
    rule = RULES[folder]
    if quote == "<":
        library = LIBRARY_HEADERS.get(name)
        if library and rule.libraries is not ANY and library not in rule.libraries:
            return (f"<{name}> ({library}): {folder} may use only libc"
                    f"{''.join(', ' + x for x in rule.libraries)}")
        return None
    if not os.path.isfile(os.path.join(root, name)):
        beside = os.path.normpath(os.path.join(os.path.dirname(path), name))
        if os.path.isfile(os.path.join(root, beside)):
            return f'"{name}" is not rooted at the repository root (write "{beside}")'
        return f'"{name}" names no file of the tree'
    if name != os.path.normpath(name) or name.startswith("../"):
        return f'"{name}" is not rooted at the repository root'
    if not allowed(rule.includes, name):
        return f'"{name}": {folder} may include only {describe(rule.includes, "libc headers")}'
    return None


def subfolder(path):
    """The subfolder ("tools/dump/") of an ACYCLIC folder that path is in, or None."""
    for top in ACYCLIC:
        rest = path[len(top):] if path.startswith(top) else ""
        if "/" in rest:
            return top + rest.split("/", 1)[0] + "/"
    return None


def folder_cycles(edges):
    """One line per include between subfolders that is part of a cycle of folders.
    edges: {(from, to): (path, line, include)}, the first include of each pair."""
    graph = collections.defaultdict(set)
    for a, b in edges:
        graph[a].add(b)

    def chain(start, goal):
        """A shortest chain of folders from start to goal, or None."""
        prev, todo = {start: None}, [start]
        while todo:
            x = todo.pop(0)
            if x == goal:
                out = []
                while x is not None:
                    out.append(x)
                    x = prev[x]
                return out[::-1]
            for y in sorted(graph[x]):
                if y not in prev:
                    prev[y] = x
                    todo.append(y)
        return None

    lines = []
    for (a, b), (path, lineno, name) in sorted(edges.items(), key=lambda e: e[1][:2]):
        back = chain(b, a)
        if back:
            lines.append(f'{path}:{lineno}: "{name}": a cycle of folders ({" -> ".join([a] + back)})')
    return lines


def check(root):
    violations = []
    sources = list_sources(root)
    nincludes = 0
    edges = {}
    for path in sources:
        folder = rule_of(path)
        if folder is None:
            violations.append(f"{path}:1: no layout rule for this folder "
                              f"(add it to docs/architecture.md and scripts/check-layout.py)")
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read())
        for lineno, line in enumerate(text.split("\n"), 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            nincludes += 1
            name = m.group(2).strip()
            broken = check_include(root, path, folder, m.group(1), name)
            if broken:
                violations.append(f"{path}:{lineno}: {broken}")
            a, b = subfolder(path), subfolder(name)
            if m.group(1) == '"' and a and b and a != b:
                edges.setdefault((a, b), (path, lineno, name))
    return sources, nincludes, violations + folder_cycles(edges)


def main(argv):
    root = "."
    args = argv[1:]
    while args:
        if args[0] == "--root" and len(args) > 1:
            root = args[1]
            args = args[2:]
        elif args[0] in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            print(f"check-layout: unknown argument {args[0]!r} (usage: check-layout.py [--root DIR])",
                  file=sys.stderr)
            return 2
    if not os.path.isdir(root):
        print(f"check-layout: {root}: not a folder", file=sys.stderr)
        return 2
    sources, nincludes, violations = check(root)
    for v in violations:
        print(v)
    sys.stdout.flush()
    if violations:
        print(f"check-layout: {len(violations)} violation(s) of the rules in docs/architecture.md",
              file=sys.stderr)
        return 1
    print(f"check-layout: {len(sources)} sources, {nincludes} includes, all within the rules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
