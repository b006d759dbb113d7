#!/usr/bin/env python3
"""Tandem's entry in the ACP Registry (how Zed and JetBrains install and
start `tandem acp`): tandem/agent.json and tandem/icon.svg, the folder a
registry pull request adds.

    check.py                  check tandem/agent.json (what .ci/run runs)
    check.py --write          write it for Cargo.toml's version
    check.py --sums SHA256SUMS --out FILE
                              the release's entry, with each archive's
                              SHA-256 (release.yml)

The entry is made from the version (Cargo.toml, through .ci/release-version)
and the archive names release.yml gives its binaries, so it cannot drift
from either. The check: the file is what --write makes; it is valid against
the registry's schema (agent.schema.json, draft-07, formats checked, by the
jsonschema package); the schema rejects broken entries (so a check that
passes means something); the icon is a 16x16 SVG in currentColor only; and
release.yml still names its archives as the entry does. Needs jsonschema on
PYTHONPATH (.ci/tools installs it).
"""

import argparse
import copy
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ENTRY = HERE / "tandem" / "agent.json"
ICON = HERE / "tandem" / "icon.svg"
SCHEMA = HERE / "agent.schema.json"
RELEASES = "https://github.com/tandem-agent/tandem/releases/download"

# The registry's platform → the release's target name (release.yml's matrix `vsce`).
PLATFORMS = {
    "linux-x86_64": "linux-x64",
    "linux-aarch64": "linux-arm64",
    "darwin-x86_64": "darwin-x64",
    "darwin-aarch64": "darwin-arm64",
    "windows-x86_64": "win32-x64",
}


def version() -> str:
    out = subprocess.run([str(REPO / ".ci" / "release-version")], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"check.py: .ci/release-version failed: {out.stderr.strip()}")
    return out.stdout.strip()


def archive(ver: str, target: str) -> str:
    """The archive's file name, as release.yml's Archive step makes it."""
    return f"tandem-{ver}-{target}.{'zip' if target.startswith('win32') else 'tar.gz'}"


def entry(ver: str, sums: dict) -> dict:
    binary = {}
    for platform, target in PLATFORMS.items():
        exe = "tandem.exe" if target.startswith("win32") else "tandem"
        name = archive(ver, target)
        binary[platform] = {
            "archive": f"{RELEASES}/v{ver}/{name}",
            "cmd": f"./tandem-{ver}-{target}/{exe}",
            "args": ["acp"],
        }
        if sums:
            if name not in sums:
                sys.exit(f"check.py: SHA256SUMS has no line for {name}")
            binary[platform]["sha256"] = sums[name]
    return {
        "id": "tandem",
        "name": "Tandem",
        "version": ver,
        "description": "A coding agent that lives inside the editor: edits you review and undo, never over your unsaved typing; "
        "also a language server and a terminal CLI.",
        "repository": "https://github.com/tandem-agent/tandem",
        "authors": ["The Tandem authors"],
        "license": "MIT OR Apache-2.0",
        "distribution": {"binary": binary},
    }


def read_sums(path: Path) -> dict:
    sums = {}
    for line in path.read_text().splitlines():
        found = re.fullmatch(r"([0-9a-f]{64}) [ *](\S+)", line.strip())
        if not found:
            sys.exit(f"check.py: {path}: not a sha256sum line: {line!r}")
        sums[found.group(2)] = found.group(1)
    return sums


def schema_errors(value: dict) -> list:
    from jsonschema import Draft7Validator

    schema = json.loads(SCHEMA.read_text())
    validator = Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in validator.iter_errors(value)]


def broken_entries(good: dict):
    """Entries the registry must refuse, each with what is wrong."""
    def changed(what, change):
        bad = copy.deepcopy(good)
        change(bad)
        return what, bad

    yield changed("an unknown platform", lambda e: e["distribution"]["binary"].update({"plan9-x86_64": {"archive": "https://x/y.tar.gz", "cmd": "./t"}}))
    yield changed("a target without cmd", lambda e: e["distribution"]["binary"]["linux-x86_64"].pop("cmd"))
    yield changed("a short sha256", lambda e: e["distribution"]["binary"]["linux-x86_64"].update({"sha256": "abc"}))
    yield changed("an archive that is no URI", lambda e: e["distribution"]["binary"]["linux-x86_64"].update({"archive": "not a uri"}))
    yield changed("an id with capitals", lambda e: e.update({"id": "Tandem"}))
    yield changed("no distribution", lambda e: e.pop("distribution"))


def icon_problems() -> list:
    problems = []
    root = ET.parse(ICON).getroot()
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        problems.append(f"the root is {root.tag}, not svg")
    if (root.get("width"), root.get("height")) != ("16", "16"):
        problems.append(f"it is {root.get('width')}x{root.get('height')}, not 16x16")
    for element in root.iter():
        for attribute in ("fill", "stroke", "color", "stop-color"):
            value = element.get(attribute)
            if value is not None and value not in ("currentColor", "none"):
                problems.append(f"{element.tag} has {attribute}={value!r} (only currentColor or none)")
        if "style" in element.attrib and re.search(r"(fill|stroke|color)\s*:\s*(?!currentColor|none)", element.get("style")):
            problems.append(f"{element.tag} sets a colour in its style")
    return problems


def check() -> int:
    ver = version()
    wanted = entry(ver, {})
    failures = []
    try:
        found = json.loads(ENTRY.read_text())
    except (OSError, ValueError) as error:
        print(f"check.py: {ENTRY}: {error}", file=sys.stderr)
        return 1
    if found != wanted:
        failures.append(f"{ENTRY.relative_to(REPO)} is not what `check.py --write` makes for {ver}: run it")
    if found.get("id") != ENTRY.parent.name:
        failures.append(f"the id {found.get('id')!r} is not the folder's name {ENTRY.parent.name!r}")
    failures += [f"schema: {e}" for e in schema_errors(found)]
    for what, bad in broken_entries(wanted):
        if not schema_errors(bad):
            failures.append(f"the schema check accepts {what}: it checks nothing")
    failures += [f"icon.svg: {p}" for p in icon_problems()]
    workflow = (REPO / ".github" / "workflows" / "release.yml").read_text()
    if 'name="tandem-$VERSION-${{ matrix.vsce }}"' not in workflow:
        failures.append("release.yml no longer names its archives tandem-$VERSION-<target>: the entry's archive URLs would be wrong")
    for target in PLATFORMS.values():
        if f"vsce: {target}," not in workflow:
            failures.append(f"release.yml builds no {target}, which the entry offers")
    for failure in failures:
        print(f"check.py: {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"check.py: tandem/agent.json ({ver}, {len(PLATFORMS)} platforms) is valid against the ACP Registry's schema; the icon is 16x16 in currentColor")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write tandem/agent.json")
    parser.add_argument("--sums", type=Path, help="SHA256SUMS of the release's files")
    parser.add_argument("--out", type=Path, help="where to write (with --sums)")
    args = parser.parse_args()
    if args.sums or args.write:
        value = entry(version(), read_sums(args.sums) if args.sums else {})
        errors = schema_errors(value)
        if errors:
            print("\n".join(f"check.py: schema: {e}" for e in errors), file=sys.stderr)
            return 1
        out = args.out or ENTRY
        out.write_text(json.dumps(value, indent=2) + "\n")
        print(f"check.py: wrote {out}")
        return 0
    return check()


if __name__ == "__main__":
    sys.exit(main())
