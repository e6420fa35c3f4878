"""UCR/UEA classification datasets shipped inside sktime (read from sktime/datasets/data, no download)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd

from itemsmith.handlers.datasets._frame import FrameHandler


class _SktimeClassificationHandler(FrameHandler):
    """One record per series of a sktime train/test classification problem."""

    loader: ClassVar[str] = ""  # name of the sktime.datasets loader
    channels: ClassVar[list[str]] = []
    index_name: ClassVar[str] = ""
    rate: ClassVar[int] = 1  # samples per index unit; 1 gives an integer sample index

    def _label_columns(self, label: str) -> dict[str, object]:
        return {"label": label}

    def _build(self) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        import sktime.datasets

        load = getattr(sktime.datasets, self.loader)
        rows, frames = [], {}
        for split in ("train", "test"):
            values, labels = load(split=split, return_type="numpy3D")
            for i, (sample, label) in enumerate(zip(values, labels, strict=True)):
                rid = f"{split}-{i:04d}"
                rows.append({"record_id": rid, "split": split, **self._label_columns(str(label))})
                steps = np.arange(sample.shape[1])
                index = pd.Index(steps if self.rate == 1 else steps / self.rate, name=self.index_name)
                frames[rid] = pd.DataFrame(sample.T.astype(float), columns=self.channels, index=index)
        return pd.DataFrame(rows), frames


class ItalyPowerDemandHandler(_SktimeClassificationHandler):
    name = "italy_power"
    description = (
        "ItalyPowerDemand (UCR archive, via sktime's bundled copy): daily profiles of Italian electric power\n"
        "demand, one value per hour, derived from twelve monthly demand series (Keogh et al., 'Intelligent Icons').\n"
        "1096 records, one per day: record_id 'train-0000'..'train-0066' (67) and 'test-0000'..'test-1028' (1029).\n"
        "series(id): integer index hour (0..23, hour of the day), column demand. Each day is z-normalised (mean 0,\n"
        "sample std 1), so only the shape of the day is kept, not its level.\n"
        "Labels: split ('train'/'test', the archive's split); label (int): 1 = a day from October to March,\n"
        "2 = a day from April to September; months ('Oct-Mar' or 'Apr-Sep'). The archive states the task but not the\n"
        "code order; 1 = Oct-Mar fits the data: class 1 days peak strongly at 18-19 h (early dusk), class 2 do not.\n"
        "Classes are balanced (train 34/33, test 513/516)."
    )
    loader = "load_italy_power_demand"
    channels = ["demand"]
    units = {"demand": "z-score"}
    index_name = "hour"

    def _label_columns(self, label: str) -> dict[str, object]:
        return {"label": int(label), "months": "Oct-Mar" if label == "1" else "Apr-Sep"}


class BasicMotionsHandler(_SktimeClassificationHandler):
    name = "basic_motions"
    description = (
        "BasicMotions (UEA multivariate archive, via sktime's bundled copy): a smart watch worn by four students\n"
        "while standing, walking, running or playing badminton; each recorded 5 times per activity, 10 s at 10 Hz.\n"
        "80 records: record_id 'train-0000'..'train-0039' and 'test-0000'..'test-0039' (10 per class in each split).\n"
        "series(id): index time_s (0.0..9.9, step 0.1 s), 100 rows, 6 columns: acc_x, acc_y, acc_z (3-axis\n"
        "accelerometer) and gyr_x, gyr_y, gyr_z (3-axis gyroscope). The file does not name its dimensions or units;\n"
        "dimensions 1-3 are taken as accelerometer and 4-6 as gyroscope (the usual reading). The accelerometer shows\n"
        "no gravity offset (standing averages ~0 on all axes).\n"
        "Labels: split ('train'/'test', the archive's split); label: 'standing', 'walking', 'running' or 'badminton'.\n"
        "Running and badminton have far larger accelerometer variance than walking; standing is nearly flat."
    )
    loader = "load_basic_motions"
    channels = ["acc_x", "acc_y", "acc_z", "gyr_x", "gyr_y", "gyr_z"]
    index_name = "time_s"
    rate = 10
