#!/usr/bin/env python3
"""Checks the OCI image archives that hack/build-image.sh writes, without Docker.

usage: check_images.py CHECK REPO BINARY DIR
  build         build all four images into DIR (the other checks read them)
  layout        each archive is a valid OCI image layout: index, manifest, config and layer digests and sizes
                match their blobs; the layer is sorted, owned by 0:0, with fixed mtimes and safe paths
  reproducible  a second build (other umask, other temporary directory) gives the same digests and bytes
  dockerfile    the runtime and test images ship what the Dockerfile's runtime and test stages ship: the binary,
                the libraries ldd names (mapped to Debian packages with dpkg -S, held to the apt-get install lines),
                pci.ids, the CA bundle, umockdev and the recordings
  rootfs        (root only) the unpacked images work under chroot: the driver runs a recording under umockdev,
                busybox runs, the pause image exits on SIGTERM
  containerd    (root, where hack/build-control-plane.sh cached containerd and ctr) a private containerd imports
                each archive under its name and digest and runs the four images
Exit 0: passed; 1: a check failed; 77: skipped.
"""
import fnmatch
import glob
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile

IMAGES = {"runtime": "LIKEN_IMAGE", "test": "LIKEN_TEST_IMAGE", "pause": "LIKEN_PAUSE_IMAGE",
          "busybox": "LIKEN_BUSYBOX_IMAGE"}
# Files that no package owns because a package's maintainer script makes them.
GENERATED = {"/etc/ssl/certs/ca-certificates.crt": "ca-certificates"}
FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            if "=" in line and not line.startswith("#"):
                key, value = line.rstrip("\n").split("=", 1)
                env[key] = value
    return env


def build(repo, binary, out, umask=None, tmpdir=None):
    env = dict(os.environ)
    if tmpdir:
        env["TMPDIR"] = tmpdir
    old = os.umask(umask) if umask is not None else None
    try:
        proc = subprocess.run([os.path.join(repo, "hack/build-image.sh"), "--out", out, "--binary", binary],
                              env=env, capture_output=True, text=True, timeout=600)
    finally:
        if old is not None:
            os.umask(old)
    print(proc.stdout, end="")
    if proc.returncode != 0:
        raise SystemExit(f"FAIL: hack/build-image.sh exited {proc.returncode}: {proc.stderr.strip()}")
    return read_env(os.path.join(out, "images.env"))


class Image:
    """One archive read into memory: its index, manifest, config and layer entries."""

    def __init__(self, path):
        self.path = path
        with tarfile.open(path) as tar:
            self.members = {m.name: m for m in tar.getmembers()}
            self.files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
        self.index = json.loads(self.files["index.json"])
        self.manifest_desc = self.index["manifests"][0]
        self.manifest = json.loads(self.blob(self.manifest_desc))
        self.config = json.loads(self.blob(self.manifest["config"]))
        self.layer_bytes = self.blob(self.manifest["layers"][0])
        with tarfile.open(fileobj=io.BytesIO(self.layer_bytes)) as layer:
            self.layer_members = layer.getmembers()
            self.entries = {m.name: m for m in self.layer_members}
            self.contents = {m.name: layer.extractfile(m).read() for m in self.layer_members if m.isfile()}

    def blob(self, desc):
        return self.files["blobs/sha256/" + desc["digest"].split(":", 1)[1]]

    def resolve(self, path, depth=0):
        """The layer entry PATH names, following the layer's own symlinks (absolute ones from its root)."""
        parts = [p for p in path.split("/") if p]
        done = []
        while parts:
            part = parts.pop(0)
            if part == "..":
                done = done[:-1]
                continue
            name = "/".join(done + [part])
            m = self.entries.get(name)
            if m is None:
                return None
            if m.issym():
                depth += 1
                if depth > 40:
                    return None
                target = m.linkname
                parts = [p for p in target.split("/") if p] + parts
                if target.startswith("/"):
                    done = []
            else:
                done.append(part)
        return self.entries.get("/".join(done))


