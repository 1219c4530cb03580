"""`aster-export --format onnx`: the inference graph on uint8 images as an ONNX model.

    export_onnx(pipeline_config, "train/model.ckpt-1000", "exported/aster_onnx")

The exported folder holds model.onnx, model.json (the contract, the label map and how it was made),
recognizer.py (aster/exporters/onnx_runtime.py) with lite_runtime.py
(aster/exporters/lite_runtime.py, its input checks and label decoding): they run the model with
NumPy and onnxruntime only, and pipeline.config. The graph is the TFLite export's
(aster/exporters/lite_export.py frozen_graph on aster.inference.fixed_size_uint8_input, float64
rewritten to float32), converted by tf2onnx (the `onnx` extra), with the same tensors:

    input:   images          [N, input_height, input_width, 3] uint8 RGB, already resized
    outputs: labels          [N, T] int32 label ids (the text ends at the first id below the
                             label map's offset)
             scores          [N] float32 its log-probability (higher is better)
             control_points  [N, K, 2] float32 normalised (x, y) ([N, 0, 2] without rectifier)

model.json's "resize" says how to resize (lite_export.resize_metadata); recognizer.py's
Recognizer.predict_images takes images of any size and resizes them so.

The decoders' while loops become ONNX Loop operators. tf2onnx converts OneHot with rank-1
indices only, so the decoders build their one-hot rows from [1] index tensors; they carry their
labels in a [B, max_steps] tensor, not a TensorArray. tf2onnx names tensors "images:0",
"labels:0", ...; the export renames them to the plain names above.
"""

import json
import logging
import os
import shutil

from aster import inference
from aster.exporters import lite_export, lite_runtime, onnx_runtime
from aster.tf_setup import tf
from aster.utils import config_util

logger = logging.getLogger(__name__)

MODEL_FILE = "model.onnx"
OPSET = 17
EXTRA_HINT = "pip install 'aster-tf[onnx]'"


def _rename(graph, mapping):
    """Renames tensors of an onnx GraphProto (its nodes, subgraphs, inputs and outputs)."""
    for value in [*graph.input, *graph.output, *graph.value_info]:
        value.name = mapping.get(value.name, value.name)
    for node in graph.node:
        node.input[:] = [mapping.get(name, name) for name in node.input]
        node.output[:] = [mapping.get(name, name) for name in node.output]
        for attr in node.attribute:
            for subgraph in [*([attr.g] if attr.HasField("g") else []), *attr.graphs]:
                _rename(subgraph, mapping)


def convert(graph_def, opset=OPSET):
    """onnx ModelProto of the frozen export graph, with the plain tensor names.

    Raises:
      ValueError: tf2onnx is not installed, or it fails to convert the graph.
    """
    try:
        import tf2onnx
    except ImportError as e:
        raise ValueError(f"--format onnx needs tf2onnx and onnxruntime: {EXTRA_HINT}") from e
    graph_def = lite_export.float64_to_float32(graph_def)
    names = [inference.INPUT_KEY, *lite_export.OUTPUT_NAMES]
    try:
        model, _ = tf2onnx.convert.from_graph_def(
            graph_def, input_names=[f"{inference.INPUT_KEY}:0"],
            output_names=[f"{name}:0" for name in lite_export.OUTPUT_NAMES], opset=opset)
    except Exception as e:  # tf2onnx raises ValueError, KeyError, RuntimeError, ...
        raise ValueError(f"--format onnx: tf2onnx {tf2onnx.__version__} failed to convert the "
                         f"graph: {type(e).__name__}: {e}") from e
    _rename(model.graph, {f"{name}:0": name for name in names})
    return model


def export_onnx(pipeline_config, checkpoint_path, output_dir, decoding="greedy",
                quantize="none", overwrite=False):
    """Writes the folder described in the module docstring.

    Returns:
      output_dir.

    Raises:
      ValueError: output_dir exists (without overwrite), an unknown decoding, a quantisation
        (TFLite only), a checkpoint that does not match the config, no tf2onnx, or a graph it
        cannot convert.
    """
    if os.path.exists(output_dir) and not overwrite:
        raise ValueError(f"--output_dir {output_dir!r} already exists (use --overwrite)")
    lite_export.check_quantization(quantize, "onnx")
    config = lite_export.decoding_config(pipeline_config, decoding)
    graph_def, labels = lite_export.frozen_graph(config, checkpoint_path)
    model = convert(graph_def)
    if os.path.exists(output_dir):
        shutil.rmtree(output_dir)
    os.makedirs(output_dir)
    model_bytes = model.SerializeToString()
    with open(os.path.join(output_dir, MODEL_FILE), "wb") as f:
        f.write(model_bytes)
    height, width = inference.model_input_size(config.model)
    metadata = {
        "format": "onnx", "model_file": MODEL_FILE, "opset": OPSET,
        "input": {"name": inference.INPUT_KEY, "dtype": "uint8", "height": height,
                  "width": width, "channels": 3},
        "resize": lite_export.resize_metadata(config),
        "outputs": list(lite_export.OUTPUT_NAMES), "labels": labels, "decoding": decoding,
        "checkpoint": os.path.basename(checkpoint_path), "tensorflow": tf.version.VERSION,
        "converter": f"{model.producer_name} {model.producer_version}",
    }
    with open(os.path.join(output_dir, lite_runtime.MODEL_JSON), "w", encoding="utf-8") as f:
        json.dump(metadata, f, indent=1, ensure_ascii=False)
    shutil.copyfile(onnx_runtime.__file__, os.path.join(output_dir, lite_export.RUNTIME_FILE))
    shutil.copyfile(lite_runtime.__file__, os.path.join(output_dir, "lite_runtime.py"))
    config_util.save_pipeline_config(config, os.path.join(output_dir, "pipeline.config"))
    logger.info("exported %s to %s (%d bytes)", checkpoint_path, output_dir, len(model_bytes))
    return output_dir
