"""The SWAG fine-tuning loss (paper Sec. 4.4): the choices' scores "normalized with a softmax
layer", i.e. softmax cross-entropy over the 4 choices; the classifier's loss, with the
choices in place of the labels."""

from __future__ import annotations

from bert_tf.classification.objective import Classification
from bert_tf.config import BertConfig
from bert_tf.modeling.multiple_choice import BertMultipleChoice
from bert_tf.swag.data import NUM_CHOICES


class MultipleChoice(Classification):
    """Mean over the batch's real examples of `-log softmax(logits)[label]`, logits [B, C];
    `accuracy`: the right choice scored highest. Padding examples (`is_real_example` 0)
    count for nothing."""

    def __init__(self, num_choices: int = NUM_CHOICES) -> None:
        super().__init__(num_labels=num_choices)

    @property
    def num_choices(self) -> int:
        return self.num_labels

    def build_model(self, config: BertConfig) -> BertMultipleChoice:
        return BertMultipleChoice(config, self.num_choices)
