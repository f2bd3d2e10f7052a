"""What a size decides: the models' shapes, pre-training and fine-tuning settings, the tables'
rows (paper Tables 6 and 8)."""

from __future__ import annotations

import dataclasses

DEFAULT_MASKING = "0.8,0.1,0.1"
# The sizes that run on a laptop CPU: our corpus of books, stand-ins for the data not here.
LAPTOP_SIZES = ("small", "long", "long40k")
# `long`'s pre-training learning rate, chosen by short runs on held-out loss
# (docs/REPRODUCTION.md, "The scale").
LONG_LEARNING_RATE = 1e-3
# Tables 6 and 8's at `long`: at 1e-3 the widest shapes never leave the unigram level (4/192/3:
# training masked-LM loss 6.68-6.71 from step 1,000 to 20,000); 5e-4, level with 1e-3 in the search
# above, trains them (docs/reproduction/table6.md).
LONG_TABLE6_LEARNING_RATE = 5e-4
# The paper's phase 1 (128 tokens) is 90% of its 1,000,000 steps.
PHASE1_STEPS = 900_000
# Table 8's rows: MASK, SAME, RND rates.
TABLE8_MASKINGS = (
    "0.8,0.1,0.1",
    "1.0,0.0,0.0",
    "0.8,0.0,0.2",
    "0.8,0.2,0.0",
    "0.0,0.2,0.8",
    "0.0,0.0,1.0",
)
# Every chosen token replaced by [MASK]: the held-out records Table 8's models are all measured
# on (each row's own records differ), and the predictions that need context to guess.
MASK_ONLY = "1.0,0.0,0.0"
# The feature Table 8's feature-based column uses (Appendix C.2: "we concatenate the last 4
# layers of BERT as the features, which was shown to be the best approach in Section 5.3").
TABLE8_FEATURE = "concat_last_four_hidden"
NER_FEATURES = (
    "embeddings",
    "second_to_last_hidden",
    "last_hidden",
    "weighted_sum_last_four_hidden",
    "concat_last_four_hidden",
    "weighted_sum_all_layers",
)


@dataclasses.dataclass
class Scale:
    """Everything a size decides: shapes, pre-training and fine-tuning settings, data."""

    name: str
    base_shape: str
    table6_shapes: tuple[str, ...]
    pretraining_steps: int
    warmup_steps: int
    train_batch_size: int
    learning_rate: float
    keep_checkpoint_every_n_steps: int
    # Fine-tuning: per task kind (glue, squad1, squad2, ner, ner_feature, swag): lr, epochs,
    # batch, max_seq_length; caps on training examples (0: all) and restarts per task.
    finetuning: dict
    max_train_examples: dict
    max_eval_examples: int
    restarts: dict
    table6_restarts: int
    # Table 1's search (Sec. 4.1): learning rates, and restarts per task (BERT-LARGE's on the
    # small sets); the best on Dev.
    table1_learning_rates: tuple[float, ...]
    table1_restarts: dict
    # Table 6's shapes and Table 8's maskings are pre-trained for this many steps (0: as the
    # base model), with the same share of warm-up.
    table6_steps: int = 0
    # Tables 6 and 8's pre-training learning rate where not `learning_rate` (0).
    table6_learning_rate: float = 0.0
    # Tables 6 and 8's warm-up steps where not the base model's share of their steps (0).
    table6_warmup_steps: int = 0
    # run_pretraining.py's --use_xla at the laptop sizes: a speed setting, not the recipe.
    use_xla: bool = True
    # Fine-tuning's learning rate, chosen on Dev among these for each model and task, every row
    # the same way (empty: each task kind's own, above).
    finetuning_learning_rates: tuple[float, ...] = ()
    # The laptop sizes only: where the corpus comes from and how it is prepared.
    books: int = 0  # 0: all
    vocab_size: int = 8192
    dupe_factor: int = 5
    heldout_documents: int = 4
    # Table 7 (NER) as the paper: "hyper-parameters selected using the Dev set", the numbers
    # "averaged over 5 random restarts" (empty: the ner kind's rate, one run).
    table7_learning_rates: tuple[float, ...] = ()
    table7_restarts: int = 1
    # Table 8's NER columns, fine-tuned and feature-based: the mean of this many restarts, with
    # their spread (at `long40k` 3, so that a row's difference can be told from a restart's).
    table8_ner_restarts: int = 1
    # Table 5's restarts per column where not `restarts` (at `long40k` QNLI's: the NSP reading
    # rests on it, and one run per cell gives no spread to read a gap against).
    table5_restarts: dict = dataclasses.field(default_factory=dict)
    # Table 5 and Figure 5 pre-trained at Tables 6 and 8's recipe too (`long40k`: one recipe
    # for every ablation, BERT's row Table 6's run of the ablation shape); else the base model's.
    ablations_at_table6_recipe: bool = False
    # The readings' rows pre-trained with seeds 1..pretraining_seeds (the same records and
    # recipe), so that a cell's spread holds the pre-training's own variance, not only
    # fine-tuning's: Table 5's rows and Table 8's `seeded_maskings` (`long40k`).
    pretraining_seeds: int = 1
    seeded_maskings: tuple[str, ...] = ()
    # The shape of the ablations (Tables 5, 8, Figure 5, Table 7's feature-based rows), which
    # the paper ran at BERT-BASE's alone: at `large` too ("": base_shape).
    ablation_shape: str = ""

    def __post_init__(self) -> None:
        self.ablation_shape = self.ablation_shape or self.base_shape

    @property
    def laptop(self) -> bool:
        return self.name in LAPTOP_SIZES

    def warmup(self, steps: int) -> int:
        """The warm-up of a run of `steps`: the base model's share of its steps."""
        return self.warmup_steps * steps // self.pretraining_steps


