"""Benchmark: does `crashsweep audit` of what a swept run left agree with the sweep's own verdicts?

For each stack (--frameworks; `reference:DESIGN` is the reference loop under a design) and each
--keys setting, one real sweep (`crashsweep sweep ... --keep DIR`) runs every crash scenario up
to --depth (a design decides for itself whether it sends keys: its row's keys are "-"). Every
final world it kept (a folder of DIR with the sweep's `history.jsonl`: processes/pN, or
scenarios/S for a sweep that does not merge worlds) holds the stack's own records in its work
folder (a checkpoint database, a session, a DBOS system database, a Temporal history, the
reference loop's checkpoint) and the tracker's database (DIR/tracker/pN.sqlite3); a world whose
records audit cannot read (a program of the user's own) is left out of the counts. The audit
reads those records alone, never the sweep's verdicts, as `crashsweep audit DIR` does
(crashsweep/importers/units.py), against the job the sweep ran, and its definite `duplicate-
effect` and `lost-effect` anomalies are held against the sweep's no-duplicate and no-loss
verdicts on the same world: a disagreement is a world where one says yes and the other no. Then
the same records with every call ID and logical call removed (the `call` and `call_id` of every
event: what the model and the runtime named) are audited again, and the table says what share
of the sweep's duplicated worlds the fallback join (tool and arguments) still finds, and how
many events it could not join.

    .venv/bin/python benchmarks/audit_agreement.py [--frameworks langgraph,dbos,...] [--depth 2]
        [--keys off,on] [--keep DIR]

The stacks' extras must be installed (bin/bootstrap installs them all). Figures are counts,
not times; a stack whose own timing decides what it saved (LangGraph's async durability) may
keep other final worlds from one run to the next, never a disagreement.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashsweep.importers.units import Unit, units
from crashsweep.spec import auditing, invariants
from crashsweep.spec.history import KEPT, History
from crashsweep.spec.history import read as read_history

FRAMEWORKS = ("langgraph", "dbos", "openai-agents", "pydantic-ai", "temporal")
DESIGNS = ("save-after-reply", "idempotency-keys", "attempt-markers", "examples/save-after-reply-repair.toml")
"""The reference loop's designs swept (`reference:NAME`, a preset's name or a design file): keyless, keyed,
markers to a person, and one that loses a write after a crash (it repairs an orphaned call as unknown)."""
JOBS = {"examples/save-after-reply-repair.toml": "examples/one-write.toml"}
"""A design's job where it is not the built-in triage job (the repairing loop refuses to comment on an issue
a repair may have lost)."""
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class World:
    """One kept final world: the sweep's verdicts on it, and the audit's on its records (full, and stripped)."""

    sweep_dup: bool
    sweep_loss: bool
    audit_dup: bool
    audit_loss: bool
    stripped_dup: bool
    unjoined: int


def command(stack: str, keys: str, depth: int, keep: Path) -> list[str]:
    """The sweep's command line for a stack (its job: the built-in triage job, or the design's in JOBS)."""
    program = str(Path(sys.executable).parent / "crashsweep")
    common = ["--depth", str(depth), "--keep", str(keep)]
    if stack.startswith("reference:"):  # the design decides whether keys are sent; the tracker honours them
        design = stack.partition(":")[2]
        chosen = ["--design", str(ROOT / design)] if design.endswith(".toml") else ["--variant", design]
        job = ["--job", str(ROOT / JOBS[design])] if design in JOBS else []
        args = ["sweep", *chosen, *job, "--tracker", "keyed"]
        return [program, *args, *common]
    return [program, "sweep", "--framework", stack, "--keys", keys, *common]


def sweep(stack: str, keys: str, depth: int, keep: Path) -> None:
    """Run the sweep (its row's exit status is 0 or 1), keeping its final worlds in `keep`."""
    argv = command(stack, keys, depth, keep)
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}\n{done.stderr}")


def violated(history: History, name: str) -> bool:
    """Whether the registered invariant `name` is violated on `history`."""
    verdict = invariants.by_name(name).judge(history)
    return verdict.violation is not None


def stripped(history: History) -> History:
    """The history with every call ID and logical call removed."""
    events = tuple(dataclasses.replace(e, call="", call_id="") for e in history.events)
    return dataclasses.replace(history, events=events)


def judge(unit: Unit) -> World | None:
    """The sweep's and the audit's verdicts on one kept world (None: a world whose records audit cannot read)."""
    world = Path(unit.name)
    if not world.is_dir():  # the unit is the sweep's own history: nothing of the run's to compare
        return None
    own = read_history(world / KEPT)
    histories = [h for source in unit.sources for h in source.histories]
    full = auditing.audit(unit.name, histories, unit.expected, unit.gated)
    bare = auditing.audit(unit.name, [stripped(h) for h in histories], unit.expected, unit.gated)

    def found(runs: tuple[auditing.RunAudit, ...], name: str) -> bool:
        return any(a.name == name and a.definite for r in runs for a in r.found)

    return World(
        violated(own, "no-duplicate"),
        violated(own, "no-loss"),
        found(full, "duplicate-effect"),
        found(full, "lost-effect"),
        found(bare, "duplicate-effect"),
        sum(len(r.joined.unjoined) for r in bare),
    )


def row(stack: str, keys: str, worlds: list[World]) -> str:
    """One line of the table."""
    disagree = sum((w.sweep_dup != w.audit_dup) + (w.sweep_loss != w.audit_loss) for w in worlds)
    dups = [w for w in worlds if w.sweep_dup]
    share = f"{100 * sum(w.stripped_dup for w in dups) / len(dups):.0f}%" if dups else "-"
    counts = (
        f"{len(worlds):>6}  {len(dups):>4}/{sum(w.audit_dup for w in worlds):<4}  "
        f"{sum(w.sweep_loss for w in worlds):>4}/{sum(w.audit_loss for w in worlds):<4}"
    )
    unjoined = sum(w.unjoined for w in worlds)
    return f"{stack:<28} {keys:<4} {counts}  {disagree:>8}  {share:>9}  {unjoined:>8}"


def main(argv: list[str] | None = None) -> int:
    """Sweep each stack, audit each kept world, print the table; exit 1 on a disagreement."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    stacks = (*FRAMEWORKS, *(f"reference:{design}" for design in DESIGNS))
    parser.add_argument("--frameworks", default=",".join(stacks))
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--keys", default="off,on")
    parser.add_argument("--keep", type=Path, help="keep the sweeps' folders here (new folders)")
    args = parser.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="audit-agreement-"))
    print(
        f"{'stack':<28} {'keys':<4} {'worlds':>6}  {'dups':>9}  {'losses':>9}  {'disagree':>8}  "
        f"{'no-IDs':>9}  {'unjoined':>8}"
    )
    total = 0
    for stack in args.frameworks.split(","):
        for keys in ["-"] if stack.startswith("reference:") else args.keys.split(","):
            kept = root / f"{stack.replace(':', '-').replace('/', '-')}-keys-{keys}"
            sweep(stack, keys, args.depth, kept)
            judged = [judge(unit) for unit in units([kept])]  # what `crashsweep audit DIR` reads
            worlds = [world for world in judged if world is not None]
            print(row(stack, keys, worlds), flush=True)
            total += sum((w.sweep_dup != w.audit_dup) + (w.sweep_loss != w.audit_loss) for w in worlds)
    print(
        f"disagreements in all: {total}  (dups and losses: the sweep's worlds / the audit's; no-IDs: the "
        "share of duplicated worlds the fallback join still finds)"
    )
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
