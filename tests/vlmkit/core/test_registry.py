import subprocess
import sys

import pytest

from vlmkit.core.registry import Registry, RegistryError


def test_lazy_build_with_defaults_and_overrides():
    registry = Registry("thing")
    registry.add("od", "collections:OrderedDict", a=1)
    built = registry.build("od", b=2)
    assert dict(built) == {"a": 1, "b": 2}


def test_unknown_name_suggests_close_ones():
    registry = Registry("dataset")
    registry.add("MMBench_DEV_EN", "collections:OrderedDict")
    registry.add("MMBench_DEV_CN", "collections:OrderedDict")
    with pytest.raises(RegistryError, match="Did you mean: MMBench_DEV_EN"):
        registry.get("MMBench_DEV_EM")
    with pytest.raises(RegistryError, match="Did you mean: MMBench_DEV_EN"):
        registry.get("mmbench_dev_en")


def test_missing_optional_dependency_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "needs_cv.py").write_text("import cv2_not_installed_here\nclass X: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry("model")
    registry.add("m", "needs_cv:X")
    with pytest.raises(RegistryError, match="needs the optional dependency 'cv2_not_installed_here'"):
        registry.build("m")


def test_duplicate_and_malformed_entries_are_refused():
    registry = Registry("model")
    registry.add("a", "x:Y")
    with pytest.raises(ValueError):
        registry.add("a", "x:Z")
    with pytest.raises(ValueError):
        registry.add("b", "no_colon")


def test_listing_models_imports_no_torch():
    code = "import sys; from vlm.registry import model_registry; model_registry(); import vlmkit.cli.main; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
