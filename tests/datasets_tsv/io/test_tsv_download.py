"""Getting a dataset's TSV: download with MD5 from a real server on 127.0.0.1, offline reuse, bundled files."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.mcq import ImageMCQDataset
from datasets_tsv.catalog.registry import build_entry, parse_catalog
from vlmkit.core.errors import DataError
from vlmkit.core.files import DownloadError

from tests.support.tsvs import b64, image_bytes, write_tsv


@pytest.fixture
def served_tsv(http_file_server, tmp_path):
    """An MCQ TSV on the server: (url, md5, bytes)."""
    path = write_tsv(http_file_server.folder / "Remote.tsv", [
        {"index": i, "image": b64(image_bytes(c)), "question": f"Colour {i}?", "A": "red", "B": "blue",
         "answer": "A" if c == "red" else "B", "category": "colour"}
        for i, c in enumerate(["red", "blue", "red"])
    ])
    data = path.read_bytes()
    return http_file_server.url("Remote.tsv"), hashlib.md5(data).hexdigest(), data


def test_downloads_verifies_and_records_the_source(lmu_root, served_tsv, http_file_server):
    url, md5, data = served_tsv
    ds = ImageMCQDataset("Remote", root=lmu_root, url=url, md5=md5, progress=False)
    assert (lmu_root / "Remote.tsv").read_bytes() == data
    assert ds.file_md5 == md5 and len(ds) == 3
    info = ds.info()
    assert info["source"] == url and info["md5"] == md5 and info["n_total"] == 3 and info["kind"] == "mcq"
    assert info["class"] == "datasets_tsv.kinds.mcq:ImageMCQDataset"
    assert http_file_server.hits["Remote.tsv"] == 1


def test_present_good_file_is_used_with_the_server_down(lmu_root, served_tsv, http_file_server):
    url, md5, data = served_tsv
    (lmu_root / "Remote.tsv").write_bytes(data)
    http_file_server.stop()
    ds = ImageMCQDataset("Remote", root=lmu_root, url=url, md5=md5, progress=False)
    assert ds.file_md5 == md5 and ds.build_prompt(0)[0]["type"] == "image"


def users_copy(lmu_root, data: bytes) -> bytes:
    """The user's own edit of the catalog's TSV, placed where the catalog's copy would go."""
    changed = data.replace(b"Colour 1?", b"Colour X?")
    (lmu_root / "Remote.tsv").write_bytes(changed)
    return changed


def check_refusal(message: str, lmu_root, md5: str, changed: bytes) -> None:
    path = lmu_root / "Remote.tsv"
    assert "\n" not in message and str(path) in message
    assert md5 in message and hashlib.md5(changed).hexdigest() in message  # both MD5s
    assert "Move it away" in message and "--keep-local-tsv" in message  # both choices
    assert path.read_bytes() == changed  # never destroyed


@pytest.mark.parametrize("server", ["up", "down"])
def test_users_own_file_with_another_md5_is_an_error_naming_it(lmu_root, served_tsv, http_file_server, server):
    url, md5, data = served_tsv
    changed = users_copy(lmu_root, data)
    if server == "down":
        http_file_server.stop()
    with pytest.raises(DatasetError) as info:
        ImageMCQDataset("Remote", root=lmu_root, url=url, md5=md5, progress=False)
    check_refusal(str(info.value), lmu_root, md5, changed)
    assert http_file_server.hits["Remote.tsv"] == 0  # the network is not asked: the local file is the question
    assert sorted(p.name for p in lmu_root.iterdir()) == ["Remote.tsv"]  # no partial download beside it


@pytest.mark.parametrize("server", ["up", "down"])
def test_keep_local_tsv_evaluates_the_users_file_and_records_both_md5s(lmu_root, served_tsv, http_file_server, server):
    url, md5, data = served_tsv
    changed = users_copy(lmu_root, data)
    if server == "down":
        http_file_server.stop()
    registry = parse_catalog(
        "name\tclass\turl\tmd5\tkwargs\tdescription\n"
        f"Remote\tdatasets_tsv.kinds.mcq:ImageMCQDataset\t{url}\t{md5}\t{{}}\ta test entry\n"
    )
    ds = build_entry(registry, "Remote", root=lmu_root, progress=False, keep_local_tsv=True)
    assert ds.line(1)["question"] == "Colour X?" and ds.build_prompt(1)[0]["type"] == "image"
    info = ds.info()
    actual = hashlib.md5(changed).hexdigest()
    assert info["md5"] == actual == ds.file_md5
    assert info["catalog_md5"] == md5 and info["md5_mismatch_accepted"] is True
    assert (lmu_root / "Remote.tsv").read_bytes() == changed
    assert http_file_server.hits["Remote.tsv"] == 0


def test_keep_local_tsv_changes_nothing_for_the_catalogs_own_file(lmu_root, served_tsv, http_file_server):
    url, md5, _ = served_tsv
    ds = ImageMCQDataset("Remote", root=lmu_root, url=url, md5=md5, progress=False, keep_local_tsv=True)
    assert http_file_server.hits["Remote.tsv"] == 1  # absent: downloaded as usual
    info = ds.info()
    assert info["md5"] == md5 and "catalog_md5" not in info and "md5_mismatch_accepted" not in info


