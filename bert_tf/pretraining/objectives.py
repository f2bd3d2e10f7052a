"""The pre-training objectives of paper Table 5: MLM + NSP (BERT), MLM alone (No NSP), and a
left-to-right LM (LTR & No NSP, as OpenAI GPT), all trained from the same TFRecords.

An objective splits its losses into *sums* over examples (what a slice of the batch
contributes) and *counts* (the normalisers, from the features alone), so that the training
loop can normalise by the counts of the whole global batch: the loss, its gradient and the
metrics are then those of the original on one device, however the batch is split across
replicas and accumulation steps. Every loss is linear in the sums, which makes this exact.
"""

from __future__ import annotations

from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.pretrainer import BertPretrainer

OBJECTIVES = ("mlm_nsp", "mlm", "ltr")

# The original's guard against a batch without any masked-LM prediction.
_MLM_EPSILON = 1e-5


def _nll_and_correct(log_probs, labels):
    """log_probs [..., V], labels [...] -> negative log-likelihood and 0/1 correct, [...]."""
    labels = ops.cast(labels, "int32")
    # As the original: -sum(one_hot * log_probs). Its gradient is dense and cheap; a gather's
    # gradient scatters into a zero [B, P, V] tensor (the slowest op of a small model's step).
    one_hot = ops.one_hot(labels, ops.shape(log_probs)[-1], dtype=log_probs.dtype)
    nll = -ops.sum(one_hot * log_probs, axis=-1)
    correct = ops.cast(ops.argmax(log_probs, axis=-1) == labels, "float32")
    return nll, correct


def restore_original_tokens(features: dict) -> dict:
    """Undoes the static masking: puts `masked_lm_ids` back at `masked_lm_positions`.

    The records hold the original token of every masked position, so the LTR model trains on
    unmasked text without a second data set. Padded prediction slots (weight 0) are ignored.

    features: input_ids [B, S], masked_lm_positions/ids/weights [B, P]. Returns a copy with
    input_ids restored.
    """
    input_ids = features["input_ids"]
    seq_length = ops.shape(input_ids)[1]
    real = ops.cast(features["masked_lm_weights"] > 0, "int32")[..., None]  # [B, P, 1]
    at = ops.one_hot(features["masked_lm_positions"], seq_length, dtype="int32") * real
    # at: [B, P, S], 1 where prediction p of example b sits at position s.
    masked = ops.sum(at, axis=1) > 0  # [B, S]
    original = ops.sum(at * ops.cast(features["masked_lm_ids"], "int32")[..., None], axis=1)
    restored = dict(features)
    restored["input_ids"] = ops.where(masked, original, input_ids)  # [B, S]
    return restored


class Objective:
    """What one pre-training objective builds, feeds and minimises."""

    name = ""
    causal = False
    sum_names: tuple[str, ...] = ()  # the keys of `sums`
    count_names: tuple[str, ...] = ()  # the keys of `counts`

    def build_model(self, config: BertConfig) -> BertPretrainer:
        return BertPretrainer(config, encoder=BertEncoder(config, causal=self.causal))

    def trainable_variables(self, model: BertPretrainer) -> list:
        """The variables the loss reaches (unused heads are neither trained nor decayed)."""
        return list(model.trainable_variables)

    def model_inputs(self, features: dict) -> dict:
        return {
            name: features[name]
            for name in ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")
        }

    def prepare(self, features: dict) -> dict:
        """Per-batch rewriting of the records' features before the model sees them."""
        return features

    def counts(self, features: dict) -> dict:
        raise NotImplementedError

    def sums(self, outputs: dict, features: dict) -> dict:
        raise NotImplementedError

    def loss(self, sums: dict, counts: dict):
        raise NotImplementedError

    def metrics(self, sums: dict, counts: dict) -> dict:
        raise NotImplementedError


