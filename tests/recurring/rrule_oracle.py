"""Checks billable's schedules against python-dateutil's RFC 5545 recurrence rules.

    python3 tests/recurring/rrule_oracle.py CASES.jsonl

Each line of CASES.jsonl is a schedule as billable computed it: {"rrule": ..., "startsOn":
"YYYY-MM-DD", "days": ["YYYY-MM-DD", ...], "complete": bool}, where `days` are the schedule's
first days and `complete` says whether they are all of them (the schedule ends). The rule is
expanded by dateutil from the same DTSTART; the first len(days) of its days must be `days`,
and a complete schedule must have no more. Prints each difference and exits 1 if there is
one; else prints how many schedules and days agree.
"""

import json
import sys
from datetime import date, datetime
from itertools import islice

from dateutil.rrule import rrulestr


def main(path: str) -> int:
    cases = [json.loads(line) for line in open(path, encoding="utf-8")]
    differences = 0
    days_checked = 0
    for case in cases:
        start = datetime.combine(date.fromisoformat(case["startsOn"]), datetime.min.time())
        rule = rrulestr(case["rrule"], dtstart=start)
        wanted = len(case["days"]) + (1 if case["complete"] else 0)
        oracle = [d.date().isoformat() for d in islice(rule, wanted)]
        ours = case["days"]
        if oracle != ours:
            differences += 1
            print(f"{case['rrule']} from {case['startsOn']}:\n  billable {ours}\n  dateutil {oracle}")
        days_checked += len(ours)
    if differences:
        print(f"rrule oracle: {differences} of {len(cases)} schedules differ")
        return 1
    print(f"rrule oracle: {len(cases)} schedules, {days_checked} days, all as dateutil's rrule")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
