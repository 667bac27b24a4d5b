#!/usr/bin/python3
"""bpe_sentencepiece.py: the second reference figure for ./bpe-train, from SentencePiece.

Trains SentencePiece BPE (byte fallback, the same vocabulary size, one thread) on the same text
./bpe-train uses, and prints its compression on the same held-out part, or its training time.

    /usr/bin/python3 tools/bpe_sentencepiece.py out/bpe/stories.txt --vocab 512 --held-out 0.1
    /usr/bin/python3 tools/bpe_sentencepiece.py out/bpe/stories.txt --vocab 4096 --held-out 0 --time

Needs Debian's python3-sentencepiece (apt-get install -y python3-sentencepiece); `make bpe-compare`
and `make bench-bpe` run this when it is installed. The tests never need it.

Same split as ./bpe-train: the held-out part starts at the first line start after
(1 - held_out) of the bytes. SentencePiece reads text line by line, so a newline cannot be inside
one of its pieces; its token count is the sum over lines plus one token per newline (the byte token
<0x0A> that tok512 also uses for it). Settings chosen to match llama2.c's tokenizers: BPE, byte
fallback, dummy prefix, no text normalisation (identity), whitespace kept as is, all characters
covered (character_coverage 1.0).
"""
import argparse
import os
import sys
import tempfile
import time

import sentencepiece as spm


def split(data, held_out):
    n = len(data)
    if held_out <= 0:
        return data, b""
    cut = int(n * (1.0 - held_out))
    nl = data.find(b"\n", cut)
    if nl < 0:
        nl = data.find(b" ", cut)
    if 0 <= nl and nl + 1 < n:
        cut = nl + 1
    if cut <= 0 or cut >= n:
        return data, b""
    return data[:cut], data[cut:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("text")
    ap.add_argument("--vocab", type=int, required=True)
    ap.add_argument("--held-out", type=float, default=0.1)
    ap.add_argument("--time", action="store_true", help="print the training time")
    a = ap.parse_args()

    data = open(a.text, "rb").read()
    train, held = split(data, a.held_out)
    with tempfile.TemporaryDirectory() as d:
        train_path = os.path.join(d, "train.txt")
        with open(train_path, "wb") as f:
            f.write(train)
        t0 = time.perf_counter()
        spm.SentencePieceTrainer.train(
            input=train_path, model_prefix=os.path.join(d, "sp"), vocab_size=a.vocab,
            model_type="bpe", byte_fallback=True, character_coverage=1.0,
            normalization_rule_name="identity", remove_extra_whitespaces=False,
            add_dummy_prefix=True, split_digits=False, num_threads=1,
            input_sentence_size=0, max_sentence_length=1 << 20, minloglevel=2)
        secs = time.perf_counter() - t0
        sp = spm.SentencePieceProcessor(model_file=os.path.join(d, "sp.model"))
    if a.time:
        print("sentencepiece %s: trained BPE to %d pieces on %d bytes in %.2f s (%.2f MB/s, one thread)"
              % (spm.__version__, a.vocab, len(train), secs, len(train) / 1e6 / secs))
    text = held if held else train
    lines = text.decode("utf-8", errors="replace").split("\n")
    tokens = sum(len(sp.encode(line)) for line in lines if line) + text.count(b"\n")
    what = "held-out" if held else "training"
    print("sentencepiece %s (BPE, byte fallback, V = %d) on the %s text (%d bytes): %d tokens, %.4f bytes/token"
          % (spm.__version__, a.vocab, what, len(text), tokens, len(text) / tokens))
    return 0


if __name__ == "__main__":
    sys.exit(main())
