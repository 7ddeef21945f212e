#!/usr/bin/env python3
"""Fails when the public API of a library module changes incompatibly from the recorded baseline.

The baseline (Scripts/api-baseline.txt) lists every public declaration of the library modules as the symbol graph
gives it — the module-qualified path and the declaration's text — taken at the commit its header names (the release
the API promise starts from). A declaration of the baseline that is gone is a removal; one whose path is still there
with another declaration (another type, parameter, label, `throws`, an added requirement…) is a changed signature.
Both break clients and fail the check. Additions pass: they are what minor versions bring. An intended break (in a major
version only, since 1.0.0) is recorded with --write-baseline, with its migration note in the changelog.

The same inputs as check-public-uses.py: the debug build's modules (`swift symbolgraph-extract`, public level). A
module built without its trait (TrustVapor, TrustGRPC outside the examples' build) is empty and not judged.

Usage: Scripts/check-api-compatibility.py [--package-path .] [--build-path .build] [--write-baseline COMMIT]
       Scripts/check-api-compatibility.py --self-test   (a fixture compiled twice: its removal and change are found)
Exit status: 0 compatible, 1 a break (listed), 2 the check could not run.

swift package diagnose-api-breaking-changes does the same from a baseline commit, but builds that commit from
nothing each time (minutes on two processors, inside a CI of 45); this reads the graphs the build already has.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.realpath(__file__))
BASELINE = os.path.join(HERE, "api-baseline.txt")


def fail(message):
    print(f"check-api-compatibility: {message}", file=sys.stderr)
    sys.exit(2)


def public_uses():
    spec = importlib.util.spec_from_file_location("public_uses", os.path.join(HERE, "check-public-uses.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def declarations(graphs, sources):
    """{module: {(path, declaration)}} of the public declarations written under `sources`."""
    found = {}
    for module, (symbols, _) in graphs.items():
        entries = set()
        for usr, symbol in symbols.items():
            uri = symbol.get("location", {}).get("uri", "")
            if not (uri.startswith("file://") and uri[len("file://"):].startswith(sources)):
                continue
            text = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
            entries.add((module + "." + "/".join(symbol["pathComponents"]), " ".join(text.split())))
        if entries:
            found[module] = entries
    return found


def compare(baseline, current):
    """The breaks: (path, old declaration, new declarations) — no new declaration for a removal."""
    breaks = []
    by_path = {}
    for module_entries in current.values():
        for path, declaration in module_entries:
            by_path.setdefault(path, set()).add(declaration)
    for module, entries in baseline.items():
        if module not in current:
            continue
        for path, declaration in sorted(entries - current[module]):
            breaks.append((path, declaration, sorted(by_path.get(path, set()))))
    return breaks


def read_baseline(path):
    entries, commit = {}, None
    with open(path, encoding="utf-8") as file:
        for line in file:
            line = line.rstrip("\n")
            if line.startswith("# commit:"):
                commit = line.split(":", 1)[1].strip()
            if not line or line.startswith("#"):
                continue
            key, _, declaration = line.partition("\t")
            entries.setdefault(key.split(".", 1)[0], set()).add((key, declaration))
    return entries, commit


def write_baseline(path, current, commit):
    with open(path, "w", encoding="utf-8") as file:
        file.write("# The public API that Scripts/check-api-compatibility.py holds the library modules to: each line is a\n"
                   "# declaration's module-qualified path, a tab, and its declaration. Written by --write-baseline.\n")
        file.write(f"# commit: {commit}\n")
        for module in sorted(current):
            for key, declaration in sorted(current[module]):
                file.write(f"{key}\t{declaration}\n")


def report(breaks):
    for path, old, new in breaks:
        if new:
            print(f"changed: {path}\n    was: {old}\n    now: " + "\n         ".join(new))
        else:
            print(f"removed: {path}\n    was: {old}")


FIXTURE_BEFORE = """
public struct Gauge {
    public var value: Int
    public init(value: Int) { self.value = value }
    public func scaled(by factor: Int) -> Int { value * factor }
    public func reset() {}
}
"""
FIXTURE_AFTER = """
public struct Gauge {
    public var value: Int
    public init(value: Int) { self.value = value }
    public func scaled(by factor: Double) -> Int { value * Int(factor) }
    public func describe() -> String { "\\(value)" }
}
"""


def self_test():
    """A fixture module compiled before and after a change that removes `reset()`, changes `scaled(by:)`'s parameter
    type and adds `describe()`: exactly the first two are breaks."""
    triple = json.loads(subprocess.run(["swiftc", "-print-target-info"], capture_output=True, text=True).stdout)["target"]["triple"]
    graphs = []
    with tempfile.TemporaryDirectory() as folder:
        for index, source in enumerate([FIXTURE_BEFORE, FIXTURE_AFTER]):
            work = os.path.join(folder, str(index))
            sources = os.path.join(work, "Sources") + os.sep
            os.makedirs(sources)
            path = os.path.join(sources, "Fixture.swift")
            with open(path, "w") as file:
                file.write(source)
            compiled = subprocess.run(["swiftc", "-parse-as-library", "-emit-module", "-module-name", "Fixture", "-emit-module-path",
                                       os.path.join(work, "Fixture.swiftmodule"), path], capture_output=True, text=True, cwd=work)
            if compiled.returncode != 0:
                fail("the self-test fixture does not compile:\n" + compiled.stderr)
            output = os.path.join(work, "graph")
            os.makedirs(output)
            subprocess.run(["swift", "symbolgraph-extract", "-module-name", "Fixture", "-target", triple, "-I", work, "-output-dir", output,
                            "-minimum-access-level", "public", "-skip-synthesized-members"], capture_output=True, text=True, check=True)
            with open(os.path.join(output, "Fixture.symbols.json")) as file:
                graph = json.load(file)
            symbols = {symbol["identifier"]["precise"]: symbol for symbol in graph["symbols"]}
            graphs.append(declarations({"Fixture": (symbols, [])}, os.path.realpath(sources)))
    breaks = compare(graphs[0], graphs[1])
    found = [(path, bool(new)) for path, _, new in breaks]
    expected = [("Fixture.Gauge/reset()", False), ("Fixture.Gauge/scaled(by:)", True)]
    if sorted(found) != sorted(expected):
        print(f"check-api-compatibility self-test: found {found}, expected {expected}", file=sys.stderr)
        sys.exit(1)
    print("check-api-compatibility self-test: the fixture's removed member and changed signature found, its addition passes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package-path", default=".")
    parser.add_argument("--build-path", default=".build")
    parser.add_argument("--write-baseline", metavar="COMMIT", help="record the current API as the baseline, taken at COMMIT")
    parser.add_argument("--self-test", action="store_true")
    arguments = parser.parse_args()
    if arguments.self_test:
        self_test()
        return
    package = os.path.realpath(arguments.package_path)
    debug = os.path.realpath(os.path.join(package, arguments.build_path, "debug"))
    modules_dir = os.path.join(debug, "Modules")
    if not os.path.isdir(modules_dir):
        fail(f"no debug build under {arguments.build_path} (run `swift build` first)")
    uses = public_uses()
    modules = uses.library_modules(package)
    flags = uses.availability_script().clang_module_flags(debug, os.path.join(package, arguments.build_path, "checkouts"))
    graphs, _ = uses.symbol_graphs(modules, modules_dir, flags)
    current = declarations(graphs, os.path.join(package, "Sources") + os.sep)
    if arguments.write_baseline:
        if os.path.exists(BASELINE):
            # Modules not built here keep their recorded entries.
            recorded, _ = read_baseline(BASELINE)
            for module, entries in recorded.items():
                current.setdefault(module, entries)
        write_baseline(BASELINE, current, arguments.write_baseline)
        print(f"check-api-compatibility: {sum(len(e) for e in current.values())} declarations recorded in {os.path.relpath(BASELINE, package)}")
        return
    if not os.path.exists(BASELINE):
        fail(f"no baseline at {os.path.relpath(BASELINE, package)} (write one with --write-baseline COMMIT)")
    baseline, commit = read_baseline(BASELINE)
    breaks = compare(baseline, current)
    report(breaks)
    judged = sorted(set(baseline) & set(current))
    skipped = sorted(set(baseline) - set(current))
    print(f"check-api-compatibility: {sum(len(baseline[m]) for m in judged)} declarations of the baseline (commit {commit}) in "
          f"{len(judged)} modules; {len(breaks)} incompatible change(s)" + (f"; not built here: {', '.join(skipped)}" if skipped else ""))
    sys.exit(1 if breaks else 0)


if __name__ == "__main__":
    main()
