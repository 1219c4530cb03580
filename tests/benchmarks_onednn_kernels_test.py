"""benchmarks/onednn_kernels.py: ONEDNN_VERBOSE primitive times of the marked training steps."""

import bench_scripts
import pytest

CONV = ("onednn_verbose,v1,primitive,exec,cpu,convolution,brgconv_bwd_w:avx10_1_512_amx,"
        "backward_weights,src:bf16::blocked:acdb::f0 wei:bf16:a:blocked:ABcd16b16a2b::f0 "
        "bia:undef::undef::: dst:bf16::blocked:acdb::f0,,alg:convolution_direct,"
        "mb64_ic512oc512_ih1oh1kh3sh1dh0ph1_iw25ow25kw3sw1dw0pw1,18.5")
GEMM = ("onednn_verbose,v1,primitive,exec,cpu,inner_product,x64:gemm:jit,forward_training,"
        "src:bf16::blocked:ab::f0 wei:bf16::blocked:ba::f0 bia:bf16:a:blocked:a::f0 "
        "dst:bf16::blocked:ab::f0,attr-scratchpad:user,,mb64ic608oc1024,1.5")
REORDER = ("onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,"
           "src:bf16::blocked:cdba::f0 dst:bf16::blocked:BcdA16a64b2a::f0,,,512x512x3x3,1.0")


@pytest.fixture
def kernels(monkeypatch):
    yield bench_scripts.load("onednn_kernels", monkeypatch)
    bench_scripts.forget_siblings()


def test_parse_line_reads_kind_implementation_pass_type_shape_and_time(kernels):
    assert kernels.parse_line(CONV) == {
        "kind": "convolution", "impl": "brgconv_bwd_w:avx10_1_512_amx",
        "prop": "backward_weights", "dtype": "bf16",
        "shape": "mb64_ic512oc512_ih1oh1kh3sh1dh0ph1_iw25ow25kw3sw1dw0pw1", "ms": 18.5}
    timestamped = CONV.replace("onednn_verbose,", "onednn_verbose,1796243152.25,", 1)
    assert kernels.parse_line(timestamped)["kind"] == "convolution"
    creation = CONV.replace(",exec,", ",create:cache_miss,")
    for line in (creation, "onednn_verbose,v1,info,cpu,isa:AMX", "other output", CONV[:60]):
        assert kernels.parse_line(line) is None


def test_isa_families(kernels):
    assert kernels.isa("brg_conv_fwd:avx10_1_512_amx") == "amx"
    assert kernels.isa("jit:avx512_core") == "avx512"
    assert kernels.isa("x64:gemm:jit") == "other"


def test_only_the_marked_steps_are_summed_per_step(kernels):
    mark = kernels.MARK
    lines = [CONV,  # a warm-up step: not counted
             f"{mark} begin 0", CONV, GEMM, REORDER, f"{mark} end 0.5",
             "some log line", GEMM,  # between steps: not counted
             f"{mark} begin 0", CONV, GEMM, f"{mark} end 0.3"]
    records, steps, wall = kernels.step_lines(lines)
    assert steps == 2 and wall == pytest.approx(0.8) and len(records) == 5
    summary = kernels.summarize(records, steps, wall)
    assert summary["wall_ms"] == pytest.approx(400.0)
    assert summary["kernel_ms"] == pytest.approx((2 * 18.5 + 2 * 1.5 + 1.0) / 2)
    (conv_key, conv_ms, conv_calls, conv_impls) = summary["by_kind"][0]
    assert conv_key == ("convolution", "backward_weights")
    assert (conv_ms, conv_calls, conv_impls) == (18.5, 1, ["brgconv_bwd_w:avx10_1_512_amx"])
    assert dict(summary["by_isa"]) == pytest.approx({"amx": 18.5, "other": 2.0})
    lines = kernels.table(summary, top=1)
    assert any(line.startswith("| inner_product | forward_training | 1.5 |") for line in lines)
    assert sum(line.startswith("| convolution | brgconv_bwd_w") for line in lines) == 1


def test_run_marks_the_steps_of_a_config(kernels):
    args = kernels.argparse.Namespace(batch_size=4, warmup=1, steps=1, set=[])
    summary = kernels.run("tiny", args)
    kinds = {kind for (kind, _), _, _, _ in summary["by_kind"]}
    assert {"convolution", "batch_normalization"} <= kinds
    assert summary["kernel_ms"] > 0 and summary["wall_ms"] > 0
