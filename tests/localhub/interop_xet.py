"""Interop check: the default huggingface_hub install (hf_xet present, Xet not disabled) uploads to
and downloads from `khub serve` through Xet.

Run with HF_ENDPOINT pointing at the server, HF_TOKEN a write token, HF_HOME and HF_XET_CACHE in a
folder of this run. upload_folder sends a folder of large random files, small files and a
sub-folder; hf_hub_download and snapshot_download read every byte back. upload_file of a file and
a second commit changing one byte of it: both revisions download as they were committed.
"""
import hashlib
import os
import random
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from huggingface_hub import HfApi, hf_hub_download, snapshot_download  # noqa: E402
from huggingface_hub.utils._runtime import is_xet_available  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def random_bytes(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def make_folder(root: Path) -> dict:
    files = {
        "README.md": b"# xet interop\n",
        "config.json": b'{"hidden": 8}\n',
        "weights/model.bin": random_bytes(6 << 20, 1),          # several xorb-sized pieces of chunks
        "weights/extra.safetensors": random_bytes(3 << 20, 2),
        "data/sub/nested.bin": random_bytes((2 << 20) + 12345, 3),
        "data/sub/small.txt": b"small text in a sub-folder\n",
        "tiny.bin": b"\x00\x01 tiny binary",
    }
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return files


def tree_of(api: HfApi, repo_id: str, revision: str = "main") -> dict:
    return {e.path: e for e in api.list_repo_tree(repo_id, recursive=True, revision=revision) if hasattr(e, "size")}


def folder_round_trip(api: HfApi, tmp: Path):
    repo_id = "xet-org/folder"
    api.create_repo(repo_id)
    files = make_folder(tmp / "folder")
    info = api.upload_folder(folder_path=str(tmp / "folder"), repo_id=repo_id, commit_message="xet upload")
    check(len(info.oid) == 40, f"commit oid {info.oid}")

    tree = tree_of(api, repo_id)
    for rel, data in files.items():
        check(rel in tree and tree[rel].size == len(data), f"tree entry {rel}")
    for rel in ("weights/model.bin", "weights/extra.safetensors", "data/sub/nested.bin"):
        entry = tree[rel]
        check(entry.lfs is not None and entry.lfs.sha256 == hashlib.sha256(files[rel]).hexdigest(),
              f"{rel} must be an LFS entry with its sha256")
        check(entry.xet_hash is not None and len(entry.xet_hash) == 64, f"{rel} must have come through Xet")
    check(tree["README.md"].xet_hash is None, "regular files have no Xet hash")

    for rel, data in files.items():
        p = hf_hub_download(repo_id, rel, cache_dir=str(tmp / "cache-dl"))
        check(Path(p).read_bytes() == data, f"hf_hub_download bytes of {rel}")
    snap = Path(snapshot_download(repo_id, cache_dir=str(tmp / "cache-snap")))
    got = {str(p.relative_to(snap)): p.read_bytes() for p in snap.rglob("*") if p.is_file()}
    got.pop(".gitattributes", None)
    check(got.keys() == files.keys(), f"snapshot files {sorted(got)}")
    for rel, data in files.items():
        check(got[rel] == data, f"snapshot_download bytes of {rel}")

    # Unchanged files are skipped: a second upload makes no new commit.
    again = api.upload_folder(folder_path=str(tmp / "folder"), repo_id=repo_id)
    check(again.oid == info.oid, "re-upload of identical files must not create a commit")


def one_byte_change(api: HfApi, tmp: Path):
    repo_id = "xet-org/single"
    api.create_repo(repo_id)
    first = random_bytes(4 << 20, 4)
    c1 = api.upload_file(path_or_fileobj=first, path_in_repo="blob.bin", repo_id=repo_id, commit_message="v1")
    second = bytearray(first)
    second[len(second) // 2] ^= 0xFF
    second = bytes(second)
    path = tmp / "blob.bin"
    path.write_bytes(second)  # from a path this time (hf_xet reads the file itself)
    c2 = api.upload_file(path_or_fileobj=str(path), path_in_repo="blob.bin", repo_id=repo_id, commit_message="v2")
    check(c1.oid != c2.oid, "the second commit must be new")
    h1 = tree_of(api, repo_id, c1.oid)["blob.bin"].xet_hash
    h2 = tree_of(api, repo_id, c2.oid)["blob.bin"].xet_hash
    check(h1 and h2 and h1 != h2, f"each revision has its own Xet hash ({h1}, {h2})")
    for rev, data in ((c1.oid, first), (c2.oid, second), ("main", second)):
        p = hf_hub_download(repo_id, "blob.bin", revision=rev, cache_dir=str(tmp / "cache-rev"))
        check(Path(p).read_bytes() == data, f"bytes of blob.bin at {rev}")


def main():
    check("HF_HUB_DISABLE_XET" not in os.environ, "this test is about the default install: Xet stays on")
    check(is_xet_available(), "hf_xet must be installed and enabled")
    api = HfApi()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder_round_trip(api, tmp)
        one_byte_change(api, tmp)
    print("interop_xet: ok")


if __name__ == "__main__":
    sys.exit(main())
