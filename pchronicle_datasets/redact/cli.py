"""The command line's redaction options and the ``redact --check`` command (kept here, so ``cli.py`` only
wires them in).

``push`` redacts unless ``--no-redact`` (which it says, loudly); ``convert`` redacts with ``--redact``;
``redact --check FILES`` reports what would be redacted and exits 1 when anything would be.
"""

from __future__ import annotations

import argparse
import json
import sys

from .config import RedactionConfig
from .engine import Redactor

__all__ = ["add_options", "cmd_redact", "print_report", "redactor_from_args"]

NO_REDACT_WARNING = (
    "redaction is OFF (--no-redact): secrets, e-mail addresses, user names and opaque reasoning payloads are "
    "uploaded as they are"
)


def add_options(p: argparse.ArgumentParser, *, mode: str) -> None:
    """The redaction options of a command; ``mode`` is ``push`` (on unless --no-redact), ``convert`` (off
    unless --redact) or ``check`` (the redact command)."""
    g = p.add_argument_group("redaction (docs/redaction.md)")
    if mode == "push":
        g.add_argument(
            "--no-redact",
            dest="redact",
            action="store_false",
            help="upload values as they are: no redaction (it is on by default, and the push says when it is off)",
        )
    elif mode == "convert":
        g.add_argument("--redact", action="store_true", help="redact the output (as push does by default)")
    g.add_argument("--redact-config", metavar="FILE", help="a YAML/JSON file of redaction options")
    g.add_argument(
        "--redact-key",
        metavar="KEY",
        help="the key of the placeholders' HMAC, for the same placeholders across runs (default: random per run)",
    )
    g.add_argument("--allow", action="append", metavar="VALUE", help="a value never to redact (repeatable)")
    g.add_argument("--allow-regex", action="append", metavar="REGEX", help="values matching it are never redacted")
    g.add_argument(
        "--allow-email", action="append", metavar="DOMAIN|LOCAL@", help="e-mail domain or local part to keep"
    )
    g.add_argument("--secret", action="append", metavar="VALUE", help="a value always redacted, whatever its shape")
    g.add_argument("--secrets-file", action="append", metavar="FILE", help="redact every value of a .env file")
    g.add_argument("--disable-rule", action="append", metavar="ID", help="a rule id not to run")
    g.add_argument("--keep-opaque", action="store_true", help="keep opaque reasoning payloads (stripped by default)")
    g.add_argument("--pii", action="store_true", help="also Presidio's PII recognisers (the `pii` extra)")
    if mode == "push":
        g.add_argument(
            "--second-scan",
            action="store_true",
            help="scan the redacted output with trufflehog/betterleaks (on PATH) before uploading; a finding blocks",
        )


def redactor_from_args(args: argparse.Namespace) -> Redactor | None:
    """The run's redactor, or None when redaction is off for this command."""
    if not getattr(args, "redact", True):
        return None
    config = RedactionConfig.from_file(args.redact_config) if args.redact_config else RedactionConfig()
    config = config.merged(
        key=args.redact_key,
        allow=args.allow,
        allow_regex=args.allow_regex,
        allow_email=args.allow_email,
        secrets=args.secret,
        secrets_files=args.secrets_file,
        disable=args.disable_rule,
        strip_opaque=False if args.keep_opaque else None,
        pii=True if args.pii else None,
        second_scan=True if getattr(args, "second_scan", False) else None,
    )
    return Redactor(config)  # the merged lists are checked (rule ids, regexes) before any input is read


def print_report(redactor: Redactor | None, *, pushed: bool = False) -> None:
    if redactor is None:
        if pushed:
            print(f"pchronicle-datasets: WARNING: {NO_REDACT_WARNING}", file=sys.stderr)
        return
    for line in redactor.report.lines():
        print(line, file=sys.stderr)


def cmd_redact(args: argparse.Namespace) -> int:
    """``redact --check FILES``: what would be redacted, counted per rule, file and field; exit 1 if any."""
    from ..cli import iter_stories
    from ..loading.policy import CommandBadRecords

    if not args.check:
        raise SystemExit(
            "pchronicle-datasets: redact only checks (--check); write a redacted copy with convert --redact"
        )
    redactor = redactor_from_args(args)
    assert redactor is not None
    bad = CommandBadRecords("skip", None)
    for _ in iter_stories(args, "checking", bad, redactor=redactor):
        pass  # the report is what counts
    if args.json:
        print(json.dumps(redactor.report.to_dict(), ensure_ascii=False, indent=2))
    else:
        for line in redactor.report.lines():
            print(line)
    return 1 if redactor.report or bad.count else 0
