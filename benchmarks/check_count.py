"""Count the input checks one census runs, and the library's raise sites and check calls per package.

``PYTHONPATH=src python benchmarks/check_count.py [CONFIG ...]`` (``PYTHONPATH=OTHER_TREE/src`` measures another
tree, such as the code before validation moved to the edge).  For each bundled config named (default: every one),
one ``census_all`` as ``poskernels census CONFIG`` runs it, with the base scan's per-process cache emptied first:
the number of ``check_*`` calls, per check, and the arguments checked more than once.  Then, per package of
``src/poskernels``: lines, ``raise`` sites and ``check_*`` calls, and both per 100 lines.  Neither a benchmark of
speed (``make bench`` does not run it) nor a test: ``tests/test_check_count.py`` holds the census to one check per
argument.
"""

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # check_calls: the counter
import check_calls  # noqa: E402
import poskernels  # noqa: E402
from poskernels.census import compute as census_compute
from poskernels.census import context as census_context  # noqa: E402
from poskernels.census.config import bundled_configs  # noqa: E402


def census_counts(config: str) -> None:
    """One census of ``config``: the checks it ran and the arguments it checked more than once."""
    census_context._base_bounds.cache_clear()  # the scan runs once per process: count it as a first census does
    with check_calls.counting() as calls:
        census_compute.census_all(config)
    twice = check_calls.repeated(calls)
    extra = sum(len(callers) - 1 for callers in twice.values())
    print(f"{config}: {len(calls)} check calls, {len(twice)} arguments checked more than once ({extra} extra checks)")
    for area in check_calls.MATH:
        mine = [c for c in calls if c.entry.startswith(area + ".")]
        again = check_calls.repeated(mine, per_entry=True)
        more = sum(len(callers) - 1 for callers in again.values())
        print(f"  entered through {area}: {len(mine)} checks, {more} of them repeat an argument of the same function")
    for check, n in sorted(check_calls.by_check(calls).items(), key=lambda kv: -kv[1]):
        print(f"  {n:6d} {check}")
    worst = sorted(twice.items(), key=lambda kv: -len(kv[1]))[:8]
    for (check, label, *_), callers in worst:
        where = ", ".join(f"{c} x{n}" for c, n in Counter(callers).most_common(3))
        print(f"  checked {len(callers)} times: {check}({label!r}) by {where}")


def package_counts() -> None:
    """Per package (a folder of ``src/poskernels``, or the root modules): lines, raises, check calls."""
    root = Path(poskernels.__file__).resolve().parent
    rows: dict[str, list[int]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        package = rel.parts[0] if len(rel.parts) > 1 else "(root modules)"
        text = path.read_text()
        row = rows.setdefault(package, [0, 0, 0])
        row[0] += text.count("\n")
        row[1] += len(re.findall(r"\braise\b", text))
        row[2] += len(re.findall(r"\bcheck_\w+\(", text))
    print(f"{'package':16s} {'lines':>7s} {'raise':>6s} {'check_':>7s} {'raise/100':>9s} {'check/100':>9s}")
    total = [0, 0, 0]
    for package, (lines, raises, checks) in sorted(rows.items(), key=lambda kv: -(kv[1][1] + kv[1][2]) / kv[1][0]):
        total = [t + x for t, x in zip(total, (lines, raises, checks))]
        per = f"{100 * raises / lines:9.2f} {100 * checks / lines:9.2f}"
        print(f"{package:16s} {lines:7d} {raises:6d} {checks:7d} {per}")
    lines, raises, checks = total
    print(f"{'all':16s} {lines:7d} {raises:6d} {checks:7d} {100 * raises / lines:9.2f} {100 * checks / lines:9.2f}")


if __name__ == "__main__":
    for config in sys.argv[1:] or bundled_configs():
        census_counts(config)
    package_counts()
