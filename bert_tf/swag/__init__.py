"""SWAG multiple choice (paper Sec. 4.4, Table 4): what run_swag.py runs."""
