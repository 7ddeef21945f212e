#!/usr/bin/env python3
"""Symbolizes the call sites that trust-http-bench prints (BENCH_HEAP_SITES, BENCH_ALLOC_SITES).

Each frame of a site is printed as `SYMBOL MODULE+0xOFFSET` (SYMBOL `?` when the dynamic table has none, as for
the executable's own functions). This filter replaces each frame with its function, file and line from
llvm-symbolizer, demangled by swift-demangle, and keeps every other line as it is:

    BENCH_ONLY=allocations BENCH_ALLOC_SITES=40 .build/release/trust-http-bench 1 1 2>&1 | ./symbolize-sites.py

With --short, frames in the runtime and the allocator's own (swift_allocObject, malloc…) are left out, so that each
site starts at the code that asked for the memory.
"""

import re
import subprocess
import sys
from collections import defaultdict

FRAME = re.compile(r"^(\s+)(\S+) (/\S+)\+0x([0-9a-f]+)$")
# Frames that say nothing about who allocated: the allocator, the runtime's allocation entry points.
NOISE = re.compile(
    r"^(malloc|calloc|realloc|posix_memalign|aligned_alloc|memalign|track_allocation|swift_slowAlloc|swift_allocObject"
    r"|swift_task_alloc|swift::|_swift_|swift_allocBox|swift_retain|swift_release|operator new)"
)


def symbolize(module, offsets):
    """Function and location of each offset (a return address: the call is the byte before)."""
    query = "".join(f"0x{offset - 1:x}\n" for offset in offsets)
    result = subprocess.run(
        ["llvm-symbolizer", f"--obj={module}", "--functions=linkage", "--no-inlines"],
        input=query, capture_output=True, text=True, check=False,
    )
    blocks = [block.split("\n") for block in result.stdout.strip("\n").split("\n\n")]
    names = [block[0] if block else "?" for block in blocks]
    demangled = subprocess.run(
        ["swift-demangle", "--simplified"], input="\n".join(names) + "\n", capture_output=True, text=True, check=False
    ).stdout.split("\n")
    answers = {}
    for index, offset in enumerate(offsets):
        name = demangled[index] if index < len(demangled) and demangled[index] else names[index] if index < len(names) else "?"
        where = blocks[index][1] if index < len(blocks) and len(blocks[index]) > 1 else ""
        answers[offset] = (name, where.rsplit("/", 1)[-1])
    return answers


def main():
    short = "--short" in sys.argv[1:]
    lines = sys.stdin.read().split("\n")
    wanted = defaultdict(set)
    for line in lines:
        match = FRAME.match(line)
        if match:
            wanted[match.group(3)].add(int(match.group(4), 16))
    names = {module: symbolize(module, sorted(offsets)) for module, offsets in wanted.items()}
    for line in lines:
        match = FRAME.match(line)
        if not match:
            print(line)
            continue
        indent, symbol, module, offset = match.group(1), match.group(2), match.group(3), int(match.group(4), 16)
        name, where = names[module].get(offset, ("?", ""))
        if name in ("??", "?") and symbol != "?":
            name = symbol
        if short and NOISE.match(name):
            continue
        print(f"{indent}{name}  [{module.rsplit('/', 1)[-1]} {where}]")


if __name__ == "__main__":
    main()
