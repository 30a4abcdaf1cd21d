#!/usr/bin/env python3
"""Runs huggingface_hub's own tests (from its pinned sdist, unpacked by scripts/setup) against `khub serve`.

  run.py --khub build/bin/khub --work .conformance [--tls] [--junit FILE] [-- extra pytest args]

Starts `khub serve` on a fresh root with the users the tests name (see SERVER_CONFIG), runs the modules and
classes in selected.txt minus the tests in deselected.txt (each with its reason), and prints passed / failed
/ skipped / deselected per file. Fails when a test fails that known-failures.txt does not list (a regression),
and prints the known failures that now pass (so the list shrinks). Fetches nothing: the sdist is already here.
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
SDIST = "huggingface_hub-2.4.0"

# The users, tokens and organisations of huggingface_hub's tests/testing_constants.py (dummy values of
# huggingface's staging CI), given to the server so the tests run unchanged.
SERVER_CONFIG = {
    "tokens": [
        {"token": "hf_HubCITokenXXXXXXXXXXXXXXXXXXXXX", "user": "__DUMMY_HUB_USER__", "fullname": "Dummy User",
         "access": "write", "orgs": ["valid_org_hub"], "namespaces": ["__DUMMY_HUB_USER__"]},
        {"token": "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", "user": "DVUser", "access": "write",
         "namespaces": ["DVUser"]},
        {"token": "hf_enterprise_admin_token", "user": "EnterpriseAdmin", "access": "write",
         "orgs": ["EnterpriseOrgPrivate"], "namespaces": ["EnterpriseAdmin", "EnterpriseOrgPrivate"]},
    ],
    "organizations": [{"name": "valid_org_hub", "fullname": "Dummy Hub Org"},
                      {"name": "EnterpriseOrgPrivate", "private_by_default": True}],
    "trusted_orgs": ["kernels-community"],
}


def read_list(name):
    """Lines of a list file without comments; `nodeid  # reason` keeps the node id."""
    out = []
    for line in (HERE / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return out


def start_server(khub, root, config_path, tls):
    args = [khub, "serve", "--root", str(root), "--port", "0", "--config", str(config_path), "-q"]
    if tls:
        args += ["--tls-cert", str(tls[0]), "--tls-key", str(tls[1])]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r"listening on (\S+)", line)
    if not m:
        proc.kill()
        sys.exit(f"run.py: khub serve did not start: {line!r}")
    return proc, m.group(1).rstrip("/")


def make_ca(tmp):
    """A throw-away CA and a server certificate for 127.0.0.1 / localhost signed by it."""
    def ssl(*a):
        subprocess.run(["openssl", *a], check=True, capture_output=True)
    ca_key, ca_crt = tmp / "ca.key", tmp / "ca.pem"
    key, csr, crt, ext = tmp / "server.key", tmp / "server.csr", tmp / "server.pem", tmp / "ext.cnf"
    ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=khub conformance CA",
        "-keyout", str(ca_key), "-out", str(ca_crt))
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(csr))
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    ssl("x509", "-req", "-in", str(csr), "-CA", str(ca_crt), "-CAkey", str(ca_key), "-CAcreateserial",
        "-days", "2", "-extfile", str(ext), "-out", str(crt))
    return crt, key, ca_crt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--khub", required=True)
    ap.add_argument("--work", required=True, help="the folder scripts/setup unpacked the sdist into")
    ap.add_argument("--tls", action="store_true", help="serve HTTPS with a throw-away CA")
    ap.add_argument("--junit")
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()

    src = Path(a.work).resolve() / SDIST
    if not (src / "tests" / "test_hf_api.py").is_file():
        print(f"run.py: {src}/tests is missing: run scripts/setup (it unpacks huggingface_hub's sdist)")
        return 77  # ctest SKIP_RETURN_CODE
    # The sdist has no tests/conftest.py and no tests/__init__.py: ours go in (each run, so edits apply).
    shutil.copyfile(HERE / "conftest.py", src / "tests" / "conftest.py")
    (src / "tests" / "__init__.py").touch()

    selected = read_list("selected.txt")
    known = set(read_list("known-failures.txt"))

    with tempfile.TemporaryDirectory(prefix="khub-conformance-") as tmp:
        tmp = Path(tmp)
        config = tmp / "serve.json"
        config.write_text(json.dumps(SERVER_CONFIG))
        env = dict(os.environ)
        tls = None
        if a.tls:
            crt, key, ca = make_ca(tmp)
            tls = (crt, key)
            env["REQUESTS_CA_BUNDLE"] = env["SSL_CERT_FILE"] = str(ca)
        server, url = start_server(a.khub, tmp / "root", config, tls)
        junit = Path(a.junit) if a.junit else tmp / "junit.xml"
        env.update({
            "KHUB_CONFORMANCE_ENDPOINT": url,
            "HF_ENDPOINT": url,
            "HF_HOME": str(tmp / "hf-home"),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "NO_COLOR": "1",
            "DISABLE_SYMLINKS_IN_WINDOWS_TESTS": "1",
        })
        # As the sdist's pytest-env settings, but without HUGGINGFACE_CO_STAGING (it overrides HF_ENDPOINT).
        for k in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_DISABLE_XET", "HUGGINGFACE_CO_STAGING"):
            env.pop(k, None)
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "addopts=",
               "-W", "error::FutureWarning", "-W", "ignore::pytest.PytestConfigWarning", "--strict-markers", f"--junitxml={junit}", "-rfE",
               *selected, *a.pytest_args]
        env["KHUB_CONFORMANCE_DESELECT"] = str(HERE / "deselected.txt")
        env["KHUB_CONFORMANCE_DESELECTED_OUT"] = str(tmp / "deselected.out")
        t0 = time.time()
        try:
            rc = subprocess.run(cmd, cwd=src, env=env).returncode
        finally:
            server.terminate()
            server.wait(timeout=30)
        took = time.time() - t0
        out = tmp / "deselected.out"
        dropped = out.read_text().split() if out.is_file() else []
        return report(junit, dropped, known, took, rc)


def report(junit, deselected, known, took, rc):
    if not junit.is_file():
        print(f"run.py: pytest wrote no report (exit {rc})")
        return 1
    per_file = collections.defaultdict(collections.Counter)
    failed = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        cls = case.get("classname", "")
        parts = cls.split(".")
        # classname "tests.test_hf_api.TestX" -> tests/test_hf_api.py::TestX::name
        mod_i = next((i for i, p in enumerate(parts) if p.startswith("test_")), len(parts) - 1)
        file = "/".join(parts[: mod_i + 1]) + ".py"
        nodeid = "::".join([file, *parts[mod_i + 1:], case.get("name")])
        if case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
            failed.append(nodeid)
        elif case.find("skipped") is not None:
            outcome = "skipped"
        else:
            outcome = "passed"
        per_file[file][outcome] += 1
    for d in deselected:
        per_file[d.split("::")[0]]["deselected"] += 1
    print(f"\nconformance: huggingface_hub 2.4.0 tests against khub serve ({took:.0f} s)")
    total = collections.Counter()
    for file in sorted(per_file):
        c = per_file[file]
        total.update(c)
        print(f"  {file}: {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped, "
              f"{c['deselected']} deselected")
    print(f"  total: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped, "
          f"{total['deselected']} deselected")
    new = [f for f in failed if f not in known]
    fixed = sorted(k for k in known if k not in failed)
    if fixed:
        print("known failures that passed or did not run (remove them from known-failures.txt):")
        for f in fixed:
            print("  " + f)
    if new:
        print("failures not in known-failures.txt:")
        for f in new:
            print("  " + f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
