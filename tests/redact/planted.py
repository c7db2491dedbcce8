"""Valid-looking secrets of every kind, made at test time (no real secret is in the repository, and no
secret scanner flags this file: each value is built from a seeded random generator), and near misses.

``PLANTED`` maps a rule id to (text as a user would paste it, the value that must not survive)."""

from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


AWS_ID = "AKIA" + rand(16, string.ascii_uppercase + "234567")
AWS_SECRET = rand(40, ALNUM + "/+")
GH_CLASSIC = "ghp_" + rand(36)
GH_FINE = "github_pat_" + rand(22) + "_" + rand(59)
OPENAI = "sk-proj-" + rand(58, ALNUM + "_-") + "T3BlbkFJ" + rand(58, ALNUM + "_-")
ANTHROPIC = "sk-ant-api03-" + rand(93, ALNUM + "_-") + "AA"
HF = "hf_" + rand(34, string.ascii_letters)
SLACK = "xoxb-" + rand(12, string.digits) + "-" + rand(13, string.digits) + "-" + rand(24)
STRIPE = "sk_live_" + rand(24) + "7"
GOOGLE = "AIza" + rand(35, ALNUM + "_-")
JWT = _b64url({"alg": "HS256", "typ": "JWT"}) + "." + _b64url({"sub": "1234567890", "name": "Ann"}) + "." + rand(43)
DB_URL_PASSWORD = "Pw" + rand(12) + "x9"
DB_PASSWORD = "Tr0ub4dor&" + rand(8)
_KEY_BODY = "\n".join(base64.b64encode(_rng.randbytes(48)).decode() for _ in range(6))
PRIVATE_KEY_BODY = _KEY_BODY
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + _KEY_BODY + "\n-----END OPENSSH PRIVATE KEY-----"
EMAIL = "alice.liddell@acme-corp.io"
GENERIC = rand(20) + "9a"
BEARER = rand(30) + "Q7"
USER = "alicel"

# rule id -> (text as it would appear, the secret value that must be redacted)
PLANTED: dict[str, tuple[str, str]] = {
    "aws-access-key-id": (f"export AWS_ACCESS_KEY_ID={AWS_ID}", AWS_ID),
    "aws-secret-access-key": (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    "github-classic-token": (f"git clone https://{GH_CLASSIC}@github.com/o/r", GH_CLASSIC),
    "github-fine-grained-token": (f"token: {GH_FINE}", GH_FINE),
    "openai-api-key": (f"OPENAI_API_KEY={OPENAI}", OPENAI),
    "anthropic-api-key": (f"client = Anthropic(api_key='{ANTHROPIC}')", ANTHROPIC),
    "huggingface-token": (f"huggingface-cli login --token {HF}", HF),
    "slack-token": (f"SLACK_BOT_TOKEN={SLACK}", SLACK),
    "stripe-key": (f'stripe.api_key = "{STRIPE}"', STRIPE),
    "google-api-key": (f"https://maps.googleapis.com/maps/api/geocode/json?key={GOOGLE}", GOOGLE),
    "jwt": (f"cookie: session={JWT}", JWT),
    "url-password": (f"DATABASE_URL=postgres://app:{DB_URL_PASSWORD}@db.internal:5432/app", DB_URL_PASSWORD),
    "db-password-assignment": (f"DB_PASSWORD={DB_PASSWORD}", DB_PASSWORD),
    "private-key": (f"cat ~/.ssh/id_ed25519\n{PRIVATE_KEY}\n", PRIVATE_KEY_BODY),
    "email": (f"Reply to {EMAIL} please", EMAIL),
    "generic-secret-assignment": (f"WEBHOOK_SECRET={GENERIC}", GENERIC),
    "http-auth-header": (f'curl -H "Authorization: Bearer {BEARER}" https://api.acme.io', BEARER),
    "password-assignment": ("password: Hunter2-prod!", "Hunter2-prod!"),
    "user-path": (f"File /home/{USER}/project/main.py, line 3", USER),
    # Claude Code's project folder: the user name cannot be told from the project's, so both go
    "encoded-user-path": (
        f"Output saved to ~/.claude/projects/-Users-{USER}-dev-app/s/tool-results/a.txt",
        f"{USER}-dev-app",
    ),
}
# The 15 kinds of issue #24 (the others are the generic rules).
FIFTEEN = [
    "aws-access-key-id",
    "aws-secret-access-key",
    "github-classic-token",
    "github-fine-grained-token",
    "openai-api-key",
    "anthropic-api-key",
    "huggingface-token",
    "slack-token",
    "stripe-key",
    "google-api-key",
    "jwt",
    "url-password",
    "db-password-assignment",
    "private-key",
    "email",
]
MORE_PATHS = {
    "/Users/bobsmith/Library/x": "bobsmith",
    "C:\\Users\\carol\\Documents\\a.txt": "carol",
    "C:\\\\Users\\\\dave\\\\x (escaped)": "dave",
}

UUID = "3f1c2b9e-8a7d-4c6b-9e5f-1a2b3c4d5e6f"
GIT_SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8"
SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
PNG_B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n" + _rng.randbytes(600)).decode()
# Texts that look close to a secret but are not one: each must come out unchanged.
NEAR_MISSES = [
    "work-from-home-office, --home-dir, x-Users-guide",  # not a folder name that starts with -home- or -Users-
    "~/.claude/projects/-home-user-project/s.jsonl and -home-runner-work-repo",  # names of no one
    UUID,
    GIT_SHA,
    SHA256,
    f"commit {GIT_SHA} (sha256 {SHA256})",
    f"request id {UUID} at 2026-12-01T21:32:17.123456Z",
    "1755856800.5",
    PNG_B64,
    f"data:image/png;base64,{PNG_B64}",
    "call_abc123XYZ and toolu_01A09q90qw90lq917835lq9",
    "max_tokens=4096, max_new_tokens: 512",
    "AKIAIOSFODNN7EXAMPLE is AWS's documentation key",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_short and github_pat_short",
    "sk-learn and sk-ant-api03-too-short",
    "hf_hub_download(repo_id='x')",
    "xoxb- is a Slack bot token prefix",
    "pk_live_" + "a1" * 12 + " is a publishable key",
    "AIza is how Google keys start",
    "eyJhbGciOi is the start of a JWT",
    "postgres://app@localhost:5432/app and postgres://app:${DB_PASSWORD}@db/app",
    "DB_PASSWORD=${DB_PASSWORD} and DB_PASSWORD=<your password> and DB_PASSWORD=",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
    "Put your key in -----BEGIN OPENSSH PRIVATE KEY----- blocks",
    "git@github.com:org/repo.git, noreply@anthropic.com, alice@example.com, logo@2x.png",
    "/home/runner/work/repo, /Users/Shared/x, /home/$USER/x, C:\\Users\\Public\\x, /home/<name>/",
    'curl -H "Authorization: Bearer $TOKEN" and Bearer token authentication',
    "API_KEY=os.environ['API_KEY'] and SECRET_KEY=changeme and token: ${{ secrets.GITHUB_TOKEN }}",
    "password: required, password: <your password>, password: ********, password=None",
    "primary_key: id, tokenizer: gpt2, sort_key=timestamp",
    "<REDACTED:github-token:3f9a1c2b> stays as it is",
]
