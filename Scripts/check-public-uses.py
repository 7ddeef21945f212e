#!/usr/bin/env python3
"""Lists the public declarations of our library modules that nothing outside their module needs.

A public declaration is API that the project promises to keep (see the Stability article). It earns that when it has
a use outside its module: another of our library products or the `trust` command uses it, the `Examples/` or
`Benchmarks/` packages (which build against this one as a user's package would) use it, a DocC article links it, or
the language needs it public because something that is needed is:

- the type it is a member of, the types its declaration names (parameters, results, generic constraints);
- a needed type's enum cases, and its members that witness a public protocol's requirement (`description`, `==`,
  `hash(into:)`, `init(from:)`…, or a requirement of one of our protocols that is needed);
- a needed protocol's requirements and their default implementations.

Everything else is listed, with its place: make it `package` (our other modules and the tests still see it) or
internal. This package's tests, fuzz targets and the developer harnesses (`trust-dev`, `trust-conformance`) are not users: they see
`package` declarations. An entry of Scripts/public-api-allow-list.txt keeps a declaration public without a use; each
entry needs a reason after `#`.

Inputs: the symbol graphs of the modules in the debug build (`swift symbolgraph-extract`, public level) and the index
stores of the builds that compiled their users (the main package's, and the nested packages' when they were built
into the same folder, as `.ci/run` does; more with --store).

Declarations recorded in Scripts/public-api-pending.txt (what was public without a use when this check came in) are
counted, not listed: that list may only shrink.

Usage: Scripts/check-public-uses.py [--package-path .] [--build-path .build] [--store PATH]... [--summary] [--write-pending]
Exit status: 0 nothing new listed, 1 a declaration listed (or a stale allow-list or pending entry), 2 the check could
not run.
"""

import argparse
import fnmatch
import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import indexstore

HERE = os.path.dirname(os.path.realpath(__file__))
# Modules whose uses do not count: they are ours and see `package` declarations.
NOT_USERS = {"TrustDev", "TrustConformance"}
ALLOW_LIST = os.path.join(HERE, "public-api-allow-list.txt")
# Declarations still public without a use, recorded when this check came in, to be made `package` or given a use
# (an example, an article): the list may only shrink. A declaration on it that now has a use, or is no longer public,
# must leave it (the check says so), and one that is not on it fails the check.
PENDING = os.path.join(HERE, "public-api-pending.txt")
TOOLCHAIN_MODULES = ["Swift", "_Concurrency", "Foundation", "FoundationEssentials", "Dispatch", "Synchronization"]


def fail(message):
    print(f"check-public-uses: {message}", file=sys.stderr)
    sys.exit(2)


