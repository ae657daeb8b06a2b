#!/usr/bin/env python3
"""Assembles a one-layer OCI image archive from files on this machine, with no daemon and no registry.

The archive holds oci-layout, index.json and blobs/sha256/* (an uncompressed layer tar, the config, the manifest)
and loads with `ctr -n k8s.io images import FILE`. The same inputs give the same bytes: entries are sorted, every
mtime is SOURCE_DATE_EPOCH (default 0), owners are 0:0 with no names, modes are normalised and nothing is gzipped.

usage: oci-image.py --ref REF --out FILE [options] [entries]
  --ref REF            image reference, e.g. localhost/liken-dra:0.1.0 (index annotations name the image)
  --out FILE           archive to write
  --entrypoint JSON    config Entrypoint, a JSON list;  --cmd JSON  config Cmd
  --workdir DIR        config WorkingDir (default /)
  --env K=V            config Env (repeatable)
  --label K=V          config Labels (repeatable)
entries (repeatable, in any order):
  --host PATH          the host's PATH at the same path, with each symlink on the way (parents and the link chain)
  --copy SRC=DEST      the regular file SRC at DEST (mode 0755 if SRC is executable, else 0644)
  --link DEST=TARGET   a symlink
  --dir DEST[=MODE]    a directory (octal mode, default 0755)
Prints one JSON line: ref, digest (the manifest's), archive, size, files.
"""
import argparse
import hashlib
import io
import json
import os
import stat
import sys
import tarfile
import time

MEDIA_INDEX = "application/vnd.oci.image.index.v1+json"
MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_CONFIG = "application/vnd.oci.image.config.v1+json"
MEDIA_LAYER = "application/vnd.oci.image.layer.v1.tar"
ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x",
        "riscv64": "riscv64"}


class ImageError(Exception):
    """A reason the image cannot be assembled."""


class Layer:
    """The entries of one layer, keyed by their path without a leading slash. Not thread-safe."""

    def __init__(self):
        self.entries = {}  # path -> (kind, payload, mode); kind is "dir", "file" (payload: source) or "link"

    def _put(self, path, kind, payload, mode):
        path = os.path.normpath("/" + path).lstrip("/")
        if not path or path == "." or ".." in path.split("/"):
            raise ImageError(f"bad path in image: {path!r}")
        old = self.entries.get(path)
        if old and old != (kind, payload, mode) and not (old[0] == kind == "dir"):
            raise ImageError(f"{path}: added twice with different content ({old[0]} {old[1]}, {kind} {payload})")
        # A path under a symlink would be written through the link when unpacked.
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if self.entries.get(parent, ("dir",))[0] != "dir":
                raise ImageError(f"{path}: parent {parent} is not a directory in the image")
        self.entries[path] = (kind, payload, mode)

    def add_dir(self, path, mode=0o755):
        self._put(path, "dir", None, mode)

    def add_link(self, path, target):
        self._put(path, "link", target, 0o777)

    def add_file(self, path, source):
        st = os.stat(source)
        if not stat.S_ISREG(st.st_mode):
            raise ImageError(f"{source}: not a regular file")
        self._put(path, "file", os.path.abspath(source), 0o755 if st.st_mode & 0o111 else 0o644)

    def add_host_path(self, path):
        """Adds the host's absolute PATH: each symlink met on the way (a parent or the file) and the file."""
        if not os.path.isabs(path):
            raise ImageError(f"{path}: not absolute")
        seen = 0
        pending = [p for p in path.split("/") if p]
        done = ""
        while pending:
            part = pending.pop(0)
            if part == ".":
                continue
            if part == "..":
                done = os.path.dirname(done)
                continue
            current = f"{done}/{part}"
            st = os.lstat(current)
            if stat.S_ISLNK(st.st_mode):
                seen += 1
                if seen > 40:
                    raise ImageError(f"{path}: too many symlinks")
                target = os.readlink(current)
                self.add_link(current, target)
                base = "" if target.startswith("/") else done
                pending = [p for p in target.split("/") if p] + pending
                done = base
            elif stat.S_ISDIR(st.st_mode):
                self.add_dir(current)
                done = current
            elif pending:
                raise ImageError(f"{current}: not a directory")
            else:
                self.add_file(current, current)
                done = current

    def tar_bytes(self, mtime):
        """The layer as an uncompressed tar: parents first, sorted, owners 0:0, fixed mtimes."""
        paths = set(self.entries)
        for p in list(paths):  # implicit parents
            parts = p.split("/")
            for i in range(1, len(parts)):
                parent = "/".join(parts[:i])
                if parent not in self.entries:
                    self.entries[parent] = ("dir", None, 0o755)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted(self.entries, key=lambda p: p.split("/")):
                kind, payload, mode = self.entries[path]
                info = tarfile.TarInfo(path)
                info.mtime, info.uid, info.gid, info.uname, info.gname = mtime, 0, 0, "", ""
                info.mode = mode
                if kind == "dir":
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                elif kind == "link":
                    info.type, info.linkname = tarfile.SYMTYPE, payload
                    tar.addfile(info)
                else:
                    with open(payload, "rb") as f:
                        data = f.read()
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        return buf.getvalue()


