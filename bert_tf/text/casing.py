"""Whether a model lower-cases its text, decided once, from evidence, for every script that
reads a model (`ModelSource.do_lower_case` gathers a model's evidence and asks here):

1. the model's own files (task_model.json, tokenizer_config.json): an explicit casing flag that
   contradicts them is an error;
2. else the released model's name, as the original's `validate_case_matches_checkpoint` reads
   it (`uncased_L-12_H-768_A-12`): the same error;
3. else the vocab: one in which over 1% of the word pieces hold an upper-case letter is cased,
   since lower-cased text could never reach them (a vocab with none says nothing: Chinese's
   has no case, and lower-casing also strips accents). An explicit flag wins over this, with
   a warning naming both: the original accepts that input;
4. else the flag;
5. else True, logged: the original's default.
"""

from __future__ import annotations

import logging

from bert_tf.errors import InputError
from bert_tf.tokenization import load_vocab

logger = logging.getLogger(__name__)

# The share of a vocab's word pieces with an upper-case letter above which it is cased.
# Measured: Google's uncased vocab (sample_data/vocab.txt) 2 of 29,523 (0.007%); the
# reproduction's cased 8k vocab, learned from the books, 12%.
CASED_VOCAB_SHARE = 0.01


def vocab_is_cased(vocab_file: str) -> bool:
    """Whether over `CASED_VOCAB_SHARE` of `vocab_file`'s word pieces (the special tokens such
    as [CLS] and [unused0] aside) hold an upper-case letter."""
    pieces = [token for token in load_vocab(vocab_file) if not _special(token)]
    upper = sum(any(char.isupper() for char in piece) for piece in pieces)
    return bool(pieces) and upper / len(pieces) > CASED_VOCAB_SHARE


def _special(token: str) -> bool:
    return token.startswith("[") and token.endswith("]")


def decide_do_lower_case(
    given: bool | None,
    flag: str = "",
    said: bool | None = None,
    why: str = "",
    vocab_file: str | None = None,
) -> bool:
    """The casing by the rule above. `given`: the casing flag (None: ask the model); `said`,
    `why`: what the model's files or name say and why ("its task_model.json says"); `flag`:
    the option that named the model, for messages (`--init_checkpoint=DIR`).

    Raises:
        InputError: `given` contradicts the model's files or name.
    """
    if said is not None:
        if given is not None and bool(given) != bool(said):
            raise InputError(
                f"--do_lower_case={given} does not match {flag}: {why} do_lower_case="
                f"{bool(said)}; pass --do_lower_case={bool(said)} to use it as it was trained"
            )
        return bool(said)
    if vocab_file is not None and vocab_is_cased(vocab_file):
        if given:
            logger.warning(
                "--do_lower_case=True lower-cases the text, but %s is a cased vocab (over %g%% of "
                "its word pieces hold an upper-case letter, which lower-cased text never "
                "reaches): pass --do_lower_case=False, or leave it unset, for a cased model",
                vocab_file, 100 * CASED_VOCAB_SHARE,
            )  # fmt: skip
            return True
        return False
    if given is not None:
        return bool(given)
    logger.info("%s: do_lower_case=True assumed (pass False for a cased model)", flag or vocab_file)
    return True
