#!/usr/bin/env python3
"""An upward include fails the build (cmake/floors.cmake).

Usage: floors_build_test.py CMAKE BUILD_DIR. Builds three probes that link liken_discovery (floor 3): one that
includes its own and lower floors must compile; one that includes controller/ (floor 6) and one that includes cdi/
(floor 3, not linked) must fail, on the include itself (GCC's "No such file", Clang's "file not found"), while the
included header exists in the source tree. Prints each probe's verdict and exits 1 on a wrong one.
"""
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def build(cmake, build_dir, probe):
    run = subprocess.run([cmake, "--build", build_dir, "--target", f"liken_floor_probe_{probe}"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return run.returncode, run.stdout


def refused_include(header, out):
    """Whether the compiler stopped on the include itself: GCC and Clang word it differently."""
    return f"{header}: No such file or directory" in out or f"'{header}' file not found" in out


def main():
    cmake, build_dir = sys.argv[1], sys.argv[2]
    failures = 0
    code, out = build(cmake, build_dir, "below")
    if code != 0:
        print(f"below: the probe of its own and lower floors did not compile (exit {code}):\n{out[-3000:]}")
        failures += 1
    else:
        print("below: compiles (discovery/, apis/, common/)")
    for probe in ("upward", "sideways"):
        source = (HERE / f"probe_{probe}.cc").read_text()
        header = re.search(r'#include "([^"]+)"', source).group(1)
        if not (ROOT / header).is_file():
            print(f"{probe}: {header} is not in the source tree; the probe would fail for the wrong reason")
            failures += 1
            continue
        code, out = build(cmake, build_dir, probe)
        if code == 0:
            print(f"{probe}: #include \"{header}\" compiled in a target linking only liken_discovery")
            failures += 1
        elif not refused_include(header, out):
            print(f"{probe}: the build failed, but not on #include \"{header}\" (exit {code}):\n{out[-3000:]}")
            failures += 1
        else:
            print(f"{probe}: refused by the build: {header}: No such file or directory")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
