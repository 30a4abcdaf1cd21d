"""Uploads a folder to `khub serve` with the default huggingface_hub install (hf_xet, Xet on) and
leaves a copy of what it sent in KHUB_EXPECT_DIR, so that another client can be checked against it.

Run with HF_ENDPOINT, HF_TOKEN (write), HF_HOME and HF_XET_CACHE of the run; argv[1] is the repo id.
"""
import os
import random
import shutil
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from huggingface_hub import HfApi  # noqa: E402
from huggingface_hub.utils._runtime import is_xet_available  # noqa: E402


def main():
    if "HF_HUB_DISABLE_XET" in os.environ or not is_xet_available():
        sys.exit("this upload is about the default install: hf_xet present, Xet on")
    repo_id, expect = sys.argv[1], Path(os.environ["KHUB_EXPECT_DIR"])
    rng = random.Random(30)
    files = {
        "model.bin": rng.randbytes(9 << 20),                     # several xorbs' worth of chunks
        "shards/part-1.safetensors": rng.randbytes((3 << 20) + 777),
        "shards/part-2.safetensors": bytes(5 << 20),              # all zero: repeated chunks
        "config.json": b'{"hidden": 8}\n',
    }
    for rel, data in files.items():
        (expect / rel).parent.mkdir(parents=True, exist_ok=True)
        (expect / rel).write_bytes(data)
    api = HfApi()
    api.create_repo(repo_id)
    api.upload_folder(folder_path=str(expect), repo_id=repo_id, commit_message="uploaded by hf_xet")
    shutil.rmtree(Path(os.environ["HF_XET_CACHE"]), ignore_errors=True)
    print("uploaded")


if __name__ == "__main__":
    main()
