"""What a bfloat16 export says of the CPU it is made on: a CPU without AVX512_BF16 or AMX
emulates bfloat16 matmuls (slower than float32), so the export is made as asked, with one line."""

from __future__ import annotations

from bert_tf.serving.cpu import Cpu, bfloat16_warning, this_cpu

CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8488C
flags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_bf16 amx_tile

processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8488C
flags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_bf16 amx_tile
"""


def test_the_cpu_is_read_from_cpuinfo(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(CPUINFO)
    cpu = this_cpu(str(path))
    assert cpu.name == "Intel(R) Xeon(R) Platinum 8488C"
    assert cpu.has("AVX-512") and cpu.has("AVX512_BF16") and cpu.has("AMX")
    described = "Intel(R) Xeon(R) Platinum 8488C (AVX-512 yes, AVX512_BF16 yes, AMX yes)"
    assert cpu.describe() == described


def test_a_machine_without_an_x86_cpuinfo_has_an_unknown_cpu_and_nothing_is_said(tmp_path):
    assert this_cpu(str(tmp_path / "absent")) is None
    arm = tmp_path / "cpuinfo"  # an ARM server's: bfloat16 units of its own, under Features
    arm.write_text("processor\t: 0\nBogoMIPS\t: 2100.00\nFeatures\t: fp asimd sve bf16\n")
    assert this_cpu(str(arm)) is None
    assert bfloat16_warning(None) is None


def test_a_cpu_with_avx512_bf16_or_amx_runs_bfloat16_and_nothing_is_said():
    for flags in ({"avx512f", "avx512_bf16"}, {"avx2", "amx_bf16"}):
        cpu = Cpu("some CPU", frozenset(flags))
        assert cpu.runs_bfloat16
        assert bfloat16_warning(cpu) is None


def test_a_cpu_with_neither_gets_one_line_naming_the_flag_the_cpu_and_float32():
    for flags in ({"avx512f"}, {"avx2", "fma"}, set()):
        cpu = Cpu("Intel(R) Xeon(R) Gold 6148", frozenset(flags))
        assert not cpu.runs_bfloat16
        warning = bfloat16_warning(cpu)
        assert "\n" not in warning
        assert warning.startswith("--export_dtype=bfloat16: ")
        assert "Intel(R) Xeon(R) Gold 6148" in warning and "AVX512_BF16 no, AMX no" in warning
        assert "--export_dtype=float32" in warning
