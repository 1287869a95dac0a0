"""Accelerate's notebook_launcher, as a notebook calls it, around
accelerate_fit.py's training function: `python -m accelerate_notebook
accelerate_fit.py CONFIG_JSON` runs notebook_launcher(main, (config,),
num_processes=2) in this process, which forks the ranks through torch's
elastic launcher (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE set, as
torchrun sets them; without a GPU each rank is Accelerate's MULTI_CPU).
test_accelerate.py runs it."""
import importlib
import json
import os
import sys

from trainer_runs import RANKS, free_port


def main(script, config):
    # By module name (the script's folder is on PYTHONPATH): its torch.cpu
    # shim comes before accelerate is imported.
    fit = importlib.import_module(os.path.splitext(os.path.basename(script))[0])
    from accelerate import notebook_launcher
    notebook_launcher(fit.main, args=(config,), num_processes=RANKS, master_addr='127.0.0.1',
                      use_port=str(free_port()))


if __name__ == '__main__':
    main(os.path.abspath(sys.argv[1]), json.loads(sys.argv[2]))
