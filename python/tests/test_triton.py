"""tilelab.triton: the Python door (issue 29). Run by .ci/run with Triton installed; without
Triton the tests skip, unless TILELAB_REQUIRE names "triton" (then they fail).

Expected values are measurements and the binary's own report of the same PTX, never numbers
computed here: the H200's counters of tests/data/ptx_hopper/*.json for the kernels analyze
compiles, and `tilelab ptx` run by hand on the PTX analyze wrote.
"""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "scripts", "research", "hopper_fixtures"))

try:
    import triton  # noqa: F401
    HAVE_TRITON = True
except ImportError:
    HAVE_TRITON = False

REQUIRED = "triton" in os.environ.get("TILELAB_REQUIRE", "").split(",")
if not HAVE_TRITON:
    if REQUIRED:
        raise RuntimeError("TILELAB_REQUIRE names triton but it is not installed: pip install triton==3.6.0")
    pytest.skip("SKIPPED: Triton is not installed (pip install triton==3.6.0)", allow_module_level=True)

import tilelab  # noqa: E402
import tilelab.triton as tt  # noqa: E402
import tutorial_kernels as TK  # noqa: E402

FIX = os.path.join(REPO, "tests", "data", "ptx_hopper")


def measured(name, metric):
    with open(os.path.join(FIX, name + ".json")) as f:
        d = json.load(f)
    return int(float(d["counters"].get(metric, d["sass_counters"].get(metric))))


def mm_args(m, n, k):
    return dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M=m, N=n, K=k, stride_am=k, stride_ak=1,
                stride_bk=n, stride_bn=1, stride_cm=n, stride_cn=1)


MM_CONSTS = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, ACTIVATION="")


@pytest.fixture(scope="module")
def matmul(tmp_path_factory):
    out = tmp_path_factory.mktemp("mm")
    r = tt.analyze(TK.matmul_kernel, grid=(1,), args=mm_args(128, 128, 256), num_warps=4, num_stages=4,
                   target="sm_90", out_dir=str(out), **MM_CONSTS)
    return r, out


