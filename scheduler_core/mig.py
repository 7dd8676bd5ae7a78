"""MIG geometry of the A100 exactly as NVIDIA's placement table.

Source: domain-facts.md §1.1 (NVML mock `a100_GpuInstancePlacements` in
NVIDIA/mig-parted's vendored go-nvml, identical for 40 GB and 80 GB, and the
per-profile resources from `a100_40gb_GpuInstanceProfiles` /
`a100_80gb_GpuInstanceProfiles`).

An A100 in MIG mode has 8 memory slices and 7 compute slices.  A GPU
instance of profile P placed at start slot ``s`` occupies memory slices
``[s, s + P.memory_slices)``.  A layout is valid when (facts §1.1, "placement
rule usable by the DES"):

(a) every start is in P's allowed-start list,
(b) no two instances share a memory slice,
(c) per-profile instance counts stay within P's maximum,
(d) the sum of compute slices is at most 7.

Creation order matters (facts §1.1 [V-code]): an instance created without
an explicit placement takes a driver-chosen slot, so a bad order can strand
capacity (3g at slot 0 blocks a later 4g).  :func:`create_in_order` models
one driver choice; :func:`create_any_order` models mig-parted, which clears
the GPU and tries every permutation until one succeeds ("all orderings
failed" otherwise).  Which free slot the driver picks is not documented
(facts §10): it is the named assumption ``driver_slot_choice`` ("lowest" by
default, "highest" as the alternative).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable, Iterator, Literal, Sequence

MEMORY_SLICES = 8
COMPUTE_SLICES = 7
FULL_GPU_SMS = 108  # deviceQuery "(108) Multiprocessors", facts §1.1 / §7.1

GpuFamily = Literal["a100-40gb", "a100-80gb", "h100-80gb", "h200-141gb", "b200-180gb"]
GPU_FAMILIES: tuple[str, ...] = ("a100-40gb", "a100-80gb", "h100-80gb", "h200-141gb", "b200-180gb")
SlotChoice = Literal["lowest", "highest"]


class MigLayoutError(ValueError):
    """An invalid MIG layout.  The message names the offending instance and the conflict."""


@dataclass(frozen=True)
class MigProfile:
    """One GPU-instance profile of the A100 (one row of facts §1.1's tables)."""

    name: str  # family-specific name, e.g. "3g.20gb" (40 GB) or "3g.40gb" (80 GB)
    nvml_id: int
    compute_slices: int  # "g"
    memory_slices: int
    allowed_starts: tuple[int, ...]
    max_instances: int
    sms: int
    memory_mib: int
    copy_engines: int
    decoders: int
    media_extensions: bool  # a "+me" variant (the 1g slice that owns the JPEG/OFA engines)
    full_sms: int = FULL_GPU_SMS  # SMs of the whole card with MIG off (132 on H100/H200, 148 on B200)

    @property
    def resource_name(self) -> str:
        """Extended resource under the device plugin's mixed strategy (facts §1.5)."""
        return "nvidia.com/mig-" + self.name.replace("+", ".")

    @property
    def sm_fraction(self) -> float:
        """Share of the full (MIG-off) card's SMs: A100 3g = 42/108 ≈ 0.39 (facts §1.1 [D])."""
        return self.sms / self.full_sms


# (40GB name, 80GB name, nvml id, g, memory slices, allowed starts, max, SMs,
#  MiB 40GB, MiB 80GB, copy engines, NVDEC 40GB, NVDEC 80GB, +me)
_TABLE = [
    ("1g.5gb", "1g.10gb", 19, 1, 1, (0, 1, 2, 3, 4, 5, 6), 7, 14, 4864, 9856, 1, 0, 1, False),
    ("1g.5gb+me", "1g.10gb+me", 20, 1, 1, (0, 1, 2, 3, 4, 5, 6), 1, 14, 4864, 9856, 1, 1, 1, True),
    ("1g.10gb", "1g.20gb", 15, 1, 2, (0, 2, 4, 6), 4, 14, 9856, 19968, 1, 1, 1, False),
    ("2g.10gb", "2g.20gb", 14, 2, 2, (0, 2, 4), 3, 28, 9856, 19968, 2, 1, 1, False),
    ("3g.20gb", "3g.40gb", 9, 3, 4, (0, 4), 2, 42, 19968, 40192, 3, 2, 2, False),
    ("4g.20gb", "4g.40gb", 5, 4, 4, (0,), 1, 56, 19968, 40192, 4, 2, 2, False),
    ("7g.40gb", "7g.80gb", 0, 7, 8, (0,), 1, 98, 40192, 80384, 7, 5, 5, False),
]


# Hopper and Blackwell keep the A100's geometry (7 compute / 8 memory slices, the same NVML profile
# ids, starts and maxima; facts §1.2) with their own names, usable memory and SMs. One row per
# _TABLE row: (name, SMs, usable MiB). Usable memory is what `nvidia-smi mig -lgip` prints in GiB.
# - H100-80GB: SMs from real Hopper output (facts §1.2: 16/26/32/60/64/132); usable memory not seen in
#   real output for the 80 GB part, so the A100-80GB figures are used (same 80 GB, same slices) [U].
# - H200 141GB: NVIDIA/mig-parted issue #120 `-lgip` (16.00 / 32.25 / 69.50 / 139.75 GiB; 16/26/32/60/64/132 SMs).
# - B200 180GB: NVIDIA/gpu-operator PR #1351 and mig-parted PR #166 `-lgip` (1g.23gb 20.50 GiB on the
#   newer driver, 22.00 on the older: the smaller is kept; 1g.45gb/2g.45gb 44.25 GiB; 18/30/36 SMs).
#   3g.90gb/4g.90gb/7g.180gb rows were cut off in what could be read: 2x and 4x the 1g.45gb figure and
#   18 SMs per compute slice (148 on 7g, the B200's count) are the named assumption [U].
_FULL_SMS = {"h100-80gb": 132, "h200-141gb": 132, "b200-180gb": 148}
_OTHER_FAMILIES: dict[str, list[tuple[str, int, int]]] = {
    "h100-80gb": [("1g.10gb", 16, 9856), ("1g.10gb+me", 16, 9856), ("1g.20gb", 26, 19968), ("2g.20gb", 32, 19968),
                  ("3g.40gb", 60, 40192), ("4g.40gb", 64, 40192), ("7g.80gb", 132, 80384)],
    "h200-141gb": [("1g.18gb", 16, 16384), ("1g.18gb+me", 16, 16384), ("1g.35gb", 26, 33024), ("2g.35gb", 32, 33024),
                   ("3g.71gb", 60, 71168), ("4g.71gb", 64, 71168), ("7g.141gb", 132, 143104)],
    "b200-180gb": [("1g.23gb", 18, 20992), ("1g.23gb+me", 18, 20992), ("1g.45gb", 30, 45312), ("2g.45gb", 36, 45312),
                   ("3g.90gb", 54, 90624), ("4g.90gb", 72, 90624), ("7g.180gb", 148, 181248)],
}


# _build runs once at import, before mutmut switches a mutant on, so no test can kill its mutants;
# the table it builds is checked field by field against the facts in the MIG tests instead.
# pragma: no mutate start
def _build() -> dict[str, dict[str, MigProfile]]:
    out: dict[str, dict[str, MigProfile]] = {fam: {} for fam in GPU_FAMILIES}
    for i, (n40, n80, nid, g, mem, starts, mx, sms, mib40, mib80, ce, dec40, dec80, me) in enumerate(_TABLE):
        out["a100-40gb"][n40] = MigProfile(n40, nid, g, mem, starts, mx, sms, mib40, ce, dec40, me)
        out["a100-80gb"][n80] = MigProfile(n80, nid, g, mem, starts, mx, sms, mib80, ce, dec80, me)
        for fam, rows in _OTHER_FAMILIES.items():
            name, fsms, mib = rows[i]
            out[fam][name] = MigProfile(name, nid, g, mem, starts, mx, fsms, mib, ce, dec80, me, _FULL_SMS[fam])
    return out
# pragma: no mutate end


PROFILES: dict[str, dict[str, MigProfile]] = _build()


def family_of(gpu: str) -> GpuFamily:
    """Map a GPU model or family name to its MIG family ("a100-40gb" / "a100-80gb")."""
    key = gpu.strip().lower()
    if key in GPU_FAMILIES:
        return key  # type: ignore[return-value]
    if key.startswith("a100") and "80" in key:
        return "a100-80gb"
    if key.startswith("a100") and "40" in key:
        return "a100-40gb"
    for prefix in ("h100", "h200", "b200"):
        if key.startswith(prefix):
            return next(f for f in GPU_FAMILIES if f.startswith(prefix))  # type: ignore[return-value]
    raise MigLayoutError(f"unknown GPU {gpu!r}: expected one of {', '.join(GPU_FAMILIES)} or a MIG-capable model name")


def profile(family: str, name: str) -> MigProfile:
    """Look up a profile by name; accepts the other memory size's name as a hint in the error."""
    fam = family_of(family)
    table = PROFILES[fam]
    if name in table:
        return table[name]
    other = "a100-80gb" if fam == "a100-40gb" else "a100-40gb"
    hint = ""
    if fam.startswith("a100") and name in PROFILES[other]:
        twin = _TABLE[[r[0] if other == "a100-40gb" else r[1] for r in _TABLE].index(name)]
        hint = f" ({name} is the {other} name; on {fam} use {twin[0] if fam == 'a100-40gb' else twin[1]})"
    raise MigLayoutError(f"unknown MIG profile {name!r} for {fam}{hint}; known: {', '.join(table)}")


@dataclass(frozen=True, order=True)
class MigPlacement:
    """One GPU instance: a profile at a start memory slice."""

    start: int
    profile: MigProfile

    @property
    def slices(self) -> range:
        return range(self.start, self.start + self.profile.memory_slices)

    def __str__(self) -> str:
        return f"{self.profile.name}@{self.start}"


def _slice_span(r: range) -> str:
    return f"{r.start}" if len(r) == 1 else f"{r.start}-{r[-1]}"


@dataclass(frozen=True)
class MigLayout:
    """A valid set of GPU instances on one A100 (immutable; build with :func:`validate`)."""

    family: str
    placements: tuple[MigPlacement, ...]

    def __str__(self) -> str:
        return " ".join(str(p) for p in self.placements) if self.placements else "(empty)"

    @property
    def used_slices(self) -> frozenset[int]:
        return frozenset(s for p in self.placements for s in p.slices)

    @property
    def compute_slices(self) -> int:
        return sum(p.profile.compute_slices for p in self.placements)

    @property
    def sms(self) -> int:
        return sum(p.profile.sms for p in self.placements)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.placements:
            out[p.profile.name] = out.get(p.profile.name, 0) + 1
        return out

    def can_add(self, prof: MigProfile) -> list[int]:
        """Start slots where one more ``prof`` instance would keep the layout valid."""
        return [s for s in prof.allowed_starts if _addable(self, prof, s)]

    def is_maximal(self) -> bool:
        """True if no instance of any profile can be added."""
        return not any(self.can_add(p) for p in PROFILES[self.family].values())


def _addable(layout: MigLayout, prof: MigProfile, start: int) -> bool:
    used = layout.used_slices
    if any(s in used for s in range(start, start + prof.memory_slices)):
        return False
    if layout.counts().get(prof.name, 0) + 1 > prof.max_instances:
        return False
    return layout.compute_slices + prof.compute_slices <= COMPUTE_SLICES


def parse_placement(family: str, text: str) -> MigPlacement:
    """Parse ``"3g.20gb@4"`` (start required)."""
    name, sep, start = text.strip().partition("@")
    if not sep:
        raise MigLayoutError(f"{text!r}: expected profile@start, e.g. 3g.20gb@4")
    try:
        s = int(start)
    except ValueError:
        raise MigLayoutError(f"{text!r}: start slot {start!r} is not an integer") from None
    return MigPlacement(s, profile(family, name))


def validate(family: str, placements: Iterable[MigPlacement | str]) -> MigLayout:
    """Check rules (a)-(d) and return the layout, or raise :class:`MigLayoutError`.

    The error names the offending instance and what it conflicts with.
    """
    fam = family_of(family)
    items = [parse_placement(fam, p) if isinstance(p, str) else p for p in placements]
    owner: dict[int, MigPlacement] = {}
    counts: dict[str, list[MigPlacement]] = {}
    g = 0
    for p in items:
        prof = p.profile
        if p.start not in prof.allowed_starts:
            allowed = ", ".join(map(str, prof.allowed_starts))
            raise MigLayoutError(f"{p}: start slot {p.start} is not allowed for {prof.name} (allowed starts: {allowed})")
        clash = [owner[s] for s in p.slices if s in owner]
        if clash:
            other = clash[0]
            common = range(max(p.start, other.start), min(p.slices.stop, other.slices.stop))
            raise MigLayoutError(f"{p} overlaps {other} on memory slice(s) {_slice_span(common)}")
        for s in p.slices:
            owner[s] = p
        counts.setdefault(prof.name, []).append(p)
        if len(counts[prof.name]) > prof.max_instances:
            listed = ", ".join(map(str, counts[prof.name]))
            raise MigLayoutError(f"{p}: {prof.name} allows at most {prof.max_instances} instance(s) per GPU ({listed})")
        g += prof.compute_slices
        if g > COMPUTE_SLICES:
            raise MigLayoutError(f"{p}: compute slices would total {g} > {COMPUTE_SLICES}")
    return MigLayout(fam, tuple(sorted(items)))


def _driver_slot(layout: MigLayout, prof: MigProfile, choice: SlotChoice) -> int | None:
    slots = layout.can_add(prof)
    if not slots:
        return None
    return slots[0] if choice == "lowest" else slots[-1]


def create_in_order(family: str, names: Sequence[str], driver_slot_choice: SlotChoice = "lowest") -> MigLayout:
    """Create instances one by one without explicit placement, as ``nvidia-smi mig -cgi`` would.

    Each instance takes the driver-chosen free slot (``driver_slot_choice``).
    Raises :class:`MigLayoutError` naming the instance that no longer fits.
    """
    fam = family_of(family)
    layout = MigLayout(fam, ())
    for name in names:
        prof = profile(fam, name)
        slot = _driver_slot(layout, prof, driver_slot_choice)
        if slot is None:
            if layout.counts().get(prof.name, 0) >= prof.max_instances:
                why = f"{prof.name} allows at most {prof.max_instances} instance(s) per GPU"
            else:  # memory is the only other limit: (d) never binds once (a)-(b) hold (facts §1.1)
                blockers = sorted({str(p) for p in layout.placements
                                   if any(s in p.slices for st in prof.allowed_starts
                                          for s in range(st, st + prof.memory_slices))})
                why = f"allowed starts {', '.join(map(str, prof.allowed_starts))} blocked by {', '.join(blockers)}"
            raise MigLayoutError(f"cannot create {prof.name} after [{layout}]: {why} (creation order matters)")
        layout = MigLayout(fam, tuple(sorted(layout.placements + (MigPlacement(slot, prof),))))
    return layout


def create_any_order(family: str, names: Sequence[str], driver_slot_choice: SlotChoice = "lowest") -> MigLayout:
    """mig-parted's approach: try every distinct creation order until one succeeds."""
    fam = family_of(family)
    for name in names:
        profile(fam, name)  # fail early on unknown names
    seen: set[tuple[str, ...]] = set()
    last: MigLayoutError | None = None
    for perm in itertools.permutations(names):
        if perm in seen:
            continue
        seen.add(perm)
        try:
            return create_in_order(fam, perm, driver_slot_choice)
        except MigLayoutError as exc:
            last = exc
    raise MigLayoutError(f"all orderings failed for [{', '.join(names)}] on {fam}: {last}")


def label_profiles(family: str, label: str) -> list[str] | None:
    """Profiles of a mig-parted config label (facts §1.6); ``None`` means MIG disabled.

    ``all-disabled`` -> None, ``all-enabled`` -> [] (MIG on, no instances),
    ``all-<profile>`` -> max instances of that profile, ``all-balanced`` ->
    2×1g + 1×2g + 1×3g (mig-parted `balanced.go`, formula {1:2, 2:1, 3:1}).
    """
    fam = family_of(family)
    if label == "all-disabled":
        return None
    if label == "all-enabled":
        return []
    if label == "all-balanced":
        names = list(PROFILES[fam])  # _TABLE order: 1g, 1g+me, 1g double memory, 2g, 3g, 4g, 7g
        one, two, three = names[0], names[3], names[4]
        return [one, one, two, three]
    if label.startswith("all-"):
        prof = profile(fam, label[4:])
        return [prof.name] * prof.max_instances
    raise MigLayoutError(f"unknown mig-parted label {label!r}: expected all-disabled, all-enabled, all-balanced or all-<profile>")


def layout_from_spec(family: str, spec: str | Sequence[str], driver_slot_choice: SlotChoice = "lowest") -> MigLayout | None:
    """Build a layout from a scenario spec.

    * a mig-parted label (``"all-1g.5gb"``, ``"all-balanced"``) -> created as mig-parted would;
    * a list of ``profile@start`` entries -> validated as given;
    * a list of bare profile names -> created in that order (driver picks slots),
      which is how creation-order mistakes are reproduced.
    Returns ``None`` for ``all-disabled``.
    """
    fam = family_of(family)
    if isinstance(spec, str):
        if spec.startswith("all-"):
            names = label_profiles(fam, spec)
            return None if names is None else create_any_order(fam, names, driver_slot_choice)
        spec = [s for s in spec.replace(",", " ").split() if s]
    entries = list(spec)
    explicit = ["@" in e for e in entries]
    if entries and all(explicit):
        return validate(fam, entries)
    if any(explicit):
        raise MigLayoutError("mix of profile@start and bare profile entries: give every start or none")
    return create_in_order(fam, entries, driver_slot_choice)


def enumerate_layouts(family: str, maximal_only: bool = False) -> Iterator[MigLayout]:
    """Every non-empty valid layout of the GPU, in a stable order (by start slots).

    Built by walking memory slices 0..7: at each slot either leave it empty
    or start an instance there (if the profile allows that start), then
    filter by the count and compute-slice limits.
    """
    fam = family_of(family)
    profs = list(PROFILES[fam].values())

    def walk(pos: int, acc: tuple[MigPlacement, ...]) -> Iterator[tuple[MigPlacement, ...]]:
        if pos >= MEMORY_SLICES:
            yield acc
            return
        yield from walk(pos + 1, acc)
        for prof in profs:
            if pos in prof.allowed_starts and pos + prof.memory_slices <= MEMORY_SLICES:
                yield from walk(pos + prof.memory_slices, acc + (MigPlacement(pos, prof),))

    for placements in walk(0, ()):
        if not placements:
            continue
        counts: dict[str, int] = {}
        for p in placements:
            counts[p.profile.name] = counts.get(p.profile.name, 0) + 1
        if any(counts[n] > PROFILES[fam][n].max_instances for n in counts):
            continue
        if sum(p.profile.compute_slices for p in placements) > COMPUTE_SLICES:
            continue
        layout = MigLayout(fam, placements)
        if maximal_only and not layout.is_maximal():
            continue
        yield layout
