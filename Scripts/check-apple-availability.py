#!/usr/bin/env python3
"""Fails when our sources use an API introduced after the package's declared Apple minimums.

Nothing in this repository can be compiled for Apple platforms here, and the Swift compiler checks
`@available` only for the platform it compiles for. The facts it would use are on this machine all the same:

- what each declaration requires: the `@available(macOS 15.0, iOS 18.0, …)` attributes of the Swift
  standard library, Foundation and every dependency, read from their modules by
  `swift symbolgraph-extract` (each symbol's `availability`, keyed by its USR);
- what our code refers to: the index store that a debug `swift build` writes (`.build/debug/index/store`),
  read with the toolchain's libIndexStore — every reference from a file under `Sources/`, with its USR and
  its line.

A reference is a finding when its declaration was introduced on an Apple platform after the minimum that
Package.swift's `platforms:` declares for it, unless the source text guards it for that version: it is inside an
`if #available(…)`/`while #available(…)` body, inside a declaration whose own attributes say `@available(…)`, or
after a `guard #available(…) else { … }` in an enclosing scope (the guard's `else` body is not guarded). A module
our sources import whose declarations cannot be read fails the check rather than passing it unseen.

Usage: Scripts/check-apple-availability.py [--package-path .] [--build-path .build] [--sources Sources]
       Scripts/check-apple-availability.py --self-test   (compiles a fixture; exactly its unguarded calls must be found)
Exit status: 0 no finding, 1 findings (listed), 2 the check could not run (no index store, no toolchain).

The index store is read by Scripts/indexstore.py (see there why it is hand-written).
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import indexstore

# The Apple platforms whose minimums Package.swift declares, as `swift package dump-package` and the symbol graphs
# name them.
PLATFORM_DOMAINS = {"macos": "macOS", "ios": "iOS", "tvos": "tvOS", "watchos": "watchOS", "visionos": "visionOS",
                    "maccatalyst": "macCatalyst"}


def fail(message):
    print(f"check-apple-availability: {message}", file=sys.stderr)
    sys.exit(2)


def declared_minimums(package_dir):
    dump = subprocess.run(["swift", "package", "--package-path", package_dir, "dump-package"],
                          capture_output=True, text=True)
    if dump.returncode != 0:
        fail("swift package dump-package failed:\n" + dump.stderr)
    minimums = {}
    for platform in json.loads(dump.stdout).get("platforms", []):
        domain = PLATFORM_DOMAINS.get(platform["platformName"].lower())
        if domain:
            minimums[domain] = version_tuple(platform["version"])
    if not minimums:
        fail("Package.swift declares no Apple platform minimum: nothing to check against")
    return minimums


def version_tuple(text):
    parts = [int(p) for p in re.findall(r"\d+", str(text))][:3]
    return tuple(parts + [0] * (3 - len(parts)))


def graph_version(value):
    return (value.get("major", 0), value.get("minor", 0), value.get("patch", 0))


def references(store_path, sources_dir):
    """(USR, name, path, line, column) for every reference from a file under sources_dir."""
    sources_dir = os.path.realpath(sources_dir) + os.sep
    try:
        found, records = indexstore.occurrences(store_path, lambda path: path.startswith(sources_dir))
    except indexstore.IndexStoreError as error:
        fail(str(error))
    if not records:
        fail(f"the index store {store_path} has no record of a file under {sources_dir} (run `swift build` first)")
    # Implicit references are the compiler's own choices (`for await` calls `next(isolation:)` where the deployment
    # target has it, `next()` where not): not something the source asks for.
    unwanted = indexstore.ROLE_DEFINITION | indexstore.ROLE_DECLARATION | indexstore.ROLE_IMPLICIT
    return [(o.usr, o.name, o.path, o.line, o.column) for o in found if o.roles & indexstore.ROLE_REFERENCE and not o.roles & unwanted]


def clang_module_flags(build_dir, checkouts):
    """The C modules' maps and headers that SwiftPM hands the compiler: without them, a Swift module that imports
    one (NIOCore imports _AtomicsShims, swift-crypto CCryptoBoringSSL…) cannot be loaded to extract its graph."""
    flags = []
    for modulemap in sorted(glob.glob(os.path.join(build_dir, "*.build", "module.modulemap"))
                            + glob.glob(os.path.join(checkouts, "*", "Sources", "*", "include", "module.modulemap"))):
        flags += ["-Xcc", "-fmodule-map-file=" + os.path.realpath(modulemap)]
    for include in sorted(glob.glob(os.path.join(checkouts, "*", "Sources", "*", "include"))):
        flags += ["-Xcc", "-I" + os.path.realpath(include)]
    return flags


def availability_by_usr(modules_dir, own_modules, required, build_dir=None, checkouts=None):
    """USR -> {domain: introduced} for every public symbol of the toolchain's and the dependencies' modules.
    A module in `required` (one our sources import) whose graph cannot be extracted fails the check: its
    introductions would otherwise be missing, and the check would pass without having looked."""
    toolchain = ["Swift", "_Concurrency", "_StringProcessing", "Foundation", "FoundationEssentials",
                 "FoundationInternationalization", "FoundationNetworking", "Dispatch", "Synchronization", "Observation"]
    dependencies = sorted(name[:-len(".swiftmodule")] for name in os.listdir(modules_dir)
                          if name.endswith(".swiftmodule") and name[:-len(".swiftmodule")] not in own_modules)
    target = subprocess.run(["swiftc", "-print-target-info"], capture_output=True, text=True)
    triple = json.loads(target.stdout)["target"]["triple"]
    flags = clang_module_flags(build_dir, checkouts) if build_dir and checkouts else []
    table = {}
    defaults = {}  # requirement USR -> [availability of each default implementation]
    with tempfile.TemporaryDirectory() as output:
        def extract(module):
            folder = os.path.join(output, module)
            os.makedirs(folder)
            run = subprocess.run(["swift", "symbolgraph-extract", "-module-name", module, "-target", triple,
                                  "-I", modules_dir, "-output-dir", folder, "-minimum-access-level", "public"] + flags,
                                 capture_output=True, text=True)
            failure = None if run.returncode == 0 and os.listdir(folder) else (run.stderr.strip().split("\n") or [""])[0]
            return folder, module, failure
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(extract, toolchain + dependencies))
        failed = [(module, failure) for _, module, failure in results if failure and (module in required or module in toolchain)]
        if failed:
            fail("cannot read the declarations of " + ", ".join(module for module, _ in failed) + ":\n"
                 + "\n".join(f"  {module}: {failure}" for module, failure in failed))
        folders = [folder for folder, _, _ in results]
        for folder in folders:
            for name in os.listdir(folder):
                with open(os.path.join(folder, name)) as file:
                    graph = json.load(file)
                introductions = {}
                for symbol in graph.get("symbols", []):
                    introductions[symbol["identifier"]["precise"]] = {
                        entry["domain"]: graph_version(entry["introduced"])
                        for entry in symbol.get("availability", []) if "introduced" in entry}
                table.update({usr: introduced for usr, introduced in introductions.items() if introduced})
                for relationship in graph.get("relationships", []):
                    if relationship["kind"] == "defaultImplementationOf":
                        defaults.setdefault(relationship["target"], []).append(introductions.get(relationship["source"], {}))
    # A protocol requirement added later with a default implementation that is older (FixedWidthInteger's `&*`
    # became a requirement in Swift 6): compiled for an older system, the call binds to the default implementation.
    for requirement, implementations in defaults.items():
        if requirement in table:
            table[requirement] = {domain: min([version] + [impl.get(domain, (0, 0, 0)) for impl in implementations])
                                  for domain, version in table[requirement].items()}
    return table


AVAILABLE = re.compile(r"[#@]available\s*\(([^)]*)\)")
DECLARATION = re.compile(r"\b(func|init|deinit|subscript|var|let|struct|class|enum|extension|actor|protocol)\b")
GUARD_AVAILABLE = re.compile(r"\bguard\b[^{};]*#available\s*\(([^)]*)\)[^{};]*\belse\s*\{")


def guard_versions(text):
    """{domain: version} named by every `#available(…)`/`@available(…)` in text."""
    versions = {}
    for match in AVAILABLE.finditer(text):
        for domain, version in re.findall(r"([A-Za-z]+)\s+(\d+(?:\.\d+)*)", match.group(1)):
            versions[domain] = max(versions.get(domain, (0, 0, 0)), version_tuple(version))
    return versions


def merge(into, versions):
    for domain, version in versions.items():
        into[domain] = max(into.get(domain, (0, 0, 0)), version)


def matching_brace(source, opener):
    depth = 0
    for index in range(opener, len(source)):
        if source[index] == "{":
            depth += 1
        elif source[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return len(source)


def opener_guard(source, opener):
    """What the brace at `opener` guarantees: `if`/`while #available(…)` in its statement's header, or
    `@available(…)` among the attributes of the declaration it opens. A `guard #available(…) else {` brace opens
    the fallback, which is not guarded; an attribute of an earlier declaration does not count."""
    start = max(source.rfind("{", 0, opener), source.rfind("}", 0, opener), source.rfind(";", 0, opener)) + 1
    header = source[start:opener]
    versions = {}
    if re.search(r"\b(if|while)\b", header) and not re.search(r"\bguard\b", header):
        merge(versions, guard_versions(AVAILABLE.sub(lambda m: m.group(0) if m.group(0).startswith("#") else "", header)))
    lines = header.split("\n")
    declaration = max((index for index, line in enumerate(lines) if DECLARATION.search(line)), default=None)
    if declaration is not None:
        first = declaration
        while first > 0 and (lines[first - 1].strip().startswith("@") or not lines[first - 1].strip()):
            first -= 1
        owned = "\n".join(lines[first:])
        merge(versions, guard_versions(AVAILABLE.sub(lambda m: m.group(0) if m.group(0).startswith("@") else "", owned)))
    return versions


def enclosing_guards(source, offset):
    """The versions guaranteed at offset: each brace that encloses it (see opener_guard), and each
    `guard #available(…) else { … }` that ends before it in one of those scopes (comments and string literals are
    blanked first, so braces inside them do not count)."""
    openers = []
    for index in range(offset):
        if source[index] == "{":
            openers.append(index)
        elif source[index] == "}" and openers:
            openers.pop()
    versions = {}
    for opener in openers:
        merge(versions, opener_guard(source, opener))
    for scope_start in [0] + [opener + 1 for opener in openers]:
        for match in GUARD_AVAILABLE.finditer(source, scope_start, offset):
            depth = source.count("{", scope_start, match.start()) - source.count("}", scope_start, match.start())
            if depth == 0 and matching_brace(source, match.end() - 1) < offset:
                merge(versions, guard_versions(match.group(0)))
    return versions


def blank_comments_and_strings(text):
    """The text with comments and string literals replaced by spaces (newlines kept), offsets unchanged."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif text.startswith('"""', i):
            end = text.find('"""', i + 3)
            end = n if end < 0 else end + 3
        elif text[i] == '"':
            end = i + 1
            while end < n and text[end] not in '"\n':
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
        else:
            i += 1
            continue
        for j in range(i, end):
            if out[j] != "\n":
                out[j] = " "
        i = end
    return "".join(out)