def small_scale(quick: bool) -> Scale:
    glue = {"learning_rate": 1e-4, "epochs": 3.0, "batch": 32, "max_seq_length": 128}
    scale = Scale(
        name="small",
        base_shape="L-4_H-128_A-2",
        table6_shapes=(
            "L-1_H-128_A-2",
            "L-2_H-128_A-1",
            "L-2_H-128_A-2",
            "L-4_H-128_A-2",
            "L-4_H-192_A-3",
            "L-8_H-192_A-3",
        ),
        pretraining_steps=4000,
        warmup_steps=400,
        train_batch_size=32,
        learning_rate=1e-3,
        keep_checkpoint_every_n_steps=800,
        finetuning={
            "glue": glue,
            "squad1": {**glue, "epochs": 3.0},
            "squad2": {**glue, "epochs": 2.0},
            "ner": glue,
            "ner_feature": {**glue, "learning_rate": 1e-3},
            "swag": {**glue, "batch": 16},
        },
        max_train_examples={"SST-2": 8000, "QNLI": 8000, "swag": 4000},
        max_eval_examples=0,
        restarts={"RTE": 3, "MRPC": 3},
        table6_restarts=0,  # 0: as `restarts`
        table1_learning_rates=(1e-4,),
        table1_restarts={},
    )
    if quick:
        scale = dataclasses.replace(
            scale,
            base_shape="L-4_H-32_A-2",
            table6_shapes=("L-1_H-32_A-2", "L-4_H-32_A-2"),
            pretraining_steps=40,
            warmup_steps=4,
            train_batch_size=8,
            keep_checkpoint_every_n_steps=20,
            finetuning={
                kind: {**settings, "epochs": 1.0, "batch": 8, "max_seq_length": 64}
                for kind, settings in scale.finetuning.items()
            },
            max_train_examples={"all": 64},
            max_eval_examples=32,
            restarts={},
            books=3,
            vocab_size=2000,
            dupe_factor=1,
            heldout_documents=1,
        )
    return scale


