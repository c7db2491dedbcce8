"""The redaction rules, written as data: one ``Rule`` per kind of value that must not leave the machine.

Each rule has an ``id`` (what the report counts), a ``kind`` (what the placeholder names:
``<REDACTED:github-token:3f9a1c2b>``), a ``description``, a ``pattern`` whose group ``s`` (or whole match)
is the value replaced, optional ``keywords`` (lower-case; the pattern only runs on a string holding one of
them, gitleaks' prefilter), optional refinements (``min_entropy``, a ``check`` detector on the value, an
``allow`` pattern of known-safe values) and the ``provenance`` of the pattern. The patterns are written
for this project, modelled on the rule file of gitleaks (MIT, ``config/gitleaks.toml``, read at commit
420a0f55f4a7a03dfe701ceb1f4f66a7c68b26b4 of github.com/gitleaks/gitleaks); no code or rule text is copied.

Rules are tried in order and an earlier rule wins where two find overlapping values (so a GitHub token in
``GITHUB_TOKEN=…`` is a ``github-token``, not a generic secret). docs/redaction.md is the rule table.

>>> [r.id for r in RULES][:3]
['private-key', 'aws-access-key-id', 'aws-secret-access-key']
>>> bool(rule("github-classic-token").pattern.search("token ghp_" + "a1B2" * 9))
True
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["RULES", "Rule", "entropy", "rule"]

GITLEAKS = "modelled on gitleaks rule {} (config/gitleaks.toml, MIT)"
OWN = "written for pchronicle-datasets"


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    description: str
    pattern: re.Pattern
    provenance: str
    keywords: tuple[str, ...] = ()
    min_entropy: float = 0.0
    check: Callable[[str], bool] | None = None
    allow: re.Pattern | None = None  # values of this shape are known to be safe (documentation examples)

    def accepts(self, value: str) -> bool:
        """Whether a value the pattern found is one this rule redacts."""
        if self.min_entropy and entropy(value) < self.min_entropy:
            return False
        return self.check is None or self.check(value)

    def known_safe(self, value: str) -> bool:
        """A value of this rule's shape known to be safe: no other rule may redact it either."""
        return self.allow is not None and bool(self.allow.search(value))


def entropy(text: str) -> float:
    """Shannon entropy in bits per character.

    >>> entropy("aaaa") == 0, entropy("abcd")
    (True, 2.0)
    """
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


# ----------------------------------------------------------------------------------------- detectors

_UNSET = re.compile(r"^(?:\$|%|\{\{|<|\*+$|x+$|X+$|\.\.\.|…|null$|none$|nil$|true$|false$|undefined$)", re.I)


def _not_placeholder(value: str) -> bool:
    """A value that is a reference or a stand-in (``$VAR``, ``${VAR}``, ``%VAR%``, ``{{var}}``, ``<…>``,
    ``***``, ``null``…) is not a secret."""
    return not _UNSET.search(value)


def _has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _password_like(value: str) -> bool:
    """A password value: not a stand-in, and not one plain word (``required``, ``string``): it has a digit,
    a symbol or mixed case."""
    if not _not_placeholder(value):
        return False
    return not (value.isalpha() and (value.islower() or value.isupper()))


def _generic_secret(value: str) -> bool:
    return _not_placeholder(value) and _has_digit_and_letter(value) and not re.fullmatch(r"[\d.:_-]+", value)


def _b64url_json(segment: str) -> bool:
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        return False
    return raw[:1] == b"{"


def _jwt(value: str) -> bool:
    """A JWT: its header decodes to a JSON object (base64url)."""
    return _b64url_json(value.split(".", 1)[0])


# Names that are not a person's: system and CI accounts, placeholders of documentation.
SAFE_USER_NAMES = frozenset(
    s.lower()
    for s in (
        "Shared", "Public", "Default", "Default User", "All Users", "Guest", "runner", "user", "username",
        "ubuntu", "ec2-user", "vscode", "node", "codespace", "codespaces", "admin", "root", "you", "me", "name",
        "your-name", "yourname", "your_name", "your-username", "yourusername", "someone", "jovyan", "app",
        "docker", "coder", "gitpod", "vagrant", "pi", "openhands",
    )
)  # fmt: skip


