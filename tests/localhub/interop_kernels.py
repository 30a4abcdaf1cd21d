"""Interop check: the `kernels` package loads a kernel published to `khub serve`.

A kernel-builder layout repo with one pure-Python noarch variant (`build/torch-cpu`, backend cpu)
is uploaded to branch v1 of a kernel repo in an organisation the server reports as a trusted
publisher; `get_kernel(repo, version=1)` must find it through the org overview, refs, tree and
resolve endpoints, load it and compute the right values on CPU. The variant's 3 MiB data file goes
up and comes back through Xet (huggingface_hub's default). The same kernel in an untrusted
organisation must be refused.
"""
import hashlib
import json
import os
import random
import sys
import tempfile
from pathlib import Path

# Telemetry stays on: kernels 0.17.2 builds an invalid User-Agent ("…; ") when it is disabled.
os.environ.pop("HF_HUB_DISABLE_TELEMETRY", None)

INIT_PY = '''import hashlib
import pathlib

import torch

# A data file of the variant, large enough to travel through Xet both ways.
TABLE_SHA256 = hashlib.sha256((pathlib.Path(__file__).parent / "table.bin").read_bytes()).hexdigest()

def relu(x: torch.Tensor) -> torch.Tensor:
    return torch.clamp(x, min=0)

def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]
'''


TABLE = random.Random(7).randbytes(3 << 20)


def publish(api, repo_id: str, root: Path):
    variant = root / "build" / "torch-cpu"
    variant.mkdir(parents=True, exist_ok=True)
    (variant / "__init__.py").write_text(INIT_PY)
    (variant / "table.bin").write_bytes(TABLE)
    metadata = {"id": "_khub_interop_relu_cpu", "name": "khub-interop-relu", "version": 1,
                "license": "apache-2.0", "backend": {"type": "cpu"}, "python-depends": []}
    (variant / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
    api.create_repo(repo_id, repo_type="kernel", exist_ok=True)
    api.create_branch(repo_id, repo_type="kernel", branch="v1", exist_ok=True)
    api.upload_folder(folder_path=str(root), repo_id=repo_id, repo_type="kernel", revision="v1",
                      commit_message="Uploaded using `khub`.")


def main():
    trusted = os.environ["KHUB_TRUSTED_ORG"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["HF_HOME"] = str(tmp / "hf-home")
        os.environ["KERNELS_CACHE"] = str(tmp / "kernels-cache")
        from huggingface_hub import HfApi
        import torch
        from kernels import get_kernel

        api = HfApi()
        publish(api, f"{trusted}/relu-cpu", tmp / "src")
        publish(api, "untrusted-org/relu-cpu", tmp / "src")

        kernel = get_kernel(f"{trusted}/relu-cpu", version=1, backend="cpu")
        x = torch.tensor([[-1.0, 2.0, -3.0, 4.0]])
        torch.testing.assert_close(kernel.relu(x), torch.tensor([[0.0, 2.0, 0.0, 4.0]]))
        ref = torch.nn.functional.silu(x[..., :2]) * x[..., 2:]
        torch.testing.assert_close(kernel.silu_and_mul(x), ref)
        if kernel.TABLE_SHA256 != hashlib.sha256(TABLE).hexdigest():
            raise AssertionError("the kernel's table.bin differs from the one uploaded")
        tree = {e.path: e for e in api.list_repo_tree(f"{trusted}/relu-cpu", repo_type="kernel", revision="v1",
                                                      recursive=True)}
        if not getattr(tree["build/torch-cpu/table.bin"], "xet_hash", None):
            raise AssertionError("table.bin must have been uploaded through Xet")

        try:
            get_kernel("untrusted-org/relu-cpu", version=1, backend="cpu")
            raise AssertionError("an untrusted publisher must be refused")
        except ValueError as e:
            if "not from a trusted publisher" not in str(e):
                raise
    print("interop_kernels: ok")


if __name__ == "__main__":
    sys.exit(main())
