"""DUDE and SlideVQA (DUDE, DUDE_MINI, SLIDEVQA, SLIDEVQA_MINI): multi-page document questions VLMEvalKit scores with
an LLM judge that extracts the answer (vlmeval/dataset/dude.py, slidevqa.py at e8e78f05).

The prompt is VLMEvalKit's ImageBaseDataset prompt: the row's pages (at most the first 120, VLMEvalKit's max_pages),
then its `question`. SlideVQA's TSV holds the pages as images. DUDE's holds the document as a PDF (base64 in
`image`) with the pages' file names in `image_path`: its pages are rendered at 144 dpi, as VLMEvalKit renders them,
into $LMUData/images/<name>/ under those names (JPEG, as VLMEvalKit stores them), once, and reused; rendering needs
pypdfium2 (`pip install 'vlmkit[pdf]'`; VLMEvalKit uses PyMuPDF, so the pixels may differ slightly). A DUDE TSV
without `image_path` that carries its pages as images in `image` is used as any TSV.

Where vlmkit differs: VLMEvalKit serves only the models of its SUPPORTED_MODELS table and, for its local models,
pastes the pages into one or a few tall images per model (concat_images); vlmkit sends every page as its own image
to any model, as VLMEvalKit does for its GPT-4 API models. Scoring: vlmkit.scoring.benchmarks.dude_slidevqa (needs
--judge).
"""

from __future__ import annotations

import base64
import binascii
import io
import threading
from functools import cached_property
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.files import UnsafePathError, contained_path
from vlmkit.core.message import Part
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import iter_cells, parse_list, read_header
from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.judged import JudgedDataset

MAX_PAGES = 120
PDF_DPI = 144
PDF_INSTALL_HINT = "pip install 'vlmkit[pdf]'"
_READ_BLOCK = 1 << 20


class DocumentPagesDataset(JudgedDataset):
    """DUDE / SlideVQA: the first 120 pages, then the question; scored by the judge's extraction."""

    benchmark: ClassVar[str] = ""
    judge_scorer = "GPT judge: MMLongBench-Doc answer extraction, then ANLS"

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        parts: list[Part] = [{"type": "image", "value": p} for p in self._images_at(pos)[:MAX_PAGES]]
        parts.append({"type": "text", "value": self.prompt_text(row)})
        return parts

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.dude_slidevqa import score_judged_document_vqa

        return score_judged_document_vqa(df, judge, benchmark=self.benchmark, what=str(self.tsv_path))


class SlideVQADataset(DocumentPagesDataset):
    """SlideVQA (module docstring)."""

    benchmark: ClassVar[str] = "slidevqa"


class DUDEDataset(DocumentPagesDataset):
    """DUDE: its pages rendered from the PDF in the TSV (module docstring)."""

    benchmark: ClassVar[str] = "dude"

    def __init__(self, name: str, **kwargs: Any) -> None:
        self._pages_lock = threading.Lock()
        super().__init__(name, **kwargs)

    def prepare_images(self) -> None:
        """Render every row's pages once (files already there are reused); a TSV without `image_path` carries its
        pages as images and is decoded as any TSV."""
        if "image_path" not in self._header:
            super().prepare_images()
            return
        with self._pages_lock:
            if self._image_error is not None:
                raise DatasetError(self._image_error)
            if self._image_files is None:
                try:
                    self._image_files = self._render_all()
                except DatasetError as exc:
                    self._image_error = str(exc)
                    raise

    @cached_property
    def _header(self) -> list[str]:
        return read_header(self.tsv_path)

    def _render_all(self) -> list[list[str]]:
        self.image_root.mkdir(parents=True, exist_ok=True)
        out = []
        with open(self.tsv_path, "rb", buffering=0) as handle:
            header, records = iter_cells(self.tsv_path, ("index", "image", "image_path"),
                                         iter(lambda: handle.read(_READ_BLOCK), b""))  # fmt: skip
            if "image" not in header or "image_path" not in header:
                raise DatasetError(f"{self.tsv_path}: DUDE needs the columns `image` (the PDF) and `image_path`")
            for pos, (index, pdf, names) in enumerate(records):
                out.append(self._row_pages(pos, index.decode(), pdf, names.decode()))
        return out

    def _row_pages(self, pos: int, index: str, pdf_b64: bytes, names_cell: str) -> list[str]:
        where = f"{self.tsv_path}: row {pos} (index {index}), field"
        names = parse_list(names_cell) if names_cell.strip().startswith("[") else [names_cell]
        if names is None or any(is_blank(n) for n in names):
            raise DatasetError(f"{where} image_path: {names_cell[:80]!r} is not a list of page file names")
        try:
            paths = [contained_path(self.image_root, n.strip()) for n in names[:MAX_PAGES]]
        except UnsafePathError as exc:
            raise DatasetError(f"{where} image_path: {exc}") from None
        if all(p.is_file() for p in paths):
            return [str(p) for p in paths]
        try:
            data = base64.b64decode(pdf_b64, validate=False)
        except (binascii.Error, ValueError) as exc:
            raise DatasetError(f"{where} image: not base64 ({exc})") from None
        pages = render_pdf(data, len(paths), f"{where} image")
        for path, page in zip(paths, pages):
            page.save(path, format="JPEG")
        return [str(p) for p in paths[:len(pages)]]


def render_pdf(data: bytes, count: int, where: str) -> list[Any]:
    """The first `count` pages of a PDF as RGB PIL images at 144 dpi (pypdfium2)."""
    try:
        import pypdfium2
    except ImportError:
        raise DatasetError(f"{where}: DUDE's pages are rendered from its PDF with pypdfium2, which is not installed: "
                           f"{PDF_INSTALL_HINT}") from None  # fmt: skip
    try:
        document = pypdfium2.PdfDocument(io.BytesIO(data))
    except pypdfium2.PdfiumError as exc:
        raise DatasetError(f"{where}: not a PDF pypdfium2 can read ({exc})") from None
    try:
        return [document[i].render(scale=PDF_DPI / 72).to_pil().convert("RGB")
                for i in range(min(count, len(document)))]  # fmt: skip
    finally:
        document.close()
