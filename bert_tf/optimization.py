"""The original's optimizer and learning-rate schedule (optimization.py), and LAMB.

`AdamWeightDecay` is written out by hand because Keras's Adam/AdamW apply bias correction
(`1 - beta^t`) and put epsilon inside a different expression; the released BERT checkpoints
were trained with neither. Gradient clipping is not done here: the training loop clips the
all-reduced gradients by their global norm (1.0, as the original) before calling `apply`,
so clipping sees the whole global batch, as on one device.
"""

from __future__ import annotations

import re

import keras
from keras import ops

# As the original: LayerNorm parameters and biases get no weight decay. The patterns are
# searched in the Keras variable path, which names these variables as the original does
# (tests/test_optimization.py checks both namings pick the same variables).
EXCLUDE_FROM_WEIGHT_DECAY = ("LayerNorm", "layer_norm", "bias")


@keras.saving.register_keras_serializable(package="bert_tf")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """lr(t): `init_lr * t / num_warmup_steps` while t < num_warmup_steps, then
    `init_lr * (1 - t / num_train_steps)` (0 from num_train_steps on).

    The decay counts from step 0, warmup included, and warmup replaces (does not multiply)
    the decayed value, as the original's polynomial_decay + warmup. The update that takes
    the model from step t to t + 1 uses lr(t), as the original's `global_step` before its
    increment.
    """

    def __init__(self, init_lr: float, num_train_steps: int, num_warmup_steps: int) -> None:
        self.init_lr = float(init_lr)
        self.num_train_steps = int(num_train_steps)
        self.num_warmup_steps = int(num_warmup_steps)

    def __call__(self, step):
        step = ops.cast(step, "float32")
        done = ops.minimum(step, float(self.num_train_steps)) / float(max(self.num_train_steps, 1))
        decayed = self.init_lr * (1.0 - done)
        if self.num_warmup_steps <= 0:
            return decayed
        warmup = self.init_lr * step / float(self.num_warmup_steps)
        return ops.where(step < float(self.num_warmup_steps), warmup, decayed)

    def get_config(self) -> dict:
        return {
            "init_lr": self.init_lr,
            "num_train_steps": self.num_train_steps,
            "num_warmup_steps": self.num_warmup_steps,
        }


class _DecoupledWeightDecay(keras.optimizers.Optimizer):
    """Shared by both optimizers: their settings (the original's defaults), the first and
    second moments, and which variables decay. Named after the subclass by default."""

    def __init__(
        self,
        learning_rate,
        weight_decay_rate: float = 0.01,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-6,
        exclude_from_weight_decay: tuple[str, ...] = EXCLUDE_FROM_WEIGHT_DECAY,
        name: str | None = None,
        **kwargs,
    ) -> None:
        super().__init__(learning_rate=learning_rate, name=name or type(self).__name__, **kwargs)
        self.weight_decay_rate = weight_decay_rate
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.exclude_from_weight_decay_patterns = tuple(exclude_from_weight_decay)

    def decays(self, variable) -> bool:
        """Whether weight decay applies to `variable` (regex search of its path, as the
        original searches its variable names)."""
        if not self.weight_decay_rate:
            return False
        path = getattr(variable, "path", variable.name)
        return not any(re.search(p, path) for p in self.exclude_from_weight_decay_patterns)

    def build(self, variables) -> None:
        if self.built:
            return
        super().build(variables)
        # Named as the original's slots: <variable>/adam_m and <variable>/adam_v.
        self.adam_m = [self.add_variable_from_reference(v, "adam_m") for v in variables]
        self.adam_v = [self.add_variable_from_reference(v, "adam_v") for v in variables]
        self._decays = [self.decays(v) for v in variables]

    def slot_variables(self) -> tuple[list, list]:
        """(adam_m, adam_v): one slot variable per built variable, in the built order."""
        return self.adam_m, self.adam_v

    def update_step(self, gradient, variable, learning_rate) -> None:
        if keras.backend.backend() == "tensorflow":
            import tensorflow as tf  # only under TensorFlow: this module is backend-agnostic

            # Keras's fit gives an embedding's gradient as IndexedSlices; the update is dense,
            # as the original's (whose arithmetic densified them too).
            gradient = tf.convert_to_tensor(gradient)
        i = self._get_variable_index(variable)
        self._update(
            variable, gradient, self.adam_m[i], self.adam_v[i], self._decays[i], learning_rate,
            self.iterations,
        )  # fmt: skip

    def apply_updates(self, variables, gradients, slots, learning_rate, iterations) -> None:
        """Updates every variable in place from its gradient, all at once.

        For a caller that holds the variables of one device (under a distribution strategy,
        one replica's copies) and compiles the whole update as one XLA function: `variables`,
        `gradients` and each list of `slots` (as `slot_variables()`, the same replica's
        copies) are in the order the optimizer was built with. Does not count the iteration.
        """
        adam_m, adam_v = slots
        for variable, gradient, m, v, decays in zip(
            variables, gradients, adam_m, adam_v, self._decays, strict=True
        ):
            self._update(variable, gradient, m, v, decays, learning_rate, iterations)

    def _update(self, variable, gradient, m, v, decays, learning_rate, iterations) -> None:
        """One variable's update; `m`, `v` are its slots; `iterations` the updates done."""
        raise NotImplementedError

    def _moments(self, gradient, m, v):
        """Updates and returns the moments (m, v): [shape of variable] each."""
        self.assign(m, self.beta_1 * m + (1.0 - self.beta_1) * gradient)
        self.assign(v, self.beta_2 * v + (1.0 - self.beta_2) * ops.square(gradient))
        return m, v

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            weight_decay_rate=self.weight_decay_rate,
            beta_1=self.beta_1,
            beta_2=self.beta_2,
            epsilon=self.epsilon,
            exclude_from_weight_decay=list(self.exclude_from_weight_decay_patterns),
        )
        return config


