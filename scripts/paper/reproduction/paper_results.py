"""The BERT paper's results (Devlin et al., 2018: Tables 1-8, Figure 5), by table, row
and column: what scripts/paper/reproduce.py sets our numbers beside."""

PAPER = {
    "table1": {
        "BERT-BASE": {
            "MNLI-m": 84.6,
            "MNLI-mm": 83.4,
            "QQP": 71.2,
            "QNLI": 90.5,
            "SST-2": 93.5,
            "CoLA": 52.1,
            "STS-B": 85.8,
            "MRPC": 88.9,
            "RTE": 66.4,
            "Average": 79.6,
        },
        "BERT-LARGE": {
            "MNLI-m": 86.7,
            "MNLI-mm": 85.9,
            "QQP": 72.1,
            "QNLI": 92.7,
            "SST-2": 94.9,
            "CoLA": 60.5,
            "STS-B": 86.5,
            "MRPC": 89.3,
            "RTE": 70.1,
            "Average": 82.1,
        },
    },
    "table2": {
        "BERT-BASE": {"EM": 80.8, "F1": 88.5},
        "BERT-LARGE": {"EM": 84.1, "F1": 90.9},
    },
    "table3": {"BERT-LARGE": {"EM": 78.7, "F1": 81.9}},
    "table4": {"BERT-BASE": {"Dev": 81.6}, "BERT-LARGE": {"Dev": 86.6}},
    "table5": {
        "BERT-BASE": {"MNLI-m": 84.4, "QNLI": 88.4, "MRPC": 86.7, "SST-2": 92.7, "SQuAD": 88.5},
        "No NSP": {"MNLI-m": 83.9, "QNLI": 84.9, "MRPC": 86.5, "SST-2": 92.6, "SQuAD": 87.9},
        "LTR & No NSP": {
            "MNLI-m": 82.1,
            "QNLI": 84.3,
            "MRPC": 77.5,
            "SST-2": 92.1,
            "SQuAD": 77.8,
        },
        "+ BiLSTM": {"MNLI-m": 82.1, "QNLI": 84.1, "MRPC": 75.7, "SST-2": 91.6, "SQuAD": 84.9},
    },
    "table6": {
        "3/768/12": {"LM (ppl)": 5.84, "MNLI-m": 77.9, "MRPC": 79.8, "SST-2": 88.4},
        "6/768/3": {"LM (ppl)": 5.24, "MNLI-m": 80.6, "MRPC": 82.2, "SST-2": 90.7},
        "6/768/12": {"LM (ppl)": 4.68, "MNLI-m": 81.9, "MRPC": 84.8, "SST-2": 91.3},
        "12/768/12": {"LM (ppl)": 3.99, "MNLI-m": 84.4, "MRPC": 86.7, "SST-2": 92.9},
        "12/1024/16": {"LM (ppl)": 3.54, "MNLI-m": 85.7, "MRPC": 86.9, "SST-2": 93.3},
        "24/1024/16": {"LM (ppl)": 3.23, "MNLI-m": 86.6, "MRPC": 87.8, "SST-2": 93.7},
    },
    "table7": {
        "Fine-tuning": {"Dev F1": 96.4, "Test F1": 92.4},
        "embeddings": {"Dev F1": 91.0},
        "second_to_last_hidden": {"Dev F1": 95.6},
        "last_hidden": {"Dev F1": 94.9},
        "weighted_sum_last_four_hidden": {"Dev F1": 95.9},
        "concat_last_four_hidden": {"Dev F1": 96.1},
        "weighted_sum_all_layers": {"Dev F1": 95.5},
    },
    "table8": {
        "80/10/10": {"MNLI": 84.2, "NER fine-tune": 95.4, "NER feature-based": 94.9},
        "100/0/0": {"MNLI": 84.3, "NER fine-tune": 94.9, "NER feature-based": 94.0},
        "80/0/20": {"MNLI": 84.1, "NER fine-tune": 95.2, "NER feature-based": 94.6},
        "80/20/0": {"MNLI": 84.4, "NER fine-tune": 95.2, "NER feature-based": 94.7},
        "0/20/80": {"MNLI": 83.7, "NER fine-tune": 94.8, "NER feature-based": 94.6},
        "0/0/100": {"MNLI": 83.6, "NER fine-tune": 94.9, "NER feature-based": 94.6},
    },
}
