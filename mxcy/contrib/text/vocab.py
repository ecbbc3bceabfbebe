"""``mx.contrib.text.vocab.Vocabulary``: token <-> index maps built from token counts.

Index 0 is `unknown_token`, then the `reserved_tokens` in order, then the counted tokens
by decreasing count (ties in token order), at most `most_freq_count` of them and only
those counted at least `min_freq` times. Unknown tokens map to index 0.
"""
__all__ = ['Vocabulary']


class Vocabulary:
    """Indexing for text tokens (see the module docstring)."""

    def __init__(self, counter=None, most_freq_count=None, min_freq=1,
                 unknown_token='<unk>', reserved_tokens=None):
        if min_freq < 1:
            raise ValueError(f"Vocabulary: min_freq must be >= 1, got {min_freq}")
        if reserved_tokens is not None:
            if unknown_token in reserved_tokens:
                raise ValueError(f"Vocabulary: reserved_tokens must not contain the "
                                 f"unknown_token {unknown_token!r}")
            if len(set(reserved_tokens)) != len(reserved_tokens):
                raise ValueError(f"Vocabulary: reserved_tokens {reserved_tokens} contain "
                                 "duplicates")
        self._unknown_token = unknown_token
        self._reserved_tokens = list(reserved_tokens) if reserved_tokens else None
        self._idx_to_token = [unknown_token] + (self._reserved_tokens or [])
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}
        if counter is not None:
            ranked = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
            limit = len(ranked) if most_freq_count is None else most_freq_count
            taken = 0
            for token, freq in ranked:
                if taken >= limit or freq < min_freq:
                    break
                if token not in self._token_to_idx:
                    self._token_to_idx[token] = len(self._idx_to_token)
                    self._idx_to_token.append(token)
                taken += 1

    def __len__(self):
        return len(self._idx_to_token)

    @property
    def token_to_idx(self):
        """dict token -> index."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list of the tokens, by index."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """The index of a token, or the list of indices of a list of tokens (0 for
        unknown ones)."""
        if isinstance(tokens, str):
            return self._token_to_idx.get(tokens, 0)
        return [self._token_to_idx.get(t, 0) for t in tokens]

    def to_tokens(self, indices):
        """The token of an index, or the list of tokens of a list of indices."""
        single = not isinstance(indices, (list, tuple))
        out = []
        for i in ([indices] if single else indices):
            if not isinstance(i, int) or not 0 <= i < len(self._idx_to_token):
                raise ValueError(f"Vocabulary.to_tokens: token index {i!r} is invalid; "
                                 f"indices are ints in [0, {len(self._idx_to_token)})")
            out.append(self._idx_to_token[i])
        return out[0] if single else out
