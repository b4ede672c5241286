"""Audio read with soundfile (wav, flac, ogg, mp3, ...), mixed down to mono, resampled, and encoded for APIs.

- `read_audio(path, rate=None)`: float32 samples in [-1, 1], mono by default (the mean of the channels), at the
  file's own rate or resampled to `rate`. A local path or a base64 audio data URL; a URL is refused (download it).
- `resample`: band-limited interpolation in numpy (a Kaiser-windowed sinc, 16 zero crossings, one precomputed
  filter per output phase), so no optional dependency (soxr, scipy) decides the numbers: the same input gives
  the same samples on every machine. Flat to about 80% of the lower Nyquist frequency (6.4 kHz at 16 kHz),
  -1 dB at 88%, aliases above Nyquist suppressed by ~95 dB. About 0.4 s per minute of 44.1 kHz audio to 16 kHz
  on one core.
- `api_audio(path)`: (base64, format) for OpenAI's ``input_audio``, which takes "wav" and "mp3" only: a wav or
  mp3 file is sent as its own bytes, any other format soundfile reads (flac, ogg, ...) is converted to 16-bit
  PCM wav at its own rate and channel count.
A file soundfile cannot read raises `AudioError` naming the file.
"""

from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vlmkit.core.media import MediaError, b64_to_bytes, bytes_to_b64
from vlmkit.core.message import is_url

API_FORMATS = ("wav", "mp3")  # what OpenAI's input_audio accepts
_ZERO_CROSSINGS = 16
_KAISER_BETA = 8.6
_ROLLOFF = 0.945  # of the lower Nyquist frequency: room for the filter's transition band
_CHUNK = 8192  # output samples per vectorised step (bounds memory)
_PHASES_MAX = 4096  # precompute one filter per output phase when there are at most this many


class AudioError(MediaError):
    """Audio that cannot be read or converted; the message names the file."""


@dataclass
class Audio:
    samples: np.ndarray  # float32; shape (n,) when mono, else (n, channels)
    rate: int  # samples per second of `samples`
    source_rate: int  # the file's own rate
    source_channels: int

    @property
    def duration(self) -> float:
        return len(self.samples) / self.rate if self.rate else 0.0


def _shown(value: str) -> str:
    return value if len(value) <= 80 else value[:80] + "..."


def _source(value: str | os.PathLike[str]) -> tuple[str, object]:
    """(name for messages, what soundfile opens: a path or a bytes buffer)."""
    text = os.fspath(value)
    if text.startswith("data:"):
        header, _, data = text.partition(",")
        if not header[5:].startswith("audio/") or ";base64" not in header or not data:
            raise AudioError(f"audio {_shown(text)}: expected a base64 audio data URL")
        try:
            return "audio data URL", io.BytesIO(b64_to_bytes(data))
        except MediaError as exc:
            raise AudioError(f"audio data URL: {exc}") from None
    if is_url(text):
        raise AudioError(f"audio {_shown(text)}: audio is read from local files or data URLs; download it first")
    if not Path(text).is_file():
        raise AudioError(f"audio {text}: no such file")
    return text, text


