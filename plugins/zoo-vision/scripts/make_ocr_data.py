"""Render the OCR models' calibration and evaluation data, with its truth, into
``zoo_vision/data/ocr/{det,rec,cls}.npz``.

Text in DejaVu Sans (matplotlib's copy) on light or dark plates over scikit-learn's two sample
photos. JPEG decoding, FreeType rasterisation and PIL's resampling may differ between library
versions and CPUs, so the pack ships what this script wrote, and builds read only that. Rerunning
it on another machine may give other bytes: then update ``ocr_data.SHA256`` and the measured figures.

    .venv/bin/python plugins/zoo-vision/scripts/make_ocr_data.py
"""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from PIL import Image, ImageDraw, ImageFont
from zoo_vision import ocr_data, photos

SEED = 20240917
FONT = Path(matplotlib.__file__).parent / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf"
WORDS = ["open", "exit", "north", "river", "garden", "market", "station", "street", "bridge", "coffee", "paper", "window", "light", "green", "north", "south", "east", "west", "hotel", "bank", "museum", "library", "school", "forest", "summer", "winter", "spring", "autumn", "orange", "yellow", "silver", "golden", "water", "stone", "tower", "harbour", "castle", "temple", "flower", "valley", "mountain", "OPEN", "EXIT", "STOP", "SALE", "PARK", "ROAD", "CITY", "INFO", "TAXI", "BUS", "GATE", "HALL", "Route", "Main", "Central", "Island", "Lake", "Park", "Hill", "Park", "Square", "Avenue", "Platform", "Ticket", "Office", "Entry", "Level", "Floor", "Zone", "Area", "Block", "Room"]
CODES = ("A1", "B12", "C3", "D45", "E7", "F9", "G20", "H8", "K2", "M31", "N6", "P14", "R5", "S18", "T4", "X77")
DET_SIZES = (16, 19, 22, 26, 30, 36)


def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT), size)


def word(rng: np.random.Generator) -> str:
    roll = rng.random()
    if roll < 0.15:
        return str(int(rng.integers(1, 10000)))
    if roll < 0.25:
        return str(CODES[int(rng.integers(len(CODES)))])
    return str(WORDS[int(rng.integers(len(WORDS)))])


