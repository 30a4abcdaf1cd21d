"""Interop check: `khub lock` writes the same kernels.lock as `kernels lock`, and kernels reads it.

Against `khub serve`: a trusted organisation holds `app` (v1, whose variant's metadata.json
depends on `dep` version 1 and on `pinned` at a commit) and `dep` and `pinned`; an untrusted
organisation holds `stray`. For a project depending on `app` = 1, both tools must lock all three
kernels to the same commits in the same bytes, and kernels must read khub's file. For a project
that also depends on the untrusted kernel, both must refuse, and khub must leave no file.
KHUB_CLI names the khub binary, KHUB_TRUSTED_ORG the trusted organisation.
"""
import json
import os
import subprocess
import sys
import tempfile
from argparse import Namespace
from pathlib import Path

os.environ.pop("HF_HUB_DISABLE_TELEMETRY", None)  # kernels 0.17.2's User-Agent breaks without it


def publish(api, repo_id: str, root: Path, depends: list) -> str:
    variant = root / repo_id.replace("/", "--") / "build" / "torch-cpu"
    variant.mkdir(parents=True, exist_ok=True)
    (variant / "__init__.py").write_text("def f():\n    return 1\n")
    metadata = {"id": "_lock_" + repo_id.split("/")[1], "name": repo_id.split("/")[1], "version": 1,
                "license": "apache-2.0", "backend": {"type": "cpu"}, "python-depends": [],
                "kernel-depends": depends}
    (variant / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
    api.create_repo(repo_id, repo_type="kernel", exist_ok=True)
    api.create_branch(repo_id, repo_type="kernel", branch="v1", exist_ok=True)
    info = api.upload_folder(folder_path=str(variant.parent.parent), repo_id=repo_id, repo_type="kernel",
                             revision="v1", commit_message="lock interop")
    return info.oid


def khub_lock(project: Path) -> subprocess.CompletedProcess:
    return subprocess.run([os.environ["KHUB_CLI"], "lock", str(project)], capture_output=True, text=True)


def kernels_lock(project: Path) -> None:
    from kernels.cli.lock import lock_kernels

    lock_kernels(Namespace(project_dir=project))


def project(root: Path, name: str, deps: dict) -> Path:
    p = root / name
    p.mkdir()
    lines = ["[tool.kernels.dependencies]"] + [f'"{k}" = {v}' for k, v in deps.items()]
    (p / "pyproject.toml").write_text("\n".join(lines) + "\n")
    return p


def main():
    org = os.environ["KHUB_TRUSTED_ORG"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["KERNELS_CACHE"] = str(tmp / "kernels-cache")
        from huggingface_hub import HfApi
        from kernels._rust import KernelLocks

        api = HfApi()
        pinned = publish(api, f"{org}/pinned", tmp / "src", [])
        dep = publish(api, f"{org}/dep", tmp / "src", [])
        app = publish(api, f"{org}/app", tmp / "src",
                      [{"repo-id": f"{org}/dep", "version": 1}, {"repo-id": f"{org}/pinned", "revision": pinned}])
        publish(api, "stray-org/stray", tmp / "src", [])

        a, b = project(tmp, "a", {f"{org}/app": 1}), project(tmp, "b", {f"{org}/app": 1})
        kernels_lock(a)
        done = khub_lock(b)
        assert done.returncode == 0, done.stderr
        ours, theirs = (b / "kernels.lock").read_text(), (a / "kernels.lock").read_text()
        assert ours == theirs, f"khub:\n{ours}\nkernels:\n{theirs}"
        locks = KernelLocks.from_json(ours)
        commits = sorted(lock.commit for lock in locks.values())
        assert commits == sorted([app, dep, pinned]), commits

        c, d = project(tmp, "c", {f"{org}/app": 1, "stray-org/stray": 1}), project(tmp, "d", {"stray-org/stray": 1})
        try:
            kernels_lock(c)
            raise AssertionError("kernels locked an untrusted publisher's kernel")
        except ValueError as e:
            assert "not from a trusted publisher" in str(e), e
        refused = khub_lock(d)
        assert refused.returncode == 1, (refused.returncode, refused.stderr)
        assert "not from a trusted publisher" in refused.stderr, refused.stderr
        assert not (d / "kernels.lock").exists()
    print("interop_lock: ok")


if __name__ == "__main__":
    sys.exit(main())
