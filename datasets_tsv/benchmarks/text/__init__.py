"""Text-only benchmarks run by name from a local snapshot (MMLU, MMLU-Pro, C-Eval, GSM8K, BBH, HellaSwag, ARC, BoolQ,
WinoGrande; issue 28): one module per snapshot family, on the base in `snapshot`. Their names live in
datasets_tsv/catalog/text_benchmarks.tsv, not in VLMEvalKit's catalog."""
