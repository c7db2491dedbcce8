"""``pointer.normalize`` folds exactly the tokens RFC 6901 reads as array indexes (``0|[1-9][0-9]*``, ASCII)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pchronicle_datasets.pointer import normalize

_INDEX = re.compile(r"0|[1-9][0-9]*")
_TOKENS = st.text(alphabet=st.sampled_from("0123456789a-~/²١ "), max_size=4)


@given(st.lists(_TOKENS, max_size=5))
def test_normalize_folds_the_tokens_the_array_index_grammar_matches(tokens):
    pointer = "".join(f"/{t}" for t in tokens)
    want = "/".join("*" if _INDEX.fullmatch(t) else t for t in pointer.split("/")[1:])
    assert normalize(pointer) == ("/" + want if pointer else "")