def test_tutorial_matmul_sm90_equals_the_h200(matmul):
    # tests/data/ptx_hopper/tt_matmul_f16_4w: the same kernel, config and sizes on the H200.
    r, _ = matmul
    n = "tt_matmul_f16_4w"
    assert r.totals["sass"]["LDSM"] == measured(n, "smsp__inst_executed_op_ldsm.sum")
    assert r.totals["sass"]["GMMA"] == measured(n, "smsp__inst_executed_pipe_tensor_op_gmma.sum")
    assert r.totals["sass"]["LDGSTS"] == measured(n, "sm__sass_inst_executed_op_ldgsts.sum")
    assert r.totals["gmma_wavefronts"] == measured(n, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum")
    assert r.totals["shared_ld_wavefronts"] == measured(n, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")


def test_a_whole_launch_equals_the_h200():
    # tests/data/whole_launch/mm64_ncu.csv: the tutorial matmul over M = N = 1024, K = 512,
    # all 64 CTAs of the launch measured whole on the H200 (issue 31).
    import csv
    with open(os.path.join(REPO, "tests", "data", "whole_launch", "mm64_ncu.csv")) as f:
        text = f.read()
    rows = csv.DictReader(text[text.index('"ID"'):].splitlines())
    hw = {r["Metric Name"]: int(r["Metric Value"].replace(",", "")) for r in rows}
    r = tt.analyze(TK.matmul_kernel, grid=(64,), args=mm_args(1024, 1024, 512), num_warps=4,
                   num_stages=4, target="sm_90", ctas="all", jobs=2, **MM_CONSTS)
    assert r.ctas_simulated == hw["sm__ctas_launched.sum"] == 64
    assert r.totals["sass"]["LDSM"] == hw["smsp__inst_executed_op_ldsm.sum"]
    assert r.totals["sass"]["GMMA"] == hw["smsp__inst_executed_pipe_tensor_op_gmma.sum"]
    assert r.totals["sass"]["LDGSTS"] == hw["smsp__inst_executed_op_ldgsts.sum"]
    assert r.totals["gmma_wavefronts"] == hw["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"]
    assert r.totals["shared_ld_wavefronts"] == hw["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
    assert r.totals["shared_st_wavefronts"] == hw["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]
    # Every CTA walks the same K loop.
    s = r.spread["warp_instructions"]
    assert s["min"] == s["max"] and s["sum"] == r.totals["warp_instructions"]
    with pytest.raises(tilelab.TilelabError, match="jobs is allowed only with ctas"):
        tt.analyze(TK.matmul_kernel, grid=(64,), args=mm_args(1024, 1024, 512), jobs=2, **MM_CONSTS)


def test_analyze_equals_tilelab_ptx_by_hand(matmul):
    r, out = matmul
    ptx = os.path.join(out, "matmul_kernel.ptx")
    # The flags a user would type from the PTX's parameter list: M, N, K and the strides are
    # params 3..8 (stride_ak, stride_bn, stride_cn equal 1 became constexprs).
    by_hand = subprocess.run(
        [tilelab.binary(), "ptx", ptx, "--grid", "1", "--block", "128", "--dynamic-smem",
         str(json.load(open(os.path.join(out, "matmul_kernel.launch.json")))["dynamic_smem"]),
         "--arg", "3=128", "--arg", "4=128", "--arg", "5=256", "--arg", "6=256", "--arg", "7=128",
         "--arg", "8=128", "--json"], capture_output=True, text=True, check=True)
    assert json.loads(by_hand.stdout)["totals"] == r.totals


def test_the_launch_file_round_trips(matmul):
    r, out = matmul
    launch = os.path.join(out, "matmul_kernel.launch.json")
    doc = json.load(open(launch))
    assert (doc["format"], doc["version"], doc["block"]) == ("tilelab-launch", 1, [128, 1, 1])
    froms = [a["from"] for a in doc["args"]]
    assert froms[:6] == ["a_ptr (*fp16)", "b_ptr (*fp16)", "c_ptr (*fp16)", "M", "N", "K"]
    assert tilelab.run_launch(launch).totals == r.totals


def test_by_source_names_the_python_line_of_tl_dot(matmul):
    r, _ = matmul
    src = open(os.path.join(REPO, "scripts", "research", "hopper_fixtures", "tutorial_kernels.py")).read().splitlines()
    dot_line = 1 + next(i for i, t in enumerate(src) if "accumulator = tl.dot(a, b, accumulator)" in t)
    g = next(g for g in r.by_source() if "HGMMA" in g["sass"])
    assert g["line"] == dot_line and g["file"].endswith("tutorial_kernels.py")
    assert g["text"] == "accumulator = tl.dot(a, b, accumulator)"
    assert g["wavefronts"] == r.totals["gmma_wavefronts"]


def test_fused_attention_sm90_with_host_descriptors_equals_the_h200():
    d = 64
    desc = lambda block: tt.Descriptor("fp16", [512, d], [d, 1], block)  # noqa: E731
    args = dict(sm_scale=0.125, M="*fp32", Z=1, H=1, desc_q=desc([128, d]), desc_k=desc([64, d]),
                desc_v=desc([64, d]), desc_o=desc([128, d]), N_CTX=512)
    r = tt.analyze(TK._attn_fwd, grid=(1,), args=args, num_warps=4, num_stages=2, target="sm_90", HEAD_DIM=d,
                   BLOCK_M=128, BLOCK_N=64, FP8_OUTPUT=False, STAGE=1, warp_specialize=False, IS_HOPPER=True)
    n = "tt_attn_fwd_d64"
    assert r.totals["sass"]["GMMA"] == measured(n, "smsp__inst_executed_pipe_tensor_op_gmma.sum")
    assert r.totals["tma_ld_bytes"] == measured(n, "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum")
    assert r.totals["shared_st_wavefronts"] == measured(n, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")


def test_sm80_uses_mma_sync():
    r = tt.analyze(TK.matmul_kernel, grid=(1,), args=mm_args(64, 64, 64), num_warps=4, num_stages=2,
                   target="sm_80", BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, ACTIVATION="")
    assert r.totals["sass"]["HMMA"] > 0 and r.totals["sass"]["GMMA"] == 0


class Tensorish:
    """A tensor as analyze reads it: a dtype and a data pointer (no GPU, no torch)."""

    def __init__(self, dtype, ptr):
        self.dtype, self.ptr = dtype, ptr

    def data_ptr(self):
        return self.ptr


@pytest.mark.parametrize("name,value,want", [
    ("M", 1, ("constexpr", [], "constexpr")),  # 1 leaves the parameter list
    ("M", 512, ("i32", [["tt.divisibility", 16]], "scalar")),
    ("M", 100, ("i32", [], "scalar")),
    ("M", 2**40, ("i64", [["tt.divisibility", 16]], "scalar")),
    ("s", 0.5, ("fp32", [], "scalar")),  # floats are never specialised
    ("p", "*bf16", ("*bf16", [["tt.divisibility", 16]], "pointer")),
    ("p", Tensorish("torch.float16", 0x7000_0100), ("*fp16", [["tt.divisibility", 16]], "pointer")),
    ("p", Tensorish("torch.float16", 0x7000_0108), ("*fp16", [], "pointer")),  # not 16-byte aligned
])
def test_the_jit_s_specialisation_rules(name, value, want):
    assert tt.specialise(name, value) == want


def test_an_integer_equal_to_one_leaves_the_ptx_parameters(tmp_path):
    r1 = tt.analyze(TK.matmul_kernel, args=mm_args(128, 128, 256), num_warps=4, num_stages=4, out_dir=str(tmp_path),
                    **MM_CONSTS)
    doc = json.load(open(os.path.join(tmp_path, "matmul_kernel.launch.json")))
    names = [a["from"] for a in doc["args"]]
    assert "stride_ak" not in names and "stride_am" in names
    assert r1.totals["sass"]["GMMA"] > 0


@pytest.mark.parametrize("call,want", [
    (lambda: tt.analyze(TK.matmul_kernel, args={"a_ptr": "*fp16"}, **MM_CONSTS), "argument b_ptr of matmul_kernel is missing"),
    (lambda: tt.analyze(TK.matmul_kernel, args=dict(mm_args(64, 64, 64), a_ptr="*fp17"), **MM_CONSTS),
     "dtype 'fp17' is not one Triton knows"),
    (lambda: tt.analyze(TK.matmul_kernel, args=mm_args(64, 64, 64), target="sm_70", **MM_CONSTS), "target 'sm_70' is not allowed"),
    (lambda: tt.analyze(TK.matmul_kernel, args=dict(mm_args(64, 64, 64), X=1), **MM_CONSTS), "has no parameter X"),
    (lambda: tt.analyze(TK.matmul_kernel, args=mm_args(64, 64, 64), BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=48,
                        GROUP_SIZE_M=8, ACTIVATION=""), "Triton could not compile matmul_kernel"),
    (lambda: tt.analyze(lambda x: x, args={}), "is not a Triton kernel"),
])
def test_errors_are_one_line(call, want):
    with pytest.raises(tilelab.TilelabError) as e:
        call()
    msg = str(e.value)
    assert want in msg and "\n" not in msg, msg


def test_without_triton_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)
    with pytest.raises(tilelab.TilelabError, match="Triton is not installed: pip install triton"):
        tt.specialise("M", 1)


def test_the_shell_command(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "tilelab.triton", os.path.join(REPO, "scripts", "research", "hopper_fixtures", "tutorial_kernels.py")
         + ":matmul_kernel", "--grid", "1", "--num-warps", "4", "--num-stages", "4", "--json",
         *sum((["--arg", f"{k}={v}"] for k, v in mm_args(128, 128, 256).items()), []),
         *sum((["--constexpr", f"{k}={v}"] for k, v in MM_CONSTS.items() if v != ""), []),
         "--constexpr", "ACTIVATION="],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["totals"]["sass"]["LDSM"] == measured("tt_matmul_f16_4w", "smsp__inst_executed_op_ldsm.sum")
    p = subprocess.run(
        [sys.executable, "-m", "tilelab.triton", "nowhere.py:k"], capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))
    assert p.returncode == 2 and p.stderr.strip() == "tilelab.triton: error: nowhere.py: no such file"


def test_the_notebook_view_renders_in_a_browser(matmul, tmp_path):
    r, _ = matmul
    page = r._repr_html_()
    assert "<table>" in page and "tutorial_kernels.py:" in page
    path = tmp_path / "report.html"
    path.write_text("<!doctype html><html><head><meta charset='utf-8'><title>r</title></head><body>" + page + "</body></html>")
    sys.path.insert(0, os.path.join(REPO, "scripts"))
    import html_check as H

    drv, chrome = H.find(["chromedriver"]), H.find(["chromium", "chromium-browser", "google-chrome"])
    if not (drv and chrome):
        if "chromium" in os.environ.get("TILELAB_REQUIRE", "").split(","):
            pytest.fail("TILELAB_REQUIRE names chromium but chromedriver/chromium are missing")
        pytest.skip("SKIPPED: the browser check needs chromium and chromedriver")
    d = H.Driver(drv, chrome)
    try:
        d.s("POST", "/url", {"url": "file://" + str(path)})
        rows = d.js("return document.querySelectorAll('tbody tr').length;")
        log = [e for e in d.log() if e.get("level") in ("SEVERE", "WARNING")]
    finally:
        d.quit()
    assert rows == len(r.by_source())
    assert log == []


def test_a_kernel_compiled_elsewhere(matmul):
    r, _ = matmul
    k = tt.compile(TK.matmul_kernel, mm_args(128, 128, 256), num_warps=4, num_stages=4, **MM_CONSTS)
    r2 = tt.analyze(k, grid=(1,), args=mm_args(128, 128, 256))
    assert r2.totals == r.totals
    with pytest.raises(tilelab.TilelabError, match="argument M of matmul_kernel is missing"):
        tt.analyze(k, grid=(1,), args={k: v for k, v in mm_args(128, 128, 256).items() if k != "M"})


def test_fused_attention_sm80_through_pointers():
    # sm_80 has no TMA: the tutorial passes pointers and Triton lowers the in-kernel descriptors
    # to cp.async and ldmatrix; every tl.dot is mma.sync (HMMA), none wgmma.
    args = dict(sm_scale=0.125, M="*fp32", Z=1, H=1, desc_q="*fp16", desc_k="*fp16", desc_v="*fp16",
                desc_o="*fp16", N_CTX=512)
    r = tt.analyze(TK._attn_fwd, grid=(1,), args=args, num_warps=4, num_stages=2, target="sm_80", HEAD_DIM=64,
                   BLOCK_M=128, BLOCK_N=64, FP8_OUTPUT=False, STAGE=1, warp_specialize=False, IS_HOPPER=False)
    assert r.totals["sass"]["GMMA"] == 0 and r.totals["sass"]["UTMALDG"] == 0
    src = open(os.path.join(REPO, "scripts", "research", "hopper_fixtures", "tutorial_kernels.py")).read().splitlines()
    qk = 1 + next(i for i, t in enumerate(src) if "qk = tl.dot(q, k)" in t)
    g = next(g for g in r.by_source() if g["line"] == qk)
    assert "HMMA" in g["sass"] and "HGMMA" not in g["sass"] and g["executions"] > 0