def check_layout(name, image):
    where = f"{name} ({os.path.basename(image.path)})"
    if json.loads(image.files.get("oci-layout", b"{}")).get("imageLayoutVersion") != "1.0.0":
        fail(f"{where}: oci-layout missing or not 1.0.0")
    if image.index.get("schemaVersion") != 2 or len(image.index.get("manifests", [])) != 1:
        fail(f"{where}: index.json is not a schemaVersion 2 index of one manifest")
    for blob_name, data in image.files.items():
        if blob_name.startswith("blobs/sha256/") and sha256(data) != "sha256:" + blob_name.rsplit("/", 1)[1]:
            fail(f"{where}: blob {blob_name} does not hash to its name")
    descs = [("manifest", image.manifest_desc), ("config", image.manifest["config"])]
    descs += [("layer", d) for d in image.manifest["layers"]]
    for what, desc in descs:
        data = image.blob(desc)
        if sha256(data) != desc["digest"] or len(data) != desc["size"]:
            fail(f"{where}: {what} digest or size does not match its blob")
    want_media = {"manifest": "application/vnd.oci.image.manifest.v1+json",
                  "config": "application/vnd.oci.image.config.v1+json",
                  "layer": "application/vnd.oci.image.layer.v1.tar"}
    for what, desc in descs:
        if desc["mediaType"] != want_media[what]:
            fail(f"{where}: {what} media type {desc['mediaType']}")
    if image.manifest.get("schemaVersion") != 2 or image.manifest.get("mediaType") != want_media["manifest"]:
        fail(f"{where}: manifest schemaVersion/mediaType")
    if image.config.get("rootfs", {}).get("diff_ids") != [sha256(image.layer_bytes)]:
        fail(f"{where}: config diff_ids do not name the uncompressed layer")
    if image.config.get("os") != "linux" or not image.config.get("architecture"):
        fail(f"{where}: config lacks os/architecture")
    if image.manifest_desc.get("platform", {}).get("architecture") != image.config.get("architecture"):
        fail(f"{where}: index platform differs from the config's")
    annotations = image.manifest_desc.get("annotations", {})
    ref = annotations.get("io.containerd.image.name", "")
    if not ref.startswith("localhost/") or annotations.get("org.opencontainers.image.ref.name") != ref.rsplit(":", 1)[1]:
        fail(f"{where}: image name annotations {annotations}")
    referenced = {"blobs/sha256/" + d["digest"].split(":", 1)[1] for _, d in descs}
    stray = {n for n in image.files if n.startswith("blobs/")} - referenced
    if stray:
        fail(f"{where}: blobs nothing references: {sorted(stray)}")
    if set(image.files) - referenced - {"oci-layout", "index.json"}:
        fail(f"{where}: unexpected files {sorted(set(image.files) - referenced - {'oci-layout', 'index.json'})}")
    # The layer: parents before children, sorted, 0:0, fixed mtime, relative paths without "..".
    names = [m.name for m in image.layer_members]
    if names != sorted(names, key=lambda n: n.split("/")):
        fail(f"{where}: layer entries are not sorted")
    seen = set()
    for m in image.layer_members:
        if m.name.startswith("/") or ".." in m.name.split("/"):
            fail(f"{where}: unsafe path {m.name}")
        if (m.uid, m.gid, m.uname, m.gname) != (0, 0, "", ""):
            fail(f"{where}: {m.name} owned by {m.uid}:{m.gid} {m.uname}:{m.gname}")
        if m.mtime != int(os.environ.get("SOURCE_DATE_EPOCH", "0")):
            fail(f"{where}: {m.name} mtime {m.mtime}")
        parent = m.name.rsplit("/", 1)[0] if "/" in m.name else None
        if parent and (parent not in seen or not image.entries[parent].isdir()):
            fail(f"{where}: {m.name} comes before its parent directory, or its parent is not a directory")
        if not (m.isdir() or m.isfile() or m.issym()):
            fail(f"{where}: {m.name} is neither file, directory nor symlink")
        seen.add(m.name)
    for m in image.layer_members:
        if m.issym() and image.resolve(m.name) is None:
            fail(f"{where}: symlink {m.name} -> {m.linkname} dangles inside the image")
    for n in ("index.json", "oci-layout"):
        if image.members[n].mtime != int(os.environ.get("SOURCE_DATE_EPOCH", "0")):
            fail(f"{where}: archive member {n} has a varying mtime")


