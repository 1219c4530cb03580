"""Names shared across the project: TFRecord keys and tensor-dict keys.

Use these constants, never string literals, when reading records or passing tensor dicts between
the decoder, preprocessor, batcher, model, trainer and evaluator.
"""


class TfExampleFields:
    """Keys of the tf.train.Example features in ASTER TFRecords.

    image_encoded: PNG or JPEG bytes.
    image_format: b"png" or b"jpeg".
    filename: the source file name (informational; never used to deduplicate).
    transcript: UTF-8 text of the word.
    lexicon: optional tab-joined lexicon words (UTF-8).
    keypoints: optional float list [x0, y0, x1, y1, ...] in pixels, the top curve then the bottom
      curve (SynthText word curves).
    height, width: image size in pixels (int64).
    """

    image_encoded = "image/encoded"
    image_format = "image/format"
    filename = "image/filename"
    transcript = "image/transcript"
    lexicon = "image/lexicon"
    keypoints = "image/keypoints"
    height = "image/height"
    width = "image/width"


class InputDataFields:
    """Keys of the tensor dicts produced by the decoder and carried through preprocessing/batching.

    image: [H, W, 3] (batched: [B, H, W, 3]) float32 in [0, 255] after decoding.
    original_image: the image before preprocessing (eval visualisation).
    filename: string scalar.
    groundtruth_text: UTF-8 string scalar.
    lexicon: string scalar, tab-joined words ("" when absent).
    groundtruth_keypoints: [2 * num_points] float32, x/y normalised by width/height to [0, 1]
      (empty when absent).
    image_height, image_width: int32 scalars of the decoded image size.
    valid: bool scalar from the decoder, False when the image or transcript could not be decoded
      (the batcher drops and counts the record).
    """

    image = "image"
    original_image = "original_image"
    filename = "filename"
    groundtruth_text = "groundtruth_text"
    lexicon = "lexicon"
    groundtruth_keypoints = "groundtruth_keypoints"
    image_height = "image_height"
    image_width = "image_width"
    num_keypoints = "num_keypoints"
    valid = "valid"


class PredictionFields:
    """Keys of the dict returned by RecognitionModel.postprocess.

    text: [B] string tensor (UTF-8), in reading order.
    scores: [B] float32, the chosen prediction's total log-probability (higher is better).
    control_points: [B, K, 2] float32 in normalised [0, 1] image coordinates (when rectifying).
    rectified_images: [B, h, w, 3] float32 in [-1, 1] (when rectifying).
    """

    text = "text"
    scores = "scores"
    control_points = "control_points"
    rectified_images = "rectified_images"
