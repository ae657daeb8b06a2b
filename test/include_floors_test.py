#!/usr/bin/env python3
"""The floors (docs/layout.md): a file includes only its own folder and the folders on floors below it, and
each folder's CMake libraries name the libraries of the folders it includes (liken_<folder>), not only
through another library.

Usage: include_floors_test.py SOURCE_ROOT. Prints each include that goes up or sideways (a folder on the same
floor or above, or test/ from product code) with its file and line, and each included folder that the
folder's CMakeLists.txt does not link, and exits 1 when there is one.
"""
import pathlib
import re
import sys

# Folder -> floor, as in the floors table of docs/layout.md. Folders on one floor do not include each other.
FLOORS = {
    "common": 1,
    "apis": 2,
    "discovery": 3,
    "cdi": 3,
    "informers": 4,
    "migrate": 4,
    "controller": 5,
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


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    missing = [f for f in FLOORS if not (root / f).is_dir()]
    if missing:
        print(f"no such folders under {root}: {', '.join(missing)}")
        return 1
    found = list(violations(root))
    for v in found:
        print(v)
    print(f"{len(found)} include(s) above a file's floor")
    links = list(unlinked(root))
    for v in links:
        print(v)
    print(f"{len(links)} included folder(s) not linked")
    found += links
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
