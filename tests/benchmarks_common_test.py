"""benchmarks/common.py: the generated inputs."""

import bench_scripts


def _common():
    return bench_scripts.load("common")


def test_random_pngs_are_repeatable_noise_of_the_asked_size():
    import io

    from PIL import Image

    common = _common()
    images = common.random_pngs(3, 4, 5, seed=0)
    assert images == common.random_pngs(3, 4, 5, seed=0) != common.random_pngs(3, 4, 5, seed=1)
    assert len(set(images)) == 3
    assert all(Image.open(io.BytesIO(image)).size == (5, 4) for image in images)


def test_write_random_records_one_example_per_transcript(tmp_path):
    from aster.tf_setup import tf

    common = _common()
    path = common.write_random_records(str(tmp_path / "r.tfrecord"), ["ab", "cd"], 4, 5)
    examples = [tf.train.Example.FromString(r) for r in tf.io.tf_record_iterator(path)]
    features = [e.features.feature for e in examples]
    assert [f["image/transcript"].bytes_list.value[0] for f in features] == [b"ab", b"cd"]
    assert [f["image/filename"].bytes_list.value[0] for f in features] == [b"0.png", b"1.png"]
    assert [f["image/encoded"].bytes_list.value[0] for f in features] == common.random_pngs(2, 4, 5)


def test_machine_names_the_onednn_setting(monkeypatch):
    common = _common()
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    assert common.machine()[0].endswith("TF_ENABLE_ONEDNN_OPTS=1")  # aster's default
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
    assert common.machine()[0].endswith("TF_ENABLE_ONEDNN_OPTS=0")
