"""Custom datasets in the formats users keep for AISBench, OpenCompass, EvalScope and Volcengine Ark.

`build_custom_dataset(path, ...)` reads a .csv / .jsonl file (text MCQ or QA, Ark/EvalScope conversations,
AISBench mm_custom, an image jsonl) or an EvalScope directory (`{subset}_val.*`, `{subset}_dev.*`), applies a
`.meta.json`, and returns a `CustomDataset` with the runner's dataset protocol. Where each decision is written:

- reading.py     - CSV/JSONL reading, line numbers, CustomDataError (a vlmkit.core.errors.DataError)
- fields.py      - field aliases (query/prompt/response/reference_response/system_prompt), options, answer
                   normalisation, Ark `parameters`, the row index
- text_mcq_qa.py - format detection and text MCQ/QA rows; answers given as option text; inference-only files
- conversation.py- Ark single/multi-turn rows, EvalScope qa, Ark sessions over several rows
- mm_custom.py   - media rows, path resolution and checks
- evalscope.py   - directory layout, subsets, the few-shot pool
- meta.py        - .meta.json keys, sampling modes, output_config
- rows.py        - the dataset class: prompts (exact few-shot layout), evaluation, info()
- mcq_eval.py    - MCQ scoring of custom rows (invalid/missing answers left out and reported)
- loader.py      - names, indices of repeated rows, file_md5, parameter precedence
QA metrics live in vlmkit.scoring.kinds.text_qa.
"""

from datasets_tsv.custom.evalscope import list_subsets
from datasets_tsv.custom.loader import build_custom_dataset
from datasets_tsv.custom.meta import MetaConfig, load_meta, meta_path_for
from datasets_tsv.custom.reading import CustomDataError, Record, read_records
from datasets_tsv.custom.rows import CustomDataset

__all__ = [
    "CustomDataError",
    "CustomDataset",
    "MetaConfig",
    "Record",
    "build_custom_dataset",
    "list_subsets",
    "load_meta",
    "meta_path_for",
    "read_records",
]
