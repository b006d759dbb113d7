#!/usr/bin/env python3
"""Tandem's Mason registry entry (how `:MasonInstall tandem` fetches the
binary): packages/tandem/package.yaml, laid out as in Mason's registry, so
this folder is also a registry Mason can be pointed at.

    check.py           check packages/tandem/package.yaml (what .ci/run runs)
    check.py --write   write it for Cargo.toml's version

No schema checker for Mason's format comes from PyPI or npm, so the check
is structural, after the registry's published rules: the keys a package may
have and those it must have; a homepage that is an http(s) URL; licenses,
categories and asset targets from the registry's lists; a source id
`pkg:github/OWNER/REPO@VERSION`; each asset a target, a file and a bin; a
`bin` table of names to strings. Beyond the format: the file is what
--write makes (the version from .ci/release-version, the archive names
release.yml gives its binaries), and the check refuses broken entries (so a
check that passes means something). Needs PyYAML (.ci/tools installs it).
"""

import argparse
import copy
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
ENTRY = HERE / "packages" / "tandem" / "package.yaml"

# Mason's platform name → the release's target name (release.yml's matrix `vsce`).
TARGETS = {
    "linux_x64": "linux-x64",
    "linux_arm64": "linux-arm64",
    "darwin_x64": "darwin-x64",
    "darwin_arm64": "darwin-arm64",
    "win_x64": "win32-x64",
}

# What Mason's registry format allows (its package schema's lists).
KEYS = {"name", "description", "homepage", "licenses", "languages", "categories", "deprecation",
        "source", "schemas", "bin", "share", "opt", "neovim", "ci_skip"}
REQUIRED = {"name", "description", "homepage", "licenses", "languages", "categories", "source"}
CATEGORIES = {"Compiler", "DAP", "Formatter", "LSP", "Linter", "Runtime"}
PLATFORMS = {"unix", "darwin", "darwin_arm64", "darwin_x64", "linux", "linux_arm", "linux_arm64",
             "linux_arm64_gnu", "linux_arm64_musl", "linux_arm64_openbsd", "linux_arm_gnu",
             "linux_armv6_gnu", "linux_armv6l", "linux_armv7_gnu", "linux_armv7l", "linux_x64",
             "linux_x64_gnu", "linux_x64_musl", "linux_x64_openbsd", "linux_x86", "linux_x86_gnu",
             "linux_x86_musl", "linux_x86_openbsd", "win", "win_arm", "win_arm64", "win_armv6l",
             "win_armv7l", "win_x64", "win_x86"}
# The SPDX ids this entry may name (Tandem's own licence is MIT OR Apache-2.0).
LICENSES = {"MIT", "Apache-2.0"}
# The one template expression the entry uses: the release tag without its v.
VERSION_EXPR = '{{ version | strip_prefix "v" }}'


def version() -> str:
    out = subprocess.run([str(REPO / ".ci" / "release-version")], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"check.py: .ci/release-version failed: {out.stderr.strip()}")
    return out.stdout.strip()


def text(ver: str) -> str:
    """The entry's text, as --write writes it."""
    lines = [
        "---",
        "name: tandem",
        "description: |",
        "  A coding agent that lives inside the editor: a language server (tandem lsp),",
        "  an ACP agent (tandem acp) and a terminal CLI; edits you review and undo,",
        "  never over your unsaved typing.",
        "homepage: https://github.com/tandem-agent/tandem",
        "licenses:",
        "  - MIT",
        "  - Apache-2.0",
        "languages: []",
        "categories:",
        "  - LSP",
        "",
        "source:",
        f"  id: pkg:github/tandem-agent/tandem@v{ver}",
        "  asset:",
    ]
    for platform, target in TARGETS.items():
        exe = "tandem.exe" if target.startswith("win32") else "tandem"
        ext = "zip" if target.startswith("win32") else "tar.gz"
        lines += [
            f"    - target: {platform}",
            f"      file: tandem-{VERSION_EXPR}-{target}.{ext}",
            f"      bin: tandem-{VERSION_EXPR}-{target}/{exe}",
        ]
    lines += ["", "bin:", '  tandem: "{{source.asset.bin}}"', ""]
    return "\n".join(lines)


def render(value: str, tag: str) -> str:
    """A string with the entry's one expression filled in; any other
    `{{ … }}` is left for the caller to refuse."""
    return value.replace(VERSION_EXPR, tag[1:] if tag.startswith("v") else tag)


