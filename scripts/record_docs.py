#!/usr/bin/env python3
"""scripts/record_docs.py: docs/format.md and the JSON schema against the record table.

The record table (format/record_table.def) declares every record type and its
fields once; `ktrace-dump --record-table` prints it.  This script holds the two
documents that describe records to it:

  - docs/format.md: each type's section ("### ALLOC (6)") has a row
    "| offset | size | field |" for each fixed field, at the table's offset, of
    its size, named by its member or its JSON name, with its wire type; no row
    of the fixed part names a field the table lacks ("reserved" aside);
  - docs/json/ktrace.schema.json: each type's branch of ktrace-dump's records
    has a property for each field the tools show, of the JSON type its kind
    gives, required unless the field may be left out.

    python3 scripts/record_docs.py --check [--dump build/ktrace-dump]
    python3 scripts/record_docs.py --write [--dump build/ktrace-dump]

--check exits 1 and names each disagreement.  --write makes the documents
agree where it can: it writes the schema branch of every generic record (one
whose fields are the whole record) from the table, adds the branch and a
docs/format.md section of a type the documents lack, and leaves the other
disagreements (prose) to be fixed by hand, then checks.  make test runs --check;
`make record-docs` runs --write.
"""
import json
import os
import re
import subprocess
import sys

FORMAT_MD = "docs/format.md"
SCHEMA = "docs/json/ktrace.schema.json"
PREFIX_PROPS = ["type", "seq", "time_ns", "size", "file", "record_flags", "malformed"]
WIRE_TEXT = {"u8": "u8", "u16": "u16", "u32": "u32", "u64": "u64", "i32": "i32", "u32x3": "3 × u32"}
HOOK_SCHEMA = {"format": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+$"},
               "duration_ns": {"$ref": "#/$defs/count"}}