def dockerfile_stages(path):
    """{stage: {"from": parent, "packages": [...], "copies": [(sources, dest, from)], "entrypoint", "cmd"}}."""
    with open(path) as f:
        text = re.sub(r"\\\n", " ", f.read())
    stages, current = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        word = word.upper()
        if word == "FROM":
            m = re.match(r"(\S+)(?:\s+AS\s+(\S+))?", rest, re.I)
            current = m.group(2) or m.group(1)
            stages[current] = {"from": m.group(1), "packages": [], "copies": [], "entrypoint": None, "cmd": None}
        elif current is None:
            continue
        elif word == "RUN":
            for command in re.split(r"&&|;", rest):
                tokens = shlex.split(command)
                if "apt-get" in tokens and "install" in tokens:
                    after = tokens[tokens.index("install") + 1:]
                    stages[current]["packages"] += [t for t in after if not t.startswith("-")]
        elif word == "COPY":
            tokens = shlex.split(rest)
            source_stage = next((t.split("=", 1)[1] for t in tokens if t.startswith("--from=")), None)
            paths = [t for t in tokens if not t.startswith("--")]
            stages[current]["copies"].append((paths[:-1], paths[-1], source_stage))
        elif word in ("ENTRYPOINT", "CMD"):
            stages[current][word.lower()] = json.loads(rest)
    return stages


def stage_chain(stages, name):
    """NAME and the stages it is built FROM, nearest first."""
    chain = []
    while name in stages:
        chain.append(stages[name])
        name = stages[name]["from"]
    return chain


def installed_depends():
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Provides}\t${Depends}, ${Pre-Depends}\n"],
                         capture_output=True, text=True, check=True).stdout
    depends, provides = {}, {}
    for line in out.splitlines():
        package, provided, deps = line.split("\t")
        depends[package] = [re.sub(r"[\s(:].*", "", alt.strip()) for group in deps.split(",") for alt in
                            group.split("|") if alt.strip()]
        for p in provided.split(","):
            if p.strip():
                provides.setdefault(re.sub(r"[\s(:].*", "", p.strip()), []).append(package)
    return depends, provides


def closure(packages, depends, provides):
    seen, todo = set(), list(packages)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        for real in ([p] if p in depends else provides.get(p, [])):
            seen.add(real)
            todo += depends.get(real, [])
    return seen


def owning_packages(paths):
    """{path: the Debian package that ships it, or None}, from one `dpkg -S` over each path as named, with and
    without /usr, and resolved."""
    candidates = {}
    for path in paths:
        forms = []
        for p in (path, os.path.realpath(path)):
            forms += [p, p[4:] if p.startswith("/usr/") else "/usr" + p]
        candidates[path] = forms
    everything = sorted({c for forms in candidates.values() for c in forms})
    proc = subprocess.run(["dpkg", "-S"] + everything, capture_output=True, text=True)
    owner = {}
    for line in proc.stdout.splitlines():
        if line.startswith("diversion") or ": " not in line:
            continue
        packages, _, path = line.partition(": ")
        owner[path] = packages.split(",")[0].split(":")[0].strip()
    result = {}
    for path, forms in candidates.items():
        result[path] = GENERATED.get(path) or next((owner[c] for c in forms if c in owner), None)
    return result


def ldd_names(path):
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    names = []
    for line in out.splitlines():
        tokens = line.split()
        if "=>" in tokens and len(tokens) > 2 and tokens[2].startswith("/"):
            names.append(tokens[2])
        elif tokens and tokens[0].startswith("/"):
            names.append(tokens[0])
        elif "not found" in line:
            fail(f"ldd {path}: {line.strip()}")
    return names


def check_shipped(where, image, paths):
    """Each host PATH is in IMAGE, resolving to the same bytes."""
    for p in paths:
        entry = image.resolve(p)
        if entry is None or not entry.isfile():
            fail(f"{where}: {p} is missing")
            continue
        with open(p, "rb") as f:
            if image.contents[entry.name] != f.read():
                fail(f"{where}: {p} differs from this machine's")


def check_packages(where, shipped, wanted, depends, provides):
    """Every shipped file's package comes with the Dockerfile's packages; every Dockerfile package is needed."""
    allowed = closure(wanted, depends, provides)
    owners = {}
    owned = owning_packages(shipped)
    for path in shipped:
        package = owned[path]
        if package is None:
            fail(f"{where}: no Debian package ships {path}")
            continue
        owners.setdefault(package, []).append(path)
        if package not in allowed:
            fail(f"{where}: {path} comes from {package}, which the Dockerfile does not install (add it to apt-get install)")
    for package in wanted:
        if package not in owners:
            fail(f"{where}: the Dockerfile installs {package}, but the image ships none of its files")
    print(f"{where}: {len(shipped)} files from {len(owners)} packages: {' '.join(sorted(owners))}")