def problems(entry, ver: str) -> list:
    """What is wrong with `entry` (a parsed package.yaml), by Mason's format
    and by what Tandem's release makes."""
    if not isinstance(entry, dict):
        return ["the file is not a mapping"]
    found = []
    found += [f"unknown key {k!r}" for k in sorted(set(entry) - KEYS)]
    found += [f"missing key {k!r}" for k in sorted(REQUIRED - set(entry))]
    if entry.get("name") != ENTRY.parent.name:
        found.append(f"name {entry.get('name')!r} is not the folder's name {ENTRY.parent.name!r}")
    if not isinstance(entry.get("description"), str) or not entry.get("description", "").strip():
        found.append("description is not a non-empty string")
    if not re.fullmatch(r"https?://\S+", str(entry.get("homepage", ""))):
        found.append(f"homepage {entry.get('homepage')!r} is not an http(s) URL")
    licenses = entry.get("licenses")
    if not isinstance(licenses, list) or not licenses or not set(licenses) <= LICENSES:
        found.append(f"licenses {licenses!r} are not a non-empty list of {sorted(LICENSES)}")
    if not isinstance(entry.get("languages"), list) or not all(isinstance(x, str) for x in entry.get("languages", [])):
        found.append("languages is not a list of strings")
    categories = entry.get("categories")
    if not isinstance(categories, list) or not set(categories) <= CATEGORIES:
        found.append(f"categories {categories!r} are not from {sorted(CATEGORIES)}")
    source = entry.get("source")
    if not isinstance(source, dict):
        return found + ["source is not a mapping"]
    match = re.fullmatch(r"pkg:github/([^/@]+)/([^/@]+)@(\S+)", str(source.get("id", "")))
    if not match:
        return found + [f"source id {source.get('id')!r} is not pkg:github/OWNER/REPO@VERSION"]
    if match.group(1, 2) != ("tandem-agent", "tandem") or match.group(3) != f"v{ver}":
        found.append(f"source id {source['id']!r} is not the release v{ver} of tandem-agent/tandem")
    assets = source.get("asset")
    if not isinstance(assets, list) or not assets:
        return found + ["source.asset is not a list"]
    seen = {}
    for index, asset in enumerate(assets):
        if not isinstance(asset, dict) or not {"target", "file", "bin"} <= set(asset):
            found.append(f"asset {index} lacks target, file or bin")
            continue
        if asset["target"] not in PLATFORMS:
            found.append(f"asset {index}: target {asset['target']!r} is not one of Mason's platforms")
            continue
        for key in ("file", "bin"):
            rendered = render(str(asset[key]), match.group(3))
            if "{{" in rendered:
                found.append(f"asset {index}: {key} {asset[key]!r} has an expression the check does not know")
            asset = {**asset, key: rendered}
        seen[asset["target"]] = asset
    for platform, target in TARGETS.items():
        exe = "tandem.exe" if target.startswith("win32") else "tandem"
        archive = f"tandem-{ver}-{target}.{'zip' if target.startswith('win32') else 'tar.gz'}"
        asset = seen.get(platform)
        if asset is None:
            found.append(f"no asset for {platform}, which the release builds ({target})")
        elif asset["file"] != archive or asset["bin"] != f"tandem-{ver}-{target}/{exe}":
            found.append(f"asset {platform} is {asset['file']} → {asset['bin']}, not the release's {archive} → tandem-{ver}-{target}/{exe}")
    for platform in sorted(set(seen) - set(TARGETS)):
        found.append(f"asset {platform}: the release builds nothing for it")
    bins = entry.get("bin")
    if not isinstance(bins, dict) or not all(isinstance(k, str) and re.fullmatch(r"[a-zA-Z0-9_\-.]+", k) and isinstance(v, str) for k, v in bins.items()):
        found.append("bin is not a table of names to strings")
    elif bins != {"tandem": "{{source.asset.bin}}"}:
        found.append(f"bin {bins!r} does not link tandem to the asset's binary")
    return found


def broken_entries(good: dict):
    """Entries the check must refuse, each with what is wrong."""
    def changed(what, change):
        bad = copy.deepcopy(good)
        change(bad)
        return what, bad

    yield changed("an unknown key", lambda e: e.update({"version": "1"}))
    yield changed("no source", lambda e: e.pop("source"))
    yield changed("an unknown platform", lambda e: e["source"]["asset"][0].update({"target": "plan9_x64"}))
    yield changed("a category Mason does not have", lambda e: e.update({"categories": ["Agent"]}))
    yield changed("a source id that is not a purl", lambda e: e["source"].update({"id": "github.com/tandem-agent/tandem"}))
    yield changed("another version", lambda e: e["source"].update({"id": "pkg:github/tandem-agent/tandem@v0.0.1"}))
    yield changed("an archive the release does not make", lambda e: e["source"]["asset"][0].update({"file": "tandem-linux.tar.gz"}))
    yield changed("a missing platform", lambda e: e["source"]["asset"].pop())
    yield changed("a homepage that is no URL", lambda e: e.update({"homepage": "tandem"}))
    yield changed("a bin that is not a string", lambda e: e.update({"bin": {"tandem": 1}}))


def check() -> int:
    import yaml

    ver = version()
    failures = []
    try:
        found_text = ENTRY.read_text()
        entry = yaml.safe_load(found_text)
    except (OSError, yaml.YAMLError) as error:
        print(f"check.py: {ENTRY}: {error}", file=sys.stderr)
        return 1
    if found_text != text(ver):
        failures.append(f"{ENTRY.relative_to(REPO)} is not what `check.py --write` makes for {ver}: run it")
    failures += problems(entry, ver)
    good = yaml.safe_load(text(ver))
    for what, bad in broken_entries(good):
        if not problems(bad, ver):
            failures.append(f"the check accepts {what}: it checks nothing")
    workflow = (REPO / ".github" / "workflows" / "release.yml").read_text()
    if 'name="tandem-$VERSION-${{ matrix.vsce }}"' not in workflow:
        failures.append("release.yml no longer names its archives tandem-$VERSION-<target>: the entry's files would be wrong")
    for target in TARGETS.values():
        if f"vsce: {target}," not in workflow:
            failures.append(f"release.yml builds no {target}, which the entry offers")
    for failure in failures:
        print(f"check.py: {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"check.py: packages/tandem/package.yaml ({ver}, {len(TARGETS)} platforms) is a Mason package entry for the release's archives")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write packages/tandem/package.yaml")
    args = parser.parse_args()
    if args.write:
        ENTRY.write_text(text(version()))
        print(f"check.py: wrote {ENTRY}")
        return 0
    return check()


if __name__ == "__main__":
    sys.exit(main())
