#!/usr/bin/env python3
"""Import circles between the files of each crate (`make layering`).

A file's edges are the modules its `crate::` and `super::` paths name (in `use` trees and
inline), a name the crate root or a module re-exports resolved to the module that defines
it. A `mod` declaration is no edge. Prints each circle (a strongly connected group of two
or more files) and exits 1 when a circle is found that ALLOWED does not list.

    scripts/module_cycles.py crates/*/ tests/
"""

import re
import sys
from pathlib import Path

# Circles the architecture accepts: an invoice and its ledger are one aggregate.
ALLOWED = [{"billing::invoice", "billing::ledger"}]

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    # Line comments (doc comments too), but not `//` inside a string on the same line.
    lines = []
    for line in text.splitlines():
        code, quoted = [], False
        i = 0
        while i < len(line):
            c = line[i]
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                quoted = not quoted
            if not quoted and line.startswith("//", i):
                break
            code.append(c)
            i += 1
        lines.append("".join(code))
    return "\n".join(lines)


def cut_tests(text):
    """Drops `#[cfg(test)] mod … { … }` blocks: a test module may import what it likes."""
    out, i = [], 0
    for match in re.finditer(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+" + IDENT + r"\s*\{", text):
        if match.start() < i:
            continue
        out.append(text[i:match.start()])
        depth, j = 1, match.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def modules_of(src):
    """Module path (`a::b`, "" for the root) -> file."""
    found = {}
    for path in src.rglob("*.rs"):
        rel = path.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts in (["lib"], ["main"]):
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        found["::".join(parts)] = path
    return found


def use_paths(tree, prefix=""):
    """Expands a `use` tree (`a::{b, c::d as e}`) into its paths."""
    tree = tree.strip()
    brace = tree.find("{")
    if brace < 0:
        return [prefix + re.split(r"\s+as\s+", tree)[0].strip()]
    head, body = tree[:brace], tree[brace + 1 : tree.rindex("}")]
    parts, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return [p for part in parts if part.strip() for p in use_paths(part, prefix + head)]


def paths_of(text):
    """Every `crate::…`/`super::…`/`self::…` path a file names, and its `pub use` trees."""
    paths, reexports = [], []
    for match in re.finditer(r"\b(pub(\([^)]*\))?\s+)?use\s+([^;]+);", text):
        for path in use_paths(match.group(3)):
            paths.append(path)
            if match.group(1):
                reexports.append(path)
    for match in re.finditer(r"\b((?:crate|super|self)(?:::" + IDENT + r")+)", text):
        paths.append(match.group(1))
    return paths, reexports


def absolute(path, module, is_dir_module):
    """`path` as seen from `module`, from the crate root; None when it is not the crate's."""
    parts = path.split("::")
    if parts[0] == "crate":
        return parts[1:]
    if parts[0] in ("super", "self"):
        base = module.split("::") if module else []
        # `super` of a file module is its parent; of `foo/mod.rs` also its parent.
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                base = base[:-1]
            parts = parts[1:]
        return base + parts
    return None


def resolve(parts, modules, exports):
    """The module that defines what `parts` names: the longest module prefix, through
    re-exports of the name that follows it."""
    for cut in range(len(parts), -1, -1):
        module = "::".join(parts[:cut])
        if module not in modules:
            continue
        rest = parts[cut:]
        if rest and (module, rest[0]) in exports and exports[(module, rest[0])] != module:
            target = exports[(module, rest[0])]
            return resolve(target.split("::") + rest[1:], modules, exports) if target else module
        return module
    return None


def crate_circles(root):
    src = root / "src"
    if not src.is_dir():
        return []
    modules = modules_of(src)
    texts = {m: cut_tests(strip_comments(p.read_text())) for m, p in modules.items()}
    exports = {}
    for module, text in texts.items():
        _, reexports = paths_of(text)
        for path in reexports:
            parts = absolute(path, module, modules[module].name == "mod.rs")
            if parts is None:
                # `pub use child::X` names a child module of this one.
                parts = (module.split("::") if module else []) + path.split("::")
            target = resolve(parts[:-1], modules, {}) if len(parts) > 1 else None
            if target is not None:
                exports[(module, parts[-1])] = target
    edges = {m: set() for m in modules}
    for module, text in texts.items():
        paths, _ = paths_of(text)
        for path in paths:
            parts = absolute(path, module, modules[module].name == "mod.rs")
            if parts is None:
                continue
            target = resolve(parts, modules, exports)
            if target is not None and target != module:
                edges[module].add(target)
    return [(root.name, group) for group in strongly_connected(edges) if len(group) > 1]


def strongly_connected(edges):
    index, low, stack, on, groups, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            groups.append(group)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return groups


def main(roots):
    failed = False
    for root in roots:
        for crate, group in crate_circles(Path(root)):
            named = {f"{crate}::{m}" if m else crate for m in group}
            allowed = any(named == a for a in ALLOWED)
            label = "allowed circle" if allowed else "import circle"
            print(f"{label} in {crate}: " + ", ".join(sorted(m or "(root)" for m in group)))
            failed |= not allowed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
