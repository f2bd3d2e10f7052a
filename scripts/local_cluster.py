r"""Runs a training script as a multi-worker group on this machine, and starts the group again
where a worker is lost (killed, preempted), from the last checkpoint, up to --max_restarts:
what a cluster manager does on real machines (docs/RELIABILITY.md, "A lost worker").

    python scripts/local_cluster.py --num_workers=2 --max_restarts=3 -- \
      run_pretraining.py --input_file=... --output_dir=output/two_workers --do_train=true \
      --resume_input=true --seed=1

Each worker gets its TF_CONFIG (local ports, worker 0 the chief) and
--distribution_strategy=multi_worker_mirrored; its output lines start with "[worker i]". The
exit status is the group's: 0 when every worker finished.
"""

from __future__ import annotations

from bert_tf import cli  # first: it quiets TensorFlow's start-up, before TensorFlow loads

# isort: split
import sys

from absl import flags

from bert_tf.options import Options, check_options, non_negative, option, options, positive
from bert_tf.training.local_cluster import run_local_cluster


@options
class LocalClusterOptions(Options):
    num_workers: int = option(2, "How many local workers to start.", positive)
    max_restarts: int = option(
        3,
        "How many times to start the group again after a worker is lost (exit status 75), "
        "preempted (143) or killed by a signal; 0: never.",
        non_negative,
    )


def main(argv: list[str]) -> None:
    options = cli.options_from_flags(LocalClusterOptions, flags.FLAGS)
    check_options(options)
    # absl leaves what follows "--" in argv: the workers' command.
    sys.exit(run_local_cluster(argv[1:], options.num_workers, options.max_restarts))


if __name__ == "__main__":
    cli.define_flags(LocalClusterOptions)
    cli.run(main)
