"""SQuAD 1.1 and 2.0 (paper Sec. 4.2, 4.3): what run_squad.py runs."""
