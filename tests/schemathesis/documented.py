"""Every message schemathesis.toml lets a valid request be refused with is written, word for
word, in docs/api.md ("Every rule a valid request can still break"): a refusal the OpenAPI
description cannot state is stated there. Run by scripts/schemathesis.sh before the run.

    python3 tests/schemathesis/documented.py     exit 1 naming each message docs/api.md lacks
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    config = tomllib.loads((ROOT / "tests/schemathesis/schemathesis.toml").read_text())
    doc = (ROOT / "docs/api.md").read_text()
    missing = [
        (operation["include-name"], message)
        for operation in config.get("operations", [])
        for message in operation.get("checks", {}).get("documented_rejection", {}).get("messages", [])
        if f"`{message}`" not in doc
    ]
    for name, message in missing:
        print(f"docs/api.md does not state a refusal of {name}: {message}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
