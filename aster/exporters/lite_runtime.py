"""Runs an `aster-export --format tflite` model without TensorFlow: NumPy and ai-edge-litert only.

aster-export copies this file into the exported folder as recognizer.py, so a deployment needs
neither this package nor TensorFlow (it imports nothing from either):

    import sys; sys.path.insert(0, "exported/aster_tflite")
    from recognizer import Recognizer
    recognizer = Recognizer("exported/aster_tflite")
    out = recognizer.predict(images)   # uint8 [N, height, width, 3] RGB, already resized
    out = recognizer.predict_images([Image.open("word.png"), array])  # any size; needs Pillow
    out["text"], out["scores"], out["labels"], out["control_points"]

The folder's model.json gives the contract (input size, how to resize, outputs, label map);
Recognizer checks every batch against it before running the model and raises ValueError naming
what was expected. resize_for_model resizes one image as model.json's "resize" says (Pillow,
imported only there).
"""

import json
import os

import numpy as np

MODEL_JSON = "model.json"
UNKNOWN_TEXT = "\ufffd"


def load_metadata(model_dir):
    """model.json of an exported folder, as a dict.

    Raises:
      ValueError: no readable model.json in model_dir.
    """
    path = os.path.join(model_dir, MODEL_JSON)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot read the exported model's metadata ({e})") from e


def labels_to_text(labels, characters, label_offset, unknown_label=None):
    """Decodes [N, T] label ids as the model's label map does.

    Each row ends at its first label below label_offset (GO, EOS) or negative one; label
    label_offset + i is characters[i] and unknown_label decodes to U+FFFD.

    Returns:
      list of N str.
    """
    texts = []
    for row in np.asarray(labels).reshape(len(labels), -1):
        chars = []
        for label in row.tolist():
            if label < label_offset:
                break
            index = label - label_offset
            chars.append(UNKNOWN_TEXT if label == unknown_label or index >= len(characters)
                         else characters[index])
        texts.append("".join(chars))
    return texts


def check_images(images, height, width):
    """The batch as a uint8 [N, height, width, 3] array.

    Raises:
      ValueError: not an array of pixels, an empty batch, a dtype other than uint8, or a shape
        other than [N, height, width, 3].
    """
    expected = f"a uint8 array [N, {height}, {width}, 3] of RGB images with N >= 1"
    if isinstance(images, (str, bytes)) or images is None:
        raise ValueError(f"images: expected {expected}, got {type(images).__name__} (decode "
                         "the image files first, e.g. with Pillow)")
    try:
        array = np.asarray(images)
    except ValueError as e:  # ragged lists of images
        raise ValueError(f"images: expected {expected}; cannot make an array ({e})") from e
    if array.dtype == object or not (array.dtype.kind in "uif" or array.dtype == bool):
        raise ValueError(f"images: expected {expected}, got an array of {array.dtype}")
    if array.ndim >= 1 and array.shape[0] == 0:
        raise ValueError(f"images: empty batch; expected {expected}")
    if array.dtype != np.uint8:
        raise ValueError(f"images: expected dtype uint8 (pixels 0..255), got {array.dtype}")
    if array.ndim != 4 or tuple(array.shape[1:]) != (height, width, 3):
        hint = " (add a batch axis for one image)" if array.ndim == 3 else ""
        raise ValueError(f"images: expected shape [N, {height}, {width}, 3] (resize to "
                         f"{width}x{height} first, e.g. with predict_images){hint}, got "
                         f"{list(array.shape)}")
    return np.ascontiguousarray(array)


def _describe(value):
    """A short description of a value for error messages: its type, dtype and shape."""
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype} {list(value.shape)}"
    return type(value).__name__


def _as_rgb(image, pil_image):
    """A PIL RGB image of a PIL image (any mode) or a uint8 [H, W] or [H, W, 1|3|4] array."""
    if isinstance(image, pil_image.Image):
        return image.convert("RGB")
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or not (
            image.ndim == 2 or image.ndim == 3 and image.shape[2] in (1, 3, 4)):
        raise ValueError("image: expected a PIL image or a uint8 array [H, W] or [H, W, 3] (or 4 "
                         f"channels, alpha dropped), got {_describe(image)} (open image files "
                         "with Pillow first)")
    if image.ndim == 3:
        image = image[..., 0] if image.shape[2] == 1 else image[..., :3]
    return pil_image.fromarray(np.ascontiguousarray(image)).convert("RGB")


