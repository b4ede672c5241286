"""datasets_tsv.custom.mm_custom.media_paths called directly on real files: the row's media type, paths resolved
against the jsonl's folder, URLs kept, and the one-line errors naming the line and `path[k]`."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.custom.mm_custom import media_paths
from datasets_tsv.custom.reading import CustomDataError, Record
from tests.support.tsvs import image_bytes

ROW_LINE = 7


def _row(**fields) -> Record:
    return Record(dict(fields), ROW_LINE)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "a.png").write_bytes(image_bytes("red", "PNG"))
    (tmp_path / "clip.wav").write_bytes(b"RIFF")
    return tmp_path


def test_paths_resolve_against_the_files_folder(folder: Path) -> None:
    jsonl = folder / "data.jsonl"
    kind, paths = media_paths(jsonl, _row(type="image", path=["imgs/a.png", f"  {folder / 'imgs' / 'a.png'} "]))
    assert kind == "image" and paths == [str((folder / "imgs" / "a.png").resolve())] * 2
    # a single string is a one-file list; `image` without `type` is an image row
    assert media_paths(jsonl, _row(image="imgs/a.png")) == ("image", [str((folder / "imgs" / "a.png").resolve())])
    urls = ["https://example.org/x.png", "data:image/png;base64,AAAA"]
    assert media_paths(jsonl, _row(type="image", path=urls)) == ("image", urls)  # kept as given, never fetched


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"path": ["imgs/a.png"]}, r"line 7, field type: missing \(mm_custom rows need type and path\)$"),
        ({"type": "gif", "path": ["imgs/a.png"]}, r"line 7, field type: unknown type 'gif'; expected one of "),
        ({"type": "image", "path": []}, r"line 7, field path: must be a non-empty list of file paths$"),
        ({"type": "image", "path": {"a": 1}}, r"line 7, field path: must be a non-empty list of file paths$"),
        ({"type": "image", "path": ["imgs/a.png", " "]}, r"line 7, field path\[1\]: must be a non-empty string, "
                                                         r"got ' '$"),
        ({"type": "image", "path": ["imgs/b.png"]}, r"line 7, field path\[0\]: imgs/b\.png does not exist "
                                                    r"\(looked for .*imgs/b\.png\)$"),
        ({"type": "image", "path": ["imgs/a.png", "clip.wav"]}, r"line 7, field path\[1\]: clip\.wav is a audio file, "
                                                                 r"but the row's type is image$"),
    ],
)
def test_bad_rows_name_the_line_and_field(folder: Path, fields: dict, message: str) -> None:
    with pytest.raises(CustomDataError, match=r"data\.jsonl: " + message):
        media_paths(folder / "data.jsonl", _row(**fields))