def check(package, sources, store, modules, minimums, build_dir=None, checkouts=None):
    """The findings: (path, line, column, name, what it needs), and the references' count and files."""
    own = {name for name in os.listdir(sources) if os.path.isdir(os.path.join(sources, name))}
    own |= {name.replace("-", "_") for name in own}
    found = references(store, sources)
    imported = set()
    for folder, _, files in os.walk(sources):
        for name in files:
            if name.endswith(".swift"):
                with open(os.path.join(folder, name), encoding="utf-8") as file:
                    imported |= set(re.findall(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:\w+\s+)?(\w+)", file.read(), re.M))
    table = availability_by_usr(modules, own, imported - own, build_dir, checkouts)
    texts = {}
    findings = set()
    for usr, name, path, line, column in found:
        introduced = table.get(usr)
        if not introduced:
            continue
        too_new = {domain: version for domain, version in introduced.items()
                   if domain in minimums and version > minimums[domain]}
        if not too_new:
            continue
        if path not in texts:
            with open(path, encoding="utf-8") as file:
                raw = file.read()
            texts[path] = (blank_comments_and_strings(raw), [0] + [m.end() for m in re.finditer("\n", raw)])
        blanked, line_starts = texts[path]
        offset = line_starts[line - 1] + column - 1 if line - 1 < len(line_starts) else len(blanked)
        guarded = enclosing_guards(blanked, offset)
        missing = {domain: version for domain, version in too_new.items() if guarded.get(domain, (0, 0, 0)) < version}
        if missing:
            needs = ", ".join(f"{domain} {'.'.join(map(str, version[:2]))}" for domain, version in sorted(missing.items()))
            findings.add((os.path.relpath(path, package), line, column, name, needs))
    return sorted(findings), len(found), len({path for _, _, path, _, _ in found}), len(table)


SELF_TEST_SOURCE = """
func unguarded(_ bytes: [UInt8]) -> String? {
    String(validating: bytes, as: UTF8.self)  // EXPECTED FINDING
}
func guarded(_ bytes: [UInt8]) -> String? {
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
        return String(validating: bytes, as: UTF8.self)
    }
    return nil
}
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
func marked(_ bytes: [UInt8]) -> String? { String(validating: bytes, as: UTF8.self) }
func guardedTooLow(_ bytes: [UInt8]) -> String? {
    if #available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *) {
        return String(validating: bytes, as: UTF8.self)  // EXPECTED FINDING
    }
    return nil
}
struct Holder {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    let marked = 1
    func notMarked(_ bytes: [UInt8]) -> String? {
        String(validating: bytes, as: UTF8.self)  // EXPECTED FINDING
    }
}
func earlyExit(_ bytes: [UInt8]) -> String? {
    guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else {
        return String(validating: bytes, as: UTF8.self)  // EXPECTED FINDING
    }
    return String(validating: bytes, as: UTF8.self)
}
func older(_ x: UInt64, _ stream: AsyncStream<Int>) async -> UInt64 {
    var total = x &* 8  // a Swift 6 requirement with an older default implementation: no finding
    for await value in stream { total &+= UInt64(value) }  // the compiler's next(isolation:): no finding
    return total
}
"""


def self_test():
    """Compiles a fixture with its own index store and checks that exactly the unguarded calls are found."""
    with tempfile.TemporaryDirectory() as folder:
        sources = os.path.join(folder, "Sources")
        os.makedirs(os.path.join(sources, "Fixture"))
        path = os.path.join(sources, "Fixture", "Fixture.swift")
        with open(path, "w") as file:
            file.write(SELF_TEST_SOURCE)
        store = os.path.join(folder, "store")
        compiled = subprocess.run(["swiftc", "-parse-as-library", "-emit-module", "-module-name", "Fixture",
                                   "-index-store-path", store, "-emit-module-path", os.path.join(folder, "Fixture.swiftmodule"),
                                   path], capture_output=True, text=True, cwd=folder)
        if compiled.returncode != 0:
            fail("the self-test fixture does not compile:\n" + compiled.stderr)
        modules = os.path.join(folder, "Modules")
        os.makedirs(modules)
        minimums = {"macOS": (13, 0, 0), "iOS": (16, 0, 0), "tvOS": (16, 0, 0), "watchOS": (9, 0, 0)}
        findings, _, _, _ = check(folder, sources, store, modules, minimums)
        expected = [number + 1 for number, line in enumerate(SELF_TEST_SOURCE.split("\n")) if "EXPECTED FINDING" in line]
        lines = [line for _, line, _, _, _ in findings]
        if lines != expected:
            print(f"check-apple-availability self-test: findings on lines {lines}, expected {expected}", file=sys.stderr)
            for finding in findings:
                print(f"  {finding}", file=sys.stderr)
            sys.exit(1)
        print(f"check-apple-availability self-test: the fixture's {len(expected)} unguarded calls found, nothing else")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package-path", default=".")
    parser.add_argument("--build-path", default=".build")
    parser.add_argument("--sources", default="Sources")
    parser.add_argument("--self-test", action="store_true", help="check the checker on a fixture it compiles")
    arguments = parser.parse_args()
    if arguments.self_test:
        self_test()
        return
    package = os.path.realpath(arguments.package_path)
    build = os.path.join(package, arguments.build_path)
    debug = os.path.realpath(os.path.join(build, "debug"))
    store = os.path.join(debug, "index", "store")
    modules = os.path.join(debug, "Modules")
    if not os.path.isdir(store) or not os.path.isdir(modules):
        fail(f"no debug build with an index store under {build} (run `swift build` first)")
    minimums = declared_minimums(package)
    findings, count, files, declarations = check(package, os.path.join(package, arguments.sources), store, modules, minimums, debug,
                                                 os.path.join(build, "checkouts"))
    declared = ", ".join(f"{domain} {'.'.join(map(str, version[:2]))}" for domain, version in sorted(minimums.items()))
    for path, line, column, name, needs in findings:
        print(f"{path}:{line}:{column}: `{name}` needs {needs}; Package.swift declares {declared}")
    print(f"check-apple-availability: {count} references in {files} files under {arguments.sources}/ checked against "
          f"{declarations} declarations with an Apple introduction; {len(findings)} finding(s)")
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
