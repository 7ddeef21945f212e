#!/usr/bin/env python3
"""The async context ("frame") size of each Swift async function in ELF object files or binaries.

Every Swift async function has an async function pointer (its mangled name ends in `Tu`): a 32-bit relative
offset to the function, then the 32-bit size of the context the caller allocates for it, in the task's slab,
for as long as the call lasts. A task that waits holds the contexts of every async function on its stack of
calls, so these sizes are what a waiting request costs in memory besides its objects on the heap.

    Scripts/async-frame-sizes.py FILE... [--match TEXT]...

FILE: object files (`.build/release/TrustHTTP.build/*.o`) or a linked binary. Prints one line per function
whose demangled name holds one of the TEXTs (every function without --match): the size in bytes, the name.
Only the standard library's ELF layout is read here (no dependency); swift-demangle comes with the toolchain.
"""

import struct
import subprocess
import sys


def symbols_with_bytes(path):
    """(mangled name, 8 bytes at the symbol) for every defined symbol ending in `Tu`."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit(f"{path}: not a 64-bit little-endian ELF file")
    section_offset, = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for index in range(count):
        name, kind, _flags, address, offset, size, link, _info, _align, _entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, section_offset + index * entry_size)
        sections.append((kind, address, offset, size, link))
    is_object = struct.unpack_from("<H", data, 0x10)[0] == 1  # ET_REL: symbol values are section offsets
    found = []
    for kind, _address, offset, size, link in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strings_offset = sections[link][2]
        for position in range(offset, offset + size, 24):
            name_at, _info, _other, section_index, value, _size = struct.unpack_from("<IBBHQQ", data, position)
            if section_index == 0 or section_index >= len(sections):
                continue
            end = data.index(b"\0", strings_offset + name_at)
            name = data[strings_offset + name_at:end].decode("utf-8", "replace")
            if not name.endswith("Tu"):
                continue
            _kind, section_address, section_file_offset, _size, _link = sections[section_index]
            at = section_file_offset + (value if is_object else value - section_address)
            if section_file_offset == 0 or at + 8 > len(data):
                continue
            found.append((name, data[at:at + 8]))
    return found


def main(arguments):
    files, matches = [], []
    iterator = iter(arguments)
    for argument in iterator:
        if argument == "--match":
            matches.append(next(iterator, ""))
        else:
            files.append(argument)
    if not files:
        raise SystemExit(__doc__)
    entries = [(name, struct.unpack_from("<I", raw, 4)[0]) for path in files for name, raw in symbols_with_bytes(path)]
    names = subprocess.run(["swift-demangle", "--simplified", "--compact"], input="\n".join(n for n, _ in entries),
                           capture_output=True, text=True, check=True).stdout.splitlines()
    rows = sorted(((size, demangled.removeprefix("async function pointer to "))
                   for (_, size), demangled in zip(entries, names)
                   if not matches or any(text in demangled for text in matches)), key=lambda row: row[1])
    for size, name in rows:
        print(f"{size:6d}  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