class MaskedLMAndNextSentence(Objective):
    """The paper's BERT: masked LM + next-sentence prediction, total = their sum."""

    name = "mlm_nsp"
    uses_next_sentence = True
    sum_names = (
        "masked_lm_loss",
        "masked_lm_accuracy",
        "next_sentence_loss",
        "next_sentence_accuracy",
    )
    count_names = ("masked_lm", "next_sentence")

    def trainable_variables(self, model: BertPretrainer) -> list:
        if self.uses_next_sentence:
            return list(model.trainable_variables)
        # Without NSP, the pooler and the NSP head get no gradient: leave them untouched.
        unused = {id(v) for v in model.next_sentence_head.trainable_variables}
        unused |= {id(v) for v in model.encoder.pooler.trainable_variables}
        return [v for v in model.trainable_variables if id(v) not in unused]

    def counts(self, features: dict) -> dict:
        counts = {"masked_lm": ops.sum(ops.cast(features["masked_lm_weights"], "float32"))}
        if self.uses_next_sentence:
            counts["next_sentence"] = ops.cast(ops.shape(features["input_ids"])[0], "float32")
        return counts

    def sums(self, outputs: dict, features: dict) -> dict:
        weights = ops.cast(features["masked_lm_weights"], "float32")  # [B, P]
        nll, correct = _nll_and_correct(outputs["mlm_log_probs"], features["masked_lm_ids"])
        sums = {
            "masked_lm_loss": ops.sum(weights * nll),
            "masked_lm_accuracy": ops.sum(weights * correct),
        }
        if self.uses_next_sentence:
            labels = ops.reshape(features["next_sentence_labels"], (-1,))
            nll, correct = _nll_and_correct(outputs["nsp_log_probs"], labels)
            sums["next_sentence_loss"] = ops.sum(nll)
            sums["next_sentence_accuracy"] = ops.sum(correct)
        return sums

    def loss(self, sums: dict, counts: dict):
        # As the original: sum(w * nll) / (sum(w) + 1e-5) + mean NSP nll.
        loss = sums["masked_lm_loss"] / (counts["masked_lm"] + _MLM_EPSILON)
        if self.uses_next_sentence:
            loss = loss + sums["next_sentence_loss"] / counts["next_sentence"]
        return loss

    def metrics(self, sums: dict, counts: dict) -> dict:
        # The original's eval metrics are weighted means without the training loss's 1e-5.
        metrics = {"loss": self.loss(sums, counts)}
        for name, value in sums.items():
            group = "masked_lm" if name.startswith("masked_lm") else "next_sentence"
            metrics[name] = value / ops.maximum(counts[group], 1e-12)
        # Paper Table 6's "LM (ppl)": exp of the mean nll over the predictions (over held-out
        # records with run_pretraining.py --eval_input_file).
        metrics["masked_lm_perplexity"] = ops.exp(metrics["masked_lm_loss"])
        return metrics


class MaskedLMOnly(MaskedLMAndNextSentence):
    """Table 5 "No NSP": the same data and model, the next-sentence loss switched off."""

    name = "mlm"
    uses_next_sentence = False
    sum_names = ("masked_lm_loss", "masked_lm_accuracy")
    count_names = ("masked_lm",)


class LeftToRight(MaskedLMOnly):
    """Table 5 "LTR & No NSP": causal attention, every next token predicted, no NSP.

    The masked-LM head predicts token s + 1 from position s, for every real token after the
    first; the inputs are the records with their masking undone.
    """

    name = "ltr"
    causal = True

    def prepare(self, features: dict) -> dict:
        features = restore_original_tokens(features)
        input_ids = features["input_ids"]
        batch, seq_length = ops.shape(input_ids)[0], ops.shape(input_ids)[1]
        positions = ops.arange(seq_length - 1, dtype="int32")[None, :]
        features["masked_lm_positions"] = ops.tile(positions, (batch, 1))  # [B, S-1]
        features["masked_lm_ids"] = input_ids[:, 1:]  # [B, S-1]: the next token
        features["masked_lm_weights"] = ops.cast(features["input_mask"][:, 1:], "float32")
        return features

    def metrics(self, sums: dict, counts: dict) -> dict:
        metrics = super().metrics(sums, counts)
        return {
            "loss": metrics["loss"],
            "lm_loss": metrics["masked_lm_loss"],
            "lm_accuracy": metrics["masked_lm_accuracy"],
            "lm_perplexity": metrics["masked_lm_perplexity"],
        }


def get_objective(name: str) -> Objective:
    """ "mlm_nsp" (BERT), "mlm" (No NSP) or "ltr" (LTR & No NSP)."""
    objectives = {o.name: o for o in (MaskedLMAndNextSentence, MaskedLMOnly, LeftToRight)}
    if name not in objectives:
        raise ValueError(f"objective={name!r}; expected one of {list(OBJECTIVES)}")
    return objectives[name]()
