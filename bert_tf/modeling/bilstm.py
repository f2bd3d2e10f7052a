"""Randomly initialised BiLSTMs on top of BERT's activations: the feature-based NER model's
two layers (paper Sec. 5.3, Table 7) and Table 5's "+ BiLSTM" fine-tuning head."""

from __future__ import annotations

import keras
from keras import ops


def bilstm(
    hidden, input_mask, units: int, num_layers: int = 1, summary: bool = False, name="bilstm"
):
    """`num_layers` bidirectional LSTMs of `units` per direction over hidden [B, S, D],
    skipping the padding (input_mask [B, S], 1 = real token).

    Returns [B, S, 2 * units]; with `summary=True` the last layer returns only each sequence's
    [B, 2 * units] summary instead: the forward LSTM's state after the last real token and the
    backward LSTM's after the first.
    """
    mask = ops.cast(input_mask, "bool")
    for i in range(num_layers):
        last = i == num_layers - 1
        # Named, so that its variables' paths (`bilstm_0/forward_lstm/lstm_cell/kernel`) are the
        # same in every model built: the loaders find variables the original has no name for
        # by their paths (Keras numbers an unnamed layer by how many were built before it).
        hidden = keras.layers.Bidirectional(
            keras.layers.LSTM(units, return_sequences=not (summary and last), name="lstm"),
            name=name if num_layers == 1 else f"{name}_{i}",
        )(hidden, mask=mask)
    return hidden
