#!/usr/bin/env python3
"""kubectl-liken, the binary, against a loopback HTTP server serving recorded API objects (testdata/cluster.json)
through a kubeconfig: kubectl's flags (-n, -A, -o, --context, --kubeconfig, $KUBECONFIG, --help), the three
commands' output, only GETs sent, and a clear refusal (exit 1) from a server without resource.k8s.io/v1.

Usage: kubectl_liken_cli_test.py KUBECTL_LIKEN CLUSTER_JSON"""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.parse

BINARY, FIXTURE = sys.argv[1], sys.argv[2]
OBJECTS = json.load(open(FIXTURE))
failures = []
methods = []


def check(name, got, want):
    if got != want:
        failures.append(f"{name}: got {got!r}, want {want!r}")
        print(f"FAIL: {name}", file=sys.stderr)
    else:
        print(f"ok: {name}")


def check_in(name, needle, text):
    if needle in text:
        print(f"ok: {name}")
    else:
        failures.append(f"{name}: {needle!r} not in {text!r}")
        print(f"FAIL: {name}", file=sys.stderr)


class Api(http.server.BaseHTTPRequestHandler):
    serves_resource_v1 = True

    def log_message(self, *args):
        pass

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        methods.append("GET")
        url = urllib.parse.urlparse(self.path)
        query = urllib.parse.parse_qs(url.query)
        parts = url.path.strip("/").split("/")
        if url.path == "/apis/resource.k8s.io/v1":
            if self.serves_resource_v1:
                return self.reply(200, {"kind": "APIResourceList", "groupVersion": "resource.k8s.io/v1"})
            return self.reply(404, {"kind": "Status", "reason": "NotFound", "message": "the server could not find the requested resource"})
        resource = parts[-1]
        namespace = parts[parts.index("namespaces") + 1] if "namespaces" in parts else None
        if resource not in OBJECTS:
            return self.reply(404, {"kind": "Status", "reason": "NotFound", "message": "not found"})
        items = [o for o in OBJECTS[resource] if namespace is None or o["metadata"].get("namespace") == namespace]
        selector = query.get("fieldSelector", [""])[0]
        for term in filter(None, selector.split(",")):
            field, value = term.split("=")
            def get(o, path=field.split(".")):
                for p in path:
                    o = o.get(p, {}) if isinstance(o, dict) else {}
                return o
            items = [o for o in items if get(o) == value]
        self.reply(200, {"kind": "List", "metadata": {"resourceVersion": "1"}, "items": items})

    def do_POST(self):
        methods.append("POST")
        self.reply(405, {})

    do_PUT = do_PATCH = do_DELETE = do_POST


def serve(serves_resource_v1):
    handler = type("Handler", (Api,), {"serves_resource_v1": serves_resource_v1})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def kubeconfig(directory, servers):
    path = os.path.join(directory, "config")
    contexts = "".join(f"- name: {n}\n  context: {{cluster: {n}, user: u, namespace: {ns}}}\n" for n, (_, ns) in servers.items())
    clusters = "".join(f"- name: {n}\n  cluster: {{server: 'http://127.0.0.1:{s.server_address[1]}'}}\n"
                       for n, (s, _) in servers.items())
    with open(path, "w") as f:
        f.write(f"apiVersion: v1\nkind: Config\ncurrent-context: {next(iter(servers))}\nclusters:\n{clusters}"
                f"contexts:\n{contexts}users:\n- name: u\n  user: {{token: t}}\n")
    return path