def canonical_json(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def descriptor(media_type, data):
    return {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}


def write_archive(out, blobs, index, mtime):
    """Writes oci-layout, index.json and the blobs into the tar OUT (through a temporary file)."""
    files = {"oci-layout": canonical_json({"imageLayoutVersion": "1.0.0"}), "index.json": canonical_json(index)}
    for data in blobs:
        files["blobs/sha256/" + hashlib.sha256(data).hexdigest()] = data
    tmp = f"{out}.tmp.{os.getpid()}"
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for d in ("blobs", "blobs/sha256"):
            info = tarfile.TarInfo(d)
            info.type, info.mode, info.mtime, info.uname, info.gname = tarfile.DIRTYPE, 0o755, mtime, "", ""
            tar.addfile(info)
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime, info.uname, info.gname = len(files[name]), 0o644, mtime, "", ""
            tar.addfile(info, io.BytesIO(files[name]))
    os.replace(tmp, out)


def split_pair(value, flag):
    if "=" not in value:
        raise ImageError(f"{flag} {value!r}: expected A=B")
    return value.split("=", 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--entrypoint")
    ap.add_argument("--cmd")
    ap.add_argument("--workdir", default="/")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--host", action="append", default=[], dest="entries", type=lambda v: ("host", v))
    ap.add_argument("--copy", action="append", dest="entries", type=lambda v: ("copy", v))
    ap.add_argument("--link", action="append", dest="entries", type=lambda v: ("link", v))
    ap.add_argument("--dir", action="append", dest="entries", type=lambda v: ("dir", v))
    args = ap.parse_args()

    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    name, _, tag = args.ref.rpartition(":")
    if not name or "/" in tag or not tag:
        raise ImageError(f"--ref {args.ref!r}: expected NAME:TAG")
    layer = Layer()
    for kind, value in args.entries or []:
        if kind == "host":
            layer.add_host_path(value)
        elif kind == "copy":
            src, dest = split_pair(value, "--copy")
            layer.add_file(dest, src)
        elif kind == "link":
            dest, target = split_pair(value, "--link")
            layer.add_link(dest, target)
        else:
            dest, _, mode = value.partition("=")
            layer.add_dir(dest, int(mode, 8) if mode else 0o755)
    layer_tar = layer.tar_bytes(mtime)

    arch = ARCH.get(os.uname().machine, os.uname().machine)
    created = "%04d-%02d-%02dT%02d:%02d:%02dZ" % time.gmtime(mtime)[:6]
    config = {"Env": args.env, "WorkingDir": args.workdir}
    if args.entrypoint:
        config["Entrypoint"] = json.loads(args.entrypoint)
    if args.cmd:
        config["Cmd"] = json.loads(args.cmd)
    if args.label:
        config["Labels"] = dict(split_pair(v, "--label") for v in args.label)
    config_blob = canonical_json({
        "architecture": arch, "os": "linux", "created": created, "config": config,
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer_tar).hexdigest()]},
        "history": [{"created": created, "created_by": "hack/build-image.sh"}],
    })
    manifest_blob = canonical_json({
        "schemaVersion": 2, "mediaType": MEDIA_MANIFEST,
        "config": descriptor(MEDIA_CONFIG, config_blob), "layers": [descriptor(MEDIA_LAYER, layer_tar)],
    })
    manifest = descriptor(MEDIA_MANIFEST, manifest_blob)
    manifest["platform"] = {"architecture": arch, "os": "linux"}
    manifest["annotations"] = {"io.containerd.image.name": args.ref, "org.opencontainers.image.ref.name": tag}
    index = {"schemaVersion": 2, "mediaType": MEDIA_INDEX, "manifests": [manifest]}
    write_archive(args.out, [layer_tar, config_blob, manifest_blob], index, mtime)
    print(json.dumps({"ref": args.ref, "digest": manifest["digest"], "archive": args.out,
                      "size": os.path.getsize(args.out), "files": len(layer.entries)}))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ImageError, OSError, ValueError) as e:
        print(f"oci-image: {e}", file=sys.stderr)
        sys.exit(1)