def load_table(dump):
    out = subprocess.run([dump, "--record-table"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["records"]


def fixed_fields(rec):
    """The fixed fields, one per offset (a second view of a member dropped)."""
    seen, out = set(), []
    for f in rec["fields"]:
        if "offset" in f and f["offset"] not in seen:
            seen.add(f["offset"])
            out.append(f)
    return out


# ---- docs/format.md --------------------------------------------------------------

def section_rows(text, rec):
    """The rows of the first offset table after the type's heading: [(offset, size, name, wire)]."""
    m = re.search(r"^### %s \(%d\)[^\n]*\n" % (re.escape(rec["upper"]), rec["type"]), text, re.M)
    if not m:
        return None
    rows, in_table = [], False
    for line in text[m.end():].split("\n"):
        if line.startswith("### "):
            break
        if line.startswith("| offset | size | field |"):
            in_table = True
            continue
        if in_table and not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")] if in_table else []
        if len(cells) >= 3 and cells[0].isdigit():
            name = re.split(r"[ (]", cells[2], 1)[0]
            wm = re.search(r"\((u8|u16|u32|u64|i32)\b|3 × u32", cells[2])
            rows.append((int(cells[0]), cells[1], name, wm.group(0).lstrip("(") if wm else None))
    return rows


def check_format_md(text, table):
    errs = []
    for rec in table:
        rows = section_rows(text, rec)
        if rows is None:
            errs.append(f"{FORMAT_MD}: no section '### {rec['upper']} ({rec['type']})'")
            continue
        by_off = {r[0]: r for r in rows}
        for f in fixed_fields(rec):
            r = by_off.get(f["offset"])
            where = f"{FORMAT_MD}: {rec['upper']} offset {f['offset']}"
            if not r:
                errs.append(f"{where}: no row for {f['member']} ({f['name']})")
                continue
            if r[1] != str(f["bytes"]):
                errs.append(f"{where}: size {r[1]}, the table says {f['bytes']}")
            if r[2] not in (f["member"], f["name"]):
                errs.append(f"{where}: row names {r[2]}, the table {f['member']} ({f['name']})")
            if r[3] and r[3] != WIRE_TEXT.get(f["wire"]):
                errs.append(f"{where}: row says {r[3]}, the table {f['wire']}")
        offsets = {f["offset"] for f in fixed_fields(rec)}
        for off, _, name, _ in rows:
            if off < rec["fixed_bytes"] and off not in offsets and name != "reserved":
                errs.append(f"{FORMAT_MD}: {rec['upper']} offset {off}: row {name} is no field of the table")
    return errs


def format_md_section(rec):
    lines = [f"### {rec['upper']} ({rec['type']}) — {rec['fixed_bytes']} bytes, since {rec['since']}", "",
             rec["doc"][0].upper() + rec["doc"][1:] + ".", "", "| offset | size | field |", "|---|---|---|"]
    for f in fixed_fields(rec):
        lines.append(f"| {f['offset']} | {f['bytes']} | {f['member']} ({WIRE_TEXT[f['wire']]}: {f['doc']}) |")
    strings = [f for f in rec["fields"] if f["wire"] == "str"]
    if strings:
        lines += ["", "Then the strings, in this order: " +
                  ", ".join(f"{f['member']} ({f['doc']})" for f in strings) + "."]
    return "\n".join(lines) + "\n"


# ---- the JSON schema ------------------------------------------------------------

def field_schema(f):
    if f["show"] == "derived":
        return HOOK_SCHEMA.get(f["name"])
    base = {"number": {"$ref": "#/$defs/count"}, "integer": {"type": "integer"},
            "address": {"$ref": "#/$defs/address"}, "digest": {"$ref": "#/$defs/digest"},
            "enum": {"type": "string"}, "flags": {"$ref": "#/$defs/flags"}, "string": {"type": "string"},
            "shape": {"type": "array", "items": {"$ref": "#/$defs/count"}, "minItems": 3, "maxItems": 3},
            }.get(f["show"])
    if base and f.get("when_absent") == "null":
        return {"anyOf": [base, {"type": "null"}]}
    return base


def same_type(have, want, f):
    """Whether a schema property says what the table's kind says (a list of
    strings for flags, a list of names for an enum, are the same)."""
    if have == want:
        return True
    if f["show"] == "flags":
        return have == {"type": "array", "items": {"type": "string"}}
    if f["show"] == "enum":
        names = have.get("enum")
        return isinstance(names, list) and all(isinstance(n, str) for n in names) and \
            have.get("type", "string") == "string"
    return False


def shown(rec):
    return [f for f in rec["fields"] if f["show"] != "hidden"]


def record_branches(schema):
    """{type name: branch} of the dump_record definition."""
    out = {}
    for b in schema["$defs"]["dump_record"]["oneOf"]:
        const = b.get("properties", {}).get("type", {}).get("const")
        if const:
            out[const] = b
    return out


def check_schema(schema, table):
    errs, branches = [], record_branches(schema)
    for rec in table:
        b = branches.get(rec["name"])
        if not b:
            errs.append(f"{SCHEMA}: no dump_record branch for type {rec['name']}")
            continue
        props = b["properties"]
        required = set(b.get("else", {}).get("required", []))
        for f in shown(rec):
            want = field_schema(f)
            if f["name"] not in props:
                if want is not None or f["show"] != "derived":
                    errs.append(f"{SCHEMA}: {rec['name']}: no property {f['name']}")
                continue
            if want is not None and not same_type(props[f["name"]], want, f):
                errs.append(f"{SCHEMA}: {rec['name']}.{f['name']}: {json.dumps(props[f['name']])}, "
                            f"the table's kind gives {json.dumps(want)}")
            if f["show"] != "derived" and f.get("when_absent") != "omitted" and f["name"] not in required:
                errs.append(f"{SCHEMA}: {rec['name']}.{f['name']} is not required")
        if rec["generic"]:
            extra = set(props) - set(PREFIX_PROPS) - {f["name"] for f in shown(rec)}
            for x in sorted(extra):
                errs.append(f"{SCHEMA}: {rec['name']}: property {x} is no field of the table")
    return errs


def branch_text(rec, indent="    "):
    i1, i2 = indent + " ", indent + "  "
    props = [f'"type": {{"const": "{rec["name"]}"}}', '"seq": {"$ref": "#/$defs/count"}',
             '"time_ns": {"$ref": "#/$defs/count"}', '"size": {"$ref": "#/$defs/count"}',
             '"file": {"type": "string"}', '"record_flags": {"$ref": "#/$defs/flags"}',
             '"malformed": {"const": true}']
    required = {"type", "seq", "time_ns", "size", "file"}
    for f in shown(rec):
        s = field_schema(f)
        if s is None:
            continue
        props.append(f'"{f["name"]}": ' + json.dumps(s, ensure_ascii=False))
        if f.get("when_absent") != "omitted":
            required.add(f["name"])
    lines = [indent + "{", i1 + '"type": "object",', i1 + '"properties": {']
    lines += [i2 + p + ("," if k + 1 < len(props) else "") for k, p in enumerate(props)]
    lines += [i1 + "},", i1 + '"additionalProperties": false,', i1 + '"if": {"required": ["malformed"]},',
              i1 + '"then": {"required": ["type", "seq", "time_ns", "size", "file"]},',
              ]
    inline = i1 + '"else": {"required": ' + json.dumps(sorted(required)) + "}"
    if len(inline) <= 120:
        lines.append(inline)
    else:  # the schema's style: one name a line
        names = sorted(required)
        lines += [i1 + '"else": {', i2 + '"required": [']
        lines += [i2 + " " + json.dumps(n) + ("," if k + 1 < len(names) else "") for k, n in enumerate(names)]
        lines += [i2 + "]", i1 + "}"]
    lines.append(indent + "}")
    return "\n".join(lines)


def branch_span(text, name):
    """(start, end) of the text of the branch whose type is name, or None."""
    m = re.search(r'"type": \{"const": "%s"\}' % re.escape(name), text)
    if not m:
        return None
    start = text.rfind("\n    {\n", 0, m.start()) + 1
    depth, i = 0, start
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return start, i + 1
        elif text[i] == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        i += 1
    return None


def write_schema(text, table):
    for rec in table:
        span = branch_span(text, rec["name"])
        if span and rec["generic"]:
            text = text[:span[0]] + branch_text(rec) + text[span[1]:]
        elif not span:
            last = None
            for other in table:
                s = branch_span(text, other["name"])
                if s and (last is None or s[1] > last):
                    last = s[1]
            text = text[:last] + ",\n" + branch_text(rec) + text[last:]
    return text


def write_format_md(text, table):
    for rec in table:
        if section_rows(text, rec) is None:
            text = text.rstrip("\n") + "\n\n" + format_md_section(rec)
    return text


def main(argv):
    mode, dump = None, "build/ktrace-dump"
    args = argv[1:]
    while args:
        if args[0] in ("--check", "--write"):
            mode = args[0]
            args = args[1:]
        elif args[0] == "--dump" and len(args) > 1:
            dump, args = args[1], args[2:]
        else:
            print(__doc__.strip(), file=sys.stderr)
            return 2
    if not mode:
        print("record_docs.py: say --check or --write", file=sys.stderr)
        return 2
    if not os.access(dump, os.X_OK):
        print(f"record_docs.py: {dump}: not built (make)", file=sys.stderr)
        return 2
    table = load_table(dump)
    if mode == "--write":
        with open(SCHEMA, encoding="utf-8") as f:
            text = write_schema(f.read(), table)
        json.loads(text)
        with open(SCHEMA, "w", encoding="utf-8") as f:
            f.write(text)
        with open(FORMAT_MD, encoding="utf-8") as f:
            text = write_format_md(f.read(), table)
        with open(FORMAT_MD, "w", encoding="utf-8") as f:
            f.write(text)
    with open(FORMAT_MD, encoding="utf-8") as f:
        errs = check_format_md(f.read(), table)
    with open(SCHEMA, encoding="utf-8") as f:
        errs += check_schema(json.load(f), table)
    for e in errs:
        print(e)
    if errs:
        print(f"record_docs.py: {len(errs)} disagreement(s) with the record table", file=sys.stderr)
        return 1
    print(f"record_docs.py: {FORMAT_MD} and {SCHEMA} agree with the record table ({len(table)} types)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