def run(*args, env=None):
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=60, env=env)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as tmp:
    good, old = serve(True), serve(False)
    config = kubeconfig(tmp, {"kind": (good, "default"), "old": (old, "default"), "team": (good, "team")})

    rc, out, err = run("--help")
    check("--help exits 0", rc, 0)
    for command in ("devices", "claims", "why"):
        check_in(f"--help names {command}", f"kubectl liken {command}", out)
    rc, out, _ = run("devices", "--help")
    check_in("devices --help names --free", "--free", out)
    check("no command is a usage error", run()[0] != 0, True)
    rc, _, err = run("devices", "--kubeconfig", config, "-o", "name")
    check("-o name is refused", rc, 2)
    check_in("-o name says the choices", "wide, json or yaml", err)
    check("-n with -A is refused", run("claims", "--kubeconfig", config, "-n", "x", "-A")[0], 2)
    check("--held with --free is refused", run("devices", "--kubeconfig", config, "--held", "--free")[0] != 0, True)
    rc, _, err = run("devices", "--kubeconfig", os.path.join(tmp, "missing"))
    check("a missing kubeconfig exits 1", rc, 1)
    check_in("a missing kubeconfig is named", "missing", err)

    rc, out, err = run("devices", "--kubeconfig", config)
    check("devices exits 0", rc, 0)
    check("devices prints a header and six devices", len(out.splitlines()), 7)
    check_in("devices shows the serial adapter's holder", "default/serial -> serial", out)
    rc, out, _ = run("devices", "gpu-server", "--free", "--attribute", "serial=B7", "--kubeconfig", config)
    check("devices NODE --free --attribute finds one", out.splitlines()[1:], [
        "gpu-server   usb-1-3-1-0   tty         0403:6001 B7   exclusive   <none>   <none>"])
    rc, out, _ = run("devices", "-o", "json", env={**os.environ, "KUBECONFIG": f"{os.path.join(tmp, 'none')}:{config}"})
    check("$KUBECONFIG's first file is used (a missing one is an error)", rc, 1)
    rc, out, _ = run("devices", "-o", "json", env={**os.environ, "KUBECONFIG": config})
    check("devices -o json via $KUBECONFIG", [i["device"] for i in json.loads(out)["items"]][:2],
          ["usb-1-2-1-0", "usb-1-3-1-0"])

    rc, out, _ = run("claims", "--kubeconfig", config)
    check("claims in the context's namespace (default): its four liken claims", [l.split()[0] for l in out.splitlines()[1:]],
          ["big", "kbd", "render-a", "serial"])
    rc, out, _ = run("claims", "--kubeconfig", config, "--context", "team")
    check("--context team: its namespace's claim", [l.split()[0] for l in out.splitlines()[1:]], ["render-b"])
    rc, out, _ = run("claims", "--kubeconfig", config, "-A", "-o", "yaml")
    check_in("claims -A -o yaml", "kind: LikenClaimList", out)
    check("claims -A -o yaml lists five", out.count("\n  - namespace: ") + out.count("\n- namespace: "), 5)

    rc, out, _ = run("claims", "--kubeconfig", config, "-A", "--held", "--exit-code")
    check("claims --held --exit-code: exit 3 with claims reserved for pods", rc, 3)
    check("claims --held lists the reserved ones", [l.split()[1] for l in out.splitlines()[1:]],
          ["kbd", "render-a", "serial"])
    rc, out, _ = run("claims", "--kubeconfig", config, "--context", "team", "--held", "--exit-code")
    check("claims --held --exit-code: exit 0 where none is reserved", (rc, out), (0, ""))

    rc, out, err = run("why", "big", "--kubeconfig", config)
    check("why exits 0", rc, 0)
    check_in("why quotes the scheduler", "PodScheduled: False Unschedulable: 0/2 nodes are available", out)
    check_in("why lists the event", "Warning FailedScheduling (x3)", out)
    check_in("why lists the free devices on gpu-server", "gpu-server   usb-1-3-1-0", out)
    rc, _, err = run("why", "nothing", "--kubeconfig", config)
    check("why of an unknown name exits 1", rc, 1)
    check_in("why names what it looked for", "no claim or pod 'nothing' in namespace default", err)

    rc, out, err = run("devices", "--kubeconfig", config, "--context", "old")
    check("a cluster without resource.k8s.io/v1: exit 1", rc, 1)
    check_in("a cluster without resource.k8s.io/v1 is named", "does not serve resource.k8s.io/v1", err)
    check("only GETs were sent", sorted(set(methods)), ["GET"])

if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
print("all checks passed")
