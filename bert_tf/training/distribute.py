"""Choosing the `tf.distribute` strategy the scripts run under.

- one_device: the first GPU, else the CPU.
- mirrored: synchronous data parallelism over `num_gpus` GPUs of this machine. On a machine
  without GPUs it runs `num_gpus` replicas on logical CPU devices, which exercises the same
  code path (used by the tests; not faster).
- multi_worker_mirrored: several machines (or processes), each described by TF_CONFIG.
- tpu: a Cloud TPU, found as the original finds it (tpu_name / tpu_zone / gcp_project).
"""

from __future__ import annotations

import logging
import re

import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.training.options import STRATEGIES, DistributionOptions
from bert_tf.training.preemption import sigterm_held

logger = logging.getLogger(__name__)


def get_strategy(
    distribution_strategy: str = "one_device",
    num_gpus: int = 1,
    tpu_name: str | None = None,
    tpu_zone: str | None = None,
    gcp_project: str | None = None,
) -> tf.distribute.Strategy:
    """Builds the strategy; call it before TensorFlow runs anything (logical devices are
    fixed at first use)."""
    if distribution_strategy not in STRATEGIES:
        raise ValueError(
            f"distribution_strategy={distribution_strategy!r}; expected one of {list(STRATEGIES)}"
        )
    if distribution_strategy == "tpu":
        # The original's path: resolve, connect, initialize, then a TPUStrategy (untested here).
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
            tpu=tpu_name or "", zone=tpu_zone, project=gcp_project
        )
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    if distribution_strategy == "multi_worker_mirrored":
        # A lost worker is found by the coordination service's heartbeats (TensorFlow's
        # default: 10 s), which abort every survivor's collectives; a collective timeout
        # (CommunicationOptions) is not set: TensorFlow calls it a debugging aid (a thread per
        # collective), and a slow step would trip it.
        with sigterm_held():
            return tf.distribute.MultiWorkerMirroredStrategy()
    gpus = tf.config.list_physical_devices("GPU")
    if distribution_strategy == "one_device":
        return tf.distribute.OneDeviceStrategy("/gpu:0" if gpus else "/cpu:0")
    if gpus:
        return tf.distribute.MirroredStrategy([f"/gpu:{i}" for i in range(num_gpus)])
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(num_gpus)]
    )
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(num_gpus)])


def make_strategy(options: DistributionOptions) -> tf.distribute.Strategy:
    """The strategy the flags ask for (call before any other TensorFlow work). As the
    original, --use_tpu (or a --tpu_name) means a TPU."""
    return get_strategy(
        "tpu" if options.use_tpu or options.tpu_name else options.distribution_strategy,
        num_gpus=options.num_gpus,
        tpu_name=options.tpu_name or options.master,
        tpu_zone=options.tpu_zone,
        gcp_project=options.gcp_project,
    )


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """Whether this process writes the outputs (the only process, or TF_CONFIG's chief or
    worker 0 under multi-worker training)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) or resolver is None:
        return True
    task_type, task_id = resolver.task_type, resolver.task_id
    if task_type is None:
        return True
    has_chief = "chief" in resolver.cluster_spec().jobs
    return task_type == "chief" or (not has_chief and task_type == "worker" and task_id == 0)


def num_workers(strategy: tf.distribute.Strategy) -> int:
    """How many processes take part (TF_CONFIG's chief and workers; 1 outside multi-worker)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) or resolver is None:
        return 1
    spec = resolver.cluster_spec()
    return sum(spec.num_tasks(job) for job in ("chief", "worker") if job in spec.jobs) or 1


def task_name(strategy: tf.distribute.Strategy) -> str:
    """This process's place in TF_CONFIG ("worker 1", "chief 0"); "" outside multi-worker."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if num_workers(strategy) == 1 or resolver is None or resolver.task_type is None:
        return ""
    return f"{resolver.task_type} {resolver.task_id}"


# The errors with which TensorFlow aborts a survivor's collectives when a peer is lost (its
# heartbeats stopped: "Collective ops is aborted by: ... unhealthy"; or its connection reset).
_PEER_ERRORS = (
    tf.errors.UnavailableError,
    tf.errors.AbortedError,
    tf.errors.CancelledError,
    tf.errors.DeadlineExceededError,
    tf.errors.InternalError,
)
_TASK = re.compile(r"/job:(\w+)/(?:replica:\d+/)?task:(\d+)")


def lost_worker(error: BaseException, me: str) -> str | None:
    """Which other worker `error` says was lost ("worker 1"; "another worker" where it names
    none), or None where `error` is not a lost peer's. `me`: this worker's `task_name` ("":
    one process, where no peer can be lost)."""
    if not me or not isinstance(error, _PEER_ERRORS):
        return None
    message = str(error)
    if "Collective ops is aborted" not in message and "/job:" not in message:
        return None
    others = [f"{job} {task}" for job, task in _TASK.findall(message)]
    others = [name for name in others if name != me]
    return others[0] if others else "another worker"


# The input order's seed where several workers read one order and no --seed is given.
SHARED_INPUT_SEED = 12345


def input_seed(seed: int | None, strategy: tf.distribute.Strategy) -> int | None:
    """The seed of the training input's order: `seed`, else with several workers a fixed one.
    Where a worker keeps every N-th record of the order (tf.data's DATA sharding: fewer files
    than workers, as fine-tuning's one train.tf_record), each worker must draw the same order,
    or their records overlap; files sharded (FILE) are disjoint in any order."""
    if seed is None and num_workers(strategy) > 1:
        return SHARED_INPUT_SEED
    return seed


def barrier(strategy: tf.distribute.Strategy) -> None:
    """Waits until every worker gets here (a collective sum; nothing to wait for with one
    process): after the chief writes a file the others read."""
    if num_workers(strategy) > 1:
        strategy.reduce(
            tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.constant(1.0)), axis=None
        )


def check_batch(flag: str, batch_size: int, replicas: int, accumulation: int = 1) -> None:
    """Raises `InputError` unless the global batch `--flag` splits evenly into the replicas'
    (and the accumulation steps') micro-batches."""
    if batch_size % (replicas * accumulation):
        raise InputError(
            f"--{flag}={batch_size} must be divisible by the {replicas} replicas"
            + (f" times --gradient_accumulation_steps={accumulation}" if accumulation > 1 else "")
        )


def warn_if_slow(strategy: tf.distribute.Strategy, dtype: str, use_xla: bool) -> None:
    """Warns of XLA with bfloat16 on CPUs (benchmarks/README.md: no AMX under XLA:CPU)."""
    on_cpu = not isinstance(strategy, tf.distribute.TPUStrategy) and not (
        tf.config.list_logical_devices("GPU")
    )
    if use_xla and dtype == "mixed_bfloat16" and on_cpu:
        logger.warning(
            "--use_xla with --dtype=mixed_bfloat16 on CPUs is slow: XLA:CPU does not use the "
            "AMX/AVX-512 bfloat16 matmuls that TensorFlow's own kernels use (about 1.7x "
            "slower at BERT-Base; benchmarks/README.md). Leave --use_xla off for bfloat16."
        )