def read_audio(path: str | os.PathLike[str], *, rate: int | None = None, mono: bool = True) -> Audio:
    """Samples of an audio file (or data URL), mono unless `mono=False`, resampled to `rate` when given."""
    import soundfile as sf

    name, source = _source(path)
    try:
        data, source_rate = sf.read(source, dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises LibsndfileError, RuntimeError, TypeError for bad input
        raise AudioError(f"audio {name}: soundfile cannot read it ({exc.__class__.__name__}: {exc})") from None
    if data.shape[0] == 0:
        raise AudioError(f"audio {name}: holds no samples")
    channels = data.shape[1]
    samples = data.mean(axis=1, dtype=np.float32) if mono else data
    if samples.ndim == 2 and samples.shape[1] == 1:
        samples = samples[:, 0]
    out_rate = int(source_rate)
    if rate is not None and rate != source_rate:
        samples = resample(samples, int(source_rate), int(rate))
        out_rate = int(rate)
    return Audio(samples=np.ascontiguousarray(samples, dtype=np.float32), rate=out_rate,
                 source_rate=int(source_rate), source_channels=channels)


def _kaiser(x: np.ndarray) -> np.ndarray:
    """The Kaiser window at positions x in [-1, 1] (0 outside)."""
    inside = np.abs(x) < 1.0
    arg = np.sqrt(np.clip(1.0 - x * x, 0.0, None))
    return np.where(inside, np.i0(_KAISER_BETA * arg) / np.i0(_KAISER_BETA), 0.0)


def resample(samples: np.ndarray, orig_rate: int, target_rate: int) -> np.ndarray:
    """Band-limited resampling along the first axis (mono (n,) or multichannel (n, channels)), float32 out.

    Output length is round(n * target / orig). Below the original rate the sinc's cut-off follows the new
    Nyquist frequency, so tones above it are removed instead of folding back as aliases.
    """
    if orig_rate <= 0 or target_rate <= 0:
        raise ValueError(f"sample rates must be positive; got {orig_rate} -> {target_rate}")
    x = np.asarray(samples, dtype=np.float64)
    if orig_rate == target_rate or x.shape[0] == 0:
        return x.astype(np.float32)
    ratio = target_rate / orig_rate
    cutoff = min(1.0, ratio) * _ROLLOFF  # in cycles per input sample, relative to the input Nyquist
    half = int(math.ceil(_ZERO_CROSSINGS / cutoff))  # filter half-width in input samples
    n_out = int(round(x.shape[0] * ratio))
    padded = np.concatenate([np.zeros((half,) + x.shape[1:]), x, np.zeros((half + 1,) + x.shape[1:])])
    taps = np.arange(-half + 1, half + 1)
    g = math.gcd(orig_rate, target_rate)
    up, down = target_rate // g, orig_rate // g  # output k sits at input time k * down / up

    def weights_at(frac: np.ndarray) -> np.ndarray:
        distance = frac[:, None] - taps[None, :]
        return cutoff * np.sinc(cutoff * distance) * _kaiser(distance / half)

    table = weights_at(np.arange(up) * down % up / up) if up <= _PHASES_MAX else None  # one filter per phase
    out = np.empty((n_out,) + x.shape[1:], dtype=np.float64)
    for start in range(0, n_out, _CHUNK):
        k = np.arange(start, min(n_out, start + _CHUNK))
        base = k * down // up
        weights = table[k % up] if table is not None else weights_at((k * down % up) / up)
        gathered = padded[base[:, None] + taps[None, :] + half]
        out[start : start + len(k)] = np.einsum("ct,ct...->c...", weights, gathered)
    return out.astype(np.float32)


def wav_bytes(samples: np.ndarray, rate: int) -> bytes:
    """16-bit PCM wav of float samples (clipped to [-1, 1])."""
    import soundfile as sf

    buffer = io.BytesIO()
    sf.write(buffer, np.clip(samples, -1.0, 1.0), rate, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def api_audio(path: str | os.PathLike[str], formats: tuple[str, ...] = API_FORMATS) -> tuple[str, str]:
    """(base64 data, format) for an API's ``input_audio``: the file as it is when its format is one of `formats`,
    else converted to wav. The file is checked with soundfile either way (AudioError naming it if unreadable)."""
    import soundfile as sf

    text = os.fspath(path)
    name, source = _source(text)
    try:
        info = sf.info(source)
    except Exception as exc:
        raise AudioError(f"audio {name}: soundfile cannot read it ({exc.__class__.__name__}: {exc})") from None
    fmt = {"WAV": "wav", "WAVEX": "wav", "MP3": "mp3", "FLAC": "flac", "OGG": "ogg"}.get(info.format, info.format.lower())
    if fmt in formats:
        if isinstance(source, io.BytesIO):
            return bytes_to_b64(source.getvalue()), fmt
        return bytes_to_b64(Path(text).read_bytes()), fmt
    if isinstance(source, io.BytesIO):
        source.seek(0)
    audio = read_audio(text, mono=False)
    return bytes_to_b64(wav_bytes(audio.samples, audio.rate)), "wav"
