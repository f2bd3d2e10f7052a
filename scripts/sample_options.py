"""The options that scripts/conll_sample.py and scripts/squad_sample.py share: which items of
a data file go into a small one."""

from __future__ import annotations

from bert_tf.options import Options, non_negative, option, options, positive


@options
class SampleOptions(Options):
    input_file: str = option(None, "The data file to take the sample from.", required=True)
    output_file: str = option(None, "Where the sample goes.", required=True)
    skip: int = option(0, "Items to skip first.", non_negative)
    count: int = option(None, "Items to take.", positive, required=True)