def check_dockerfile(repo, env):
    stages = dockerfile_stages(os.path.join(repo, "Dockerfile"))
    last = list(stages)[-1]
    runtime_chain = stage_chain(stages, last)
    test_chain = stage_chain(stages, "test")
    if not test_chain:
        fail("the Dockerfile has no test stage")
    depends, provides = installed_depends()
    runtime = Image(env["LIKEN_IMAGE_ARCHIVE"])
    test = Image(env["LIKEN_TEST_IMAGE_ARCHIVE"])

    # The binary, where the Dockerfile copies it, and the same entry point.
    copies = [c for s in runtime_chain for c in s["copies"]]
    binary_dest = [dest for sources, dest, _ in copies if any(s.endswith("/liken-dra") for s in sources)]
    if binary_dest != ["/usr/bin/liken-dra"]:
        fail(f"the Dockerfile copies the binary to {binary_dest}, expected /usr/bin/liken-dra")
    entrypoint = next((s["entrypoint"] for s in runtime_chain if s["entrypoint"]), None)
    cmd = next((s["cmd"] for s in runtime_chain if s["cmd"]), None)
    for where, image in (("runtime", runtime), ("test", test)):
        entry = image.resolve("/usr/bin/liken-dra")
        if entry is None or not entry.isfile() or not entry.mode & 0o111:
            fail(f"{where}: /usr/bin/liken-dra missing or not executable")
        if image.config["config"].get("Entrypoint") != entrypoint or image.config["config"].get("Cmd") != cmd:
            fail(f"{where}: entrypoint/cmd {image.config['config'].get('Entrypoint')} "
                 f"{image.config['config'].get('Cmd')}, the Dockerfile's {entrypoint} {cmd}")

    with tempfile.TemporaryDirectory() as tmp:
        shipped_binary = os.path.join(tmp, "liken-dra")
        with open(shipped_binary, "wb") as f:
            f.write(runtime.contents[runtime.resolve("/usr/bin/liken-dra").name])
        os.chmod(shipped_binary, 0o755)
        libraries = ldd_names(shipped_binary)
    data = ["/usr/share/misc/pci.ids", "/etc/ssl/certs/ca-certificates.crt"]
    runtime_packages = [p for s in runtime_chain for p in s["packages"]]
    check_shipped("runtime", runtime, libraries + data)
    check_packages("runtime", libraries + data, runtime_packages, depends, provides)

    # The test image: all of the runtime image, umockdev and its libraries, and the recordings.
    for name, entry in runtime.entries.items():
        other = test.entries.get(name)
        if other is None or other.type != entry.type or runtime.contents.get(name) != test.contents.get(name):
            fail(f"test: differs from the runtime image at {name}")
    umockdev_run = shutil.which("umockdev-run")
    preload = next((os.path.join(d, "libumockdev-preload.so.0") for d in ("/lib/x86_64-linux-gnu", "/usr/lib64")
                    if os.path.exists(os.path.join(d, "libumockdev-preload.so.0"))), None)
    if not umockdev_run or not preload:
        fail("umockdev-run or its preload library is not installed here")
        return
    tools = [umockdev_run, preload] + ldd_names(umockdev_run) + ldd_names(preload)
    check_shipped("test", test, tools)
    test_packages = [p for s in test_chain for p in s["packages"]]
    check_packages("test", libraries + data + tools, test_packages, depends, provides)
    recording_copies = [(sources, dest) for sources, dest, src_stage in test_chain[0]["copies"] if src_stage is None]
    recordings = sorted(glob.glob(os.path.join(repo, "test/machines/*.umockdev")))
    for sources, dest in recording_copies:
        for pattern in sources:
            for path in recordings:
                if fnmatch.fnmatch(os.path.relpath(path, repo), pattern):
                    inside = os.path.join(dest, os.path.basename(path))
                    entry = test.resolve(inside)
                    with open(path, "rb") as f:
                        if entry is None or test.contents.get(entry.name) != f.read():
                            fail(f"test: {inside} (the Dockerfile's COPY of {pattern}) is missing or differs")
    if not recording_copies or not recordings:
        fail("the Dockerfile's test stage copies no recordings")
    chart_dir = env.get("LIKEN_RECORDINGS_DIR", "")
    if chart_dir.rstrip("/") not in [d.rstrip("/") for _, d in recording_copies]:
        fail(f"images.env names recordings in {chart_dir}, the Dockerfile copies them to "
             f"{[d for _, d in recording_copies]}")
    with open(os.path.join(repo, "charts/liken-dra/values.yaml")) as f:
        if chart_dir.rstrip("/") + "/" not in f.read():
            fail(f"charts/liken-dra/values.yaml does not name recordings under {chart_dir}")
    print(f"test: {len(recordings)} recordings in {chart_dir}, umockdev with {len(tools) - 2} libraries")


