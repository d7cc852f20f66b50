#!/usr/bin/env python3
"""test/tools/verdict_report_test.py: how the verdict suite judges one program
(test/gpu/workloads/verdict_report.py's classify), on a machine without a GPU (make test).

Each case gives the program's expectation and flags, the ground truth's row and what
`ktrace check` said, and the category and PASS/FAIL/SKIP the suite must give it."""
import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gpu", "workloads"))
import verdict_report  # noqa: E402


class Prog:
    def __init__(self, expected, flags=(), culprit=r"atomic"):
        self.expected, self.flags, self.culprit = expected, flags, culprit


def said(state, digest_diverged=None, kernel="kt_atomic_sum"):
    """What `ktrace check` said, as verdict_report.ktrace_outcome reads it."""
    if digest_diverged is None:
        digest_diverged = state == "diverged"
    return {"state": state, "digest_diverged": digest_diverged, "detail": "", "source": "replay",
            "kernel": kernel if state == "diverged" else "", "mangled": "", "sizes": "",
            "digest_kernel": kernel, "attempts": []}


class Classify(unittest.TestCase):
    def judge(self, prog, row, k):
        cat, status, _ = verdict_report.classify(prog, row, k)
        return cat, status

    def test_deterministic_program_passes_or_is_a_false_divergence(self):
        self.assertEqual(self.judge(Prog("det"), "det", said("passed")), ("pass", "PASS"))
        self.assertEqual(self.judge(Prog("det"), "det", said("diverged")), ("false", "FAIL"))

    def test_nondeterministic_program_missed_is_a_failure(self):
        self.assertEqual(self.judge(Prog("nondet"), "nondet", said("passed")), ("missed", "FAIL"))

    def test_probabilistic_program_that_did_not_show_is_skipped(self):
        p = Prog("nondet", flags=("probabilistic",))
        self.assertEqual(self.judge(p, "nondet", said("passed")), ("unshown", "SKIP"))

    def test_surprise_nondeterminism_caught_passes(self):
        self.assertEqual(self.judge(Prog("det"), "nondet-surprise", said("diverged")), ("surprise", "PASS"))

    def test_surprise_nondeterminism_missed_fails_unless_probabilistic(self):
        self.assertEqual(self.judge(Prog("det"), "nondet-surprise", said("passed")), ("missed", "FAIL"))
        p = Prog("det", flags=("probabilistic",))
        self.assertEqual(self.judge(p, "nondet-surprise", said("passed")), ("unshown", "SKIP"))
        # digests that differed are never set aside as "did not show"
        self.assertEqual(self.judge(p, "nondet-surprise", said("passed", digest_diverged=True)),
                         ("missed", "FAIL"))

    def test_nondeterministic_program_caught_names_the_right_kernel(self):
        self.assertEqual(self.judge(Prog("nondet"), "nondet", said("diverged")), ("right", "PASS"))
        self.assertEqual(self.judge(Prog("nondet"), "nondet", said("diverged", kernel="gemm")), ("wrong", "FAIL"))

    def test_race_program_needs_the_race_verdict(self):
        p = Prog("nondet", flags=("probabilistic", "race"), culprit=r"kt_race_reader")
        race = dict(said("diverged", kernel="kt_race_reader"), race=True, source="race")
        self.assertEqual(self.judge(p, "nondet", race), ("right", "PASS"))
        self.assertEqual(self.judge(p, "nondet", said("diverged", kernel="kt_race_reader")), ("wrong", "FAIL"))
        self.assertEqual(self.judge(p, "nondet", said("passed")), ("unshown", "SKIP"))

    def test_race_verdict_read_from_the_report(self):
        c = {"result": "diverged", "verdict": "race",
             "divergences": [{"kernel": "kt_race_reader", "classification": "inputs_unverified"}],
             "race": {"kind": "read_write", "reader": {"kernel": "kt_race_reader", "mangled": "kt_race_reader"},
                      "writer_a": {"type": "launch", "kernel": "kt_race_writer", "stream": "0x20"},
                      "missing_order": "no event"}}
        v = verdict_report.comparison_verdict(c)
        self.assertTrue(v["diverged"] and v["race"])
        self.assertEqual((v["source"], v["kernel"]), ("race", "kt_race_reader"))
        self.assertIn("kt_race_writer", v["sizes"])

    def test_no_ground_truth_or_framework_skips(self):
        self.assertEqual(self.judge(Prog("det"), "unavailable", said("passed"))[1], "SKIP")
        self.assertEqual(self.judge(Prog("det"), "none", said("passed"))[1], "SKIP")

    def test_ktrace_error_fails(self):
        self.assertEqual(self.judge(Prog("det"), "det", said("error")), ("error", "FAIL"))


if __name__ == "__main__":
    unittest.main(verbosity=1)
