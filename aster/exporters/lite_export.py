"""`aster-export --format tflite`: the inference graph on uint8 images as a LiteRT (TFLite) model.

    export_tflite(pipeline_config, "train/model.ckpt-1000", "exported/aster_tflite")

The exported folder holds model.tflite, model.json (the contract below, the label map and how it was
made), recognizer.py (aster/exporters/lite_runtime.py: runs the model with NumPy and ai-edge-litert
only) and pipeline.config. The model is built by aster.inference.build_inference_graph on
aster.inference.fixed_size_uint8_input and uses TFLite's built-in operators only:

    input:   images          [N, input_height, input_width, 3] uint8 RGB, already resized
    outputs: labels          [N, T] int32 label ids of the chosen predictor (reading order;
                             the text ends at the first id below the label map's offset)
             scores          [N] float32 its log-probability (higher is better)
             control_points  [N, K, 2] float32 normalised (x, y) ([N, 0, 2] without rectifier)

model.json's "resize" (resize_metadata) says how to resize: as the eval_config's resize_image
step does (antialiased bilinear unless the config says otherwise), which recognizer.py's
resize_for_model and Recognizer.predict_images do with Pillow.

Decoding: "greedy" (the default) exports every predictor with beam_width 1; "beam" keeps the
config's beam widths. The model code keeps to ops TFLite has built-in kernels for (greedy decoding
carries its labels in a tensor, not a TensorArray; label lengths are counted with a cumsum); two
things are handled here:
- the TPS rectifier computes its last FC layer and sampling grid in float64, which no built-in
  kernel takes; the frozen graph is rewritten to float32 (a relative error of about 1e-7 on the
  sampling points).
- the converter writes one intermediate tensor of the rectifier's einsum with its dynamic batch
  in `shape` instead of `shape_signature`, which the runtime refuses ("BytesRequired number of
  elements overflowed"); fix_dynamic_shapes moves such dimensions where they belong.
"""

import json
import logging
import os
import shutil

import numpy as np

from aster import inference
from aster.builders import preprocessor_builder
from aster.core import preprocessor_geometry as geometry
from aster.core.standard_fields import PredictionFields
from aster.exporters import lite_runtime
from aster.meta_architectures.multi_predictors_recognition_model import PREDICTOR_OUTPUTS
from aster.tf_setup import tf
from aster.utils import checkpoints, config_util

logger = logging.getLogger(__name__)

DECODINGS = ("greedy", "beam")
# Post-training quantisation of the TFLite model: "float16" stores the weights in float16 (the
# kernels compute in float32); "dynamic_int8" stores them in int8 and quantises activations on the
# fly in the matmuls and convolutions that support it (TFLite's dynamic-range quantisation).
QUANTIZATIONS = ("none", "float16", "dynamic_int8")
MODEL_FILE = "model.tflite"
RUNTIME_FILE = "recognizer.py"
OUTPUT_NAMES = ("labels", "scores", "control_points")


def decoding_config(pipeline_config, decoding):
    """A copy of pipeline_config whose predictors decode as `decoding` (DECODINGS).

    Raises:
      ValueError: an unknown decoding.
    """
    if decoding not in DECODINGS:
        raise ValueError(f"--decoding: unknown decoding {decoding!r}; expected one of "
                         f"{list(DECODINGS)}")
    config = type(pipeline_config)()
    config.CopyFrom(pipeline_config)
    which = config.model.WhichOneof("model_oneof")
    if decoding == "greedy" and which is not None:
        for predictor in getattr(config.model, which).predictor:
            kind = predictor.WhichOneof("predictor_oneof")
            if kind is not None:
                getattr(predictor, kind).beam_width = 1
    return config


def resize_metadata(pipeline_config):
    """How a caller must resize an image to the model's input, for model.json's "resize".

    The checkpoint and the SavedModel resize with the last resize_image step of
    eval_config.data_preprocessing_steps (then to the input size with antialiased bilinear,
    aster.inference.decode_and_resize); the TFLite and ONNX models take images already resized,
    so model.json names that step's method and antialias (what tf.image.resize does with them:
    "nearest" never antialiases, "area" always averages), or antialiased bilinear without one.

    Returns:
      dict: method (one of preprocessor_geometry.RESIZE_METHODS), antialias (bool), height,
      width (the model's input size) and a note for the reader.

    Raises:
      ValueError: an eval_config.data_preprocessing_steps entry that does not build.
    """
    method, antialias = "bilinear", True
    steps = preprocessor_builder.build_steps(pipeline_config.eval_config.data_preprocessing_steps,
                                             "eval_config.data_preprocessing_steps")
    for function, kwargs in steps:
        if function is geometry.resize_image:
            method = kwargs["method"]
            antialias = method == "area" or (kwargs["antialias"] and method != "nearest")
    height, width = inference.model_input_size(pipeline_config.model)
    note = (f"resize each RGB image to {width}x{height} as tf.image.resize(method={method!r}, "
            f"antialias={antialias}) does, then round to uint8; recognizer.py's "
            "resize_for_model and Recognizer.predict_images do it with Pillow")
    return {"method": method, "antialias": antialias, "height": height, "width": width,
            "note": note}