@keras.saving.register_keras_serializable(package="bert_tf")
class AdamWeightDecay(_DecoupledWeightDecay):
    """The original's AdamWeightDecayOptimizer (Keras's AdamW differs: it bias-corrects).

    m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  u = m / (sqrt(v) + eps) [+ wd * w];
    w -= lr * u. No bias correction; epsilon outside the square root; decay times lr.
    """

    def _update(self, variable, gradient, m, v, decays, learning_rate, iterations) -> None:
        gradient = ops.cast(gradient, variable.dtype)
        m, v = self._moments(gradient, m, v)
        update = m / (ops.sqrt(v) + self.epsilon)
        if decays:
            update = update + self.weight_decay_rate * variable
        self.assign_sub(variable, ops.cast(learning_rate, variable.dtype) * update)


@keras.saving.register_keras_serializable(package="bert_tf")
class Lamb(_DecoupledWeightDecay):
    """LAMB (You et al. 2019, "Large Batch Optimization for Deep Learning"), for large batches.

    Adam with bias correction, the same decoupled weight decay and exclusions, and each
    variable's step scaled by the trust ratio ||w|| / ||u|| (1 where either norm is 0). As
    NVIDIA's BERT recipe, every variable is layer-adapted.
    """

    def _update(self, variable, gradient, m, v, decays, learning_rate, iterations) -> None:
        gradient = ops.cast(gradient, variable.dtype)
        m, v = self._moments(gradient, m, v)
        t = ops.cast(iterations + 1, variable.dtype)
        m_hat = m / (1.0 - ops.power(self.beta_1, t))
        v_hat = v / (1.0 - ops.power(self.beta_2, t))
        update = m_hat / (ops.sqrt(v_hat) + self.epsilon)
        if decays:
            update = update + self.weight_decay_rate * variable
        w_norm, u_norm = ops.norm(ops.reshape(variable, [-1])), ops.norm(ops.reshape(update, [-1]))
        trust_ratio = ops.where((w_norm > 0) & (u_norm > 0), w_norm / u_norm, 1.0)
        self.assign_sub(variable, ops.cast(learning_rate, variable.dtype) * trust_ratio * update)


def create_optimizer(
    init_lr: float,
    num_train_steps: int,
    num_warmup_steps: int,
    optimizer: str = "adamw",
) -> _DecoupledWeightDecay:
    """The original's `create_optimizer` settings: weight decay 0.01, betas 0.9/0.999,
    epsilon 1e-6, LayerNorm/bias excluded, warmup then linear decay to 0.

    `optimizer`: "adamw" (the original's) or "lamb".
    """
    schedule = WarmupLinearDecay(init_lr, num_train_steps, num_warmup_steps)
    optimizers = {"adamw": AdamWeightDecay, "lamb": Lamb}
    if optimizer not in optimizers:
        raise ValueError(f"optimizer={optimizer!r}; expected one of {sorted(optimizers)}")
    return optimizers[optimizer](schedule)
