"""The CPU at hand, as a bfloat16 export needs to know it: its name and which of AVX-512,
AVX512_BF16 and AMX it has, read from /proc/cpuinfo (x86 Linux; elsewhere unknown, and nothing
is said). TensorFlow runs bfloat16 matmuls on AVX512_BF16 or AMX; on a CPU with neither they are
emulated, slower than float32's."""

from __future__ import annotations

import dataclasses

CPUINFO = "/proc/cpuinfo"
# (what users call it, its /proc/cpuinfo flag)
FEATURES = (("AVX-512", "avx512f"), ("AVX512_BF16", "avx512_bf16"), ("AMX", "amx_bf16"))
BFLOAT16_FEATURES = ("AVX512_BF16", "AMX")
_FLAG = dict(FEATURES)


@dataclasses.dataclass(frozen=True)
class Cpu:
    name: str
    flags: frozenset[str]

    def has(self, feature: str) -> bool:
        """Whether the CPU has `feature`, one of FEATURES' names (e.g. "AMX")."""
        return _FLAG[feature] in self.flags

    @property
    def runs_bfloat16(self) -> bool:
        """Whether its bfloat16 matmuls run on bfloat16 units (AVX512_BF16 or AMX)."""
        return any(self.has(feature) for feature in BFLOAT16_FEATURES)

    def describe(self) -> str:
        """E.g. "AMD EPYC 9R14 (AVX-512 yes, AVX512_BF16 yes, AMX no)"."""
        has = ", ".join(f"{name} {'yes' if self.has(name) else 'no'}" for name, _ in FEATURES)
        return f"{self.name} ({has})"


def this_cpu(cpuinfo: str = CPUINFO) -> Cpu | None:
    """The CPU of this machine from `cpuinfo`; None where it cannot be read (not Linux) or is
    not an x86 CPU's (no `flags`: ARM's cpuinfo lists `Features`, with bfloat16 units of its
    own)."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    fields = {}
    for line in lines:  # the first processor's fields; every core has the same
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    if "flags" not in fields:
        return None
    return Cpu(fields.get("model name", "unknown CPU"), frozenset(fields.get("flags", "").split()))


def bfloat16_warning(cpu: Cpu | None) -> str | None:
    """The line a bfloat16 export made on `cpu` deserves, or None: the export is for where it
    is served, which may be another machine (a GPU, a CPU with AMX), so it is made as asked, but a
    user serving it on a CPU like this one would be slower than with float32."""
    if cpu is None or cpu.runs_bfloat16:
        return None
    return (
        f"--export_dtype=bfloat16: this machine's CPU, {cpu.describe()}, has neither AVX512_BF16 "
        "nor AMX, so TensorFlow emulates bfloat16 matmuls on it, slower than float32; the export "
        "is bfloat16 as asked (for GPUs and CPUs with either), but served on a CPU like this one, "
        "--export_dtype=float32 answers faster"
    )
