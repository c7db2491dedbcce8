"""The renderings of a Storyline document as training text: ShareGPT ``conversations`` (``sharegpt``) and
OpenAI-style ``messages`` + ``tools`` (``messages``).

They sit below both the format packages and ``training/``: the ``sharegpt`` and ``chat`` writers write
exactly what ``pc.to_sharegpt`` and ``pc.to_messages`` give, and the ShareGPT reader renders an element
again to decide what it must keep as residual. A format package may import this package; it never imports
``training/`` (the map functions, their options and output schemas).
"""
