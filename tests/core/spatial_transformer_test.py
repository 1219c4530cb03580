import numpy as np
import pytest

from aster.core import session_options
from aster.core import spatial_transformer as st
from aster.tf_setup import slim, tf


class _MeanConvnet:
    """Stand-in localization net: global average pool (keeps the tests about the TPS itself)."""

    def extract_features(self, inputs, scope=None):
        return tf.reduce_mean(inputs, [1, 2], keepdims=True)


def _empty_fc_scope():
    with slim.arg_scope([slim.fully_connected]) as scope:
        return scope


def _transformer(**kwargs):
    defaults = dict(localization_h=8, localization_w=16, margin_x=0.0, margin_y=0.0)
    defaults.update(kwargs)
    return st.SpatialTransformer(_MeanConvnet(), _empty_fc_scope(), **defaults)


def _run(fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


def _numpy_bilinear(image, points):
    """Reference sampler: image [H, W, C], points [N, 2] normalised -> [N, C]."""
    height, width = image.shape[:2]
    out = []
    for x, y in points:
        px, py = x * width - 0.5, y * height - 0.5
        x0, y0 = int(np.floor(px)), int(np.floor(py))
        ax, ay = px - x0, py - y0
        value = 0.0
        for dy, wy in ((0, 1 - ay), (1, ay)):
            for dx, wx in ((0, 1 - ax), (1, ax)):
                row = min(max(y0 + dy, 0), height - 1)
                col = min(max(x0 + dx, 0), width - 1)
                value = value + wy * wx * image[row, col]
        out.append(value)
    return np.array(out)


# ------------------------------------------------------------------ init patterns


def test_identity_pattern_puts_points_on_edges_inside_margins():
    points = st.init_control_points(20, "identity", margin_x=0.1, margin_y=0.05)
    assert points.shape == (20, 2)
    np.testing.assert_allclose(points[:10, 0], np.linspace(0.1, 0.9, 10))
    np.testing.assert_allclose(points[10:, 0], np.linspace(0.1, 0.9, 10))
    np.testing.assert_allclose(points[:10, 1], 0.05)
    np.testing.assert_allclose(points[10:, 1], 0.95)


def test_slope_pattern_rises_from_margin_to_published_values():
    points = st.init_control_points(10, "slope", margin_x=0.0, margin_y=0.0)
    np.testing.assert_allclose(points[:5, 1], np.linspace(0.0, 0.3, 5))
    np.testing.assert_allclose(points[5:, 1], np.linspace(0.7, 1.0, 5))


def test_sine_pattern_follows_sine_on_both_edges():
    points = st.init_control_points(20, "sine")
    x = np.linspace(0.0, 1.0, 10)
    np.testing.assert_allclose(points[:10, 1], 0.25 + 0.2 * np.sin(2 * np.pi * x))
    np.testing.assert_allclose(points[10:, 1], 0.75 + 0.2 * np.sin(2 * np.pi * x))
    assert points.min() >= 0.0 and points.max() <= 1.0


def test_unknown_pattern_raises():
    with pytest.raises(ValueError, match="init_bias_pattern: unknown pattern 'wave'"):
        st.init_control_points(20, "wave")


@pytest.mark.parametrize("count", [2, 7])
def test_bad_control_point_count_raises(count):
    with pytest.raises(
        ValueError, match=f"num_control_points: must be an even number >= 4, got {count}"
    ):
        st.init_control_points(count)


# ------------------------------------------------------------------ TPS algebra


def test_tps_grid_at_control_points_maps_exactly_onto_them():
    target = st.init_control_points(20, "identity", 0.05, 0.05)
    matrix = st.tps_grid_matrix(target, target)
    np.testing.assert_allclose(matrix, np.eye(20), atol=1e-9)
    source = np.random.RandomState(0).uniform(size=(20, 2))
    np.testing.assert_allclose(matrix @ source, source, atol=1e-9)


def test_tps_reproduces_affine_maps_everywhere():
    target = st.init_control_points(20, "identity")
    query = np.random.RandomState(1).uniform(size=(50, 2))
    affine = np.array([[0.9, 0.2], [-0.1, 1.1]])
    source = target @ affine + [0.05, -0.02]
    mapped = st.tps_grid_matrix(target, query) @ source
    np.testing.assert_allclose(mapped, query @ affine + [0.05, -0.02], atol=1e-9)


def test_tps_kernel_is_r_squared_log_r_and_zero_at_zero():
    np.testing.assert_allclose(st.tps_kernel([0.0, 1.0, 2.0]), [0.0, 0.0, 4.0 * np.log(2.0)])


def test_pixel_centre_grid_is_row_major_normalised():
    grid = st.pixel_centre_grid(2, 4)
    np.testing.assert_allclose(grid[:4, 0], [0.125, 0.375, 0.625, 0.875])
    np.testing.assert_allclose(grid[:4, 1], 0.25)
    np.testing.assert_allclose(grid[4:, 1], 0.75)


# ------------------------------------------------------------------ sampler


def test_bilinear_sample_matches_numpy_reference_including_outside_points():
    rng = np.random.RandomState(2)
    image = rng.uniform(size=(2, 5, 7, 3))
    points = rng.uniform(-0.2, 1.2, size=(2, 4, 6, 2))
    with tf.Graph().as_default():
        out = _run(st.bilinear_sample(tf.constant(image), tf.constant(points)))
    for b in range(2):
        expected = _numpy_bilinear(image[b], points[b].reshape(-1, 2)).reshape(4, 6, 3)
        np.testing.assert_allclose(out[b], expected, atol=1e-12)


def test_bilinear_sample_numeric_gradients_match():
    rng = np.random.RandomState(3)
    image = rng.uniform(size=(1, 4, 5, 2))
    # Keep sample positions away from pixel centres, where bilinear interpolation has kinks.
    pixels = rng.randint(0, 4, size=(1, 3, 3, 2)) + rng.uniform(0.2, 0.8, size=(1, 3, 3, 2))
    grid = (pixels + 0.5) / np.array([5.0, 4.0])
    with tf.Graph().as_default():
        image_t, grid_t = tf.constant(image), tf.constant(grid)
        out = st.bilinear_sample(image_t, grid_t)
        with tf.Session():
            for x, value in ((image_t, image), (grid_t, grid)):
                error = tf.test.compute_gradient_error(
                    x, list(value.shape), out, [1, 3, 3, 2], x_init_value=value, delta=1e-6
                )
                assert error < 1e-6


# ------------------------------------------------------------------ transformer


def test_identity_transform_same_size_reproduces_input():
    image = np.random.RandomState(4).uniform(-1, 1, size=(2, 12, 30, 3)).astype(np.float32)
    with tf.Graph().as_default():
        stn = _transformer(output_h=12, output_w=30)
        out = _run(stn.batch_transform(tf.constant(image)))
    np.testing.assert_allclose(out["rectified_images"], image, atol=1e-5)
    np.testing.assert_allclose(out["control_points"][1], stn.init_control_points, atol=1e-6)


def test_identity_transform_resampling_is_exact_on_linear_images():
    # Bilinear sampling reproduces a linear ramp exactly, so any error would be the TPS grid's.
    height, width, out_h, out_w = 32, 64, 16, 50
    rows, cols = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    ramp = (0.02 * cols - 0.03 * rows)[None, :, :, None].astype(np.float32)
    with tf.Graph().as_default():
        stn = _transformer(output_h=out_h, output_w=out_w)
        out = _run(stn.batch_transform(tf.constant(ramp)))["rectified_images"]
    centres = st.pixel_centre_grid(out_h, out_w)
    px, py = centres[:, 0] * width - 0.5, centres[:, 1] * height - 0.5
    expected = (0.02 * px - 0.03 * py).reshape(1, out_h, out_w, 1)
    assert out.shape == (1, out_h, out_w, 1)
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_grid_follows_affine_control_point_moves():
    with tf.Graph().as_default():
        stn = _transformer(output_h=4, output_w=6)
        moved = stn.target_control_points * 0.5 + 0.25
        grid = _run(stn.grid_from_control_points(tf.constant(moved[None])))
    expected = st.pixel_centre_grid(4, 6) * 0.5 + 0.25
    np.testing.assert_allclose(grid.reshape(-1, 2), expected, atol=1e-9)


@pytest.mark.parametrize("in_size,out_size", [((24, 60), (16, 50)), ((12, 30), (20, 70))])
def test_target_control_points_give_a_plain_bilinear_resize(in_size, out_size):
    """Given the TPS target pattern, batch_transform is the identity map: a bilinear resize."""
    image = np.random.RandomState(6).uniform(-1, 1, size=(2, *in_size, 3)).astype(np.float32)
    with tf.Graph().as_default():
        # The sine pattern and the margins make the localization's points far from the target.
        stn = _transformer(output_h=out_size[0], output_w=out_size[1], margin_x=0.1,
                           margin_y=0.15, init_bias_pattern="sine", activation="sigmoid")
        target = np.tile(stn.target_control_points[None], [2, 1, 1]).astype(np.float32)
        given = stn.batch_transform(tf.constant(image), control_points=tf.constant(target))
        assert tf.global_variables() == []  # the localization network was skipped
        localized = stn.batch_transform(tf.constant(image))
        resized = tf.compat.v2.image.resize(tf.constant(image), out_size, method="bilinear")
        given, localized, resized = _run([given, localized, resized])
    assert given["rectified_images"].shape == (2, *out_size, 3)
    np.testing.assert_allclose(given["rectified_images"], resized, atol=1e-4)
    np.testing.assert_allclose(given["control_points"], target)
    assert np.abs(localized["rectified_images"] - resized).max() > 0.1


def test_given_control_points_broadcast_and_shape_checked():
    image = np.random.RandomState(7).uniform(-1, 1, size=(3, 8, 20, 1)).astype(np.float32)
    with tf.Graph().as_default():
        stn = _transformer(output_h=8, output_w=20, num_control_points=6)
        moved = stn.target_control_points * 0.5 + 0.25
        out = stn.batch_transform(tf.constant(image), control_points=moved)  # [K, 2]
        with pytest.raises(ValueError, match=r"control_points: expected shape \[B, 6, 2\]"):
            stn.batch_transform(tf.constant(image), control_points=np.zeros([3, 4, 2]))
        out = _run(out)
    assert out["control_points"].shape == (3, 6, 2)
    np.testing.assert_allclose(out["control_points"][2], moved, atol=1e-7)
    expected = _numpy_bilinear(image[1], st.pixel_centre_grid(8, 20) * 0.5 + 0.25)
    np.testing.assert_allclose(out["rectified_images"][1].reshape(-1, 1), expected, atol=1e-5)


def test_gradients_reach_control_points_image_and_localization():
    with tf.Graph().as_default():
        stn = _transformer(output_h=8, output_w=20)
        images = tf.random_uniform([2, 16, 40, 3], -1, 1)
        out = stn.batch_transform(images)
        loss = tf.reduce_sum(tf.square(out["rectified_images"]))
        weights = [v for v in tf.trainable_variables() if v.op.name.endswith("fc2/weights")]
        grads = tf.gradients(loss, [out["control_points"], images, weights[0]])
        values = _run(grads)
    for value in values:
        assert np.all(np.isfinite(value)) and np.abs(value).max() > 0


@pytest.mark.skipif(not session_options.cpu_supports_bfloat16(),
                    reason="this CPU has no native bfloat16")
def test_bfloat16_session_leaves_control_points_and_sampling_exact():
    """The head, grid and sampling are outside the bfloat16 rewrite (a conv after the sampler
    makes the rewrite reach everything float32 between matmuls and convolutions)."""
    image = np.random.RandomState(5).uniform(-1, 1, size=(2, 16, 40, 3)).astype(np.float32)
    results = []
    for bfloat16 in (False, True):
        with tf.Graph().as_default():
            tf.set_random_seed(0)
            stn = _transformer(output_h=8, output_w=20, margin_x=0.05, margin_y=0.05)
            out = stn.batch_transform(tf.constant(image))
            features = slim.conv2d(out["rectified_images"], 4, [3, 3])
            config = session_options.configure(tf.ConfigProto(), bfloat16=bfloat16)
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                results.append(sess.run([out, features]))
    (out32, features32), (out16, features16) = results
    np.testing.assert_allclose(out16["control_points"], out32["control_points"], atol=1e-7)
    np.testing.assert_allclose(out16["rectified_images"], out32["rectified_images"], atol=1e-6)
    assert np.abs(features16 - features32).max() > 0  # the conv itself did run in bfloat16


def test_last_fc_starts_at_zero_weights_and_pattern_bias():
    with tf.Graph().as_default():
        stn = _transformer(init_bias_pattern="sine", num_control_points=8)
        stn.batch_transform(tf.zeros([1, 8, 16, 3]))
        variables = {
            v.op.name.split("/")[-1]: v for v in tf.trainable_variables() if "fc2" in v.op.name
        }
        weights, biases = _run([variables["weights"], variables["biases"]])
    assert np.all(weights == 0)
    np.testing.assert_allclose(biases, st.init_control_points(8, "sine").ravel(), atol=1e-6)


def test_sigmoid_activation_starts_at_clipped_pattern():
    with tf.Graph().as_default():
        stn = _transformer(activation="sigmoid", init_bias_pattern="slope")
        points = _run(stn.batch_transform(tf.zeros([1, 8, 16, 3]))["control_points"])
    np.testing.assert_allclose(points[0], stn.init_control_points, atol=1e-5)
    np.testing.assert_allclose(
        stn.init_control_points, st.init_control_points(20, "slope"), atol=1e-3
    )


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(output_h=0), "output_h: must be > 0, got 0"),
        (dict(localization_w=-2), "localization_w: must be > 0, got -2"),
        (dict(margin_x=0.5), r"margin_x: must be in \[0, 0.5\), got 0.5"),
        (dict(margin_y=-0.1), r"margin_y: must be in \[0, 0.5\)"),
        (dict(activation="tanh"), "activation: unknown activation 'tanh'"),
        (dict(init_bias_pattern="zigzag"), "init_bias_pattern: unknown pattern 'zigzag'"),
        (dict(num_control_points=5), "num_control_points: must be an even number"),
    ],
)
def test_invalid_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _transformer(**kwargs)
