#!/usr/bin/env python3
"""The floors (docs/layout.md): a file includes only its own folder and the folders on floors below it, and
each folder's CMake libraries name the libraries of the folders it includes (liken_<folder>), not only
through another library, and no others: links equal includes.

Usage: include_floors_test.py [--quiet] [--folders A,B,...] SOURCE_ROOT, or --self-test (a made-up tree with
known faults). --folders names the folders the build adds; one without a floor here is an error.
Prints each include that goes up or sideways (a folder on the same floor or above, or test/ from product code),
in either form ("controller/x.h", <controller/x.h>, and "../controller/x.h", which the compiler finds beside the
including file), and each quoted include that climbs out of the source tree, with its file and line, each included folder that the folder's CMakeLists.txt does not link, and each linked
folder that none of its files includes, and exits 1 when there is one. Every build runs it before compiling a
folder's target (cmake/floors.cmake); ctest runs it as `include_floors`.
"""
import os
import pathlib
import re
import sys

import self_test_report

# Folder -> floor, as in the floors table of docs/layout.md. Folders on one floor do not include each other.
FLOORS = {
    "common": 1,
    "apis": 2,
    "discovery": 3,
    "cdi": 3,
    "informers": 4,
    "migrate": 4,
    "nodestate": 5,
    "clusterview": 5,
    "controller": 6,
    "kubelet": 6,
    "cmd": 7,
}
# Both forms: "..." (searched beside the including file first, then the include directories) and <...> (the
# include directories only).
INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>)')
OUTSIDE = "(outside the source tree)"


def included_folder(root, path, line):
    """The top-level folder of the source tree that an #include line names, or None (a system header, or a file of
    the including file's own folder found beside it). A quoted include is found beside the including file first, so
    "../controller/x.h" from discovery/ opens controller/x.h: it is resolved as the compiler resolves it. One that
    climbs out of the source tree gives OUTSIDE."""
    match = INCLUDE.match(line)
    if match is None:
        return None
    quoted, angled = match.group(1), match.group(2)
    name = quoted if quoted is not None else angled
    if quoted is not None:
        beside = pathlib.Path(os.path.normpath(path.parent / name))
        parts = pathlib.PurePosixPath(name).parts
        if ".." in parts or beside.exists():
            try:
                relative = beside.relative_to(root)
            except ValueError:
                return OUTSIDE
            return relative.parts[0] if len(relative.parts) > 1 else None
    parts = pathlib.PurePosixPath(os.path.normpath(name)).parts
    if not parts or parts[0] == "..":
        return OUTSIDE if parts else None
    return parts[0] if len(parts) > 1 and (parts[0] in FLOORS or parts[0] == "test") else None
LINK = re.compile(r"target_link_libraries\s*\(([^)]*)\)", re.S)
FOREACH = re.compile(r"foreach\s*\(([^)]*)\)", re.S)


def included_folders(root, folder):
    """The project folders that files of `folder` include."""
    found = set()
    for path in (root / folder).rglob("*"):
        if path.suffix in (".h", ".cc", ".hpp", ".cpp"):
            for line in path.read_text(errors="replace").splitlines():
                included = included_folder(root, path, line)
                if included in FLOORS and included != folder:
                    found.add(included)
    return found


def unlinked(root):
    for folder in FLOORS:
        cmake = root / folder / "CMakeLists.txt"
        if not cmake.exists():
            continue
        # Libraries named in a link call, or in a list a link call walks (cmd links the parts that are built).
        text = "\n".join(line.split("#")[0] for line in cmake.read_text().splitlines())
        linked = set()
        for call in LINK.findall(text) + FOREACH.findall(text):
            linked.update(re.findall(r"\bliken_([a-z]+)\b", call))
        for included in sorted(included_folders(root, folder)):
            if included not in linked:
                yield f"{folder}/CMakeLists.txt: {folder}/ includes {included}/ but links no liken_{included}"


def linked_not_included(root):
    """Each folder library a folder's CMakeLists.txt links while none of its files includes that folder."""
    for folder in FLOORS:
        cmake = root / folder / "CMakeLists.txt"
        if not cmake.exists():
            continue
        text = "\n".join(line.split("#")[0] for line in cmake.read_text().splitlines())
        linked = set()
        for call in LINK.findall(text) + FOREACH.findall(text):
            linked.update(name for name in re.findall(r"\bliken_([a-z]+)\b", call) if name in FLOORS)
        linked.discard(folder)
        for extra in sorted(linked - included_folders(root, folder)):
            yield f"{folder}/CMakeLists.txt: links liken_{extra} but no file of {folder}/ includes {extra}/"


