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
  - an #include "..." from a folder of interpose/ into a layer above it or into
    another peer folder (INTERPOSE_LAYERS below);
  - an #include "..." from one subfolder of tools/ or interpose/ into another
    that is part of a cycle of folders (ACYCLIC below);
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
# interpose/ in layers (docs/architecture.md, "Inside interpose/"), each folder including only
# its own headers and those of the layers below it: driver/ (the driver table, the wrappers, the
# hook table), model/ (what every folder above shares), the peers (which never include each
# other), and the lifecycle, interpose/'s own files, at the top.  Of driver/, the folders above
# it use only the table, the hook table and the symbol attributes (DRIVER_API).
DRIVER_API = ["interpose/driver/driver_real.h", "interpose/driver/hooks.h", "interpose/driver/symbols.h"]
INTERPOSE_PEERS = ["interpose/registry/", "interpose/capture/", "interpose/hash/", "interpose/graph/",
                   "interpose/poller/", "interpose/nvtx/", "interpose/pystack/", "interpose/replay/",
                   "interpose/nccl/"]
INTERPOSE_LAYERS = dict([("interpose/driver/", (1, "the driver")), ("interpose/model/", (2, "the model"))] +
                        [(p, (3, "a peer")) for p in INTERPOSE_PEERS] + [("interpose/", (4, "the lifecycle"))])
PEER_BELOW = ["interpose/model/"] + DRIVER_API + ["common/", "format/"]
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
    # interpose/: the lifecycle (init, fork, control, the hook and services tables) on top
    "interpose/": Rule(["interpose/", "common/", "format/", "meta/", "hashkern/", "include/"], ANY),
    "interpose/driver/": Rule(["interpose/driver/", "common/", "format/"], ANY),
    "interpose/model/": Rule(["interpose/model/"] + DRIVER_API + ["common/", "format/", "meta/", "hashkern/"], ANY),
    "interpose/registry/": Rule(["interpose/registry/"] + PEER_BELOW + ["meta/", "hashkern/"], ANY),
    "interpose/capture/": Rule(["interpose/capture/"] + PEER_BELOW + ["hashkern/"], ANY),
    "interpose/hash/": Rule(["interpose/hash/"] + PEER_BELOW + ["hashkern/"], ANY),
    "interpose/graph/": Rule(["interpose/graph/"] + PEER_BELOW + ["hashkern/"], ANY),
    "interpose/poller/": Rule(["interpose/poller/"] + PEER_BELOW, ANY),
    "interpose/nvtx/": Rule(["interpose/nvtx/"] + PEER_BELOW, ANY),
    "interpose/pystack/": Rule(["interpose/pystack/"] + PEER_BELOW, ANY),
    "interpose/replay/": Rule(["interpose/replay/"] + PEER_BELOW + ["meta/", "hashkern/"], ANY),
    "interpose/nccl/": Rule(["interpose/nccl/"] + PEER_BELOW + ["hashkern/"], ANY),
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
ACYCLIC = ("tools/", "interpose/")

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
    if best == "interpose/" and "/" in path[len(best):]:
        return None  # a subfolder of interpose/ without a rule: in no layer yet
    return best


def interpose_folder(path):
    """The folder of interpose/ that path is in ("interpose/graph/"; "interpose/" for the
    lifecycle's own files), or None outside interpose/."""
    if not path.startswith("interpose/"):
        return None
    rest = path[len("interpose/"):]
    return "interpose/" + rest.split("/", 1)[0] + "/" if "/" in rest else "interpose/"


def layer_broken(folder, name):
    """How an include of name from folder breaks interpose/'s layers, or None."""
    target = interpose_folder(name)
    if folder not in INTERPOSE_LAYERS or target not in INTERPOSE_LAYERS or target == folder:
        return None
    (mine, what), (theirs, their_what) = INTERPOSE_LAYERS[folder], INTERPOSE_LAYERS[target]
    if theirs > mine:
        return (f'"{name}": {folder} ({what}, layer {mine}) may not include {target} '
                f'({their_what}, layer {theirs}, above it)')
    if theirs == mine:
        return (f'"{name}": {folder} may not include {target}: peers never include each other '
                f'(what one asks of another goes through interpose/model/services.h)')
    return None


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
    broken = layer_broken(folder, name)
    if broken:
        return broken
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


def folder_cycles(edges, reported=lambda a, b: True):
    """One line per include between subfolders that is part of a cycle of folders.
    edges: {(from, to): (path, line, include)}, the first include of each pair;
    reported(from, to): whether such an include, when in a cycle, gets a line."""
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
        if not reported(a, b):
            continue
        back = chain(b, a)
        if back:
            lines.append(f'{path}:{lineno}: "{name}": a cycle of folders ({" -> ".join([a] + back)})')
    return lines


def not_downward(a, b):
    """Is an include from folder a into folder b not one into a layer below (interpose/)?  A
    cycle of interpose/'s folders is reported at the includes that go up or sideways."""
    if a in INTERPOSE_LAYERS and b in INTERPOSE_LAYERS:
        return INTERPOSE_LAYERS[b][0] >= INTERPOSE_LAYERS[a][0]
    return True


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
    return sources, nincludes, violations + folder_cycles(edges, not_downward)


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
