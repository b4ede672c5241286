"""vlmkit.core.audio on real files written with soundfile: formats, mono mixdown, resampling, API encoding, errors."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.support.media_files import write_tone
from vlmkit.core.audio import AudioError, api_audio, read_audio, resample, wav_bytes
from vlmkit.core.media import MediaError


def _peak_hz(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * rate / len(samples))


@pytest.mark.parametrize("ext", ["wav", "flac", "ogg", "mp3"])
def test_formats_read_at_their_rate_and_resampled(tmp_path: Path, ext: str) -> None:
    path = write_tone(tmp_path / f"tone.{ext}", seconds=1.0, rate=22050, freq=440.0)
    audio = read_audio(path)
    assert audio.rate == audio.source_rate == 22050 and audio.source_channels == 1
    assert audio.samples.ndim == 1 and audio.samples.dtype == np.float32
    # mp3 adds encoder delay/padding: lengths within a few frames, the tone itself unchanged
    assert abs(len(audio.samples) - 22050) <= (3000 if ext == "mp3" else 0)
    assert _peak_hz(audio.samples, 22050) == pytest.approx(440.0, abs=2.0)
    at_16k = read_audio(path, rate=16000)
    assert at_16k.rate == 16000 and at_16k.source_rate == 22050
    assert len(at_16k.samples) == round(len(audio.samples) * 16000 / 22050)
    assert _peak_hz(at_16k.samples, 16000) == pytest.approx(440.0, abs=2.0)
    assert at_16k.duration == pytest.approx(audio.duration, abs=1e-3)


def test_stereo_is_mixed_down_to_the_mean_of_its_channels(tmp_path: Path) -> None:
    path = tmp_path / "stereo.wav"
    left = np.full(800, 0.5, dtype=np.float32)
    right = np.full(800, -0.25, dtype=np.float32)
    sf.write(str(path), np.stack([left, right], axis=1), 8000, subtype="FLOAT")
    mono = read_audio(path)
    assert mono.source_channels == 2 and mono.samples.shape == (800,)
    assert np.allclose(mono.samples, 0.125)
    both = read_audio(path, mono=False)
    assert both.samples.shape == (800, 2) and np.allclose(both.samples[:, 0], 0.5)
    assert read_audio(path, mono=False, rate=16000).samples.shape == (1600, 2)


def test_resampling_keeps_tones_and_removes_aliases() -> None:
    rate = 44100
    t = np.arange(rate) / rate
    tone = 0.5 * np.sin(2 * np.pi * 440 * t)
    down = resample(tone, rate, 16000)
    assert down.dtype == np.float32 and len(down) == 16000
    reference = 0.5 * np.sin(2 * np.pi * 440 * np.arange(16000) / 16000)
    assert np.max(np.abs(down[200:-200] - reference[200:-200])) < 1e-3  # away from the edges
    kept = resample(0.5 * np.sin(2 * np.pi * 6000 * t), rate, 16000)  # in the pass band (below 8 kHz)
    assert np.sqrt(np.mean(kept[200:-200] ** 2)) == pytest.approx(0.5 / np.sqrt(2), rel=0.01)
    alias = resample(0.5 * np.sin(2 * np.pi * 10000 * t), rate, 16000)  # above it: filtered, not folded to 6 kHz
    assert np.sqrt(np.mean(alias[200:-200] ** 2)) < 1e-3
    up = resample(tone[:4410], rate, 48000)
    assert len(up) == 4800 and _peak_hz(up, 48000) == pytest.approx(440.0, abs=12.0)
    odd = resample(tone[:4410], 44101, 16000)  # rates without a small common factor
    assert len(odd) == round(4410 * 16000 / 44101)
    assert np.array_equal(resample(tone, rate, rate), tone.astype(np.float32))
    with pytest.raises(ValueError):
        resample(tone, 0, 16000)


def test_api_audio_keeps_wav_and_mp3_and_converts_the_rest(tmp_path: Path) -> None:
    wav = write_tone(tmp_path / "a.wav", rate=16000)
    data, fmt = api_audio(wav)
    assert fmt == "wav" and base64.b64decode(data) == wav.read_bytes()
    mp3 = write_tone(tmp_path / "a.mp3", rate=16000)
    data, fmt = api_audio(mp3)
    assert fmt == "mp3" and base64.b64decode(data) == mp3.read_bytes()
    flac = write_tone(tmp_path / "a.flac", rate=22050, channels=2)
    data, fmt = api_audio(flac)
    assert fmt == "wav"
    decoded, rate = sf.read(io.BytesIO(base64.b64decode(data)), dtype="float32", always_2d=True)
    original, _ = sf.read(str(flac), dtype="float32", always_2d=True)
    assert rate == 22050 and decoded.shape == original.shape == (11025, 2)  # own rate and channels kept
    assert np.max(np.abs(decoded - original)) < 1e-3  # 16-bit PCM of the same samples


def test_data_urls(tmp_path: Path) -> None:
    flac = write_tone(tmp_path / "a.flac", rate=8000)
    url = "data:audio/flac;base64," + base64.b64encode(flac.read_bytes()).decode()
    audio = read_audio(url, rate=16000)
    assert audio.source_rate == 8000 and len(audio.samples) == 8000
    data, fmt = api_audio(url)
    assert fmt == "wav" and sf.info(io.BytesIO(base64.b64decode(data))).samplerate == 8000
    with pytest.raises(AudioError, match="data URL"):
        read_audio("data:image/png;base64,AAAA")


def test_wav_bytes_round_trip() -> None:
    samples = np.linspace(-1.2, 1.2, 100, dtype=np.float32)
    decoded, rate = sf.read(io.BytesIO(wav_bytes(samples, 8000)), dtype="float32")
    assert rate == 8000 and decoded.min() >= -1.0 and decoded.max() <= 1.0  # clipped, not wrapped


def test_unreadable_missing_and_remote_audio_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "noise.wav"
    bad.write_bytes(b"RIFF\x00\x00\x00\x00not really a wave file")
    with pytest.raises(AudioError, match="noise.wav.*soundfile cannot read"):
        read_audio(bad)
    with pytest.raises(MediaError, match="noise.wav"):  # AudioError is a MediaError
        api_audio(bad)
    empty = tmp_path / "empty.wav"
    sf.write(str(empty), np.zeros(0, dtype=np.float32), 16000)
    with pytest.raises(AudioError, match="empty.wav.*no samples"):
        read_audio(empty)
    with pytest.raises(AudioError, match="gone.flac: no such file"):
        read_audio(tmp_path / "gone.flac")
    with pytest.raises(AudioError, match="download it first"):
        read_audio("https://example.com/a.wav")
