"""pchronicle-datasets: LLM-agent trajectories as first-class Hugging Face datasets.

Every conversion goes through Storyline, the hub format of RFC-0001:

>>> import pchronicle_datasets as pc
>>> text = '{"schema_version": "storyline/v1", "session": "s1", "agent": {"id": "bot"},' \\
...        ' "turns": [{"id": 1, "src": "user", "msg": "hi"}]}'
>>> [story] = pc.into_storyline("storyline", text, document_id="s1.storyline.json")
>>> pc.validate(story)
>>> row = pc.story_to_row(story)          # a row of pc.STORYLINE_FEATURES
>>> pc.row_to_story(row) == story
True
"""

from ._version import __version__ as __version__
from .builder import BadRecordError, register
from .errors import FormatError, NoConversationError, PchronicleError, StorylineError
from .features import STORYLINE_FEATURES, compute_tool_stats, row_to_story, rows_to_table, story_to_row
from .formats import convert, format_names, from_storyline, into_storyline
from .hub import push_to_hub

# ``pc.losses`` is the loss inventory function (``pc.losses(ds, target=…)``), not the module of that name: the
# module was imported (by ``inventory``) before this binding. Import from the module as ``pchronicle_datasets.losses``.
from .inventory import losses
from .loading.batches import read_batches
from .losses import LossReport, collect_losses
from .redact import RedactionConfig, RedactionError, Redactor, redact, redact_row
from .schema import (
    SCHEMA_VERSION,
    compute_unknown_key_counts,
    derive_kind,
    effective_env,
    effective_prompt,
    iter_errors,
    turn_kind,
    validate,
)
from .training import (
    LLAMAFACTORY_FEATURES,
    LLAMAFACTORY_TRAIN_FEATURES,
    MESSAGES_FEATURES,
    SHAREGPT_FEATURES,
    SHAREGPT_TRAIN_FEATURES,
    decode_messages,
    encode_messages,
    flags,
    from_messages,
    incomplete,
    to_messages,
    to_prompt_completion,
    to_sharegpt,
)

register()  # load_dataset("pchronicle", …) finds the builder once the package is imported

__all__ = [
    "LLAMAFACTORY_FEATURES",
    "LLAMAFACTORY_TRAIN_FEATURES",
    "MESSAGES_FEATURES",
    "SCHEMA_VERSION",
    "SHAREGPT_FEATURES",
    "SHAREGPT_TRAIN_FEATURES",
    "STORYLINE_FEATURES",
    "BadRecordError",
    "FormatError",
    "LossReport",
    "NoConversationError",
    "PchronicleError",
    "RedactionConfig",
    "RedactionError",
    "Redactor",
    "StorylineError",
    "collect_losses",
    "compute_tool_stats",
    "compute_unknown_key_counts",
    "convert",
    "decode_messages",
    "derive_kind",
    "effective_env",
    "effective_prompt",
    "encode_messages",
    "flags",
    "format_names",
    "from_messages",
    "from_storyline",
    "incomplete",
    "into_storyline",
    "iter_errors",
    "losses",
    "push_to_hub",
    "read_batches",
    "redact",
    "redact_row",
    "row_to_story",
    "rows_to_table",
    "story_to_row",
    "to_messages",
    "to_prompt_completion",
    "to_sharegpt",
    "turn_kind",
    "validate",
]