def _user_name(value: str) -> bool:
    if value.lower() in SAFE_USER_NAMES or not _not_placeholder(value):
        return False
    return not re.search(r"[{}$%*~]", value)


def _encoded_user_name(value: str) -> bool:
    """A ``-Users-<name>-<project>`` folder name's rest is redacted unless its first part is a name of no one
    (``SAFE_USER_NAMES``: ``-home-user-project``, ``-home-runner-work-…``)."""
    return _user_name(value.split("-", 1)[0])


# The last label of what looks like an address but is a file name (``logo@2x.png``).
_FILE_TLDS = frozenset(
    ("png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "bmp", "tiff", "js", "mjs", "ts", "tsx", "jsx", "css", "scss",
     "json", "yaml", "yml", "toml")
)  # fmt: skip


def _email(value: str) -> bool:
    return value.rsplit(".", 1)[-1].lower() not in _FILE_TLDS


# --------------------------------------------------------------------------------------------- rules

_END = r"(?![A-Za-z0-9_-])"  # a token ends where its alphabet does
_START = r"(?<![A-Za-z0-9_-])"  # …and starts where it begins (not inside a longer token)


def _rx(pattern: str, flags: int = 0) -> re.Pattern:
    return re.compile(pattern, flags)


RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        "private-key",
        "A PEM or OpenSSH private key block (BEGIN … PRIVATE KEY … END), or its start when the END was cut off",
        _rx(
            r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]{16,}?-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]{64,})"
        ),
        GITLEAKS.format("private-key"),
        ("private key",),
    ),
    Rule(
        "aws-access-key-id",
        "aws-access-key-id",
        "An AWS access key id (AKIA…, ASIA…: 20 characters)",
        _rx(_START + r"(?P<s>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16})" + _END),
        GITLEAKS.format("aws-access-token"),
        ("akia", "asia", "abia", "acca", "a3t"),
        allow=_rx(r"EXAMPLE$"),  # AWS's documentation keys (AKIAIOSFODNN7EXAMPLE)
    ),
    Rule(
        "aws-secret-access-key",
        "aws-secret-access-key",
        "An AWS secret access key: 40 base64 characters after a name saying AWS and secret",
        _rx(
            r"(?i)aws[\w.-]{0,20}?(?:secret|sk)[\w.-]{0,20}[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        OWN + " (gitleaks has no standalone rule; its generic rule finds these)",
        ("aws",),
        min_entropy=3.0,
        allow=_rx(r"EXAMPLEKEY$"),  # wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
    ),
    Rule(
        "github-fine-grained-token",
        "github-token",
        "A GitHub fine-grained personal access token (github_pat_…)",
        _rx(_START + r"(?P<s>github_pat_[A-Za-z0-9_]{82})" + _END),
        GITLEAKS.format("github-fine-grained-pat"),
        ("github_pat_",),
    ),
    Rule(
        "github-classic-token",
        "github-token",
        "A GitHub classic token: personal (ghp_), OAuth (gho_), user-to-server (ghu_), server (ghs_), refresh (ghr_)",
        _rx(_START + r"(?P<s>gh[pousr]_[A-Za-z0-9]{36})" + _END),
        GITLEAKS.format("github-pat, github-oauth, github-app-token, github-refresh-token"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    Rule(
        "anthropic-api-key",
        "anthropic-api-key",
        "An Anthropic API or admin key (sk-ant-api03-…, sk-ant-admin01-…)",
        _rx(_START + r"(?P<s>sk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_-]{80,120})" + _END),
        GITLEAKS.format("anthropic-api-key, anthropic-admin-api-key"),
        ("sk-ant-",),
    ),
    Rule(
        "openai-api-key",
        "openai-api-key",
        "An OpenAI API key: project, service-account or admin (sk-proj-…), or a legacy key (sk-…T3BlbkFJ…)",
        _rx(
            _START + r"(?P<s>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,200}"
            r"|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|sk-[A-Za-z0-9]{48})" + _END
        ),
        GITLEAKS.format("openai-api-key"),
        ("sk-",),
    ),
    Rule(
        "huggingface-token",
        "huggingface-token",
        "A Hugging Face user or organisation token (hf_…, api_org_…)",
        _rx(_START + r"(?P<s>hf_[A-Za-z]{34}|api_org_[A-Za-z]{34})" + _END),
        GITLEAKS.format("huggingface-access-token, huggingface-organization-api-token"),
        ("hf_", "api_org_"),
        min_entropy=3.0,
    ),
    Rule(
        "slack-token",
        "slack-token",
        "A Slack bot, user, app or configuration token (xoxb-, xoxp-, xapp-, xoxe-…) or an incoming webhook URL",
        _rx(
            _START + r"(?P<s>xox[abposre]-[0-9A-Za-z-]{10,250}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"
            r"|https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,})"
        ),
        GITLEAKS.format("slack-bot-token, slack-user-token, slack-app-token, slack-webhook-url"),
        ("xox", "xapp-", "hooks.slack.com"),
        check=lambda v: v.startswith("https://") or _has_digit_and_letter(v),
    ),
    Rule(
        "stripe-key",
        "stripe-key",
        "A Stripe secret or restricted key (sk_live_…, rk_test_…); publishable keys (pk_) are public",
        _rx(_START + r"(?P<s>(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,99})" + _END),
        GITLEAKS.format("stripe-access-token"),
        ("sk_", "rk_"),
        check=_has_digit_and_letter,
    ),
    Rule(
        "google-api-key",
        "google-api-key",
        "A Google API key (AIza…, 39 characters)",
        _rx(_START + r"(?P<s>AIza[0-9A-Za-z_-]{35})" + _END),
        GITLEAKS.format("gcp-api-key"),
        ("aiza",),
    ),
    Rule(
        "jwt",
        "jwt",
        "A JSON Web Token: three base64url parts whose header decodes to JSON",
        _rx(_START + r"(?P<s>ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}={0,2})" + _END),
        GITLEAKS.format("jwt"),
        ("eyj",),  # base64url of '{"' (a JSON header)
        check=_jwt,
    ),
    Rule(
        "url-password",
        "password",
        "The password of a URL with credentials (postgres://user:PASSWORD@host, https://user:PASSWORD@host)",
        _rx(r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@\"'<>]+:(?P<s>[^\s@/\"'<>]+)@[A-Za-z0-9.\[\]-]+"),
        OWN + " (gitleaks' generic rule covers URL credentials only by keyword)",
        ("://",),
        check=_not_placeholder,
    ),
    Rule(
        "db-password-assignment",
        "password",
        "A database password assigned in a .env or config line (DB_PASSWORD=…, POSTGRES_PASSWORD: …)",
        _rx(
            r"(?i)(?<![A-Za-z0-9])(?:[A-Z0-9]{1,30}_){0,4}(?:DB|DATABASE|MYSQL|POSTGRES|POSTGRESQL|PG|MONGO|MONGODB|REDIS|MARIADB|MSSQL|SQL)"
            r"_?(?:PASSWORD|PASSWD|PASS|PWD)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<s>[^\s\"'#,;]+)"
        ),
        OWN,
        ("pass", "pwd"),
        check=_not_placeholder,
    ),
    Rule(
        "http-auth-header",
        "bearer-token",
        "A credential in an HTTP header (Authorization: Bearer …, Basic …, X-Api-Key: …) or after 'Bearer'",
        _rx(
            r"(?i)(?:(?:proxy-)?authorization|x-api-key|api-key|x-auth-token)[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?:(?:bearer|basic|token)\s+)?(?P<s>[A-Za-z0-9._~+/-]{16,}=*)"
            r"|\bbearer\s+(?P<t>[A-Za-z0-9._~+/-]{20,}=*)"
        ),
        GITLEAKS.format("generic-api-key (headers), curl-auth-header"),
        ("authorization", "api-key", "auth-token", "bearer"),
        min_entropy=3.0,
        check=_has_digit_and_letter,
    ),
    Rule(
        "generic-secret-assignment",
        "secret",
        "A high-entropy value assigned to a name ending in KEY, TOKEN or SECRET (API_KEY=…, auth_token: …)",
        _rx(
            r"(?i)(?<![A-Za-z0-9])[A-Za-z0-9_.-]{0,60}?(?:key|token|secret)[\"']?[ \t]*[:=]>?[ \t]*[\"']?"
            r"(?P<s>[A-Za-z0-9/+=._~-]{12,200})(?![A-Za-z0-9/+=._~-])"
        ),
        GITLEAKS.format("generic-api-key"),
        ("key", "token", "secret"),
        min_entropy=3.2,
        check=_generic_secret,
    ),
    Rule(
        "password-assignment",
        "password",
        'A password assigned in text (password: …, passwd=…, "password": "…")',
        _rx(
            r"(?i)(?<![A-Za-z0-9])(?:[A-Za-z0-9]{1,30}[_.-]){0,4}(?:password|passwd|pwd)"
            r"[\"']?[ \t]*[:=][ \t]*[\"']?(?P<s>[^\s\"'<>,;]{6,100})"
        ),
        OWN,
        ("pass", "pwd"),
        min_entropy=2.0,
        check=_password_like,
    ),
    Rule(
        "email",
        "email",
        "An e-mail address (allowlisted: reserved domains such as example.com, noreply@ addresses, git@)",
        _rx(
            r"(?<![A-Za-z0-9._%+-])(?P<s>[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24})"
            r"(?![A-Za-z0-9-])"
        ),
        OWN,
        ("@",),
        check=_email,
    ),
    Rule(
        "user-path",
        "user-name",
        "The user name in a home folder path: /Users/<name>/, /home/<name>/, C:\\Users\\<name>\\",
        _rx(r"(?:/Users/|/home/|\b[A-Za-z]:(?:\\{1,2}|/)Users(?:\\{1,2}|/))(?P<s>[^/\\\s\"'<>:*?|,;()\[\]{}]{1,64})"),
        OWN,
        ("/users/", "/home/", "users\\"),
        check=_user_name,
    ),
    Rule(
        "encoded-user-path",
        "user-name",
        "A home folder as a folder name: Claude Code names a project's folder after its working directory with "
        "every character but letters and digits turned into '-' (~/.claude/projects/-Users-<name>-<project>/, "
        "-home-<name>-…, C--Users-<name>-…), Pi its session folders much the same way (--home-<name>-<project>--). "
        "The name's end cannot be told (a.b and a-b are both a-b), so the rest of the folder name goes with it",
        # Claude Code: -Users-<name>-…, C--Users-<name>-…; Pi: --home-<name>-…--, --C--Users-<name>-…-- (Pi turns only
        # / \ and : into '-', so a name may keep its dots)
        _rx(
            r"(?<![A-Za-z0-9-])(?:(?:[A-Za-z]-)?-|--(?:[A-Za-z]--)?(?=(?:Users|home)-[A-Za-z0-9._-]*--(?![A-Za-z0-9._-])))"
            r"(?:Users|home)-(?P<s>[A-Za-z0-9_][A-Za-z0-9._-]{0,254})"
        ),
        OWN,
        ("-users-", "-home-"),
        check=_encoded_user_name,
    ),
)

_BY_ID = {r.id: r for r in RULES}


def rule(rule_id: str) -> Rule:
    """The rule with this id (``KeyError`` names the ids there are)."""
    try:
        return _BY_ID[rule_id]
    except KeyError:
        raise KeyError(f"no redaction rule {rule_id!r}; the rules are {', '.join(_BY_ID)}") from None