def availability_script():
    spec = importlib.util.spec_from_file_location("availability", os.path.join(HERE, "check-apple-availability.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def library_modules(package):
    dump = subprocess.run(["swift", "package", "--package-path", package, "dump-package"], capture_output=True, text=True)
    if dump.returncode != 0:
        fail("swift package dump-package failed:\n" + dump.stderr)
    modules = []
    for product in json.loads(dump.stdout)["products"]:
        if "library" in product["type"]:
            modules += [target for target in product["targets"] if target not in modules]
    return modules


def symbol_graphs(modules, modules_dir, flags):
    """{module: (symbols by USR, relationships)} for each module with a .swiftmodule in modules_dir."""
    triple = json.loads(subprocess.run(["swiftc", "-print-target-info"], capture_output=True, text=True).stdout)["target"]["triple"]
    present = [m for m in modules if os.path.exists(os.path.join(modules_dir, m + ".swiftmodule"))]
    graphs = {}
    with tempfile.TemporaryDirectory() as output:
        def extract(module):
            folder = os.path.join(output, module)
            os.makedirs(folder)
            run = subprocess.run(["swift", "symbolgraph-extract", "-module-name", module, "-target", triple, "-I", modules_dir,
                                  "-output-dir", folder, "-minimum-access-level", "public", "-skip-synthesized-members"] + flags,
                                 capture_output=True, text=True)
            if run.returncode != 0 or not os.listdir(folder):
                return module, None, (run.stderr.strip().split("\n") or [""])[0]
            symbols, relationships = {}, []
            for name in sorted(os.listdir(folder)):
                with open(os.path.join(folder, name)) as file:
                    graph = json.load(file)
                for symbol in graph.get("symbols", []):
                    symbols[symbol["identifier"]["precise"]] = symbol
                relationships += graph.get("relationships", [])
            return module, (symbols, relationships), None
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for module, graph, failure in pool.map(extract, present):
                if graph is None:
                    fail(f"cannot read the declarations of {module}: {failure}")
                graphs[module] = graph
    return graphs, [m for m in modules if m not in present]


def external_requirements(modules_dir, own, flags):
    """{protocol USR: requirement names} for the protocols of the toolchain's and the dependencies' modules: a member
    of ours with such a name, in a type that adopts the protocol, is a witness."""
    triple = json.loads(subprocess.run(["swiftc", "-print-target-info"], capture_output=True, text=True).stdout)["target"]["triple"]
    dependencies = sorted(name[:-len(".swiftmodule")] for name in os.listdir(modules_dir)
                          if name.endswith(".swiftmodule") and name[:-len(".swiftmodule")] not in own)
    table = {}
    with tempfile.TemporaryDirectory() as output:
        def extract(module):
            folder = os.path.join(output, module)
            os.makedirs(folder)
            subprocess.run(["swift", "symbolgraph-extract", "-module-name", module, "-target", triple, "-I", modules_dir,
                            "-output-dir", folder, "-minimum-access-level", "public", "-skip-synthesized-members"] + flags,
                           capture_output=True, text=True)
            found = {}
            for name in os.listdir(folder):
                with open(os.path.join(folder, name)) as file:
                    graph = json.load(file)
                titles = {s["identifier"]["precise"]: s["names"]["title"] for s in graph.get("symbols", [])}
                for relation in graph.get("relationships", []):
                    if relation["kind"] in ("requirementOf", "optionalRequirementOf") and relation["source"] in titles:
                        found.setdefault(relation["target"], set()).add(titles[relation["source"]])
            return found
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for found in pool.map(extract, TOOLCHAIN_MODULES + dependencies):
                for protocol, names in found.items():
                    table.setdefault(protocol, set()).update(names)
    return table


def docc_links(package):
    """The symbol paths that DocC articles link (``Type/member`` with module prefixes and disambiguations removed)."""
    links = set()
    for path in glob.glob(os.path.join(package, "Sources", "*", "*.docc", "**", "*.md"), recursive=True):
        with open(path, encoding="utf-8") as file:
            for link in re.findall(r"``([^`]+)``", file.read()):
                links.add(normalized_link(link))
    return links


def normalized_link(link):
    parts = [re.sub(r"-[0-9a-z.]+$", "", part) if "(" not in part or part.endswith(")") is False else part
             for part in link.split("/")]
    return "/".join(part for part in parts if part)


def referenced_types(symbol):
    used = {f.get("preciseIdentifier") for f in symbol.get("declarationFragments", []) if f.get("kind") == "typeIdentifier"}
    generics = symbol.get("swiftGenerics", {})
    for constraint in generics.get("constraints", []):
        used.add(constraint.get("rhsPrecise"))
    return {usr for usr in used if usr}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package-path", default=".")
    parser.add_argument("--build-path", default=".build")
    parser.add_argument("--store", action="append", default=[], help="another index store whose files are users")
    parser.add_argument("--summary", action="store_true", help="counts per module only")
    parser.add_argument("--not-user", action="append", default=[], metavar="MODULE",
                        help="do not count MODULE's uses (to see what only it uses, e.g. the `trust` command)")
    parser.add_argument("--write-pending", action="store_true", help=f"record what is listed now in {os.path.basename(PENDING)}")
    arguments = parser.parse_args()

    package = os.path.realpath(arguments.package_path)
    build = os.path.join(package, arguments.build_path)
    debug = os.path.realpath(os.path.join(build, "debug"))
    modules_dir = os.path.join(debug, "Modules")
    stores = [os.path.join(debug, "index", "store")] + arguments.store
    if not os.path.isdir(stores[0]) or not os.path.isdir(modules_dir):
        fail(f"no debug build with an index store under {build} (run `swift build` first)")

    modules = library_modules(package)
    flags = availability_script().clang_module_flags(debug, os.path.join(build, "checkouts"))
    graphs, absent = symbol_graphs(modules, modules_dir, flags)

    # Our public declarations, written in our sources (not synthesized, not implicit).
    sources = os.path.join(package, "Sources") + os.sep
    declared = {}  # USR -> (module, symbol)
    for module, (symbols, _) in graphs.items():
        for usr, symbol in symbols.items():
            uri = symbol.get("location", {}).get("uri", "")
            if uri.startswith("file://") and uri[len("file://"):].startswith(sources) and usr not in declared:
                declared[usr] = (module, symbol)
    parent, requirements, defaults, conforms = {}, {}, {}, {}
    for _, (_, relationships) in graphs.items():
        for relation in relationships:
            kind, source, target = relation["kind"], relation["source"], relation["target"]
            if kind == "memberOf":
                parent.setdefault(source, target)
            elif kind in ("requirementOf", "optionalRequirementOf"):
                requirements.setdefault(target, set()).add(source)
                parent.setdefault(source, target)
            elif kind == "defaultImplementationOf":
                defaults.setdefault(target, set()).add(source)
            elif kind == "conformsTo":
                conforms.setdefault(source, set()).add(target)
    children = {}
    for child, owner in parent.items():
        children.setdefault(owner, set()).add(child)

    # Uses: references from files of modules other than the declaring one, by users only.
    used, witnesses = set(), {}
    user_roots = [os.path.join(package, folder) + os.sep for folder in ("Sources", "Examples", "Benchmarks")]
    # The package's own tests and fuzz targets see `package` declarations; the nested packages' tests are users' tests.
    test_roots = [os.path.join(package, folder) + os.sep for folder in ("Tests", "Fuzz")]
    records = 0
    for store in stores:
        if not os.path.isdir(store):
            fail(f"no index store at {store}")
        try:
            found, count = indexstore.occurrences(
                store, lambda path: any(path.startswith(r) for r in user_roots) and not any(path.startswith(r) for r in test_roots),
                with_overrides=True)
        except indexstore.IndexStoreError as error:
            fail(str(error))
        records += count
        for occurrence in found:
            if occurrence.roles & indexstore.ROLE_DEFINITION and occurrence.overrides:
                witnesses.setdefault(occurrence.usr, set()).update(occurrence.overrides)
            if not occurrence.roles & indexstore.ROLE_REFERENCE or occurrence.usr not in declared:
                continue
            if occurrence.module in NOT_USERS or occurrence.module in arguments.not_user or occurrence.module == declared[occurrence.usr][0]:
                continue
            used.add(occurrence.usr)
    if not records:
        fail("the index stores hold no record of our sources (run `swift build` first)")
    # The index records a witness only where the conformance is declared with it; a conformance declared in another
    # extension leaves the witness unmarked. So a member is also a witness when its type conforms to a protocol with
    # a requirement of its name: one of ours, or one of the toolchain's or a dependency's (read from their graphs).
    own = set(modules) | {m for m in os.listdir(os.path.join(package, "Sources"))}
    requirement_names = external_requirements(modules_dir, own, flags)
    for protocol, members in requirements.items():
        for member in members:
            if member in declared:
                requirement_names.setdefault(protocol, set()).add(declared[member][1]["names"]["title"])
    for usr, (_, symbol) in declared.items():
        owner = parent.get(usr)
        if owner is None or usr in witnesses:
            continue
        name = symbol["names"]["title"]
        protocols = conforms.get(owner, set())
        witnessed = {p for p in protocols if name in requirement_names.get(p, ())}
        if witnessed:
            witnesses[usr] = witnessed

    allowed, stale = {}, []
    if os.path.exists(ALLOW_LIST):
        with open(ALLOW_LIST, encoding="utf-8") as file:
            for number, line in enumerate(file, 1):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                entry, _, reason = text.partition("#")
                if not reason.strip():
                    fail(f"{ALLOW_LIST}:{number}: an entry needs a reason after `#`")
                allowed[entry.strip()] = number

    def title(usr):
        module, symbol = declared[usr]
        return module + "." + "/".join(symbol["pathComponents"])

    links = docc_links(package)
    needed = set(used)
    for usr, (module, symbol) in declared.items():
        path = "/".join(symbol["pathComponents"])
        if path in links or re.sub(r"\(.*\)$", "", path) in links or any(fnmatch.fnmatchcase(title(usr), e) for e in allowed):
            needed.add(usr)
    known_titles = {title(usr) for usr in declared}
    stale = [(entry, number) for entry, number in allowed.items() if not any(fnmatch.fnmatchcase(t, entry) for t in known_titles)]

    # The closure: what the language needs public because something needed is.
    work = list(needed)
    def need(usr):
        if usr in declared and usr not in needed:
            needed.add(usr)
            work.append(usr)
    while work:
        usr = work.pop()
        module, symbol = declared[usr]
        if usr in parent:
            need(parent[usr])
        for type_usr in referenced_types(symbol):
            need(type_usr)
        kind = symbol["kind"]["identifier"]
        for requirement in requirements.get(usr, ()):
            need(requirement)
            for implementation in defaults.get(requirement, ()):
                need(implementation)
        for child in children.get(usr, ()):
            child_symbol = declared.get(child, (None, {"kind": {"identifier": ""}}))[1]
            if child_symbol["kind"]["identifier"] == "swift.enum.case":
                need(child)
            elif child in witnesses and any(w not in declared or w in needed for w in witnesses[child]):
                need(child)
        # A needed requirement makes its witnesses in needed types needed.
        for witness, overridden in witnesses.items():
            if usr in overridden and parent.get(witness) in needed:
                need(witness)

    unneeded = sorted((usr for usr in declared if usr not in needed),
                      key=lambda usr: (declared[usr][0], declared[usr][1]["location"]["uri"], declared[usr][1]["location"]["position"]["line"]))
    # A trait-gated module compiled with its trait off is empty: it is not judged either.
    checked = {module for module, _ in declared.values()}
    pending = {}
    if os.path.exists(PENDING) and not arguments.write_pending:
        with open(PENDING, encoding="utf-8") as file:
            for number, line in enumerate(file, 1):
                text = line.strip()
                if text and not text.startswith("#"):
                    pending[text] = number
    listed_titles = {title(usr) for usr in unneeded}
    if arguments.write_pending:
        with open(PENDING, "w", encoding="utf-8") as file:
            file.write("# Public declarations without a use outside their module when Scripts/check-public-uses.py came in: each is\n"
                       "# to become `package` or to get a use (an example, a DocC article). The list only shrinks: the check fails on\n"
                       "# a declaration not listed here, and on an entry that now has a use or is no longer public.\n")
            for entry in sorted(listed_titles):
                file.write(entry + "\n")
        print(f"check-public-uses: {len(listed_titles)} declarations recorded in {os.path.relpath(PENDING, package)}")
        return
    new = [usr for usr in unneeded if title(usr) not in pending]
    # An entry of a module not built here (a trait that is off) is not judged.
    resolved = [(entry, number) for entry, number in pending.items()
                if entry not in listed_titles and entry.split(".", 1)[0] in checked]
    counts = {}
    for usr, (module, _) in declared.items():
        total, listed = counts.get(module, (0, 0))
        counts[module] = (total + 1, listed + (usr not in needed))
    if not arguments.summary:
        for usr in new:
            module, symbol = declared[usr]
            location = symbol["location"]
            path = os.path.relpath(location["uri"][len("file://"):], package)
            print(f"{path}:{location['position']['line'] + 1}: {symbol['kind']['displayName'].lower()} "
                  f"{title(usr)} has no use outside {module}")
    for entry, number in stale:
        print(f"{os.path.relpath(ALLOW_LIST, package)}:{number}: {entry} is not a public declaration")
    for entry, number in resolved:
        print(f"{os.path.relpath(PENDING, package)}:{number}: {entry} now has a use or is no longer public: remove the entry")
    for module in modules:
        if module in counts:
            total, listed = counts[module]
            print(f"  {module}: {total} public declarations, {listed} without a use outside the module")
    if absent:
        print("  not built here (traits off), so not checked: " + ", ".join(absent))
    print(f"check-public-uses: {len(declared)} public declarations, {len(unneeded)} without a use outside their module "
          f"({len(unneeded) - len(new)} of them pending in {os.path.basename(PENDING)}, {len(new)} new); "
          f"{len(stale)} stale allow-list entries, {len(resolved)} pending entries to remove")
    sys.exit(1 if new or stale or resolved else 0)


if __name__ == "__main__":
    main()