def test_build_dataset_takes_keep_local_tsv_for_a_catalog_name(lmu_root):
    """MMBench_DEV_EN from the real catalog: a user's file of that name is never replaced, and no network is
    needed to say so or to evaluate it."""
    from datasets_tsv.catalog.registry import build_dataset, dataset_registry

    catalog_md5 = dataset_registry().get("MMBench_DEV_EN").kwargs["md5"]
    path = write_tsv(lmu_root / "MMBench_DEV_EN.tsv", [
        {"index": 0, "image": b64(image_bytes("red")), "question": "Colour?", "A": "red", "B": "blue", "answer": "A"},
    ])
    mine = path.read_bytes()
    with pytest.raises(DataError, match=rf"MMBench_DEV_EN\.tsv: MD5 {hashlib.md5(mine).hexdigest()} differs "
                                        rf"from the catalog's {catalog_md5}.*--keep-local-tsv"):
        build_dataset("MMBench_DEV_EN", root=lmu_root, progress=False)
    ds = build_dataset("MMBench_DEV_EN", root=lmu_root, progress=False, keep_local_tsv=True)
    assert len(ds) == 1 and ds.info()["catalog_md5"] == catalog_md5 and ds.info()["md5_mismatch_accepted"]
    assert path.read_bytes() == mine


def test_present_file_with_wrong_md5_and_no_url_is_an_error(lmu_root, served_tsv):
    _, md5, data = served_tsv
    changed = data.replace(b"Colour 1?", b"Colour X?")
    (lmu_root / "Remote.tsv").write_bytes(changed)
    with pytest.raises(DatasetError, match=r"Remote\.tsv: MD5 .* differs from the catalog's " + md5):
        ImageMCQDataset("Remote", root=lmu_root, md5=md5, progress=False)
    assert (lmu_root / "Remote.tsv").read_bytes() == changed  # left for the user to judge


def test_damaged_present_file_is_reported_by_its_md5_and_kept(lmu_root, served_tsv, http_file_server):
    url, md5, data = served_tsv
    cut = data[: len(data) // 3]  # a cut copy from an old tool: the MD5 says why, not a parse error
    (lmu_root / "Remote.tsv").write_bytes(cut)
    with pytest.raises(DatasetError, match=rf"MD5 {hashlib.md5(cut).hexdigest()} differs from the catalog's {md5}"):
        ImageMCQDataset("Remote", root=lmu_root, url=url, md5=md5, progress=False)
    assert (lmu_root / "Remote.tsv").read_bytes() == cut and http_file_server.hits["Remote.tsv"] == 0


def test_server_file_with_another_md5_fails_and_leaves_nothing(lmu_root, served_tsv, http_file_server):
    url, _, _ = served_tsv
    with pytest.raises(DownloadError, match="MD5 mismatch"):
        ImageMCQDataset("Remote", root=lmu_root, url=url, md5="0" * 32, progress=False)
    assert http_file_server.hits["Remote.tsv"] == 2
    assert list(lmu_root.iterdir()) == []


def test_cut_transfer_leaves_nothing_to_be_used_later(lmu_root, served_tsv, http_file_server):
    url, md5, data = served_tsv
    http_file_server.faults["Remote.tsv"] = "truncate"
    for _ in range(2):
        with pytest.raises(DownloadError):
            ImageMCQDataset("Remote", root=lmu_root, url=url, progress=False)  # no MD5 to catch it either
        assert list(lmu_root.iterdir()) == []
    del http_file_server.faults["Remote.tsv"]
    assert len(ImageMCQDataset("Remote", root=lmu_root, url=url, progress=False)) == 3


def test_missing_file_without_url_is_an_error(lmu_root):
    with pytest.raises(DatasetError, match=r"Nowhere\.tsv: not found, and 'Nowhere' has no download URL"):
        ImageMCQDataset("Nowhere", root=lmu_root, progress=False)


def test_catalog_row_passes_url_md5_and_options(lmu_root, served_tsv):
    url, md5, _ = served_tsv
    text = (
        "name\tclass\turl\tmd5\tkwargs\tdescription\n"
        f"Remote\tdatasets_tsv.kinds.mcq:ImageMCQDataset\t{url}\t{md5}\t"
        '{"circular": true, "image_folder": "Shared"}\ta test entry\n'
    )
    registry = parse_catalog(text)
    ds = build_entry(registry, "Remote", root=lmu_root, progress=False)
    assert ds.circular and ds.image_folder == "Shared" and ds.file_md5 == md5
    assert ds.info()["scorer"] == {"scorer": "mcq", "circular": True}
    assert ds.image_paths(0)[0].startswith(str((lmu_root / "images" / "Shared").resolve()))


def test_bundled_file_missing_from_the_package_is_a_clear_error(lmu_root):
    with pytest.raises(DatasetError, match=r"bundled file datasets_tsv/data/no_such_demo\.tsv is missing"):
        ImageMCQDataset("demo", root=lmu_root, bundled="data/no_such_demo.tsv", progress=False)


@pytest.mark.parametrize("name", ["vlmkit_demo_mcq", "vlmkit_demo_yorn", "vlmkit_demo_vqa"])
def test_bundled_demo_is_copied_into_lmudata(lmu_root, name):
    packaged = resources.files("datasets_tsv").joinpath(f"data/{name}.tsv")
    if not packaged.is_file():
        pytest.skip(f"datasets_tsv/data/{name}.tsv is not generated yet")
    from datasets_tsv.catalog.registry import build_dataset

    ds = build_dataset(name, root=lmu_root, progress=False)
    assert (lmu_root / f"{name}.tsv").read_bytes() == packaged.read_bytes()
    assert len(ds) > 0 and ds.build_prompt(0)[-1]["type"] == "text"
    assert ds.info()["source"] == f"datasets_tsv/data/{name}.tsv"
