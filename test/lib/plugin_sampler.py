#!/usr/bin/env python3
"""Samples a DRA driver's kubelet plugin sockets on a node until a stop file appears.

usage: plugin_sampler.py KUBELET_ROOT DRIVER OUT [INTERVAL_MS]

Every INTERVAL_MS (default 100) it connects to each registration socket of DRIVER in KUBELET_ROOT/plugins_registry
(DRIVER-reg.sock, DRIVER-<id>-reg.sock) and each DRA socket in KUBELET_ROOT/plugins/DRIVER (dra.sock,
dra-<id>.sock) and appends one line to OUT:

    <unix ms> <registration sockets answering> <DRA sockets answering> <names of the answering registration sockets>

A socket file whose server is gone (connection refused) does not count. Stops when OUT.stop exists.
"""
import os
import socket
import sys
import time


def answering(paths):
    names = []
    for path in paths:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(0.5)
        try:
            s.connect(path)
            names.append(os.path.basename(path))
        except OSError:
            pass
        finally:
            s.close()
    return names


def listing(directory, keep):
    try:
        return [os.path.join(directory, n) for n in sorted(os.listdir(directory)) if keep(n)]
    except FileNotFoundError:
        return []


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    root, driver, out = sys.argv[1:4]
    interval = (int(sys.argv[4]) if len(sys.argv) == 5 else 100) / 1000.0
    registry = os.path.join(root, "plugins_registry")
    plugin_dir = os.path.join(root, "plugins", driver)
    with open(out, "a", buffering=1) as f:
        while not os.path.exists(out + ".stop"):
            reg = answering(listing(registry, lambda n: n.startswith(driver + "-") and n.endswith("reg.sock")))
            dra = answering(listing(plugin_dir, lambda n: n.startswith("dra") and n.endswith(".sock")))
            f.write("%d %d %d %s\n" % (time.time() * 1000, len(reg), len(dra), ",".join(reg) or "-"))
            time.sleep(interval)


if __name__ == "__main__":
    main()
