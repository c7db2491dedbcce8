"""Transcribe Harbor's ATIF golden trajectories into the Storyline sample files shipped with the package.

Run once by hand (not at test time); the outputs are committed under pchronicle_datasets/samples/storyline/:

    python scripts/atif_goldens_to_storyline.py ../shared/corpora/atif pchronicle_datasets/samples/storyline

Storyline is "ATIF-first" (RFC-0001): every field these files use has a 1:1 Storyline name, so this is a
renaming to the short wire names, nothing more. It is not the project's ATIF reader (RFC-0008 is not
implemented here); a key it does not know stops it rather than being dropped.
"""

import json
import sys
from pathlib import Path

ROOT = {"session_id": "session", "final_metrics": "final_metrics"}
AGENT = {"name": "name", "version": "ver", "model_name": "model", "tool_definitions": "tools", "extra": "extra"}
STEP = {
    "step_id": "id",
    "source": "src",
    "message": "msg",
    "timestamp": "ts",
    "model_name": "model",
    "reasoning_content": "reason",
    "observation": "observation",
    "metrics": "metrics",
    "extra": "extra",
    "is_copied_context": "copied",
}
CALL = {"tool_call_id": "tcid", "function_name": "fn", "arguments": "args"}


def rename(obj: dict, table: dict, where: str) -> dict:
    unknown = set(obj) - set(table)
    if unknown:
        raise SystemExit(f"{where}: no Storyline name for {sorted(unknown)}")
    return {table[k]: v for k, v in obj.items()}


def transcribe(atif: dict, name: str) -> dict:
    doc = {"schema_version": "storyline/v1"}
    doc["origin"] = {"format": "atif", "schema_version": atif["schema_version"], "document_id": name}
    rest = {k: v for k, v in atif.items() if k not in ("schema_version", "agent", "steps")}
    root = rename(rest, ROOT, name)
    doc["session"] = root.pop("session")
    agent = rename(atif["agent"], AGENT, name)
    doc["agent"] = {"id": agent["name"], **agent}
    turns = []
    for i, step in enumerate(atif["steps"]):
        turn = rename({k: v for k, v in step.items() if k != "tool_calls"}, STEP, f"{name} step {i}")
        if "tool_calls" in step:
            turn["tool_calls"] = [rename(c, CALL, f"{name} step {i}") for c in step["tool_calls"]]
        turns.append(turn)
    doc["turns"] = turns
    doc.update(root)
    return doc


def main(src: str, dst: str) -> None:
    out = Path(dst)
    lines = []
    for path in sorted(Path(src).glob("*.trajectory.json")):
        stem = path.name.removesuffix(".trajectory.json")
        doc = transcribe(json.loads(path.read_text()), path.name)
        (out / f"{stem}.storyline.json").write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        lines.append(json.dumps(doc, ensure_ascii=False))
    (out / "harbor_goldens.storyline.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
