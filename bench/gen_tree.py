#!/usr/bin/env python3
"""Generate a synthetic source tree for bench/search.sh, the same for a given seed.

Usage: gen_tree.py DEST [FILES] [SEED]

The tree looks like a large multi-crate project: nested folders of `.rs`,
`.ts`, `.py` and `.md` files made of source-like lines, a `.gitignore`d
`target/` folder, hidden folders, and a `.git` marker so ignore rules apply.
"""
import os
import random
import sys

WORDS = ("config parse value buffer reader writer token stream error result index "
         "cache entry node tree graph path file line column span range text rope "
         "client server request response handle state event queue task worker "
         "matcher search pattern glob ignore walk thread pool lock guard").split()
TYPES = "u8 u32 u64 usize i64 String bool Vec<u8> Option<String> PathBuf".split()


def ident(rng):
    return "_".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))


def camel(rng):
    return "".join(w.capitalize() for w in ident(rng).split("_"))


def rust_file(rng, lines):
    out = [f"//! {ident(rng).replace('_', ' ')} support.", "", "use std::collections::HashMap;", ""]
    while len(out) < lines:
        kind = rng.random()
        if kind < 0.15:
            name = camel(rng)
            out.append(f"pub struct {name} {{")
            for _ in range(rng.randint(1, 6)):
                out.append(f"    pub {ident(rng)}: {rng.choice(TYPES)},")
            out.append("}")
        elif kind < 0.45:
            out.append(f"pub fn {ident(rng)}({ident(rng)}: &{rng.choice(TYPES)}) -> Result<{rng.choice(TYPES)}, Error> {{")
            for _ in range(rng.randint(2, 12)):
                out.append(f"    let {ident(rng)} = {ident(rng)}.{ident(rng)}({rng.randint(0, 999)})?;")
            if rng.random() < 0.05:
                out.append("    // TODO: handle the empty case")
            out.append(f"    Ok({ident(rng)})")
            out.append("}")
        else:
            out.append(f"// {' '.join(rng.choice(WORDS) for _ in range(rng.randint(4, 14)))}")
        out.append("")
    return "\n".join(out) + "\n"


def ts_file(rng, lines):
    out = []
    while len(out) < lines:
        out.append(f"export function {camel(rng)}({ident(rng)}: {rng.choice(['string', 'number', 'boolean'])}) {{")
        for _ in range(rng.randint(1, 8)):
            out.append(f"  const {ident(rng)} = await {ident(rng)}.{camel(rng)}({rng.randint(0, 99)});")
        out.append("}")
    return "\n".join(out) + "\n"


def py_file(rng, lines):
    out = ["import os", ""]
    while len(out) < lines:
        out.append(f"def {ident(rng)}({ident(rng)}, {ident(rng)}=None):")
        for _ in range(rng.randint(1, 8)):
            out.append(f"    {ident(rng)} = {ident(rng)}.{ident(rng)}({rng.randint(0, 99)})")
        out.append(f"    return {ident(rng)}")
        out.append("")
    return "\n".join(out) + "\n"


def md_file(rng, lines):
    return "\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 16))) for _ in range(lines)) + "\n"


def main():
    dest = sys.argv[1]
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 50000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 42
    rng = random.Random(seed)
    os.makedirs(os.path.join(dest, ".git"), exist_ok=True)
    with open(os.path.join(dest, ".gitignore"), "w") as f:
        f.write("target/\n*.log\n")
    makers = [(".rs", rust_file, 0.6), (".ts", ts_file, 0.2), (".py", py_file, 0.15), (".md", md_file, 0.05)]
    for i in range(files):
        # About ten files a folder, as in real projects.
        crate = f"crates/{WORDS[i % 200 % len(WORDS)]}-{i % 200}"
        sub = "/".join(rng.choice(WORDS[:6]) for _ in range(rng.randint(0, 2)))
        roll, acc = rng.random(), 0.0
        for ext, maker, share in makers:
            acc += share
            if roll <= acc:
                break
        if i % 50 == 0:
            crate = f"target/debug/build/{WORDS[i % 37]}"
        elif i % 97 == 0:
            crate = f".hidden/{WORDS[i % 37]}"
        folder = os.path.join(dest, crate, sub)
        os.makedirs(folder, exist_ok=True)
        name = f"{ident(rng)}_{i}{ext}"
        with open(os.path.join(folder, name), "w") as f:
            f.write(maker(rng, rng.randint(20, 200)))


if __name__ == "__main__":
    main()