def label_map_metadata(model):
    """The label map the decoded predictors share, for model.json.

    Raises:
      ValueError: the decoded predictors have different label maps (their label ids could not
        be fused into one output).
    """
    maps = {}
    for predictor in model.decoded_predictors:
        label_map = predictor.label_map
        maps[predictor.name] = {"characters": label_map.character_set,
                                "label_offset": label_map.label_offset,
                                "unknown_label": label_map.unk_label}
    first = next(iter(maps.values()))
    if any(m != first for m in maps.values()):
        raise ValueError(f"model.predictor: the decoded predictors {sorted(maps)} have different "
                         "label maps; a TFLite export needs one")
    return first


def fused_labels(model, model_outputs):
    """[B, T] label ids of the predictor each sample's text comes from (the highest score, as
    the model's postprocess chooses), padded with -1 to the longest predictor's T."""
    outputs = model_outputs[PREDICTOR_OUTPUTS]
    labels = [outputs[p.name]["labels"] for p in model.decoded_predictors]
    scores = tf.stack([outputs[p.name]["scores"] for p in model.decoded_predictors], axis=1)
    length = tf.reduce_max(tf.stack([tf.shape(x)[1] for x in labels]))
    padded = [tf.pad(x, [[0, 0], [0, length - tf.shape(x)[1]]], constant_values=-1)
              for x in labels]
    best = tf.argmax(scores, axis=1, output_type=tf.int32)
    return tf.gather(tf.stack(padded, axis=1), best, batch_dims=1)


def frozen_graph(pipeline_config, checkpoint_path):
    """The export graph with the checkpoint's weights as constants.

    Returns:
      (GraphDef, label map metadata).

    Raises:
      ValueError: see CheckpointPredictor and label_map_metadata.
    """
    graph = tf.Graph()
    with graph.as_default():
        _, pixels = inference.fixed_size_uint8_input(pipeline_config.model)
        built = inference.build_inference_graph(pipeline_config.model, pixels)
        labels = label_map_metadata(built.model)
        tf.identity(fused_labels(built.model, built.model_outputs), name="labels")
        tf.identity(built.predictions[PredictionFields.scores], name="scores")
        tf.identity(built.predictions[PredictionFields.control_points],
                    name="control_points")
        saver = checkpoints.make_saver(built.variables, checkpoint_path,
                                       pipeline_config.eval_config.use_moving_averages)
        with tf.Session(graph=graph) as session:
            checkpoints.restore(session, saver, checkpoint_path)
            graph_def = tf.graph_util.convert_variables_to_constants(
                session, graph.as_graph_def(), list(OUTPUT_NAMES))
    return graph_def, labels


def _float32_attrs(attrs):
    double, single = tf.float64.as_datatype_enum, tf.float32.as_datatype_enum
    for value in attrs.values():
        if value.type == double:
            value.type = single
        if value.list.type:
            value.list.type[:] = [single if t == double else t for t in value.list.type]
        if value.HasField("tensor") and value.tensor.dtype == double:
            array = tf.make_ndarray(value.tensor).astype(np.float32)
            value.tensor.CopyFrom(tf.make_tensor_proto(array))
        if value.HasField("func"):
            _float32_attrs(value.func.attr)


def float64_to_float32(graph_def):
    """Rewrites every float64 type and constant of graph_def (and its functions) to float32, in
    place; returns graph_def."""
    for node in graph_def.node:
        _float32_attrs(node.attr)
    for function in graph_def.library.function:
        for node in function.node_def:
            _float32_attrs(node.attr)
        for arg in [*function.signature.input_arg, *function.signature.output_arg]:
            if arg.type == tf.float64.as_datatype_enum:
                arg.type = tf.float32.as_datatype_enum
    return graph_def


