#!/usr/bin/env python3
"""test/tools/json_check.py: check ktrace's JSON outputs against docs/json/ktrace.schema.json.

usage: json_check.py SCHEMA DEFINITION (--document | --lines) FILE...

DEFINITION names one of the schema's $defs (dump_record, dump_summary, diff, check,
inspect, inspect_summary).  --document: each FILE is one JSON document; --lines: JSON
Lines, every line checked.  Uses python3-jsonschema (scripts/install-deps.sh).  Prints
one line per problem and exits 1 when there is any, 0 otherwise.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("json_check.py: python3-jsonschema is not installed (scripts/install-deps.sh installs it)")
    sys.exit(1)


def main():
    if len(sys.argv) < 5 or sys.argv[3] not in ("--document", "--lines"):
        print(__doc__.strip().splitlines()[2])
        return 2
    schema_path, name, mode, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    with open(schema_path) as f:
        schema = json.load(f)
    if name not in schema["$defs"]:
        print(f"json_check.py: {schema_path} defines no {name}")
        return 2
    top = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    validator = jsonschema.Draft202012Validator(top)
    bad = 0
    for path in files:
        with open(path) as f:
            text = f.read()
        docs = [(i + 1, l) for i, l in enumerate(text.splitlines()) if l.strip()] if mode == "--lines" else [(1, text)]
        for line, doc in docs:
            try:
                value = json.loads(doc)
            except ValueError as e:
                print(f"{path}:{line}: not JSON: {e}")
                bad += 1
                continue
            err = jsonschema.exceptions.best_match(validator.iter_errors(value))
            if err is not None:
                where = "/".join(str(p) for p in err.absolute_path)
                print(f"{path}:{line}: {name} at /{where}: {err.message[:300]}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