def resize_for_model(image, metadata):
    """One image of any size as the model takes it, resized as model.json's "resize" says.

    Pillow's resize widens its filter by the reduction factor when shrinking, which is
    tf.image.resize's antialias: "bilinear" and "bicubic" match TensorFlow to rounding, "nearest"
    exactly, "area" becomes Pillow's box filter (pixels cut by a box edge weigh a little
    differently). Folders exported before model.json had "resize" get antialiased bilinear.

    Args:
      image: a PIL image (any mode; converted to RGB) or a uint8 array [H, W] (gray),
        [H, W, 3] (RGB) or [H, W, 4] (alpha dropped), of any size.
      metadata: model.json as a dict (Recognizer.metadata).

    Returns:
      uint8 [height, width, 3] RGB.

    Raises:
      ValueError: no Pillow, not an image, an unknown method, or a shrink without antialias
        (which Pillow cannot do).
    """
    try:
        from PIL import Image
    except ImportError as e:
        raise ValueError("resize_for_model needs Pillow (pip install pillow), or resize the "
                         "images yourself as model.json's \"resize\" says") from e
    spec = {"method": "bilinear", "antialias": True, "height": metadata["input"]["height"],
            "width": metadata["input"]["width"], **metadata.get("resize", {})}
    filters = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "area": Image.BOX,
               "nearest": Image.NEAREST}
    method, height, width = spec["method"], spec["height"], spec["width"]
    if method not in filters:
        raise ValueError(f"model.json resize method {method!r}: expected one of {sorted(filters)}")
    rgb = _as_rgb(image, Image)
    shrinks = rgb.height > height or rgb.width > width
    if not spec["antialias"] and method in ("bilinear", "bicubic") and shrinks:
        raise ValueError(f"model.json asks for {method} without antialias, which Pillow cannot do "
                         f"when shrinking ({rgb.width}x{rgb.height} to {width}x{height}); resize "
                         "as tf.image.resize(antialias=False) does and call predict")
    return np.asarray(rgb.resize((width, height), filters[method], reducing_gap=None), np.uint8)


def resize_batch(images, metadata):
    """resize_for_model of each image of a list (or of a [N, H, W, C] array).

    Raises:
      ValueError: one image instead of a list, or see resize_for_model.
    """
    if not isinstance(images, (list, tuple, np.ndarray)) or (isinstance(images, np.ndarray)
                                                             and images.ndim != 4):
        raise ValueError(f"images: expected a list of images, got {_describe(images)} (wrap one "
                         "image in a list)")
    return [resize_for_model(image, metadata) for image in images]


def open_export(model_dir, expected_format):
    """(model.json as a dict, the model file's path) of an exported folder.

    Raises:
      ValueError: no model.json, a folder of another format, or no model file.
    """
    metadata = load_metadata(model_dir)
    if metadata.get("format") != expected_format:
        raise ValueError(f"{model_dir}: model.json format is {metadata.get('format')!r}, "
                         f"expected {expected_format!r}")
    path = os.path.join(model_dir, metadata["model_file"])
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such model file")
    return metadata, path


def add_text(outputs, metadata):
    """Adds outputs["text"], the label ids decoded with model.json's label map; returns outputs."""
    labels = metadata["labels"]
    outputs["text"] = labels_to_text(outputs["labels"], labels["characters"],
                                     labels["label_offset"], labels.get("unknown_label"))
    return outputs


class Recognizer:
    """An exported TFLite recognizer: uint8 images in, texts, scores and control points out."""

    def __init__(self, model_dir, num_threads=None):
        """Loads model_dir/model.json and its .tflite model with ai-edge-litert.

        Raises:
          ValueError: no model.json or model file, or a folder of another format.
        """
        self.metadata, path = open_export(model_dir, "tflite")
        from ai_edge_litert.interpreter import Interpreter

        self._interpreter = Interpreter(model_path=path, num_threads=num_threads)
        self._input = self._interpreter.get_input_details()[0]["index"]
        self._outputs = {d["name"]: d["index"] for d in self._interpreter.get_output_details()}
        self._batch = None

    @property
    def input_size(self):
        """(height, width) the model takes."""
        spec = self.metadata["input"]
        return spec["height"], spec["width"]

    def predict(self, images):
        """Recognises a batch.

        Args:
          images: uint8 [N, height, width, 3] RGB (a list of [height, width, 3] arrays works).

        Returns:
          dict: text (list of N str), scores [N] float32 log-probability, labels [N, T] int32
          label ids, control_points [N, K, 2] float32 normalised (x, y).

        Raises:
          ValueError: see check_images.
        """
        batch = check_images(images, *self.input_size)
        if self._batch != batch.shape[0]:
            self._interpreter.resize_tensor_input(self._input, list(batch.shape))
            self._interpreter.allocate_tensors()
            self._batch = batch.shape[0]
        self._interpreter.set_tensor(self._input, batch)
        self._interpreter.invoke()
        return add_text({name: self._interpreter.get_tensor(index).copy()
                         for name, index in self._outputs.items()}, self.metadata)

    def predict_images(self, images):
        """Recognises images of any size: resize_for_model on each, then predict.

        Args:
          images: list of PIL images or uint8 arrays [H, W(, 3)] (see resize_for_model).

        Returns:
          see predict.

        Raises:
          ValueError: see resize_batch and check_images.
        """
        return self.predict(resize_batch(images, self.metadata))
