"""Reads a raw CPU profile as the runtime writes it (docs/raw-format.md): one JSON
document, or a streamed file's chunks joined into one, as kestrel's reader joins them."""
import json

APPEND = ("stacks", "stack_ends", "stacks_guessed", "samples", "untimed")
FROM = ("images", "threads")
CHUNK_KEYS = ("chunk", "closing", "images_from", "threads_from")


def chunks(path):
    """The file's whole JSON objects, in order, and the bytes after the last one."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i == len(text):
            return out, 0
        try:
            obj, i = dec.raw_decode(text, i)
        except ValueError:
            return out, len(text[i:].encode("utf-8"))
        out.append(obj)


def join(objs):
    if not objs:
        raise ValueError("no whole chunk")
    if "chunk" not in objs[0]:
        return objs[0]
    doc = {}
    for c in objs:
        for k, v in c.items():
            if k in CHUNK_KEYS:
                continue
            if k in FROM:
                start = c.get(k + "_from", len(doc.get(k, [])))
                doc[k] = doc.get(k, [])[:start] + v
            elif k in APPEND:
                doc.setdefault(k, []).extend(v)
            else:
                doc[k] = v
    for k in ("stacks", "samples"):
        doc.setdefault(k, [])
    return doc


def load(path):
    return join(chunks(path)[0])