def fix_dynamic_shapes(model_bytes):
    """Moves dynamic (-1) dimensions a converted model stores in a tensor's shape into its
    shape_signature (shape 1 there), as the converter writes every other dynamic tensor."""
    from tensorflow.lite.tools import flatbuffer_utils

    model = flatbuffer_utils.convert_bytearray_to_object(bytearray(model_bytes))
    fixed = 0
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            shape = np.asarray(tensor.shape if tensor.shape is not None else [], np.int32)
            if np.any(shape < 0):
                tensor.shapeSignature = shape
                tensor.shape = np.where(shape < 0, 1, shape).astype(np.int32)
                fixed += 1
    if not fixed:
        return model_bytes
    return flatbuffer_utils.convert_object_to_bytearray(model)


def _converter_summary(error):
    """The converter's error lines that name the failing ops (its message is pages long)."""
    lines = [line.strip() for line in str(error).splitlines()]
    keep = [line for line in lines if "error:" in line and "loc(" not in line
            or line.startswith("TF Select ops:")]
    return "; ".join(dict.fromkeys(keep)) or lines[-1][:500]


def check_quantization(quantize, export_format="tflite"):
    """Raises ValueError unless `quantize` is one of QUANTIZATIONS (only "none" off TFLite)."""
    if quantize not in QUANTIZATIONS:
        raise ValueError(f"--quantize: unknown quantisation {quantize!r}; expected one of "
                         f"{list(QUANTIZATIONS)}")
    if export_format != "tflite" and quantize != "none":
        raise ValueError(f"--quantize {quantize}: only for --format tflite, not {export_format}")


def convert(graph_def, quantize="none"):
    """TFLite flatbuffer bytes of the frozen export graph, built-in operators only.

    Raises:
      ValueError: the converter fails (the error names the ops it could not convert).
    """
    check_quantization(quantize)
    graph_def = float64_to_float32(graph_def)
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
        inputs = [graph.get_tensor_by_name(f"{inference.INPUT_KEY}:0")]
        outputs = [graph.get_tensor_by_name(f"{name}:0") for name in OUTPUT_NAMES]
    converter = tf.lite.TFLiteConverter(graph_def, inputs, outputs)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    if quantize != "none":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if quantize == "float16":
        converter.target_spec.supported_types = [tf.float16]
    try:
        model_bytes = converter.convert()
    except Exception as e:  # ConverterError and the converter's other internal errors
        raise ValueError(f"--format tflite: the TFLite converter (built-in ops only) failed: "
                         f"{_converter_summary(e)}") from e
    return fix_dynamic_shapes(model_bytes)


def export_tflite(pipeline_config, checkpoint_path, output_dir, decoding="greedy",
                  quantize="none", overwrite=False):
    """Writes the folder described in the module docstring.

    Returns:
      output_dir.

    Raises:
      ValueError: output_dir exists (without overwrite), an unknown decoding or quantisation, a
        checkpoint that does not match the config, or a graph the converter cannot convert.
    """
    if os.path.exists(output_dir) and not overwrite:
        raise ValueError(f"--output_dir {output_dir!r} already exists (use --overwrite)")
    check_quantization(quantize)
    config = decoding_config(pipeline_config, decoding)
    graph_def, labels = frozen_graph(config, checkpoint_path)
    model_bytes = convert(graph_def, quantize)
    if os.path.exists(output_dir):
        shutil.rmtree(output_dir)
    os.makedirs(output_dir)
    with open(os.path.join(output_dir, MODEL_FILE), "wb") as f:
        f.write(model_bytes)
    height, width = inference.model_input_size(config.model)
    metadata = {
        "format": "tflite", "model_file": MODEL_FILE, "op_set": "TFLITE_BUILTINS",
        "input": {"name": inference.INPUT_KEY, "dtype": "uint8", "height": height,
                  "width": width, "channels": 3},
        "resize": resize_metadata(config),
        "outputs": list(OUTPUT_NAMES), "labels": labels, "decoding": decoding,
        "quantize": quantize, "checkpoint": os.path.basename(checkpoint_path),
        "tensorflow": tf.version.VERSION,
    }
    with open(os.path.join(output_dir, lite_runtime.MODEL_JSON), "w", encoding="utf-8") as f:
        json.dump(metadata, f, indent=1, ensure_ascii=False)
    shutil.copyfile(lite_runtime.__file__, os.path.join(output_dir, RUNTIME_FILE))
    config_util.save_pipeline_config(config, os.path.join(output_dir, "pipeline.config"))
    logger.info("exported %s to %s (%d bytes)", checkpoint_path, output_dir, len(model_bytes))
    return output_dir
