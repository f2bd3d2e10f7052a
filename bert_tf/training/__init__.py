"""The training loop and what surrounds it, for pre-training and fine-tuning alike:

- `options`: the flags every training script takes, and `TrainerSettings` (no TensorFlow).
- `setup`: the trainer built under the strategy, resumed or initialized (`initialization`:
  what an --init_checkpoint gives a model), and `train`.
- `loop`: `Trainer`, the step and its loop; `checkpoints`: the loop's own checkpoints.
- `objective`: what a model is trained for; `evaluation`: predicting and scoring.
- `distribute`: the `tf.distribute` strategies; `preemption`: stopping and resuming;
  `local_cluster`: workers on one machine; `summaries`, `progress`: what a run says.
"""
