#!/usr/bin/env python3
"""The floors (docs/layout.md): a file includes only its own folder and the folders on floors below it, and
each folder's CMake libraries name the libraries of the folders it includes (liken_<folder>), not only
through another library, and no others: links equal includes.

Usage: include_floors_test.py [--quiet] [--folders A,B,...] SOURCE_ROOT, or --self-test (a made-up tree with
known faults). --folders names the folders the build adds; one without a floor here is an error.
Prints each include that goes up or sideways (a folder on the same floor or above, or test/ from product code)
with its file and line, each included folder that the folder's CMakeLists.txt does not link, and each linked
folder that none of its files includes, and exits 1 when there is one. Every build runs it before compiling a
folder's target (cmake/floors.cmake); ctest runs it as `include_floors`.
"""
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
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"/]+)/')
LINK = re.compile(r"target_link_libraries\s*\(([^)]*)\)", re.S)
FOREACH = re.compile(r"foreach\s*\(([^)]*)\)", re.S)


def included_folders(root, folder):
    """The project folders that files of `folder` include."""
    found = set()
    for path in (root / folder).rglob("*"):
        if path.suffix in (".h", ".cc", ".hpp", ".cpp"):
            for line in path.read_text(errors="replace").splitlines():
                match = INCLUDE.match(line)
                if match is not None and match.group(1) in FLOORS and match.group(1) != folder:
                    found.add(match.group(1))
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
                match = INCLUDE.match(line)
                if match is None:
                    continue
                included = match.group(1)
                if included == folder:
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
