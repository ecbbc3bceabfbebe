"""``mx.contrib.text.utils``: counting tokens in a string."""
import collections
import re

__all__ = ['count_tokens_from_str']


def count_tokens_from_str(source_str, token_delim=' ', seq_delim='\n', to_lower=False,
                          counter_to_update=None):
    """A ``collections.Counter`` of the tokens of `source_str`, split at `token_delim`
    and `seq_delim` (empty tokens dropped), lower-cased with `to_lower`; with
    `counter_to_update` that counter is updated and returned."""
    if not isinstance(source_str, str):
        raise TypeError(f"count_tokens_from_str: source_str must be a str, got "
                        f"{type(source_str).__name__}")
    pattern = '|'.join(re.escape(d) for d in (token_delim, seq_delim) if d)
    tokens = [t for t in (re.split(pattern, source_str) if pattern else [source_str]) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    counter = collections.Counter() if counter_to_update is None else counter_to_update
    counter.update(tokens)
    return counter
