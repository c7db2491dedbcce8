NAME = "openhands"; ALIASES = (); EXTENSION = ".json"; OUTPUT = "file"; PER_DOCUMENT = False
def sniff(s): return False
def iter_records(d, document_id=None): return iter(())
def decode(d, document_id=None): return []
def encode(s, **o): return ""
