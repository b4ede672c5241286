"""The LLM judge of a `vlmkit run`: from --judge and its flags (or the config file) to a judge per (model, dataset).

- `--judge NAME` is any OpenAI-compatible model id (or a registry API entry) served at `--judge-api-base` (default:
  $OPENAI_API_BASE, else OpenAI's API); the key is `--judge-api-key` (default: $OPENAI_API_KEY), never the
  evaluated model's --api-key, and never written anywhere. `--judge-nproc` calls at once, `--judge-timeout`
  seconds per call, `--judge-retries` extra attempts after a timeout, 429 or 5xx. A local checkpoint is not a judge
  here: serve it (`transformers serve`, vLLM) and pass its URL.
- The judge's server is probed once before anything is asked of any model (a wrong judge URL is found before the
  hours of inference, not after); then each pair gets a `JournalledJudge` over `<run_dir>/judge.jsonl`.
- Without --judge a run scores by rules alone, as VLMEvalKit's `--judge exact_matching` does, and says so; a
  benchmark only a judge can score is refused in one line before anything runs (datasets_tsv.catalog.entries).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlmkit.core import config
from vlmkit.core.cells import whole_number
from vlmkit.core.contracts import ModelView, model_view
from vlmkit.core.errors import ConfigError
from vlmkit.core.model_calls import ModelCallError
from vlmkit.judging.base import JudgeStopped
from vlmkit.outputs.layout import JUDGE_JOURNAL
from vlmkit.run.judge_journal import JournalledJudge, judge_words
from vlmkit.run.resolve import ModelOptions, ModelSpec, check_api_base, resolve_model

OPENAI_API_BASE = "https://api.openai.com/v1"


@dataclass
class JudgeOptions:
    name: str | None = None  # None: rules only
    api_base: str | None = None
    api_key: str | None = None  # never written anywhere
    nproc: int = 4
    timeout: float | None = None  # default: the API model's (60 s)
    retries: int | None = None  # default: the API model's (3)

    def check(self) -> None:
        """ConfigError (one line naming the flag) for a value that cannot work."""
        if self.name is not None and not str(self.name).strip():
            raise ConfigError("--judge needs a model name, e.g. --judge gpt-4o-mini")
        if whole_number(self.nproc) is None or whole_number(self.nproc) < 1:
            raise ConfigError(f"--judge-nproc must be a whole number, 1 or more; got {self.nproc!r}")
        if self.api_base is not None:
            check_api_base(self.api_base, "--judge-api-base")
        try:
            ModelOptions(timeout=self.timeout, retries=self.retries).check()
        except ConfigError as exc:
            raise ConfigError(judge_words(str(exc))) from None


def judge_spec(options: JudgeOptions) -> ModelSpec:
    """The judge's model spec: always a served (OpenAI-compatible) model."""
    assert options.name is not None
    base = options.api_base or config.openai_api_base() or OPENAI_API_BASE
    model_options = ModelOptions(api_base=base, api_key=options.api_key, timeout=options.timeout,
                                 retries=options.retries)
    try:
        return resolve_model(options.name, model_options)
    except ConfigError as exc:
        raise ConfigError(judge_words(f"--judge {options.name}: {exc}")) from None


class RunJudge:
    """The judge model of one run: built and probed once, a journalled judge per pair, closed at the end."""

    def __init__(self, options: JudgeOptions, *, progress: bool = False) -> None:
        options.check()
        self.options = options
        self.spec = judge_spec(options)
        self.progress = progress
        self._model: ModelView | None = None
        self.probe: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def secret(self) -> str | None:
        return self.spec.kwargs.get("api_key")

    def start(self) -> None:
        """Build the judge's client and probe its server; JudgeStopped (one line) when it cannot be reached."""
        if self._model is not None:
            return
        self._model = model_view(self.spec.build())
        probe = self._model.probe
        try:
            self.probe = probe() if probe is not None else None
        except ModelCallError as exc:
            raise JudgeStopped(judge_words(f"judge {self.name}: stopped before asking anything: {exc}")) from None

    def for_pair(self, run_dir: Path, secrets: tuple[str, ...]) -> JournalledJudge:
        self.start()
        return JournalledJudge(self._model, run_dir / JUDGE_JOURNAL, nproc=self.options.nproc, secrets=secrets,
                               name=self.name, progress=self.progress)

    def settings(self) -> dict[str, Any]:
        """The judge's settings for results.json (no key)."""
        settings = self._model.settings() if self._model is not None else {}
        return {"name": self.name, "target": self.spec.target, "kwargs": self.spec.public_kwargs(),
                "nproc": self.options.nproc, "base_url": settings.get("base_url"),
                "timeout": settings.get("timeout"), "retries": settings.get("retries"), "probe": self.probe}

    def close(self) -> None:
        if self._model is not None:
            self._model.close()