def violations(root):
    for folder, floor in FLOORS.items():
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".h", ".cc", ".hpp", ".cpp"):
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                included = included_folder(root, path, line)
                if included is None or included == folder:
                    continue
                if included == OUTSIDE:
                    yield (f"{path.relative_to(root)}:{number}: {folder}/ includes a file outside the source tree: "
                           f"{line.strip()}")
                    continue
                if included == "test" or (included in FLOORS and FLOORS[included] >= floor):
                    where = FLOORS.get(included, "tests")
                    yield (f"{path.relative_to(root)}:{number}: {folder}/ (floor {floor}) includes "
                           f"{included}/ (floor {where}): {line.strip()}")


def self_test():
    """Runs the checks on a made-up tree whose faults are known: each must be found, and nothing else."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for folder in FLOORS:
            (root / folder).mkdir()
        files = {
            "common/log.h": "#pragma once\n",
            "apis/object.h": '#pragma once\n#include "common/log.h"\n#include "apis/other.h"\n',
            "apis/CMakeLists.txt": "target_link_libraries(liken_apis PUBLIC liken_common)\n",
            "discovery/scan.cc": '#include "controller/pass.h"\n#include "apis/object.h"\n',
            "discovery/CMakeLists.txt": "target_link_libraries(liken_discovery PUBLIC liken_apis)\n",
            "cdi/spec.h": '#pragma once\n#include "discovery/scan.h"\n',
            "cdi/CMakeLists.txt": "target_link_libraries(liken_cdi PUBLIC liken_discovery)\n",
            "informers/client.cc": '#include "test/informers/fake.h"\n',
            "migrate/plugin.cc": '#include "discovery/scan.h"\n',
            # A quoted include is found beside the file first: "../" reaches any folder, and so does <folder/...>.
            "kubelet/CMakeLists.txt": "target_link_libraries(liken_kubelet PUBLIC liken_nodestate)\n",
            "nodestate/devices.h": '#pragma once\n',
            "kubelet/plugin.cc": ('#include "../controller/pass.h"\n#include <controller/pass.h>\n'
                                  '#include "../nodestate/devices.h"\n#include <vector>\n#include "plugin.h"\n'
                                  '#include "../../outside.h"\n'),
            "kubelet/plugin.h": '#pragma once\n#include "./plugin_impl.h"\n#include <kubelet/plugin_impl.h>\n',
            "controller/pass.h": "#pragma once\n",
            "migrate/CMakeLists.txt": "target_link_libraries(liken_migrate PUBLIC liken_discovery liken_apis)\n",
        }
        for name, text in files.items():
            (root / name).write_text(text)
        found = list(violations(root)) + list(unlinked(root)) + list(linked_not_included(root))
        expected = [
            "discovery/scan.cc:1: discovery/ (floor 3) includes controller/ (floor 6)",
            "cdi/spec.h:2: cdi/ (floor 3) includes discovery/ (floor 3)",
            "informers/client.cc:1: informers/ (floor 4) includes test/ (floor tests)",
            "discovery/CMakeLists.txt: discovery/ includes controller/ but links no liken_controller",
            "migrate/CMakeLists.txt: links liken_apis but no file of migrate/ includes apis/",
            'kubelet/plugin.cc:1: kubelet/ (floor 6) includes controller/ (floor 6): #include "../controller/pass.h"',
            "kubelet/plugin.cc:2: kubelet/ (floor 6) includes controller/ (floor 6): #include <controller/pass.h>",
            'kubelet/plugin.cc:6: kubelet/ includes a file outside the source tree: #include "../../outside.h"',
            "kubelet/CMakeLists.txt: kubelet/ includes controller/ but links no liken_controller",
        ]
        return self_test_report.report(found, expected, "fault", lambda f, e: f.startswith(e))


def main():
    args = sys.argv[1:]
    quiet = "--quiet" in args
    args = [a for a in args if a != "--quiet"]
    built = []
    if len(args) >= 2 and args[0] == "--folders":
        built = [f for f in args[1].split(",") if f]
        args = args[2:]
    if args == ["--self-test"]:
        return self_test()
    root = pathlib.Path(args[0] if args else ".")
    unplaced = [f for f in built if f not in FLOORS]
    if unplaced:
        print(f"the build adds folder(s) with no floor here (FLOORS): {', '.join(unplaced)}")
        return 1
    missing = [f for f in FLOORS if not (root / f).is_dir()]
    if missing:
        print(f"no such folders under {root}: {', '.join(missing)}")
        return 1
    found = list(violations(root))
    for v in found:
        print(v)
    if found or not quiet:
        print(f"{len(found)} include(s) above a file's floor")
    links = list(unlinked(root))
    for v in links:
        print(v)
    if links or not quiet:
        print(f"{len(links)} included folder(s) not linked")
    extra = list(linked_not_included(root))
    for v in extra:
        print(v)
    if extra or not quiet:
        print(f"{len(extra)} linked folder(s) not included")
    found += links + extra
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
