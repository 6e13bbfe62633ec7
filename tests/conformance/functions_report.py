"""Per case and per expression: which built-in function cases fail, and why.

    python tests/conformance/functions_report.py                 # every case
    python tests/conformance/functions_report.py string_lit_01   # some cases (name prefixes)
    python tests/conformance/functions_report.py --write-xfail   # regenerate functions_xfail.json
    python tests/conformance/functions_report.py --missing       # missing functions, by count

Run from the worktree with PYTHONPATH set to it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from functions_corpus import XFAIL_FILE, case_dirs, run_case, run_expression, split_expressions  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", help="case name prefixes (default: all)")
    ap.add_argument("--write-xfail", action="store_true", help="rewrite functions_xfail.json from this run")
    ap.add_argument("--missing", action="store_true", help="summarize missing functions")
    ap.add_argument("--quiet", action="store_true", help="only failing cases, no per-expression lines")
    args = ap.parse_args()
    dirs = [d for d in case_dirs() if not args.cases or any(d.name.startswith(c) for c in args.cases)]
    xfail: dict[str, str] = {}
    passed = 0
    exprs_total = exprs_ok = 0
    missing: Counter[str] = Counter()
    for d in dirs:
        out = run_case(d)
        exprs = split_expressions(d)
        if out.ok:
            passed += 1
            exprs_total += max(len(exprs), 1)
            exprs_ok += max(len(exprs), 1)
            if not args.quiet:
                print(f"PASS {d.name}")
            continue
        print(f"FAIL {d.name}: {out.reason}")
        reasons: list[str] = []
        if not exprs:
            exprs_total += 1
            reasons.append(out.reason)
        for e in exprs:
            exprs_total += 1
            r = run_expression(d, e)
            if r.ok:
                exprs_ok += 1
                continue
            if r.reason.startswith("missing function"):
                missing[r.reason.split()[-1]] += 1
            if not args.quiet:
                print(f"    {e.text}\n        -> {r.reason}")
            short = r.reason if not r.reason.startswith("value differs") else f"value differs: {e.text}"
            if short not in reasons:
                reasons.append(short)
        reason = "; ".join(reasons) or out.reason
        xfail[d.name] = reason if len(reason) <= 300 else reason[:297] + "..."
    print(f"\n{passed}/{len(dirs)} cases pass; {exprs_ok}/{exprs_total} expressions pass")
    if args.missing:
        print("missing functions (expressions):")
        for name, n in missing.most_common():
            print(f"  {name}: {n}")
    if args.write_xfail:
        XFAIL_FILE.write_text(json.dumps(dict(sorted(xfail.items())), indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {len(xfail)} entries to {XFAIL_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
