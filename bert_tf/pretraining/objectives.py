"""The pre-training objectives of paper Table 5: MLM + NSP (BERT), MLM alone (No NSP), and a
left-to-right LM (LTR & No NSP, as OpenAI GPT), all trained from the same TFRecords, in the
training loop's sums-and-counts form (bert_tf/training/objective.py).
"""

from __future__ import annotations

from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.pretraining.options import OBJECTIVES
from bert_tf.training.objective import cross_entropy, unused_variables_removed

# The original's guard against a batch without any masked-LM prediction.
_MLM_EPSILON = 1e-5


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


class MaskedLMAndNextSentence:
    """The paper's BERT: masked LM + next-sentence prediction, total = their sum (Sec. A.2):
    the original's loss, `sum(w * nll) / (sum(w) + 1e-5)` over the masked positions plus the
    mean next-sentence nll."""

    name = "mlm_nsp"
    causal = False
    uses_next_sentence = True
    sum_names = (
        "masked_lm_loss",
        "masked_lm_accuracy",
        "next_sentence_loss",
        "next_sentence_accuracy",
    )
    count_names = ("masked_lm", "next_sentence")

    def build_model(self, config: BertConfig) -> BertPretrainer:
        return BertPretrainer(config.replace(causal_attention=self.causal))

    def trainable_variables(self, model: BertPretrainer) -> list:
        if self.uses_next_sentence:
            return list(model.trainable_variables)
        # Without NSP, the pooler and the NSP head get no gradient: leave them untouched.
        return unused_variables_removed(model, model.next_sentence_head, model.encoder.pooler)

    def model_inputs(self, features: dict) -> dict:
        return {
            name: features[name]
            for name in ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")
        }

    def prepare(self, features: dict) -> dict:
        return features

    def counts(self, features: dict) -> dict:
        counts = {"masked_lm": ops.sum(ops.cast(features["masked_lm_weights"], "float32"))}
        if self.uses_next_sentence:
            counts["next_sentence"] = ops.cast(
                ops.shape(features["next_sentence_labels"])[0], "float32"
            )
        return counts

    def sums(self, outputs: dict, features: dict) -> dict:
        weights = ops.cast(features["masked_lm_weights"], "float32")  # [B, P]
        nll, correct = cross_entropy(
            outputs["mlm_log_probs"], features["masked_lm_ids"], log_softmax=False
        )
        sums = {
            "masked_lm_loss": ops.sum(weights * nll),
            "masked_lm_accuracy": ops.sum(weights * correct),
        }
        if self.uses_next_sentence:
            labels = ops.reshape(features["next_sentence_labels"], (-1,))
            nll, correct = cross_entropy(outputs["nsp_log_probs"], labels, log_softmax=False)
            sums["next_sentence_loss"] = ops.sum(nll)
            sums["next_sentence_accuracy"] = ops.sum(correct)
        return sums

    def losses(self, sums: dict, counts: dict) -> dict:
        """As the original: sum(w * nll) / (sum(w) + 1e-5) and the mean NSP nll."""
        losses = {"masked_lm_loss": sums["masked_lm_loss"] / (counts["masked_lm"] + _MLM_EPSILON)}
        if self.uses_next_sentence:
            losses["next_sentence_loss"] = sums["next_sentence_loss"] / counts["next_sentence"]
        return losses

    def loss(self, sums: dict, counts: dict):
        return sum(self.losses(sums, counts).values())

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


def get_objective(name: str) -> MaskedLMAndNextSentence:
    """ "mlm_nsp" (BERT), "mlm" (No NSP) or "ltr" (LTR & No NSP)."""
    objectives = {o.name: o for o in (MaskedLMAndNextSentence, MaskedLMOnly, LeftToRight)}
    if name not in objectives:
        raise ValueError(f"objective={name!r}; expected one of {list(OBJECTIVES)}")
    return objectives[name]()


def pretraining_loss(outputs: dict, features: dict) -> dict:
    """The paper's loss of one batch as the original computes it (Sec. A.2):
    `masked_lm_loss`, `next_sentence_loss` and their sum `loss`.

    outputs: `BertPretrainer`'s (`mlm_log_probs` [B, P, V], `nsp_log_probs` [B, 2]);
    features: `masked_lm_ids`, `masked_lm_weights` [B, P], `next_sentence_labels` [B, 1].
    """
    objective = MaskedLMAndNextSentence()
    sums, counts = objective.sums(outputs, features), objective.counts(features)
    losses = objective.losses(sums, counts)
    return {**losses, "loss": objective.loss(sums, counts)}
