"""The exports `aster-export` writes, and the runtimes the exported folders carry.

    saved_model_export.py  --format saved_model: a SavedModel, encoded image bytes in, text out
    lite_export.py         --format tflite: LiteRT model on uint8 images, with model.json
    onnx_export.py         --format onnx: the same graph converted by tf2onnx
    lite_runtime.py        copied into a TFLite export as recognizer.py: NumPy + ai-edge-litert
    onnx_runtime.py        copied into an ONNX export as recognizer.py (beside lite_runtime.py):
                           NumPy + onnxruntime

The runtimes import neither TensorFlow nor `aster`, so an exported folder runs on its own.
"""
