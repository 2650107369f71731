#!/usr/bin/env python3
"""Which system calls candidate children make once their filter is on.

Reads `strace -f -o FILE` logs of serving children (one file per child; bench/strace_child.sh
writes them) and prints, per call, how often it ran after the child's seccomp() call and in how
many children, plus every call the filter refused (SIGSYS with si_code SYS_SECCOMP). The
allow-list is src/child/system_call_filter.cpp; docs/evaluation.md says why each entry is there.

    python3 bench/system_call_survey.py LOG...
"""
import collections
import re
import sys

CALL = re.compile(r"^\d+\s+(?:<\.\.\. )?([a-z0-9_]+)(?:\(| resumed>)")
REFUSED = re.compile(r"SIGSYS \{.*si_syscall=(?:__NR_)?([a-z0-9_]+)")


def survey(path):
    calls, refused, filtered = collections.Counter(), [], False
    with open(path, errors="replace") as log:
        for line in log:
            if not filtered:
                filtered = "seccomp(SECCOMP_SET_MODE_FILTER" in line
                continue
            if (m := REFUSED.search(line)) is not None:
                refused.append(m.group(1))
            elif (m := CALL.match(line)) is not None and "resumed>" not in line:
                calls[m.group(1)] += 1
    return filtered, calls, refused


def main(paths):
    total, children, refused, unfiltered = collections.Counter(), collections.Counter(), [], 0
    for path in paths:
        filtered, calls, denied = survey(path)
        if not filtered:
            unfiltered += 1
            continue
        total.update(calls)
        children.update(calls.keys())
        refused += [(path, name) for name in denied]
    print(f"# {len(paths)} child logs, {len(paths) - unfiltered} with the filter installed")
    print("| call | calls after the filter | children |")
    print("|---|---|---|")
    for name, count in total.most_common():
        print(f"| `{name}` | {count} | {children[name]} |")
    print(f"\nrefused: {len(refused)}")
    for path, name in refused:
        print(f"- {name} in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
