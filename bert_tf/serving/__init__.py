"""SavedModels for TF Serving: what every task's export shares (`export`: the signatures' inputs,
request checks, the export written whole and swapped in); each task's own export sits beside
its task (`classification.serving`, `squad.serving`, `ner.serving`, `swag.serving`)."""