def check_reproducible(repo, binary, out, env):
    second = out.rstrip("/") + "-again"
    shutil.rmtree(second, ignore_errors=True)
    os.makedirs(second)
    with tempfile.TemporaryDirectory(prefix="other-tmp-") as tmp:
        again = build(repo, binary, second, umask=0o077, tmpdir=tmp)
    for key, var in IMAGES.items():
        if env[var + "_DIGEST"] != again[var + "_DIGEST"]:
            fail(f"{key}: digest {env[var + '_DIGEST']} then {again[var + '_DIGEST']}")
        with open(env[var + "_ARCHIVE"], "rb") as a, open(again[var + "_ARCHIVE"], "rb") as b:
            if a.read() != b.read():
                fail(f"{key}: the two archives differ")
        print(f"{key}: {env[var]} {env[var + '_DIGEST']} both times")
    shutil.rmtree(second, ignore_errors=True)


def unpack(image, root):
    subprocess.run(["tar", "-x", "--numeric-owner", "-C", root], input=image.layer_bytes, check=True)


def wait_for_child(pid):
    """The first child of PID, polled for up to a minute (a bound on a hang, not a speed check); None if none."""
    for _ in range(600):
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        if children:
            return int(children[0])
        subprocess.run(["sleep", "0.1"])
    return None


