"""Prints the Triton code torch.compile generates for the suite's cases (TORCH_LOGS=output_code), to see
how inductor schedules a shape (block size, rows per program, warps, cache hints) where its CUDA-graph
replay is faster than khub's kernel.

usage: python3 compile_code.py [substring of "op shape dtype" ...] 2> code.txt
"""
import os
import sys

os.environ.setdefault("TORCH_LOGS", "output_code")
import torch  # noqa: E402

import baselines  # noqa: E402


def main():
    wanted = sys.argv[1:]
    for op, shape, dt, _, mk, fns, comp, _khub in baselines.cases():
        name = f"{op} {shape} {baselines.DTYPE_NAMES[dt]}"
        if not comp or (wanted and not any(w in name for w in wanted)):
            continue
        print(f"==== {name}", file=sys.stderr, flush=True)
        torch._dynamo.reset()  # a fresh compile per case (dynamo's recompile limit, as in baselines.py)
        fn = torch.compile(next(iter(fns.values())), dynamic=False)
        fn(*mk())
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
