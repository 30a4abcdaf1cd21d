"""`khub check` on stable-ABI variants agrees with kernel-abi-check (the oracle).

usage: stable_abi_check_interop.py <khub> <kernels source dir> <bad module>
   (ctest: kernels_stable_abi_check_interop, labels torch;interop)
For every native module of the bundled kernels' torch-stable-abi* variants, and for a deliberately
bad module laid out as a torch-stable-abi210 variant, khub's manylinux_2_28 and abi3 findings equal
kernel_abi_check's (ObjectFile.check_manylinux / check_python_abi). The installed kernel-abi-check
0.14.1 has no Python binding for its torch-stable-abi rule (kernel-builder's `check-abi
--torch-stable-abi`), so khub's findings for that rule are checked against what the bad module is
known to contain: the 2.11 shim function and the c10 function, and nothing on the bundled modules.
"""
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import kernel_abi_check as kac

khub, root, bad = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])


def oracle(so: Path) -> set:
    o = kac.ObjectFile(str(so))
    out = {f"manylinux {v.name}@{v.dep}_{v.version}" for v in o.check_manylinux("manylinux_2_28")}
    for v in o.check_python_abi("3.9"):
        out.add(f"abi3 {v.name}")
    return out


def khub_findings(build: Path) -> dict:
    r = subprocess.run([khub, "check", str(build), "--json"], capture_output=True, text=True)
    report = json.loads(r.stdout)
    per_file = {}
    for f in report["findings"]:
        per_file.setdefault(f["file"], []).append(f)
    return per_file


def khub_abi(findings: list) -> set:
    out = set()
    for f in findings:
        if f["check"] == "manylinux":
            out.add("manylinux " + f["message"].split(" is not allowed")[0])
        elif f["check"] == "abi3":
            m = re.match(r"(?:Non-ABI3 symbol: )?(\w+)", f["message"])
            out.add("abi3 " + m.group(1))
    return out


checked = 0
for build in sorted(root.glob("*/build")):
    found = khub_findings(build)
    for so in sorted(build.glob("torch-stable-abi*/*.so")):
        rel = f"{so.parent.name}/{so.name}"
        assert khub_abi(found.get(rel, [])) == oracle(so), (rel, found.get(rel), oracle(so))
        assert not [f for f in found.get(rel, []) if f["check"] == "torch-stable-abi"], found.get(rel)
        checked += 1
assert checked >= 8, f"only {checked} stable-ABI modules found under {root}"

with tempfile.TemporaryDirectory() as tmp:
    variant = Path(tmp) / "build" / "torch-stable-abi210-cpu-x86_64-linux"
    variant.mkdir(parents=True)
    shutil.copy(bad, variant / "_bad_cpu_stable_0000000.abi3.so")
    (variant / "__init__.py").write_text("")
    (variant / "metadata.json").write_text(json.dumps(
        {"name": "bad", "id": "_bad_cpu_stable_0000000", "version": 1, "license": "Apache-2.0",
         "python-depends": [], "backend": {"type": "cpu"}}))
    subprocess.run([khub, "hash", str(Path(tmp) / "build")], check=True, capture_output=True)
    rel = "torch-stable-abi210-cpu-x86_64-linux/_bad_cpu_stable_0000000.abi3.so"
    found = khub_findings(Path(tmp) / "build").get(rel, [])
    want = oracle(variant / "_bad_cpu_stable_0000000.abi3.so")
    assert any(w.startswith("manylinux pthread_create") for w in want) and "abi3 PyCode_NewEmpty" in want, want
    assert khub_abi(found) == want, (khub_abi(found), want)
    stable = sorted(f["message"] for f in found if f["check"] == "torch-stable-abi")
    assert stable == [
        "uses c10::detail::torchCheckFail(char const*, char const*, unsigned int, char const*), "
        "which is not part of the Torch stable ABI",
        "uses torch_from_blob, added to torch's C shim in 2.11, after the stable-ABI target 2.10",
    ], stable
print(f"stable-ABI check interop: {checked} bundled modules and the bad one agree with kernel-abi-check")