def long_scale(quick: bool) -> Scale:
    """`small`'s models, corpus and tasks with ten times its pre-training: 40,000 steps of 32
    sequences (155M tokens, each record seen once: dupe_factor 15), so that the models leave
    the unigram plateau `small`'s stop on. Table 6's shapes and Table 8's maskings get half of
    it (5x `small`'s tokens), at a rate that trains the widest shape. Fine-tuning as the
    original's compact BERTs were: the learning rate chosen on Dev from {1e-4, 3e-4}."""
    small = small_scale(quick)
    steps = 80 if quick else 40_000
    return dataclasses.replace(
        small,
        name="long",
        pretraining_steps=steps,
        warmup_steps=steps // 100,  # 1%
        learning_rate=LONG_LEARNING_RATE,
        keep_checkpoint_every_n_steps=steps // 5,  # Figure 5's five points
        table6_steps=steps // 2,
        table6_learning_rate=LONG_TABLE6_LEARNING_RATE,
        finetuning_learning_rates=(1e-4, 3e-4),
        table1_learning_rates=(1e-4, 3e-4),
        dupe_factor=2 if quick else 15,
    )


def long40k_scale(quick: bool) -> Scale:
    """`long` with the ablations (Tables 5, 6, 8, Figure 5) pre-trained as long as its base
    model (40,000 steps of 32) at one recipe that trains every shape: its learning rate, 1e-3,
    with a tenth of the steps as warm-up (4,000; the base model's 1% left the widest shapes at
    the unigram level: measured by short runs, docs/reproduction/table6.md). Tables 1-4 and 7
    are `long`'s, and share its runs. Without XLA, which buys nothing on a CPU at these shapes
    and runs the 1-layer model three times slower."""
    long = long_scale(quick)
    return dataclasses.replace(
        long,
        name="long40k",
        table6_steps=0,
        table6_learning_rate=0.0,
        table6_warmup_steps=long.pretraining_steps // 10,
        use_xla=False,
        table8_ner_restarts=3,
        table5_restarts={"QNLI": 3},
        ablations_at_table6_recipe=True,
        pretraining_seeds=2,
        seeded_maskings=(DEFAULT_MASKING, MASK_ONLY),
    )


def paper_scale(size: str) -> Scale:
    shape = "L-12_H-768_A-12" if size == "base" else "L-24_H-1024_A-16"
    glue = {"learning_rate": 2e-5, "epochs": 3.0, "batch": 32, "max_seq_length": 128}
    return Scale(
        name=size,
        base_shape=shape,
        ablation_shape="L-12_H-768_A-12",
        # The paper's fine-tuning grid (Appendix A.3) at batch 32 and 3 epochs.
        table7_learning_rates=(5e-5, 3e-5, 2e-5),
        table7_restarts=5,
        table6_shapes=(
            "L-3_H-768_A-12",
            "L-6_H-768_A-3",
            "L-6_H-768_A-12",
            "L-12_H-768_A-12",
            "L-12_H-1024_A-16",
            "L-24_H-1024_A-16",
        ),
        pretraining_steps=1_000_000,
        warmup_steps=10_000,
        train_batch_size=256,
        learning_rate=1e-4,
        keep_checkpoint_every_n_steps=200_000,
        finetuning={
            "glue": glue,
            # Paper Sec. 4.2/4.3: SQuAD 1.1 lr 5e-5, batch 32, 3 epochs; 2.0: batch 48, 2.
            "squad1": {"learning_rate": 5e-5, "epochs": 3.0, "batch": 32, "max_seq_length": 384},
            "squad2": {"learning_rate": 5e-5, "epochs": 2.0, "batch": 48, "max_seq_length": 384},
            "ner": {**glue, "learning_rate": 5e-5},
            "ner_feature": {**glue, "learning_rate": 1e-3},
            # Sec. 4.4: SWAG lr 2e-5, batch 16, 3 epochs.
            "swag": {**glue, "batch": 16},
        },
        max_train_examples={},
        max_eval_examples=0,
        restarts={},
        table6_restarts=5,  # Table 6: "the average Dev set accuracy from 5 random restarts"
        table1_learning_rates=(5e-5, 4e-5, 3e-5, 2e-5),
        table1_restarts=(
            {task: 5 for task in ("CoLA", "STS-B", "MRPC", "RTE")} if size == "large" else {}
        ),
    )


def scale_named(size: str, quick: bool = False) -> Scale:
    """The scale of reproduce.py's `--size`: small, long, long40k, base or large."""
    if size == "small":
        return small_scale(quick)
    if size == "long":
        return long_scale(quick)
    if size == "long40k":
        return long40k_scale(quick)
    return paper_scale(size)