def check_rootfs(repo, env):
    chroot, unshare = shutil.which("chroot"), shutil.which("unshare")
    if os.geteuid() != 0 or not chroot or not unshare:
        print("SKIP: needs root, chroot and unshare")
        return 77
    probe = subprocess.run([unshare, "--mount", "--pid", "--fork", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"SKIP: no mount and PID namespaces here: {probe.stderr.strip()}")
        return 77
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        roots = {}
        for key, var in IMAGES.items():
            roots[key] = os.path.join(tmp, key)
            os.makedirs(roots[key])
            unpack(Image(env[var + "_ARCHIVE"]), roots[key])
            # What every container runtime provides in /dev.
            os.makedirs(os.path.join(roots[key], "dev"), exist_ok=True)
            for name, minor in (("null", 3), ("zero", 5), ("random", 8), ("urandom", 9)):
                os.mknod(os.path.join(roots[key], "dev", name), 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        # The runtime image runs the driver with its own libraries.
        proc = subprocess.run([chroot, roots["runtime"], "/usr/bin/liken-dra", "--version"],
                              capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin"})
        if proc.returncode != 0:
            fail(f"runtime: liken-dra --version exited {proc.returncode}: {proc.stderr.strip()}")
        else:
            print(f"runtime: the image's own libraries run {proc.stdout.strip()}")
        # The test image runs the driver on a recording, as the chart's testRecording does.
        recording = env["LIKEN_RECORDINGS_DIR"] + "/harmless-nodes.umockdev"
        # umockdev makes PTYs for tty nodes: a private devpts and proc, as a runtime mounts them.
        test_root = roots["test"]
        for d in ("dev/pts", "proc"):
            os.makedirs(os.path.join(test_root, d), exist_ok=True)
        os.symlink("pts/ptmx", os.path.join(test_root, "dev/ptmx"))
        script = ('mount -t devpts -o newinstance,ptmxmode=0666 devpts "$1/dev/pts" && mount -t proc proc "$1/proc" '
                  '&& exec "$2" "$1" umockdev-run -d "$3" -- /usr/bin/liken-dra report -o json')
        proc = subprocess.run([unshare, "--mount", "--pid", "--fork", "sh", "-c", script, "sh", test_root, chroot,
                               recording], capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "TMPDIR": "/tmp"})
        if proc.returncode != 0:
            fail(f"test: umockdev-run in the image exited {proc.returncode}: {proc.stderr.strip()}")
        else:
            published = [d["name"] for d in json.loads(proc.stdout)["published"]]
            if not published:
                fail("test: the driver in the test image published nothing")
            print(f"test: the image's driver on {recording} publishes {published}")
        # busybox: a shell and its applets.
        proc = subprocess.run([chroot, roots["busybox"], "sh", "-c", "ls /bin/sh && head -c 4 /dev/null && echo ok"],
                              capture_output=True, text=True, timeout=60, env={"PATH": "/bin:/usr/bin"})
        if proc.returncode != 0 or not proc.stdout.strip().endswith("ok"):
            fail(f"busybox: sh exited {proc.returncode}: {proc.stderr.strip()}")
        else:
            print("busybox: sh and its applets run")
        # pause: PID 1 of its own PID namespace, ends on SIGTERM with status 0.
        config = Image(env["LIKEN_PAUSE_IMAGE_ARCHIVE"]).config["config"]
        argv = (config.get("Entrypoint") or []) + (config.get("Cmd") or [])
        pause = subprocess.Popen([unshare, "--pid", "--fork", "--kill-child", chroot, roots["pause"]] + argv)
        try:
            pid1 = wait_for_child(pause.pid)          # the sandbox's PID 1, the shell
            sleeper = pid1 and wait_for_child(pid1)  # its sleep: the trap is set by now
            if not sleeper:
                fail("pause: did not start its sleep")
            else:
                os.kill(pid1, signal.SIGTERM)
                rc = pause.wait(timeout=60)
                if rc != 0:
                    fail(f"pause: exited {rc} on SIGTERM, want 0")
                else:
                    print("pause: PID 1 exits 0 on SIGTERM")
        finally:
            if pause.poll() is None:
                pause.kill()
                pause.wait()
    return 0


def containerd_bin():
    """The directory of containerd, ctr and the runc shim that hack/build-control-plane.sh caches, or None."""
    for d in sorted(glob.glob(os.path.expanduser("~/.cache/liken-dra/k8s-*/bin")), reverse=True):
        if all(os.access(os.path.join(d, b), os.X_OK) for b in ("containerd", "ctr", "containerd-shim-runc-v2")):
            return d
    return None


def check_containerd(env):
    """Imports every archive into a private containerd, compares names and digests, and runs the images."""
    bin_dir, runc = containerd_bin(), shutil.which("runc")
    if os.geteuid() != 0 or not bin_dir or not runc:
        print("SKIP: needs root, runc and containerd/ctr in ~/.cache/liken-dra/k8s-*/bin (hack/build-control-plane.sh)")
        return 77
    with tempfile.TemporaryDirectory(prefix="liken-ctrd-") as tmp:
        sock = os.path.join(tmp, "containerd.sock")
        config = os.path.join(tmp, "config.toml")
        with open(config, "w") as f:
            f.write(f'version = 3\nroot = "{tmp}/root"\nstate = "{tmp}/state"\n'
                    f'disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", '
                    f'"io.containerd.cri.v1.images"]\n[grpc]\n  address = "{sock}"\n')
        path_env = {"PATH": f"{bin_dir}:{os.path.dirname(runc)}:/usr/sbin:/usr/bin:/sbin:/bin"}
        with open(os.path.join(tmp, "containerd.log"), "w") as log:
            daemon = subprocess.Popen([os.path.join(bin_dir, "containerd"), "--config", config], stdout=log,
                                      stderr=subprocess.STDOUT, env=path_env)
        ctr = [os.path.join(bin_dir, "ctr"), "--address", sock, "-n", "liken-image-test"]
        try:
            for _ in range(600):  # up to a minute for the socket: a bound on a hang, not a speed check
                if subprocess.run(ctr + ["version"], capture_output=True, env=path_env).returncode == 0:
                    break
                if daemon.poll() is not None:
                    break
                subprocess.run(["sleep", "0.1"])
            else:
                fail("containerd did not answer")
            if daemon.poll() is not None:
                with open(os.path.join(tmp, "containerd.log")) as f:
                    fail(f"containerd exited: {f.read()[-2000:]}")
                return 0
            for key, var in IMAGES.items():
                proc = subprocess.run(ctr + ["images", "import", "--local", "--snapshotter", "overlayfs",
                                             env[var + "_ARCHIVE"]], capture_output=True, text=True, env=path_env)
                if proc.returncode != 0:
                    fail(f"{key}: ctr images import failed: {proc.stderr.strip()}")
            listing = subprocess.run(ctr + ["images", "ls"], capture_output=True, text=True, env=path_env).stdout
            digests = {line.split()[0]: line.split()[2] for line in listing.splitlines()[1:] if line.split()}
            for key, var in IMAGES.items():
                if digests.get(env[var]) != env[var + "_DIGEST"]:
                    fail(f"{key}: containerd lists {env[var]} as {digests.get(env[var])}, want {env[var + '_DIGEST']}")
                else:
                    print(f"{key}: imported as {env[var]} {digests[env[var]]}")

            def run(name, image, *argv):
                return subprocess.run(ctr + ["run", "--rm", "--snapshotter", "overlayfs", image, name, *argv],
                                      capture_output=True, text=True, timeout=300, env=path_env)
            proc = run("liken-version", env["LIKEN_IMAGE"], "/usr/bin/liken-dra", "--version")
            if proc.returncode != 0:
                fail(f"runtime: the container exited {proc.returncode}: {proc.stderr.strip()}")
            else:
                print(f"runtime: in a container: {proc.stdout.strip()}")
            recording = env["LIKEN_RECORDINGS_DIR"] + "/harmless-nodes.umockdev"
            proc = run("liken-report", env["LIKEN_TEST_IMAGE"], "umockdev-run", "-d", recording, "--",
                       "/usr/bin/liken-dra", "report", "-o", "json")
            if proc.returncode != 0:
                fail(f"test: the container exited {proc.returncode}: {proc.stderr.strip()}")
            else:
                print(f"test: in a container: {[d['name'] for d in json.loads(proc.stdout)['published']]}")
            proc = run("liken-busybox", env["LIKEN_BUSYBOX_IMAGE"], "sh", "-c", "head -c 3 /dev/zero | od -An -tx1")
            if proc.returncode != 0 or proc.stdout.split() != ["00", "00", "00"]:
                fail(f"busybox: the container exited {proc.returncode}: {proc.stdout!r} {proc.stderr.strip()}")
            else:
                print("busybox: in a container: sh, head and od run")
            pause = subprocess.Popen(ctr + ["run", "--rm", "--snapshotter", "overlayfs", env["LIKEN_PAUSE_IMAGE"],
                                            "liken-pause"], env=path_env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
            try:
                for _ in range(600):  # until the task runs and its shell has started the sleep
                    tasks = subprocess.run(ctr + ["tasks", "ps", "liken-pause"], capture_output=True, text=True,
                                           env=path_env).stdout
                    if len(tasks.split()) >= 6:  # a header and two processes
                        break
                    subprocess.run(["sleep", "0.1"])
                subprocess.run(ctr + ["tasks", "kill", "-s", "SIGTERM", "liken-pause"], env=path_env,
                               capture_output=True)
                try:
                    rc = pause.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    rc = "nothing (still running a minute later)"
                if rc != 0:
                    fail(f"pause: exited {rc} on SIGTERM, want 0")
                else:
                    print("pause: in a container, exits 0 on SIGTERM")
            finally:
                if pause.poll() is None:
                    subprocess.run(ctr + ["tasks", "kill", "-s", "SIGKILL", "liken-pause"], env=path_env,
                                   capture_output=True)
                    pause.wait(timeout=60)
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
            subprocess.run(["umount", "-R", os.path.join(tmp, "root")], capture_output=True)
    return 0


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    check, repo, binary, out = sys.argv[1:]
    if check == "build":
        shutil.rmtree(out, ignore_errors=True)
        build(repo, binary, out)
        return 0
    env_path = os.path.join(out, "images.env")
    if not os.path.exists(env_path):
        print(f"FAIL: {env_path} is missing (the image.build test makes it)")
        return 1
    env = read_env(env_path)
    if check == "layout":
        for key, var in IMAGES.items():
            image = Image(env[var + "_ARCHIVE"])
            check_layout(key, image)
            print(f"{key}: {env[var]} {image.manifest_desc['digest']}, {len(image.layer_members)} entries, "
                  f"{len(image.layer_bytes)} bytes")
    elif check == "reproducible":
        check_reproducible(repo, binary, out, env)
    elif check == "dockerfile":
        check_dockerfile(repo, env)
    elif check == "rootfs":
        if check_rootfs(repo, env) == 77:
            return 77
    elif check == "containerd":
        if check_containerd(env) == 77:
            return 77
    else:
        print(__doc__)
        return 2
    print(f"{check}: {len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
