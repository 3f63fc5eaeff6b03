#!/usr/bin/env python3
"""Closed sets of names are spelt once (`make layering`).

Each enum below lists its words in one `words!` invocation; parsing, descriptions and
errors derive from that list. A string literal spelling one of those words anywhere else
in the crates' code (tests, comments and attributes aside: an example in an OpenAPI
attribute is documentation) is a second list waiting to drift, and fails the check. Where
a set's words are also plain English nouns (`invoice`, `client`: "invoice not found"), only
its compound words (`credit_note`, `time_entry`) are held to it.

    scripts/closed_words.py
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from module_cycles import cut_tests, strip_comments  # noqa: E402

# The closed sets held to this rule: the crate that defines each, the enum, and whether
# every word is held to it (else its compound words only).
CLOSED_SETS = [
    ("billing", "Format", True),
    ("billing", "MediaType", True),
    ("billing", "DocumentKind", False),
    ("notify", "EventFamily", False),
]


def words_of(crate, enum):
    """The words of `enum`'s `words!` invocation in `crate`, and where it stands."""
    pattern = re.compile(r"words!\(\s*" + enum + r"\s*\{(.*?)\}\s*\)", re.S)
    for path in Path(f"crates/{crate}/src").rglob("*.rs"):
        match = pattern.search(path.read_text())
        if match:
            return re.findall(r'=>\s*"([^"]+)"', match.group(1)), path, match.group(0)
    sys.exit(f"closed words: no words!({enum} …) in crates/{crate}")


def code_lines(path):
    """The file's code, comments, test modules and attribute lines left out."""
    text = cut_tests(strip_comments(path.read_text()))
    depth, kept = 0, []
    for line in text.splitlines():
        stripped = line.strip()
        if depth or stripped.startswith("#["):
            depth += stripped.count("(") + stripped.count("[") - stripped.count(")") - stripped.count("]")
            depth = max(depth, 0)
            kept.append("")
            continue
        kept.append(line)
    return kept


def main():
    sets = []
    for crate, enum, every in CLOSED_SETS:
        words, home, invocation = words_of(crate, enum)
        held = [word for word in words if every or not word.isalpha()]
        sets.append((enum, held, home, invocation))
    failed = False
    for path in sorted(Path("crates").glob("*/src/**/*.rs")):
        lines = code_lines(path)
        # Every `words!` invocation is a set's own list (two sets may share a word).
        text = re.sub(r"words!\(\s*\w+\s*\{.*?\}\s*\)", lambda m: "\n" * m.group(0).count("\n"), "\n".join(lines), flags=re.S)
        for enum, words, _home, _invocation in sets:
            for word in words:
                for match in re.finditer('"' + re.escape(word) + '"', text):
                    line = text.count("\n", 0, match.start()) + 1
                    print(f"{path}:{line}: \"{word}\" is a word of {enum}; use {enum}'s value")
                    failed = True
    if not failed:
        print("closed words: every closed set of names is spelt once")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
