"""Runs an `aster-export --format onnx` model without TensorFlow: NumPy and onnxruntime only.

aster-export copies this file into the exported folder as recognizer.py, beside lite_runtime.py
(its input checks and label decoding), so a deployment needs neither this package nor
TensorFlow:

    import sys; sys.path.insert(0, "exported/aster_onnx")
    from recognizer import Recognizer
    recognizer = Recognizer("exported/aster_onnx")
    out = recognizer.predict(images)   # uint8 [N, height, width, 3] RGB, already resized
    out = recognizer.predict_images([Image.open("word.png"), array])  # any size; needs Pillow
    out["text"], out["scores"], out["labels"], out["control_points"]

resize_for_model (lite_runtime's, re-exported here) resizes one image as model.json says.
"""


if __package__:  # aster.exporters.onnx_runtime
    from .lite_runtime import add_text, check_images, open_export, resize_batch, resize_for_model
else:  # recognizer.py in an exported folder
    from lite_runtime import add_text, check_images, open_export, resize_batch, resize_for_model

__all__ = ["Recognizer", "resize_for_model"]


class Recognizer:
    """An exported ONNX recognizer: uint8 images in, texts, scores and control points out."""

    def __init__(self, model_dir, num_threads=None):
        """Loads model_dir/model.json and its .onnx model with onnxruntime (CPU).

        Raises:
          ValueError: no model.json or model file, or a folder of another format.
        """
        self.metadata, path = open_export(model_dir, "onnx")
        import onnxruntime

        options = onnxruntime.SessionOptions()
        if num_threads:
            options.intra_op_num_threads = num_threads
        self._session = onnxruntime.InferenceSession(path, options,
                                                     providers=["CPUExecutionProvider"])

    @property
    def input_size(self):
        """(height, width) the model takes."""
        spec = self.metadata["input"]
        return spec["height"], spec["width"]

    def predict(self, images):
        """Recognises a batch: see lite_runtime.Recognizer.predict (same inputs and outputs).

        Raises:
          ValueError: see lite_runtime.check_images.
        """
        batch = check_images(images, *self.input_size)
        names = self.metadata["outputs"]
        values = self._session.run(names, {self.metadata["input"]["name"]: batch})
        return add_text(dict(zip(names, values, strict=True)), self.metadata)

    def predict_images(self, images):
        """Recognises images of any size: see lite_runtime.Recognizer.predict_images.

        Raises:
          ValueError: see lite_runtime.resize_batch and lite_runtime.check_images.
        """
        return self.predict(resize_batch(images, self.metadata))
