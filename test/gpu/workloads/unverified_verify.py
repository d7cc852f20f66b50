"""test/gpu/workloads/unverified_verify.py: judge `ktrace check --json` of a
deterministic program for test/gpu/41-e2e-unverified-*.sh: every matched
launch compared, none unverified.

usage: unverified_verify.py NAME JSON RC

Prints, for each comparison of the JSON (one object for 2 runs, a list for
more), every unverified launch with its reason:
  UNVERIFIED|NAME|seq_a|kernel|reason|why
then one line
  RESULT|NAME|PASS|<matched> launches matched, 0 unverified, <k> guessed region pairs set aside
or RESULT|NAME|FAIL|<n> unverified (<counts by reason>; first: <kernel>: <why>)
A divergence is reported in the detail (the program is expected to be
deterministic) but does not decide the result: this check is about what
could not be compared.
"""
import json
import sys


def result(name, status, detail):
    print("RESULT|%s|%s|%s" % (name, status, detail.replace("|", "/").replace("\n", " ")[:600]), flush=True)


def main():
    if len(sys.argv) != 4:
        print("usage: unverified_verify.py NAME JSON RC", file=sys.stderr)
        return 2
    name, jpath, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
    try:
        doc = json.load(open(jpath))
    except (OSError, ValueError) as e:
        result(name, "FAIL", "ktrace check exit %d, no JSON (%s)" % (rc, e))
        return 0
    if isinstance(doc, dict) and isinstance(doc.get("comparisons"), list):  # ktrace check --json: one object
        doc = doc["comparisons"]
    comps = doc if isinstance(doc, list) else [doc]
    matched = unverified = guessed = diverged = 0
    by_reason = {}
    first = None
    for c in comps:
        launches = c.get("launches", {})
        if "unverified_by_reason" not in launches:
            result(name, "FAIL", "the JSON has no unverified_by_reason: ktrace older than this check")
            return 0
        matched += launches.get("matched", 0)
        unverified += launches.get("unverified", 0)
        diverged += launches.get("diverged", 0)
        guessed += launches.get("guessed_regions_set_aside", 0)
        for k, v in launches["unverified_by_reason"].items():
            by_reason[k] = by_reason.get(k, 0) + v
        for u in c.get("unverified_launches", []):
            print("UNVERIFIED|%s|%s|%s|%s|%s" % (name, u.get("op_seq_a", u.get("seq_a")), (u.get("kernel") or "")[:160],
                                                 u.get("reason"), u.get("why")), flush=True)
            if first is None:
                first = u
    extra = "; %d diverged (exit %d)" % (diverged, rc) if diverged else ""
    if not matched:
        result(name, "FAIL", "nothing matched (exit %d)" % rc)
    elif unverified == 0:
        result(name, "PASS", "%d launches matched, 0 unverified, %d guessed region pairs set aside%s"
               % (matched, guessed, extra))
    else:
        counts = ", ".join("%d %s" % (v, k) for k, v in sorted(by_reason.items(), key=lambda kv: -kv[1]))
        result(name, "FAIL", "%d of %d matched launches unverified (%s); first: %s: %s%s"
               % (unverified, matched, counts, (first.get("kernel") or "")[:120], first.get("why"), extra))
    return 0


if __name__ == "__main__":
    sys.exit(main())
