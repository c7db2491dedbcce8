"""Optional scans beside the rules, both off by default.

* ``PiiScanner``: Presidio's recognisers (the ``pii`` extra, ``presidio-analyzer``): phone numbers, credit
  cards, IBANs, US SSNs with its pattern recognisers alone (no NLP model needed); with a spaCy English model
  installed, Presidio's ``AnalyzerEngine`` also finds names and places.
* ``second_scan``: run ``trufflehog`` and/or ``betterleaks`` (whichever is on ``PATH``) on the redacted
  output, written as decoded JSON Lines (a scanner cannot read compressed Parquet pages); any finding blocks
  the push. Findings are reported by detector, file and line, never with the value (``--redact`` for
  betterleaks; trufflehog's ``Raw`` fields are not read).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .config import RedactionError

__all__ = ["SCANNERS", "PiiScanner", "available_scanners", "run_scanners", "second_scan"]

PII_ENTITIES = ("PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "PERSON", "LOCATION")
MIN_PII_SCORE = 0.4  # Presidio scores a valid phone number 0.4 without context words
SCANNERS = ("trufflehog", "betterleaks")
SCAN_TIMEOUT = 600  # seconds


class PiiScanner:
    """Presidio's recognisers as a finder of (start, end, kind) spans."""

    def __init__(self) -> None:
        try:
            import presidio_analyzer  # noqa: F401
        except ImportError:
            raise RedactionError(
                "PII redaction needs Presidio: pip install 'pchronicle-datasets[pii]' (presidio-analyzer)"
            ) from None
        self._engine = _analyzer_with_spacy()
        self._recognizers = [] if self._engine is not None else _pattern_recognizers()

    def find(self, text: str) -> list[tuple[int, int, str]]:
        if self._engine is not None:
            results = self._engine.analyze(text=text, entities=list(PII_ENTITIES), language="en")
        else:
            results = []
            for rec in self._recognizers:
                results += rec.analyze(text, rec.supported_entities, None) or []
        return [
            (r.start, r.end, r.entity_type.lower().replace("_", "-"))
            for r in results
            if r.score >= MIN_PII_SCORE and r.end > r.start and not _bare_number(r.entity_type, text[r.start : r.end])
        ]


def _bare_number(entity: str, found: str) -> bool:
    """A "phone number" of digits alone is far more often a Unix time or a count in a trace (1755856800)."""
    return entity == "PHONE_NUMBER" and found.isdigit()


def _analyzer_with_spacy() -> Any:
    """Presidio's AnalyzerEngine when a spaCy English model is installed (names, places); else None."""
    try:
        import spacy.util
    except ImportError:
        return None
    model = next((m for m in ("en_core_web_lg", "en_core_web_md", "en_core_web_sm") if spacy.util.is_package(m)), None)
    if model is None:
        return None
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    config = {"nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": model}]}
    return AnalyzerEngine(nlp_engine=NlpEngineProvider(nlp_configuration=config).create_engine())


def _pattern_recognizers() -> list[Any]:
    """Presidio's predefined recognisers that need no NLP model (patterns and checksums)."""
    from presidio_analyzer import predefined_recognizers as pr

    names = ("PhoneRecognizer", "CreditCardRecognizer", "IbanRecognizer", "UsSsnRecognizer")
    return [getattr(pr, n)() for n in names if hasattr(pr, n)]


# ---------------------------------------------------------------------------------------- second scan


def available_scanners() -> list[str]:
    return [name for name in SCANNERS if shutil.which(name)]


def _trufflehog(exe: str, folder: Path) -> list[dict[str, Any]]:
    cmd = [exe, "filesystem", str(folder), "--json", "--no-update", "--no-verification"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=SCAN_TIMEOUT, check=False)
    if proc.returncode not in (0, 183):  # 183: findings, with --fail
        raise RedactionError(f"the second scan (trufflehog) failed with exit code {proc.returncode}; nothing uploaded")
    findings = []
    for line in proc.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, Mapping) and ("DetectorName" in item or "DetectorType" in item):
            fs = ((item.get("SourceMetadata") or {}).get("Data") or {}).get("Filesystem") or {}
            findings.append(
                {"scanner": "trufflehog", "rule": str(item.get("DetectorName")), "file": fs.get("file"),
                 "line": fs.get("line")}
            )  # fmt: skip
    return findings


def _betterleaks(exe: str, folder: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="pchronicle-scan-report-") as tmp:
        report = Path(tmp) / "report.json"
        cmd = [exe, "dir", str(folder), "--no-banner", "--redact", "-f", "json", "-r", str(report)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=SCAN_TIMEOUT, check=False)
        if proc.returncode not in (0, 1):  # 1: leaks found
            raise RedactionError(
                f"the second scan (betterleaks) failed with exit code {proc.returncode}; nothing uploaded"
            )
        try:
            items = json.loads(report.read_text(encoding="utf-8") or "[]")
        except (OSError, ValueError):
            if proc.returncode == 1:
                raise RedactionError("the second scan (betterleaks) found leaks but wrote no readable report") from None
            items = []
    return [
        {"scanner": "betterleaks", "rule": str(i.get("RuleID")), "file": i.get("File"), "line": i.get("StartLine")}
        for i in items
        if isinstance(i, Mapping)
    ]


def run_scanners(folder: Path, scanners: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Every finding of the scanners on ``folder`` (rule, file, line; never the value)."""
    names = list(scanners) if scanners is not None else available_scanners()
    if not names:
        raise RedactionError(
            "the second scan was asked for but neither trufflehog nor betterleaks is on PATH; nothing uploaded"
        )
    findings = []
    for name in names:
        exe = shutil.which(name)
        if exe is None:
            raise RedactionError(f"the second scan needs {name} on PATH; nothing uploaded")
        try:
            findings += _trufflehog(exe, folder) if name == "trufflehog" else _betterleaks(exe, folder)
        except (OSError, subprocess.SubprocessError) as exc:
            raise RedactionError(f"the second scan ({name}) could not run: {type(exc).__name__}") from None
    return findings


def second_scan(splits: Mapping[str, Any], extra_files: Iterable[Path] = ()) -> None:
    """Scan what would be uploaded: each split's rows as decoded JSON Lines, plus ``extra_files`` (trace
    files, the card). Raises ``RedactionError`` on any finding (detector, file, line; no value)."""
    with tempfile.TemporaryDirectory(prefix="pchronicle-scan-") as tmp:
        root = Path(tmp)
        for name, ds in splits.items():
            with (root / f"{name}.jsonl").open("w", encoding="utf-8") as f:
                for row in ds:
                    f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        for i, path in enumerate(extra_files):
            if path.suffix in (".jsonl", ".json", ".md"):
                shutil.copyfile(path, root / f"extra-{i:05d}-{path.name}")
        findings = run_scanners(root)
    if findings:
        where = "; ".join(
            f"{f['scanner']} {f['rule']} in {Path(str(f['file'])).name} line {f['line']}" for f in findings[:10]
        )
        raise RedactionError(
            f"the second scan found {len(findings)} secret(s) after redaction: {where}; nothing uploaded"
        )
