"""Reads the index store a debug `swift build` writes (`.build/debug/index/store`) with the toolchain's libIndexStore.

Shared by the checks that need to know what our sources refer to (check-apple-availability.py) and what refers to
our public declarations (check-public-uses.py). Hand-written because no maintained package reads the index store from
Python or from a script that needs no build of its own (IndexStoreDB is not among this project's dependencies).
"""

import ctypes
import os
import subprocess
import sys
from dataclasses import dataclass

# indexstore.h's symbol roles.
ROLE_DECLARATION = 1 << 0
ROLE_DEFINITION = 1 << 1
ROLE_REFERENCE = 1 << 2
ROLE_IMPLICIT = 1 << 8
ROLE_REL_OVERRIDEOF = 1 << 11
UNIT_DEPENDENCY_RECORD = 2


class StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]

    def text(self):
        return ctypes.string_at(self.data, self.length).decode("utf-8", "replace") if self.length else ""


class IndexStoreError(Exception):
    pass


@dataclass(frozen=True)
class Occurrence:
    usr: str
    name: str
    roles: int
    path: str
    line: int
    column: int
    module: str
    # The USRs this occurrence overrides or witnesses (a definition that implements a protocol requirement).
    overrides: tuple = ()


def toolchain_lib():
    swift = subprocess.run(["which", "swift"], capture_output=True, text=True).stdout.strip()
    if not swift:
        raise IndexStoreError("swift is not on PATH")
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(swift))), "lib", "libIndexStore.so")
    if not os.path.exists(lib):
        raise IndexStoreError(f"libIndexStore not found at {lib}")
    return lib


_LIBRARY = None


def _library():
    global _LIBRARY
    if _LIBRARY is not None:
        return _LIBRARY
    lib = ctypes.CDLL(toolchain_lib())
    lib.indexstore_store_create.restype = ctypes.c_void_p
    lib.indexstore_store_create.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.indexstore_store_dispose.argtypes = [ctypes.c_void_p]
    lib.unit_applier = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, StringRef)
    lib.indexstore_store_units_apply_f.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, lib.unit_applier]
    lib.indexstore_unit_reader_create.restype = ctypes.c_void_p
    lib.indexstore_unit_reader_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.indexstore_unit_reader_dispose.argtypes = [ctypes.c_void_p]
    lib.indexstore_unit_reader_get_main_file.restype = StringRef
    lib.indexstore_unit_reader_get_main_file.argtypes = [ctypes.c_void_p]
    lib.indexstore_unit_reader_get_module_name.restype = StringRef
    lib.indexstore_unit_reader_get_module_name.argtypes = [ctypes.c_void_p]
    lib.dependency_applier = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_void_p)
    lib.indexstore_unit_reader_dependencies_apply_f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, lib.dependency_applier]
    lib.indexstore_unit_dependency_get_kind.restype = ctypes.c_int
    lib.indexstore_unit_dependency_get_kind.argtypes = [ctypes.c_void_p]
    lib.indexstore_unit_dependency_get_name.restype = StringRef
    lib.indexstore_unit_dependency_get_name.argtypes = [ctypes.c_void_p]
    lib.indexstore_unit_dependency_get_filepath.restype = StringRef
    lib.indexstore_unit_dependency_get_filepath.argtypes = [ctypes.c_void_p]
    lib.indexstore_record_reader_create.restype = ctypes.c_void_p
    lib.indexstore_record_reader_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.indexstore_record_reader_dispose.argtypes = [ctypes.c_void_p]
    lib.occurrence_applier = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_void_p)
    lib.indexstore_record_reader_occurrences_apply_f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, lib.occurrence_applier]
    lib.indexstore_occurrence_get_symbol.restype = ctypes.c_void_p
    lib.indexstore_occurrence_get_symbol.argtypes = [ctypes.c_void_p]
    lib.indexstore_occurrence_get_roles.restype = ctypes.c_uint64
    lib.indexstore_occurrence_get_roles.argtypes = [ctypes.c_void_p]
    lib.indexstore_occurrence_get_line_col.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]
    lib.relation_applier = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_void_p)
    lib.indexstore_occurrence_relations_apply_f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, lib.relation_applier]
    lib.indexstore_symbol_relation_get_roles.restype = ctypes.c_uint64
    lib.indexstore_symbol_relation_get_roles.argtypes = [ctypes.c_void_p]
    lib.indexstore_symbol_relation_get_symbol.restype = ctypes.c_void_p
    lib.indexstore_symbol_relation_get_symbol.argtypes = [ctypes.c_void_p]
    lib.indexstore_symbol_get_usr.restype = StringRef
    lib.indexstore_symbol_get_usr.argtypes = [ctypes.c_void_p]
    lib.indexstore_symbol_get_name.restype = StringRef
    lib.indexstore_symbol_get_name.argtypes = [ctypes.c_void_p]
    _LIBRARY = lib
    return lib