def colours(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(plate, ink): dark on light or light on dark, slightly tinted."""
    light = tuple(int(v) for v in rng.integers(205, 256, 3))
    dark = tuple(int(v) for v in rng.integers(0, 60, 3))
    return (light, dark) if rng.random() < 0.6 else (dark, light)


def photo_arrays() -> list[Any]:
    out = []
    for path in photos.paths():
        with Image.open(path) as image:
            out.append(np.asarray(image.convert("RGB")))
    return out


def det_image(rng: np.random.Generator, photo: Any, side: int) -> tuple[Any, list[tuple[int, int, int, int]]]:
    """A side×side crop with 1-4 text lines on plates; the lines' ink boxes."""
    y, x = int(rng.integers(0, photo.shape[0] - side + 1)), int(rng.integers(0, photo.shape[1] - side + 1))
    # 16 levels per channel: the photo compresses to a third, so 40 images fit in the pack's budget.
    image = Image.fromarray(photo[y : y + side, x : x + side] & 0xF0 | 0x08)
    draw = ImageDraw.Draw(image)
    plates: list[tuple[int, int, int, int]] = []
    boxes: list[tuple[int, int, int, int]] = []
    for _ in range(int(rng.integers(1, 5))):
        for _attempt in range(40):
            size = int(DET_SIZES[int(rng.integers(len(DET_SIZES)))])
            text = " ".join(word(rng) for _ in range(int(rng.integers(1, 4))))
            f = font(size)
            left, top, right, bottom = (int(v) for v in draw.textbbox((0, 0), text, font=f))
            pad = max(3, size // 3)
            w, h = right - left + 2 * pad, bottom - top + 2 * pad
            if w > side - 4:
                continue
            px, py = int(rng.integers(2, side - w - 1)), int(rng.integers(2, side - h - 1))
            plate = (px, py, px + w, py + h)
            gap = size // 2
            if any(plate[0] < q[2] + gap and q[0] < plate[2] + gap and plate[1] < q[3] + gap and q[1] < plate[3] + gap
                   for q in plates):
                continue
            back, ink = colours(rng)
            draw.rectangle((plate[0], plate[1], plate[2] - 1, plate[3] - 1), fill=back)
            origin = (px + pad - left, py + pad - top)
            draw.text(origin, text, font=f, fill=ink)
            x1, y1, x2, y2 = (int(v) for v in draw.textbbox(origin, text, font=f))
            boxes.append((x1, y1, x2, y2))
            plates.append(plate)
            break
    return np.asarray(image), boxes


def line_image(rng: np.random.Generator, photo: Any, text: str) -> Any:
    """One text line on a plate over a patch of photo, cropped around the ink with a margin as a
    detector's unclipped box gives, as an RGB array."""
    size = int(rng.integers(18, 45))
    f = font(size)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    left, top, right, bottom = (int(v) for v in probe.textbbox((0, 0), text, font=f))
    margin_y = round((bottom - top) * float(rng.uniform(0.15, 0.35)))
    margin_x = round((bottom - top) * float(rng.uniform(0.15, 0.5)))
    w, h = right - left + 2 * margin_x, bottom - top + 2 * margin_y
    border = 6
    y = int(rng.integers(0, photo.shape[0] - h - 2 * border))
    x = int(rng.integers(0, photo.shape[1] - w - 2 * border))
    image = Image.fromarray(photo[y : y + h + 2 * border, x : x + w + 2 * border].copy())
    draw = ImageDraw.Draw(image)
    back, ink = colours(rng)
    plate_pad = int(rng.integers(2, border + 1))
    draw.rectangle((border - plate_pad, border - plate_pad, border + w + plate_pad - 1, border + h + plate_pad - 1),
                   fill=back)
    draw.text((border + margin_x - left, border + margin_y - top), text, font=f, fill=ink)
    return np.asarray(image.crop((border, border, border + w, border + h)))


def fit(line: Any, height: int, width: int) -> tuple[Any, int]:
    """rapidocr's resize_norm_img before normalising: height ``height``, the aspect ratio kept up to
    ``width`` (squashed beyond), padded on the right; the padding is 0 here and masked by the loader."""
    h, w = line.shape[:2]
    resized_w = min(width, int(np.ceil(height * w / h)))
    resized = np.asarray(Image.fromarray(line).resize((resized_w, height), Image.Resampling.BILINEAR))
    out = np.zeros((height, width, 3), dtype=np.uint8)
    out[:, :resized_w] = resized
    return out, resized_w


def short_word(rng: np.random.Generator, longest: int) -> str:
    while True:
        text = word(rng)
        if 2 <= len(text) <= longest:
            return text


def make_det(rng: np.random.Generator, pictures: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split, count in (("calibration", ocr_data.COUNTS["det"][0]), ("evaluation", ocr_data.COUNTS["det"][1])):
        images, boxes, owner = [], [], []
        for i in range(count):
            image, lines = det_image(rng, pictures[i % len(pictures)], ocr_data.DET_SIDE)
            images.append(image)
            boxes += lines
            owner += [i] * len(lines)
        out[split] = np.stack(images)
        if split == "evaluation":
            out["evaluation_boxes"] = np.asarray(boxes, dtype=np.int16)
            out["evaluation_box_image"] = np.asarray(owner, dtype=np.int16)
    return out


def make_lines(rng: np.random.Generator, pictures: list[Any], kind: str) -> dict[str, Any]:
    height, width = ocr_data.LINE_SHAPES[kind]
    out: dict[str, Any] = {}
    for split, count in (("calibration", ocr_data.COUNTS[kind][0]), ("evaluation", ocr_data.COUNTS[kind][1])):
        images, widths, texts, labels = [], [], [], []
        for i in range(count):
            # Longest words the width takes unsquashed at DejaVu's ~0.6 em per character.
            text = short_word(rng, 12 if kind == "rec" else 6)
            line = line_image(rng, pictures[i % len(pictures)], text)
            rotated = kind == "cls" and i % 2 == 1
            image, used = fit(line[::-1, ::-1].copy() if rotated else line, height, width)
            images.append(image)
            widths.append(used)
            texts.append(text)
            labels.append(int(rotated))
        out[split] = np.stack(images)
        out[f"{split}_width"] = np.asarray(widths, dtype=np.int16)
        if split == "evaluation":
            if kind == "rec":
                out["evaluation_text"] = np.asarray(texts)
            else:
                out["evaluation_label"] = np.asarray(labels, dtype=np.uint8)
    return out


def write_npz(path: Path, arrays: dict[str, Any]) -> None:
    """np.savez_compressed's format with a fixed date in every member, so equal arrays give equal bytes."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(arrays):
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(arrays[name]), allow_pickle=False)  # type: ignore[no-untyped-call]
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, buffer.getvalue(), compresslevel=9)


def main() -> int:
    rng = np.random.default_rng(SEED)
    pictures = photo_arrays()
    ocr_data.FOLDER.mkdir(parents=True, exist_ok=True)
    for kind, arrays in (("det", make_det(rng, pictures)), ("rec", make_lines(rng, pictures, "rec")),
                         ("cls", make_lines(rng, pictures, "cls"))):
        path = ocr_data.FOLDER / f"{kind}.npz"
        write_npz(path, arrays)
        print(f"{path}: {path.stat().st_size} bytes, sha256 {ocr_data.file_sha256(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
