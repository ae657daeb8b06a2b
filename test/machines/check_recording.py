#!/usr/bin/env python3
"""Runs the real liken-dra binary on a umockdev recording and checks what it publishes.

Every recording is held to the contract's invariants (what the rules allow at all). A recording with an
expectations file (<name>.expected.json) must also publish, withhold, leave out and leave unclaimed exactly
what that file lists.

usage: check_recording.py LIKEN_DRA RECORDING [EXPECTED_JSON]
Exit 0: all checks passed; 1: a check failed; 77: skipped (recording absent).
"""
import json
import os
import re
import subprocess
import sys

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")


def run(binary, recording, *args):
    cmd = ["umockdev-run", "-d", recording, "--", binary, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def check_invariants(report, slices, failures):
    def fail(msg):
        failures.append(msg)

    for d in report["published"]:
        name, attrs, nodes = d["name"], d["attributes"], d["nodes"]
        if not DNS_LABEL.match(name):
            fail(f"{name}: not a DNS label")
        if attrs.get("liken.sh/bus") not in ("pci", "usb"):
            fail(f"{name}: bus must be pci or usb")
        if len(attrs) > 32:
            fail(f"{name}: {len(attrs)} attributes")
        for key, value in attrs.items():
            domain, _, ident = key.rpartition("/")
            if domain not in ("liken.sh", "resource.kubernetes.io") or not C_IDENT.match(ident):
                fail(f"{name}: attribute name {key}")
            if isinstance(value, str) and (len(value.encode()) > 64 or value == ""):
                fail(f"{name}: attribute {key} value length")
        for n in nodes:
            if not n.startswith("/dev/") or "/../" in n:
                fail(f"{name}: node {n} outside /dev")
            if re.match(r"^/dev/fb\d+$", n):
                fail(f"{name}: delivers a framebuffer {n}")
        if attrs.get("liken.sh/bus") == "usb":
            usbfs = [n for n in nodes if n.startswith("/dev/bus/usb/")]
            if len(usbfs) != 1:
                fail(f"{name}: USB device must deliver exactly one usbfs node, has {usbfs}")
            own = [n for n in nodes if not n.startswith("/dev/bus/usb/")]
            if not own and attrs.get("liken.sh/driver") != "btusb":
                fail(f"{name}: only btusb may publish without nodes of its own")
        elif not nodes:
            fail(f"{name}: publishes no nodes")
        shared = d["allowMultipleAllocations"]
        if shared and not (attrs.get("liken.sh/renderNode") is True and
                           all(re.match(r"^/dev/dri/renderD\d+$", n) for n in nodes if n != "/dev/kfd")):
            fail(f"{name}: only a GPU's render half may be shared")
        if "/dev/kfd" in nodes and not (shared and attrs.get("liken.sh/driver") == "amdgpu"):
            fail(f"{name}: /dev/kfd travels only with the render half of an amdgpu GPU")
        if attrs.get("liken.sh/renderNode") is True and not shared:
            fail(f"{name}: a render device must allow multiple allocations")
        if attrs.get("liken.sh/displayNode") is True and not all(re.match(r"^/dev/dri/card\d+$", n) for n in nodes):
            fail(f"{name}: a display device delivers only card nodes")
    names = [d["name"] for d in report["published"]]
    if names != sorted(names) or len(set(names)) != len(names):
        fail("published names must be sorted and unique")

    items = slices["items"]
    if slices.get("kind") != "List" or not items:
        fail("scan must print a non-empty List")
    total = 0
    for i, s in enumerate(items):
        spec = s["spec"]
        if s["apiVersion"] != "resource.k8s.io/v1" or s["kind"] != "ResourceSlice":
            fail("scan item is not a resource.k8s.io/v1 ResourceSlice")
        if spec["driver"] != "liken.sh" or spec["pool"]["resourceSliceCount"] != len(items):
            fail(f"slice {i}: driver or resourceSliceCount wrong")
        if len(spec["devices"]) > 128:
            fail(f"slice {i}: {len(spec['devices'])} devices")
        total += len(spec["devices"])
    if total != len(report["published"]):
        fail(f"scan publishes {total} devices, report {len(report['published'])}")


def check_expected(report, expected, failures):
    got = {
        "published": [d["name"] for d in report["published"]],
        "withheld": sorted(w["name"] for w in report["withheld"]),
        "unclaimed": sorted(f"{u['bus']} {u['address']}" for u in report["unclaimed"]),
    }
    for key in ("published", "withheld", "unclaimed"):
        if key in expected and sorted(expected[key]) != sorted(got[key]):
            missing = sorted(set(expected[key]) - set(got[key]))
            extra = sorted(set(got[key]) - set(expected[key]))
            failures.append(f"{key}: missing {missing}, unexpected {extra}")
    # Left-out devices: exactly the names listed, each with its driver and a reason containing the given text.
    if "left_out" in expected:
        left_out = {l["name"]: l for l in report.get("leftOut", [])}
        if sorted(left_out) != sorted(expected["left_out"]):
            failures.append(f"leftOut: {sorted(left_out)} != {sorted(expected['left_out'])}")
        for name, want in expected["left_out"].items():
            got = left_out.get(name)
            if got is None:
                continue
            if got["driver"] != want["driver"]:
                failures.append(f"leftOut {name}: driver {got['driver']!r}, want {want['driver']!r}")
            if want["reason"] not in got["reason"]:
                failures.append(f"leftOut {name}: reason {got['reason']!r} lacks {want['reason']!r}")
    by_name = {d["name"]: d for d in report["published"]}
    for name, want in expected.get("devices", {}).items():
        d = by_name.get(name)
        if d is None:
            continue
        if "nodes" in want and sorted(want["nodes"]) != sorted(d["nodes"]):
            failures.append(f"{name}: nodes {d['nodes']} != {want['nodes']}")
        for key, value in want.get("attributes", {}).items():
            if value is None:
                if key in d["attributes"]:
                    failures.append(f"{name}: attribute {key} should be absent, is {d['attributes'][key]!r}")
            elif d["attributes"].get(key) != value:
                failures.append(f"{name}: attribute {key} = {d['attributes'].get(key)!r}, want {value!r}")
        if "allowMultipleAllocations" in want and want["allowMultipleAllocations"] != d["allowMultipleAllocations"]:
            failures.append(f"{name}: allowMultipleAllocations {d['allowMultipleAllocations']}")
    for note in expected.get("notes", []):
        if not any(note in n for n in report.get("notes", [])):
            failures.append(f"report notes {report.get('notes')} lack {note!r}")
    if "published_count" in expected and expected["published_count"] != len(report["published"]):
        failures.append(f"{len(report['published'])} devices published, want {expected['published_count']}")
    want_modules = expected.get("modules", {})
    for u in report["unclaimed"]:
        key = f"{u['bus']} {u['address']}"
        if key in want_modules and sorted(want_modules[key]) != sorted(u["modules"]):
            failures.append(f"unclaimed {key}: modules {u['modules']} != {want_modules[key]}")


def recording_devices(recording):
    """The recording's devices: {sysfs path under /devices: {"E": {...}, "A": {...}}} from its P:/E:/A: lines."""
    devices = {}
    with open(recording) as f:
        blocks = f.read().split("\n\n")
    for block in blocks:
        lines = block.strip().splitlines()
        path = next((l[3:] for l in lines if l.startswith("P: ")), None)
        if path is None:
            continue
        props = dict(l[3:].split("=", 1) for l in lines if l.startswith("E: ") and "=" in l)
        attrs = {k: v[:-2] if v.endswith("\\n") else v  # umockdev writes a file's newline as \n
                 for k, v in (l[3:].split("=", 1) for l in lines if l.startswith("A: ") and "=" in l)}
        links = dict(l[3:].split("=", 1) for l in lines if l.startswith("L: ") and "=" in l)
        devices[path] = {"E": props, "A": attrs, "L": links}
    return devices


def dashed(bus, address):
    return bus + "-" + re.sub(r"[:._]", "-", address).lower()


def check_completeness(recording, report, failures):
    """Every PCI function that is not a bridge and every USB device that is not a hub (configured with its
    interfaces, or idle) is in published, withheld, unclaimed or left out, with a reason where it is not
    published. Returns the number of devices checked."""
    devices = recording_devices(recording)
    published = [d["name"] for d in report["published"]]
    reasons = {w["name"]: w["reason"] for w in report["withheld"]}
    reasons.update({l["name"]: l["reason"] for l in report.get("leftOut", [])})
    unclaimed = {(u["bus"], u["address"]) for u in report["unclaimed"]}

    def listed(name):
        if name in reasons:
            if not reasons[name].strip():
                failures.append(f"completeness: {name} is not published and its reason is empty")
            return True
        return any(p == name or (p.startswith(name + "-") and not p[len(name) + 1:][:1].isdigit()) for p in published)

    checked = 0
    for path, d in sorted(devices.items()):
        props, name = d["E"], path.rsplit("/", 1)[-1]
        if props.get("SUBSYSTEM") == "pci":
            cls = props.get("PCI_CLASS", d["A"].get("class", "")).lower().replace("0x", "").rjust(6, "0")
            if cls.startswith("06") or props.get("DRIVER") == "pcieport":
                continue
            checked += 1
            if not listed(dashed("pci", name)) and ("pci", name) not in unclaimed:
                failures.append(f"completeness: PCI function {name} is in no list (published, withheld, "
                                "left out, unclaimed)")
        elif props.get("SUBSYSTEM") == "usb" and props.get("DEVTYPE") == "usb_device":
            if name.startswith("usb") or d["A"].get("bDeviceClass", "").strip() == "09":
                continue
            interfaces = [p for p, i in devices.items() if p.startswith(path + "/") and
                          i["E"].get("DEVTYPE") == "usb_interface" and p.count("/") == path.count("/") + 1]
            if any(devices[i]["A"].get("bInterfaceClass", "").strip() == "09" or
                   devices[i]["E"].get("DRIVER") == "hub" for i in interfaces):
                continue
            checked += 1
            names = [dashed("usb", i.rsplit("/", 1)[-1]) for i in interfaces] + [dashed("usb", name)]
            if not any(listed(n) for n in names) and ("usb", name) not in unclaimed:
                failures.append(f"completeness: USB device {name} (interfaces {names[:-1]}) is in no list "
                                "(published, withheld, left out, unclaimed)")
    return checked


def recording_nodes(recording):
    """{"/dev/<N: name>": "major:minor"} from a recording's `A: dev=` lines; MAJOR/MINOR must agree with them."""
    nodes, problems = {}, []
    with open(recording) as f:
        blocks = f.read().split("\n\n")
    for block in blocks:
        lines = block.strip().splitlines()
        name = next((l[3:].split("=", 1)[0] for l in lines if l.startswith("N: ")), None)
        if name is None:
            continue
        dev = next((l[len("A: dev="):].replace("\\n", "") for l in lines if l.startswith("A: dev=")), None)
        props = dict(l[3:].split("=", 1) for l in lines if l.startswith("E: ") and "=" in l)
        if dev is None or dev != f"{props.get('MAJOR')}:{props.get('MINOR')}":
            problems.append(f"/dev/{name}: dev {dev} and MAJOR:MINOR {props.get('MAJOR')}:{props.get('MINOR')} disagree")
        nodes["/dev/" + name] = dev
    return nodes, problems


def check_dev_numbers(recording, report, expected, failures):
    """The recording's node numbers are exactly `dev_numbers`, all within `harmless_numbers`, and every node the
    report delivers is one of them."""
    nodes, problems = recording_nodes(recording)
    failures += problems
    if "dev_numbers" in expected and nodes != expected["dev_numbers"]:
        failures.append(f"node numbers {nodes} != {expected['dev_numbers']}")
    allowed = expected.get("harmless_numbers")
    if allowed is not None:
        for path, dev in sorted(nodes.items()):
            if dev not in allowed:
                failures.append(f"{path} carries {dev}, not one of the harmless numbers {allowed}")
    for d in report["published"]:
        for n in d["nodes"]:
            if n not in nodes:
                failures.append(f"{d['name']}: delivers {n}, which the recording has no number for")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    binary, recording = sys.argv[1], sys.argv[2]
    try:
        open(recording).close()
    except OSError:
        print(f"SKIP: {recording} is absent")
        return 77
    expected = {}
    if len(sys.argv) > 3:
        with open(sys.argv[3]) as f:
            expected = json.load(f)
    # Extra flags from the expectations file; paths in them are relative to that file's directory.
    here = os.path.dirname(os.path.abspath(sys.argv[3])) if len(sys.argv) > 3 else "."
    extra = [a.replace("@HERE@", here) for a in expected.get("args", [])]
    report = json.loads(run(binary, recording, "report", "-o", "json", *extra))
    slices = json.loads(run(binary, recording, "scan", "--node-name", "node-a", "-o", "json", *extra))
    failures = []
    check_invariants(report, slices, failures)
    checked = check_completeness(recording, report, failures)
    if expected:
        check_expected(report, expected, failures)
        if "dev_numbers" in expected or "harmless_numbers" in expected:
            check_dev_numbers(recording, report, expected, failures)
        if "slices" in expected and len(slices["items"]) != expected["slices"]:
            failures.append(f"{len(slices['items'])} slices, want {expected['slices']}")
    if expected.get("partial"):
        print(f"partial recording (not a machine's state): {expected['partial']}")
    for f in failures:
        print("FAIL:", f)
    print(f"{recording}: {len(report['published'])} published, {len(report['withheld'])} withheld, "
          f"{len(report.get('leftOut', []))} left out, "
          f"{len(report['unclaimed'])} unclaimed, {len(slices['items'])} slice(s); {checked} devices in the "
          f"completeness check; {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