def occurrences(store_path, accepts, with_overrides=False):
    """Every occurrence recorded for a main file that `accepts(path)` admits (a file compiled for several targets is
    read once). With `with_overrides`, each definition carries the USRs it overrides or witnesses."""
    lib = _library()
    error = ctypes.c_void_p()
    store = lib.indexstore_store_create(store_path.encode(), ctypes.byref(error))
    if not store:
        raise IndexStoreError(f"cannot open the index store {store_path}")
    unit_names = []
    lib.indexstore_store_units_apply_f(store, 0, None, lib.unit_applier(lambda _context, name: unit_names.append(name.text()) or True))

    records = {}  # record name -> (source path, module)
    for unit_name in unit_names:
        reader = lib.indexstore_unit_reader_create(store, unit_name.encode(), ctypes.byref(error))
        if not reader:
            continue
        main_file = lib.indexstore_unit_reader_get_main_file(reader).text()
        module = lib.indexstore_unit_reader_get_module_name(reader).text()
        if main_file and os.path.exists(main_file) and accepts(main_file):
            def take(_context, dependency, main_file=main_file, module=module):
                if (lib.indexstore_unit_dependency_get_kind(dependency) == UNIT_DEPENDENCY_RECORD
                        and lib.indexstore_unit_dependency_get_filepath(dependency).text() == main_file):
                    records[lib.indexstore_unit_dependency_get_name(dependency).text()] = (main_file, module)
                return True
            lib.indexstore_unit_reader_dependencies_apply_f(reader, None, lib.dependency_applier(take))
        lib.indexstore_unit_reader_dispose(reader)

    found = []
    for record, (path, module) in records.items():
        reader = lib.indexstore_record_reader_create(store, record.encode(), ctypes.byref(error))
        if not reader:
            continue

        def visit(_context, occurrence, path=path, module=module):
            roles = lib.indexstore_occurrence_get_roles(occurrence)
            symbol = lib.indexstore_occurrence_get_symbol(occurrence)
            line, column = ctypes.c_uint(), ctypes.c_uint()
            lib.indexstore_occurrence_get_line_col(occurrence, ctypes.byref(line), ctypes.byref(column))
            overrides = []
            if with_overrides and roles & ROLE_DEFINITION:
                def relation(_context, rel):
                    if lib.indexstore_symbol_relation_get_roles(rel) & ROLE_REL_OVERRIDEOF:
                        overrides.append(lib.indexstore_symbol_get_usr(lib.indexstore_symbol_relation_get_symbol(rel)).text())
                    return True
                lib.indexstore_occurrence_relations_apply_f(occurrence, None, lib.relation_applier(relation))
            found.append(Occurrence(lib.indexstore_symbol_get_usr(symbol).text(), lib.indexstore_symbol_get_name(symbol).text(),
                                    roles, path, line.value, column.value, module, tuple(overrides)))
            return True
        lib.indexstore_record_reader_occurrences_apply_f(reader, None, lib.occurrence_applier(visit))
        lib.indexstore_record_reader_dispose(reader)
    lib.indexstore_store_dispose(store)
    return found, len(records)
