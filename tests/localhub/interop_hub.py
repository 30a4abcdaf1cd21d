"""Interop check: huggingface_hub against `khub serve`, through Git LFS.

Run with HF_ENDPOINT pointing at the server (and HF_TOKEN when it requires one); interop_test.cpp
runs it with HF_HUB_DISABLE_XET=1 to check the LFS path clients without Xet take (interop_xet.py
checks the default, Xet, path). Exercises repo
creation (kernel and model types), upload_folder with small files and one >= 20 MB LFS file,
branches, refs, tree listing, hf_hub_download, snapshot_download with allow_patterns and repo
info; every call must succeed and every downloaded byte must match what was uploaded.
"""
import hashlib
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from huggingface_hub import HfApi, hf_hub_download, snapshot_download  # noqa: E402
from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def make_folder(root: Path, big_mb: int) -> dict:
    files = {
        "README.md": b"# interop\n",
        "config.json": b'{"hidden": 8}\n',
        "build/torch-cpu/__init__.py": b"from ._ops import ops\n",
        "build/torch-cpu/sub/dir/data.txt": b"z",
        "empty.txt": b"",
        "weights/big.bin": os.urandom(1 << 20) * big_mb,  # >= 20 MB: LFS via size
    }
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return files


def exercise(api: HfApi, repo_id: str, repo_type: str, files: dict, folder: Path, cache: Path):
    url = api.create_repo(repo_id, repo_type=repo_type)
    check(url.repo_id == repo_id, f"create_repo url {url!r}")
    api.create_repo(repo_id, repo_type=repo_type, exist_ok=True)  # 409 -> fine
    try:
        api.create_repo(repo_id, repo_type=repo_type)
        raise AssertionError("second create_repo without exist_ok must fail")
    except HfHubHTTPError as e:
        check(e.response.status_code == 409, f"second create: {e.response.status_code}")

    info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type=repo_type,
                             commit_message="interop upload")
    check(len(info.oid) == 40, f"commit oid {info.oid}")
    # Unchanged files are skipped: a second upload makes no new commit.
    again = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type=repo_type)
    check(again.oid == info.oid, "re-upload of identical files must not create a commit")

    api.create_branch(repo_id, repo_type=repo_type, branch="v1")
    api.create_branch(repo_id, repo_type=repo_type, branch="v1", exist_ok=True)
    api.create_tag(repo_id, repo_type=repo_type, tag="t1", revision="v1")
    refs = api.list_repo_refs(repo_id, repo_type=repo_type)
    branches = {b.name: b.target_commit for b in refs.branches}
    check(branches.get("v1") == info.oid and branches.get("main") == info.oid, f"refs {branches}")
    check([t.name for t in refs.tags] == ["t1"], f"tags {refs.tags}")

    tree = {e.path: e for e in api.list_repo_tree(repo_id, repo_type=repo_type, recursive=True, revision="v1")}
    for rel, data in files.items():
        check(rel in tree and tree[rel].size == len(data), f"tree entry {rel}")
    big = tree["weights/big.bin"]
    check(big.lfs is not None and big.lfs.sha256 == hashlib.sha256(files["weights/big.bin"]).hexdigest(),
          "big.bin must be an LFS file with the right sha256")
    top = [e.path for e in api.list_repo_tree(repo_id, repo_type=repo_type, path_in_repo="build")]
    check(top == ["build/torch-cpu"], f"non-recursive listing {top}")

    ri = api.repo_info(repo_id, repo_type=repo_type, revision="v1")
    check(ri.sha == info.oid, "repo_info sha")

    for rel, data in files.items():
        p = hf_hub_download(repo_id, rel, repo_type=repo_type, revision="v1", cache_dir=str(cache))
        check(Path(p).read_bytes() == data, f"download bytes of {rel}")
    try:
        hf_hub_download(repo_id, "missing.txt", repo_type=repo_type, cache_dir=str(cache))
        raise AssertionError("missing file must raise")
    except EntryNotFoundError:
        pass

    snap = Path(snapshot_download(repo_id, repo_type=repo_type, revision=info.oid, cache_dir=str(cache / "snap"),
                                  allow_patterns=["build/*"]))
    got = sorted(str(p.relative_to(snap)) for p in snap.rglob("*") if p.is_file())
    check(got == ["build/torch-cpu/__init__.py", "build/torch-cpu/sub/dir/data.txt"], f"snapshot files {got}")

    api.delete_file("config.json", repo_id, repo_type=repo_type)
    check(not api.file_exists(repo_id, "config.json", repo_type=repo_type), "deleted file still exists")
    check(api.file_exists(repo_id, "config.json", repo_type=repo_type, revision="v1"), "v1 must keep config.json")
    api.delete_branch(repo_id, repo_type=repo_type, branch="v1")
    check("v1" not in {b.name for b in api.list_repo_refs(repo_id, repo_type=repo_type).branches}, "branch deleted")


def exercise_private(api: HfApi, cache: Path):
    """A private repo is readable with the token and answers 401 without it. (huggingface_hub maps
    that 401 to RepositoryNotFoundError only for https:// endpoints, so check the status.)"""

    repo_id = "interop-org/private-repo"
    api.create_repo(repo_id, repo_type="model", private=True)
    api.upload_file(path_or_fileobj=b"secret\n", path_in_repo="s.txt", repo_id=repo_id)
    check(api.repo_info(repo_id).private is True, "repo_info must say private")
    p = hf_hub_download(repo_id, "s.txt", cache_dir=str(cache))
    check(Path(p).read_bytes() == b"secret\n", "private download bytes")
    try:
        hf_hub_download(repo_id, "s.txt", cache_dir=str(cache / "anon"), token=False)
        raise AssertionError("anonymous download of a private repo must fail")
    except HfHubHTTPError as e:
        check(e.response.status_code == 401, f"anonymous private download: {e.response.status_code}")
    api.auth_check(repo_id, write=True)
    api.update_repo_settings(repo_id, private=False)
    p = hf_hub_download(repo_id, "s.txt", cache_dir=str(cache / "anon2"), token=False)
    check(Path(p).read_bytes() == b"secret\n", "public again: anonymous download")


def main():
    big_mb = int(os.environ.get("KHUB_INTEROP_BIG_MB", "21"))
    api = HfApi()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        files = make_folder(tmp / "folder", big_mb)
        exercise(api, "interop-org/kernel-repo", "kernel", files, tmp / "folder", tmp / "cache-k")
        exercise(api, "interop-org/model-repo", "model", files, tmp / "folder", tmp / "cache-m")
        if os.environ.get("HF_TOKEN"):
            exercise_private(api, tmp / "cache-p")
    print("interop_hub: ok")


if __name__ == "__main__":
    sys.exit(main())
