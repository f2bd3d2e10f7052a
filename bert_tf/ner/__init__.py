"""Named-entity recognition on CoNLL-2003 (paper Sec. 5.3, Table 7)."""
