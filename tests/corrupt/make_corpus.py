#!/usr/bin/env python3
"""make_corpus.py: writes the corrupted-input corpus data/corrupt/ and the fuzzers' seed files.

Run from the top of the checkout (`make corpus` does): python3 tests/corrupt/make_corpus.py
Needs only the Python standard library: every file is written byte by byte, so what each one
holds is visible here, and the output is identical on every run.

For each reader (npy, json config, llama2.c checkpoint, llama2.c tokenizer, and the training
files: TWMODEL checkpoint, TWSTATE training state, uint16 token file) it writes one valid
file (the control: the test expects it to load) and many broken variants: truncated at many
points, header fields flipped, zero/negative/huge sizes, bad magic, wrong dtype or
fortran_order, malformed and deeply nested JSON, token lengths past the end, dims that do not
divide. data/corrupt/MANIFEST.tsv lists every file with the reader to run on it, the status the
reader must return and a word its error message must contain ("-": any non-empty message).
tests/test_corrupt.c runs them all.

fuzz/corpus/<target>/ gets the valid files (in each fuzz target's input layout) as seeds.
"""
import os
import shutil
import struct
import sys

OUT = "data/corrupt"
FUZZ = "fuzz/corpus"
manifest = []  # (reader, relative path, expected status, message word, vocab size or -)


def write(kind, name, data, status, word="-", vocab="-"):
    path = os.path.join(OUT, kind, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    manifest.append((kind, f"{kind}/{name}", status, word, str(vocab)))


def seed(target, name, data):
    os.makedirs(os.path.join(FUZZ, target), exist_ok=True)
    with open(os.path.join(FUZZ, target, name), "wb") as f:
        f.write(data)


def cut_points(n, header_end):
    """Many truncation lengths: inside the header, at its edges, inside the data, one short."""
    pts = {0, 1, 2, 3, 4, 7, 8, 9, header_end - 1, header_end, header_end + 1,
           (header_end + n) // 2, n - 4, n - 1}
    return sorted(p for p in pts if 0 <= p < n)


# ---------------------------------------------------------------------------------------------
# Byte-level BPE: a Hugging Face tokenizer.json (reader "hfjson") and GPT-2's encoder.json with
# vocab.bpe beside it (reader "gpt2", one folder per case), both small and synthetic: the 256
# byte pieces spelled in GPT-2's byte-to-unicode alphabet, a few merges, one added token.
def byte_level_alphabet():
    printable = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    out, n = {}, 0
    for b in range(256):
        if b in printable:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return out


BBPE_MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n")]
QWEN_PATTERN = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


def bbpe_vocab():
    alpha = byte_level_alphabet()
    vocab = {alpha[b]: b for b in range(256)}
    for i, (a, b) in enumerate(BBPE_MERGES):
        vocab[a + b] = 256 + i
    return vocab


def hf_json(vocab=None, merges=None, added=None, normalizer=None, pre=None, model_extra=None,
            model_type="BPE", raw_vocab=None):
    """A tokenizer.json as text (json.dumps keeps it readable; raw_vocab overrides the vocab's text)."""
    import json
    vocab = bbpe_vocab() if vocab is None else vocab
    merges = [list(m) for m in BBPE_MERGES] if merges is None else merges
    added = [{"id": 260 + i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True}
             for i, c in enumerate(("<|end|>", "<|im_start|>", "<|im_end|>"))] if added is None else added
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": QWEN_PATTERN}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]} if pre is None else pre
    model = {"type": model_type, "dropout": None, "unk_token": None, "byte_fallback": False,
             "vocab": "@VOCAB@", "merges": merges}
    model.update(model_extra or {})
    doc = {"version": "1.0", "added_tokens": added,
           "normalizer": {"type": "NFC"} if normalizer is None else normalizer,
           "pre_tokenizer": pre, "model": model}
    text = json.dumps(doc, ensure_ascii=False)
    vtext = raw_vocab if raw_vocab is not None else json.dumps(vocab, ensure_ascii=False)
    return text.replace('"@VOCAB@"', vtext).encode("utf-8")


def make_hfjson():
    import json
    good = hf_json()
    write("hfjson", "valid_qwen_style.json", good, "OK")
    write("hfjson", "valid_gpt2_style.json",
          hf_json(merges=[" ".join(m) for m in BBPE_MERGES], added=[], normalizer=json.loads("null"),
                  pre={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}), "OK")
    seed("hfjson", "valid_qwen_style.seed", struct.pack("<H", 22) + b"the <|end|> in\xff \xc3\xa9e\xcc\x81" + good)
    for n in sorted({0, 1, 2, 10, len(good) // 3, len(good) // 2, len(good) - 2, len(good) - 1}):
        write("hfjson", f"truncated_at_{n}.json", good[:n], "FORMAT")
    write("hfjson", "not_an_object.json", b"[1, 2, 3]", "FORMAT", "model")
    write("hfjson", "model_unigram.json", hf_json(model_type="Unigram"), "FORMAT", "BPE")
    write("hfjson", "vocab_is_array.json", hf_json(raw_vocab='["a", "b"]'), "FORMAT", "vocab")
    v = bbpe_vocab()
    write("hfjson", "merge_names_unknown_piece.json", hf_json(merges=[["Ġ", "zz"]]), "FORMAT", "not in the vocabulary")
    write("hfjson", "merge_makes_unknown_piece.json", hf_json(merges=[["t", "h"]]), "FORMAT", "not in the vocabulary")
    write("hfjson", "merge_wrong_shape.json", hf_json(merges=[["a"]]), "FORMAT", "merge")
    write("hfjson", "merge_two_spaces.json", hf_json(merges=["a b c"]), "FORMAT", "merge")
    write("hfjson", "merge_number.json", hf_json(merges=[5]), "FORMAT", "merge")
    write("hfjson", "duplicate_id.json", hf_json(raw_vocab=json.dumps(v, ensure_ascii=False)[:-1] + ', "zz": 5}'), "FORMAT", "same id")
    dup_piece = json.dumps(v, ensure_ascii=False)[:-1] + ', "he": 300}'
    write("hfjson", "duplicate_piece.json", hf_json(raw_vocab=dup_piece), "FORMAT", "twice")
    for name, val in (("negative", "-1"), ("huge", "1000000000"), ("fraction", "1.5"), ("string", '"7"')):
        write("hfjson", f"id_{name}.json", hf_json(raw_vocab=json.dumps(v, ensure_ascii=False)[:-1] + f', "zz": {val}}}'), "FORMAT", "id")
    write("hfjson", "piece_not_byte_level.json", hf_json(raw_vocab=json.dumps(v, ensure_ascii=False)[:-1] + ', "€": 270}'), "FORMAT", "byte-to-unicode")
    missing = dict(v)
    del missing["A"]
    write("hfjson", "byte_without_token.json", hf_json(vocab=missing), "FORMAT", "byte")
    write("hfjson", "normalizer_nfkc.json", hf_json(normalizer={"type": "NFKC"}), "FORMAT", "normalizer")
    write("hfjson", "pattern_unknown.json", hf_json(pre={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "use_regex": False}]}), "FORMAT", "pre_tokenizer")
    write("hfjson", "byte_fallback.json", hf_json(model_extra={"byte_fallback": True}), "FORMAT", "byte_fallback")
    write("hfjson", "added_without_content.json", hf_json(added=[{"id": 263}]), "FORMAT", "added token")
    write("hfjson", "added_lstrip.json", hf_json(added=[{"id": 263, "content": "<x>", "lstrip": True}]), "FORMAT", "strips")
    write("hfjson", "added_same_id_as_piece.json", hf_json(added=[{"id": 5, "content": "<x>"}]), "FORMAT", "same id")
    write("hfjson", "deep_nesting.json", b"[" * 100000 + b"]" * 100000, "FORMAT", "nesting")
    write("hfjson", "empty.json", b"", "FORMAT")
    write("hfjson", "invalid_utf8_key.json", good.replace('"Ġt": 256'.encode("utf-8"), b'"\xff": 256'), "FORMAT", "byte-to-unicode")


def gpt2_pair(folder, encoder, bpe, status, word="-"):
    os.makedirs(os.path.join(OUT, "gpt2", folder), exist_ok=True)
    with open(os.path.join(OUT, "gpt2", folder, "vocab.bpe"), "wb") as f:
        f.write(bpe)
    write("gpt2", f"{folder}/encoder.json", encoder, status, word)


def make_gpt2():
    import json
    v = bbpe_vocab()
    v["<|endoftext|>"] = 260
    enc = json.dumps(v, ensure_ascii=False).encode("utf-8")
    bpe = ("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in BBPE_MERGES)).encode("utf-8")
    gpt2_pair("valid", enc, bpe, "OK")
    seed("gpt2", "valid.seed", struct.pack("<HH", 17, len(enc)) + b"the in\xff <|endoftext|>"[:17] + enc + bpe)
    gpt2_pair("encoder_is_array", b'["!", "\\"", "#"]', bpe, "FORMAT", "object")
    gpt2_pair("encoder_is_nested", json.dumps({"vocab": v}, ensure_ascii=False).encode("utf-8"), bpe, "FORMAT", "id")
    gpt2_pair("encoder_truncated", enc[:len(enc) // 2], bpe, "FORMAT")
    gpt2_pair("merge_names_unknown_piece", enc, bpe + "Ġ zz\n".encode("utf-8"), "FORMAT", "not in the vocabulary")
    gpt2_pair("merge_makes_unknown_piece", enc, bpe + b"t h\n", "FORMAT", "not in the vocabulary")
    dup = json.dumps(v, ensure_ascii=False)[:-1] + ', "zz": 7}'
    gpt2_pair("duplicate_id", dup.encode("utf-8"), bpe, "FORMAT", "same id")
    missing = dict(v)
    del missing["A"]
    gpt2_pair("byte_without_token", json.dumps(missing, ensure_ascii=False).encode("utf-8"), bpe, "FORMAT", "byte")
    gpt2_pair("merges_not_utf8", enc, bpe + b"\xff \xfe\n", "FORMAT", "not in the vocabulary")
    gpt2_pair("id_string", (json.dumps(v, ensure_ascii=False)[:-1] + ', "zz": "3"}').encode("utf-8"), bpe, "FORMAT", "id")
    # vocab.bpe missing: the folder holds only encoder.json.
    write("gpt2", "no_merges_file/encoder.json", enc, "IO", "vocab.bpe")


# ---------------------------------------------------------------------------------------------
# .npy (format 1.0: magic, version, uint16 header length, dict literal padded to 64, raw data)

def npy_bytes(header_dict, payload, magic=b"\x93NUMPY", version=b"\x01\x00", hlen=None):
    h = header_dict.encode("latin-1")
    total = 10 + len(h) + 1
    h = h + b" " * ((64 - total % 64) % 64) + b"\n"
    if hlen is None:
        hlen = len(h)
    return magic + version + struct.pack("<H", hlen & 0xFFFF) + h + payload


def npy_header(descr="'<f4'", fortran="False", shape="(2, 3)"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


def make_npy():
    f32 = struct.pack("<6f", 0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
    good = npy_bytes(npy_header(), f32)
    write("npy", "valid_f32.npy", good, "OK")
    write("npy", "valid_i32.npy", npy_bytes(npy_header("'<i4'"), struct.pack("<6i", *range(6))), "OK")
    write("npy", "valid_zero_rows.npy", npy_bytes(npy_header(shape="(0, 3)"), b""), "OK")
    write("npy", "valid_scalar.npy", npy_bytes(npy_header(shape="()"), struct.pack("<f", 7.0)), "OK")
    seed("npy", "valid_f32.npy", good)
    seed("npy", "valid_i32.npy", npy_bytes(npy_header("'<i4'", shape="(3,)"), struct.pack("<3i", 1, 2, 3)))

    header_end = 10 + struct.unpack("<H", good[8:10])[0]
    for n in cut_points(len(good), header_end):
        write("npy", f"truncated_at_{n}.npy", good[:n], "FORMAT")
    write("npy", "extra_byte.npy", good + b"\0", "FORMAT", "length")
    write("npy", "bad_magic_first_byte.npy", b"\x94" + good[1:], "FORMAT", "magic")
    write("npy", "bad_magic_text.npy", b"\x93NUMPZ" + good[6:], "FORMAT", "magic")
    write("npy", "version_2.npy", npy_bytes(npy_header(), f32, version=b"\x02\x00"), "FORMAT", "version")
    write("npy", "version_0.npy", npy_bytes(npy_header(), f32, version=b"\x00\x00"), "FORMAT", "version")
    write("npy", "header_len_0.npy", npy_bytes(npy_header(), f32, hlen=0), "FORMAT")
    write("npy", "header_len_past_end.npy", npy_bytes(npy_header(), f32, hlen=0xFFFF), "FORMAT", "truncated")
    for name, descr in [("f8", "'<f8'"), ("big_endian", "'>f4'"), ("u1", "'|u1'"), ("f2", "'<f2'"),
                        ("unquoted", "f4"), ("unterminated", "'<f4"), ("empty", "''")]:
        write("npy", f"dtype_{name}.npy", npy_bytes(npy_header(descr), f32), "FORMAT", "dtype")
    write("npy", "no_descr.npy", npy_bytes("{'fortran_order': False, 'shape': (2, 3), }", f32), "FORMAT", "descr")
    write("npy", "fortran_true.npy", npy_bytes(npy_header(fortran="True"), f32), "FORMAT", "fortran_order")
    write("npy", "fortran_int.npy", npy_bytes(npy_header(fortran="1"), f32), "FORMAT", "fortran_order")
    write("npy", "no_fortran_order.npy", npy_bytes("{'descr': '<f4', 'shape': (2, 3), }", f32), "FORMAT", "fortran_order")
    write("npy", "no_shape.npy", npy_bytes("{'descr': '<f4', 'fortran_order': False, }", f32), "FORMAT", "shape")
    write("npy", "shape_list.npy", npy_bytes(npy_header(shape="[2, 3]"), f32), "FORMAT", "shape")
    write("npy", "shape_negative.npy", npy_bytes(npy_header(shape="(-1, 3)"), f32), "FORMAT", "shape")
    write("npy", "shape_letters.npy", npy_bytes(npy_header(shape="(two, 3)"), f32), "FORMAT", "shape")
    write("npy", "shape_unterminated.npy", npy_bytes(npy_header(shape="(2, 3"), f32), "FORMAT", "shape")
    write("npy", "shape_float.npy", npy_bytes(npy_header(shape="(2.5, 3)"), f32), "FORMAT")
    write("npy", "shape_huge_2e19.npy", npy_bytes(npy_header(shape="(20000000000000000000,)"), f32), "FORMAT", "range")
    write("npy", "shape_huge_product.npy", npy_bytes(npy_header(shape="(1099511627776, 1099511627776)"), f32), "FORMAT", "large")
    write("npy", "shape_2_63.npy", npy_bytes(npy_header(shape="(9223372036854775807,)"), f32), "FORMAT")
    write("npy", "shape_lies_bigger.npy", npy_bytes(npy_header(shape="(2, 4)"), f32), "FORMAT", "length")
    write("npy", "shape_lies_smaller.npy", npy_bytes(npy_header(shape="(2, 2)"), f32), "FORMAT", "length")
    write("npy", "shape_zero_with_data.npy", npy_bytes(npy_header(shape="(0, 3)"), f32), "FORMAT", "length")
    write("npy", "nine_dims.npy", npy_bytes(npy_header(shape="(1, 1, 1, 1, 1, 1, 1, 1, 6)"), f32), "FORMAT", "dimensions")
    write("npy", "header_nul_byte.npy", npy_bytes("{'descr'\0: '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32), "FORMAT")
    write("npy", "empty.npy", b"", "FORMAT", "magic")
    write("npy", "text_file.npy", b"this is not a numpy file\n", "FORMAT", "magic")


# ---------------------------------------------------------------------------------------------
# config.json: the JSON reader, then the parameter counter behind ./params

LLAMA = ('{"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096, '
         '"intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, '
         '"num_key_value_heads": 32, "max_position_embeddings": 4096}')
GPT2 = ('{"model_type": "gpt2", "vocab_size": 50257, "n_embd": 768, "n_layer": 12, '
        '"n_head": 12, "n_positions": 1024}')


def cfg(**over):
    """The llama config with some keys replaced (value None drops the key); values are raw JSON."""
    base = {"model_type": '"llama"', "vocab_size": "32000", "hidden_size": "4096",
            "intermediate_size": "11008", "num_hidden_layers": "32", "num_attention_heads": "32",
            "num_key_value_heads": "32"}
    for k, v in over.items():
        if v is None:
            base.pop(k, None)
        else:
            base[k] = v
    return ("{" + ", ".join(f'"{k}": {v}' for k, v in base.items()) + "}").encode()


def make_json():
    good = LLAMA.encode()
    write("json", "valid_llama.json", good, "OK")
    write("json", "valid_gpt2.json", GPT2.encode(), "OK")
    seed("json", "valid_llama.json", good)
    seed("json", "valid_gpt2.json", GPT2.encode())
    seed("json", "escapes.json", b'{"a": "\\u00e9\\ud83d\\ude00\\n\\"", "b": [1, -0.5e+3, true, false, null, {}]}')
    seed("json", "rope_scaling_yarn.json", b'{"model_type": "qwen3", "max_position_embeddings": 40960, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, "beta_fast": 32, "beta_slow": 1}}\n')
    for n in sorted({0, 1, 2, 14, 15, 16, len(good) // 2, len(good) - 2, len(good) - 1}):
        write("json", f"truncated_at_{n}.json", good[:n], "FORMAT")
    bad = {
        "open_brace.json": (b"{", "end of input"),
        "missing_value.json": (b'{"a": }', "-"),
        "missing_colon.json": (b'{"a" 1}', "':'"),
        "trailing_comma_object.json": (b'{"a": 1,}', "-"),
        "trailing_comma_array.json": (b"[1, 2,]", "-"),
        "single_quotes.json": (b"{'a': 1}", "-"),
        "unquoted_key.json": (b"{a: 1}", "-"),
        "unterminated_string.json": (b'{"model_type": "llama', "unterminated"),
        "bad_escape.json": (b'{"a": "\\x41"}', "escape"),
        "lone_low_surrogate.json": (b'{"a": "\\udc00"}', "surrogate"),
        "lone_high_surrogate.json": (b'{"a": "\\ud800"}', "surrogate"),
        "high_surrogate_bad_pair.json": (b'{"a": "\\ud800\\u0041"}', "surrogate"),
        "short_u_escape.json": (b'{"a": "\\u12"}', "-"),
        "nul_escape.json": (b'{"a": "\\u0000"}', "u0000"),
        "control_char.json": (b'{"a": "x\x01y"}', "control"),
        "raw_newline_in_string.json": (b'{"a": "x\ny"}', "control"),
        "leading_zero.json": (b'{"a": 012}', "leading zero"),
        "bare_minus.json": (b'{"a": -}', "-"),
        "dot_no_digits.json": (b'{"a": 1.}', "digit"),
        "exponent_no_digits.json": (b'{"a": 1e}', "exponent"),
        "number_overflow.json": (b'{"a": 1e999}', "range"),
        "nan.json": (b'{"a": NaN}', "-"),
        "infinity.json": (b'{"a": Infinity}', "-"),
        "comment.json": (b'// config\n{"a": 1}', "-"),
        "utf8_bom.json": (b"\xef\xbb\xbf" + good, "-"),
        "two_values.json": (b"{} {}", "after the top-level"),
        "tru.json": (b"tru", "-"),
        "empty.json": (b"", "end of input"),
        "only_spaces.json": (b"   \n\t ", "end of input"),
        "nested_arrays_65.json": (b"[" * 65 + b"]" * 65, "nesting"),
        "nested_objects_65.json": (b'{"a":' * 65 + b"1" + b"}" * 65, "nesting"),
        "nested_5000_open.json": (b"[" * 5000, "nesting"),
        "nested_mixed_deep.json": (b'[{"a":' * 40 + b"1" + b"}]" * 40, "nesting"),
    }
    for name, (data, word) in bad.items():
        write("json", name, data, "FORMAT", word)
    # Valid JSON, wrong config: the parameter counter's checks.
    sem = {
        "top_level_array.json": (b"[1, 2]", "FORMAT", "object"),
        "nested_64_ok_but_array.json": (b"[" * 64 + b"]" * 64, "FORMAT", "object"),
        "no_model_type.json": (cfg(model_type=None), "FORMAT", "model_type"),
        "model_type_number.json": (cfg(model_type="7"), "FORMAT", "model_type"),
        "model_type_bert.json": (cfg(model_type='"bert"'), "FORMAT", "not supported"),
        "missing_hidden_size.json": (cfg(hidden_size=None), "FORMAT", "hidden_size"),
        "hidden_size_zero.json": (cfg(hidden_size="0"), "FORMAT", "hidden_size"),
        "hidden_size_negative.json": (cfg(hidden_size="-4096"), "FORMAT", "hidden_size"),
        "hidden_size_fraction.json": (cfg(hidden_size="4096.5"), "FORMAT", "fraction"),
        "hidden_size_string.json": (cfg(hidden_size='"4096"'), "FORMAT", "string"),
        "hidden_size_huge.json": (cfg(hidden_size="9223372036854775807"), "FORMAT", "hidden_size"),
        "hidden_size_beyond_int64.json": (cfg(hidden_size="99999999999999999999"), "FORMAT", "hidden_size"),
        "vocab_1e30.json": (cfg(vocab_size="1e30"), "FORMAT", "vocab_size"),
        "heads_do_not_divide.json": (cfg(num_attention_heads="30", num_key_value_heads="30"), "SHAPE", "multiple"),
        "kv_heads_do_not_divide.json": (cfg(num_key_value_heads="5"), "SHAPE", "multiple"),
        "kv_heads_more_than_heads.json": (cfg(num_key_value_heads="64"), "SHAPE", "multiple"),
        "tie_not_bool.json": (cfg(tie_word_embeddings='"yes"'), "FORMAT", "tie_word_embeddings"),
        "counts_overflow_int64.json": (cfg(hidden_size="4294967296", intermediate_size="4294967296",
                                           vocab_size="4294967296", num_attention_heads="1",
                                           num_key_value_heads="1", num_hidden_layers="4294967296"),
                                       "ARG", "-"),
    }
    for name, (data, status, word) in sem.items():
        write("json", name, data, status, word)


# ---------------------------------------------------------------------------------------------
# mixture-of-experts config.json (mixtral, qwen3_moe, deepseek_v3): lib/formats/hf_moe.c behind
# ./params, reached by the same "json" reader

def moe_cfg(base, **over):
    """A small MoE config of model_type base with keys replaced (None drops); raw JSON values."""
    common = {"vocab_size": "100", "hidden_size": "64", "num_hidden_layers": "4",
              "num_attention_heads": "4", "num_experts_per_tok": "2"}
    kinds = {
        "mixtral": {"num_key_value_heads": "2", "intermediate_size": "96", "num_local_experts": "8"},
        "qwen3_moe": {"num_key_value_heads": "2", "intermediate_size": "96",
                      "moe_intermediate_size": "32", "num_experts": "8", "mlp_only_layers": "[0]"},
        "deepseek_v3": {"intermediate_size": "96", "moe_intermediate_size": "32",
                        "n_routed_experts": "8", "n_shared_experts": "1",
                        "first_k_dense_replace": "1", "moe_layer_freq": "1", "q_lora_rank": "16",
                        "kv_lora_rank": "16", "qk_nope_head_dim": "8", "qk_rope_head_dim": "4",
                        "v_head_dim": "8", "num_nextn_predict_layers": "1",
                        "topk_method": '"noaux_tc"',
                        "quantization_config": '{"weight_block_size": [16, 16]}'},
    }
    d = {"model_type": f'"{base}"', **common, **kinds[base]}
    for k, v in over.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return ("{" + ", ".join(f'"{k}": {v}' for k, v in d.items()) + "}").encode()


def make_moe_json():
    for base in ("mixtral", "qwen3_moe", "deepseek_v3"):
        write("json", f"moe_valid_{base}.json", moe_cfg(base), "OK")
    sem = {
        "moe_mixtral_no_experts.json": (moe_cfg("mixtral", num_local_experts=None), "FORMAT", "num_local_experts"),
        "moe_mixtral_k_above_e.json": (moe_cfg("mixtral", num_experts_per_tok="9"), "SHAPE", "more than"),
        "moe_mixtral_k_zero.json": (moe_cfg("mixtral", num_experts_per_tok="0"), "FORMAT", "num_experts_per_tok"),
        "moe_mixtral_kv_not_dividing.json": (moe_cfg("mixtral", num_key_value_heads="3"), "SHAPE", "multiple"),
        "moe_qwen3_only_layers_string.json": (moe_cfg("qwen3_moe", mlp_only_layers='"0"'), "FORMAT", "mlp_only_layers"),
        "moe_qwen3_only_layers_fraction.json": (moe_cfg("qwen3_moe", mlp_only_layers="[0.5]"), "FORMAT", "mlp_only_layers"),
        "moe_qwen3_sparse_step_zero.json": (moe_cfg("qwen3_moe", decoder_sparse_step="0"), "FORMAT", "decoder_sparse_step"),
        "moe_qwen3_experts_string.json": (moe_cfg("qwen3_moe", num_experts='"8"'), "FORMAT", "num_experts"),
        "moe_deepseek_no_kv_lora.json": (moe_cfg("deepseek_v3", kv_lora_rank=None), "FORMAT", "kv_lora_rank"),
        "moe_deepseek_rope_fraction.json": (moe_cfg("deepseek_v3", qk_rope_head_dim="4.5"), "FORMAT", "fraction"),
        "moe_deepseek_freq_zero.json": (moe_cfg("deepseek_v3", moe_layer_freq="0"), "FORMAT", "moe_layer_freq"),
        "moe_deepseek_block_not_square.json": (moe_cfg("deepseek_v3", quantization_config='{"weight_block_size": [16, 8]}'), "FORMAT", "weight_block_size"),
        "moe_deepseek_block_zero.json": (moe_cfg("deepseek_v3", quantization_config='{"weight_block_size": [0, 0]}'), "FORMAT", "weight_block_size"),
        "moe_deepseek_counts_overflow.json": (moe_cfg("deepseek_v3", hidden_size="4294967296", vocab_size="4294967296",
                                                      n_routed_experts="4294967296", moe_intermediate_size="4294967296",
                                                      num_hidden_layers="4294967296"), "ARG", "-"),
    }
    for name, (data, status, word) in sem.items():
        write("json", name, data, status, word)
    seed("moe_config", "moe_valid_deepseek_v3.json", moe_cfg("deepseek_v3"))


# ---------------------------------------------------------------------------------------------
# llama2.c checkpoint: 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
# seq_len), then float32 weights (see lib/formats/llama2c.h for the order)

def lcg_floats(n, state=12345):
    out = []
    for _ in range(n):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append(((state >> 40) / float(1 << 24) - 0.5) * 0.2)
    return out


def ckpt(header, n_floats=None, floats=None):
    dim, hidden, layers, heads, kv, vocab, seq = header
    if floats is None:
        V = abs(vocab)
        D = dim // heads
        n = (V * dim + layers * dim + 2 * layers * dim * dim + 2 * layers * kv * D * dim +
             layers * dim + 3 * layers * hidden * dim + dim + seq * D + (V * dim if vocab < 0 else 0))
        if n_floats is not None:
            n = n_floats
        floats = lcg_floats(n)
    return struct.pack("<7i", *header) + struct.pack(f"<{len(floats)}f", *floats)


TINY = (8, 8, 2, 2, 1, 16, 8)   # dim 8, hidden 8, 2 layers, 2 heads (D = 4), 1 kv head, V 16, T 8


def with_field(i, value, keep_length=True):
    h = list(TINY)
    h[i] = value
    body = ckpt(TINY)[28:] if keep_length else b""
    return struct.pack("<7i", *h) + body


def make_llama2c():
    good = ckpt(TINY)
    write("llama2c", "valid_tiny.bin", good, "OK")
    write("llama2c", "valid_separate_classifier.bin", ckpt(TINY[:5] + (-16,) + TINY[6:]), "OK")
    seed("llama2c", "valid_tiny.bin", good)
    for n in cut_points(len(good), 28):
        write("llama2c", f"truncated_at_{n}.bin", good[:n], "FORMAT")
    write("llama2c", "extra_bytes.bin", good + b"\0\0\0\0", "FORMAT", "extra bytes")
    names = ["dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"]
    for i, name in enumerate(names):
        write("llama2c", f"{name}_zero.bin", with_field(i, 0), "FORMAT", name)
        if name != "vocab_size":   # a negative vocab_size is legal (separate classifier)
            write("llama2c", f"{name}_negative.bin", with_field(i, -8), "FORMAT", name)
        write("llama2c", f"{name}_huge.bin", with_field(i, 0x7FFFFFFF), "FORMAT", name)
        write("llama2c", f"{name}_doubled.bin", with_field(i, TINY[i] * 2), "FORMAT", "bytes")
    write("llama2c", "vocab_int_min.bin", with_field(5, -0x80000000), "FORMAT", "vocab_size")
    write("llama2c", "dim_not_divisible_by_heads.bin", with_field(3, 3), "FORMAT", "divisible")
    write("llama2c", "heads_not_divisible_by_kv.bin", struct.pack("<7i", 8, 8, 2, 4, 3, 16, 8) + good[28:], "FORMAT", "divisible")
    write("llama2c", "odd_head_size.bin", struct.pack("<7i", 6, 8, 2, 2, 1, 16, 8) + good[28:], "FORMAT", "odd")
    write("llama2c", "negative_vocab_no_classifier.bin", with_field(5, -16), "FORMAT", "truncated")
    # Sizes whose byte count overflows 64-bit arithmetic if multiplied naively.
    write("llama2c", "overflowing_sizes.bin", struct.pack("<7i", 65536, 1048576, 1024, 2, 1, 4194304, 1048576) + good[28:], "FORMAT")
    # llama2.c's newer export (version 1+) starts with the magic "ak42": not the legacy format.
    write("llama2c", "magic_ak42_v1.bin", struct.pack("<Ii", 0x616B3432, 1) + good[8:], "FORMAT")
    nan = bytearray(good)
    nan[28 + 4 * 100:28 + 4 * 101] = struct.pack("<I", 0x7FC00000)
    write("llama2c", "nan_weight.bin", bytes(nan), "FORMAT", "nan")
    inf = bytearray(good)
    inf[len(good) - 4:] = struct.pack("<f", float("inf"))
    write("llama2c", "inf_weight.bin", bytes(inf), "FORMAT", "inf")
    # Finite but huge weights load fine, then overflow to inf at run time: ./generate
    # --check-finite must name the tensor (L0.q), tests/test_corrupt.c checks it.
    huge = bytearray(good)
    for c in range(8):
        huge[28 + 4 * (128 + c):32 + 4 * (128 + c)] = struct.pack("<f", 100.0)   # layer 0 rms_att
        huge[28 + 4 * (144 + c):32 + 4 * (144 + c)] = struct.pack("<f", 3.4e38)  # row 0 of wq
    write("llama2c", "huge_weights_overflow.bin", bytes(huge), "OK")
    write("llama2c", "npy_file.bin", npy_bytes(npy_header(), struct.pack("<6f", *range(6))), "FORMAT")
    write("llama2c", "empty.bin", b"", "FORMAT", "too short")


# ---------------------------------------------------------------------------------------------
# llama2.c tokenizer: int32 max_token_length, then per token float32 score, int32 length, bytes

def tok_records():
    toks = [(0.0, b"<unk>"), (0.0, b"\n<s>\n"), (0.0, b"\n</s>\n")]
    toks += [(0.0, b"<0x%02X>" % b) for b in range(256)]
    words = [b" ", b"e", b"t", b"a", b"o", b"n", b"h", b"s", b"i", b"r", b"d", b"l", b"u", b"c",
             b"m", b"w", b"y", b"O", b"T", b"b", b"p", b"g", b"k", b"v", b"f", b".", b","]
    merges = [b"he", b" t", b"th", b" the", b"the", b" a", b"an", b"nd", b" and", b"in", b"on",
              b" O", b"On", b"nc", b"Once", b" Once", b" u", b"up", b"upon", b" upon", b"ti",
              b"me", b"time", b" time", b"er", b"re", b"ou", b"at", b"it", b"is", b" s", b" w"]
    rank = 0
    for w in words:
        toks.append((-1000.0 - rank, w))
        rank += 1
    for w in merges:
        toks.append((-float(rank), w))
        rank += 1
    i = 0
    while len(toks) < 512:   # pad to stories260K's vocabulary of 512 with unmergeable pieces
        toks.append((-1e12, b"<pad%03d>" % i))
        i += 1
    return toks


def tok_bytes(toks, max_len=None, lens=None):
    if max_len is None:
        max_len = max(len(s) for _, s in toks)
    out = [struct.pack("<i", max_len)]
    for i, (score, s) in enumerate(toks):
        n = len(s) if lens is None or i not in lens else lens[i]
        out.append(struct.pack("<fi", score, n) + s)
    return b"".join(out)


def make_tokenizer():
    toks = tok_records()
    V = len(toks)
    good = tok_bytes(toks)
    write("tokenizer", "valid_synthetic_vocab512.bin", good, "OK", vocab=V)
    # A 16-token vocabulary for the tiny checkpoints (V = 16): lets ./generate run them.
    tok16 = toks[:3] + [(-1.0, b" ")] + [(-2.0 - i, bytes([ord("a") + i])) for i in range(12)]
    write("tokenizer", "valid_tok16.bin", tok_bytes(tok16), "OK", vocab=16)
    text = b"Once upon a time"
    seed("tokenizer", "valid_synthetic_vocab512.seed", struct.pack("<HH", V, len(text)) + text + good)
    small = tok_bytes(toks[:3] + [(0.0, b" "), (1.0, b"a"), (2.0, b" a")])
    seed("tokenizer", "small_vocab.seed", struct.pack("<HH", 6, 3) + b"aa\xff" + small)
    for t in [b"Once upon a time", b"\xff\xfe\x80 caf\xc3\xa9 \xe2\x82\xac\xf0\x9f\x98\x80 <s> <0x41>", b"  a\n\tb"]:
        seed("encode", "text_%d" % len(t), t)

    first = 4 + 8 + len(toks[0][1])   # end of token 0's record
    for n in sorted({0, 1, 3, 4, 5, 8, 11, 12, first - 1, first, first + 3, len(good) // 2,
                     len(good) - 1}):
        write("tokenizer", f"truncated_at_{n}.bin", good[:n], "FORMAT", vocab=V)
    write("tokenizer", "extra_bytes.bin", good + b"\0", "FORMAT", "follow", vocab=V)
    write("tokenizer", "fewer_tokens_than_vocab.bin", tok_bytes(toks[:-1]), "FORMAT", "ends", vocab=V)
    write("tokenizer", "vocab_too_small.bin", good, "FORMAT", "too small", vocab=2)
    write("tokenizer", "vocab_zero.bin", good, "FORMAT", "too small", vocab=0)
    write("tokenizer", "max_len_zero.bin", tok_bytes(toks, max_len=0), "FORMAT", "max_token_length", vocab=V)
    write("tokenizer", "max_len_negative.bin", tok_bytes(toks, max_len=-1), "FORMAT", "max_token_length", vocab=V)
    write("tokenizer", "max_len_huge.bin", tok_bytes(toks, max_len=0x7FFFFFFF), "FORMAT", "max_token_length", vocab=V)
    write("tokenizer", "token_longer_than_max.bin", tok_bytes(toks, max_len=3), "FORMAT", "length", vocab=V)
    write("tokenizer", "token_length_negative.bin", tok_bytes(toks, lens={5: -1}), "FORMAT", "length", vocab=V)
    write("tokenizer", "token_length_int_min.bin", tok_bytes(toks, lens={5: -0x80000000}), "FORMAT", "length", vocab=V)
    last = len(toks) - 1
    # The last token claims more bytes than remain: its length runs past the end of the file.
    write("tokenizer", "last_token_past_end.bin", tok_bytes(toks, max_len=64, lens={last: len(toks[last][1]) + 5}), "FORMAT", "past the end", vocab=V)
    write("tokenizer", "token_past_end_huge.bin", tok_bytes(toks, max_len=65536, lens={10: 65536}), "FORMAT", "past the end", vocab=V)
    nan_toks = list(toks)
    nan_toks[7] = (float("nan"), toks[7][1])
    write("tokenizer", "nan_score.bin", tok_bytes(nan_toks), "FORMAT", "NaN", vocab=V)
    write("tokenizer", "empty.bin", b"", "FORMAT", "too short", vocab=V)
    write("tokenizer", "model_file.bin", ckpt(TINY), "FORMAT", vocab=V)

# ---------------------------------------------------------------------------------------------
# llama2.c version-2 (Q8_0) checkpoint: 256-byte header (magic "ak42", version 2, 7 int32,
# uint8 shared flag at 36, int32 group size at 37), fp32 norms, then int8 values + float32 scales
# per tensor (docs/quantization.md)

Q8_TINY = (8, 12, 2, 2, 1, 16, 8)   # dim 8, hidden 12, 2 layers, 2 heads (D = 4), 1 kv head, V 16


def q8_header(cfg=Q8_TINY, shared=1, gs=4, magic=0x616B3432, version=2):
    h = struct.pack("<Ii7iB", magic, version, *cfg, shared) + struct.pack("<i", gs)
    return h + b"\0" * (256 - len(h))


def q8_tensors(cfg=Q8_TINY, shared=1):
    """(rows, cols) of every quantized tensor, in file order."""
    dim, hidden, layers, heads, kv, vocab, seq = cfg
    kvd = kv * (dim // heads)
    shapes = [(vocab, dim)]
    for rows, cols in ((dim, dim), (kvd, dim), (kvd, dim), (dim, dim), (hidden, dim), (dim, hidden), (hidden, dim)):
        shapes += [(rows, cols)] * layers
    if not shared:
        shapes.append((vocab, dim))
    return shapes


def q8_file(cfg=Q8_TINY, shared=1, gs=4, **hdr):
    """A valid file; returns (bytes, offset of the first scale, offset of the first int8 value)."""
    dim, hidden, layers = cfg[0], cfg[1], cfg[2]
    out = bytearray(q8_header(cfg, shared, gs, **hdr))
    out += struct.pack(f"<{2 * layers * dim + dim}f", *[1.0 + 0.01 * i for i in range(2 * layers * dim + dim)])
    first_q = first_s = None
    for t, (rows, cols) in enumerate(q8_tensors(cfg, shared)):
        n = rows * cols
        if first_q is None:
            first_q = len(out)
        out += bytes(((t * 31 + k * 7) % 255 - 127) & 0xFF for k in range(n))
        if first_s is None:
            first_s = len(out)
        out += struct.pack(f"<{n // gs}f", *[0.002 * (1 + (t + g) % 5) for g in range(n // gs)])
    return bytes(out), first_s, first_q


def make_q8file():
    good, s0, q0 = q8_file()
    write("q8file", "valid_shared.bin", good, "OK")
    write("q8file", "valid_separate_classifier.bin", q8_file(shared=0)[0], "OK")
    seed("q8file", "valid_shared.bin", good)
    for n in cut_points(len(good), 256) + [36, 37, 40, 41, 255]:
        if n < len(good):
            write("q8file", f"truncated_at_{n}.bin", good[:n], "FORMAT")
    write("q8file", "extra_bytes.bin", good + b"\0", "FORMAT", "extra bytes")
    write("q8file", "bad_magic.bin", struct.pack("<I", 0x616B3433) + good[4:], "FORMAT", "magic")
    write("q8file", "version0_file.bin", ckpt(TINY), "FORMAT", "magic")
    write("q8file", "version_1.bin", good[:4] + struct.pack("<i", 1) + good[8:], "FORMAT", "version")
    write("q8file", "version_3.bin", good[:4] + struct.pack("<i", 3) + good[8:], "FORMAT", "version")
    def with_gs(gs):
        return good[:37] + struct.pack("<i", gs) + good[41:]
    write("q8file", "group_size_zero.bin", with_gs(0), "FORMAT", "group size")
    write("q8file", "group_size_negative.bin", with_gs(-4), "FORMAT", "group size")
    write("q8file", "group_size_huge.bin", with_gs(0x7FFFFFFF), "FORMAT", "group size")
    write("q8file", "group_size_not_dividing_dim.bin", with_gs(3), "FORMAT", "does not divide dim")
    # 8 divides dim 8 but not hidden_dim 12: runq.c would silently drop 4 values of every w2 row
    write("q8file", "group_size_not_dividing_hidden.bin", q8_file(gs=4)[0][:37] + struct.pack("<i", 8) + good[41:],
          "FORMAT", "does not divide hidden_dim")
    write("q8file", "shared_flag_2.bin", good[:36] + b"\x02" + good[37:], "FORMAT", "shared_classifier")
    write("q8file", "separate_flag_but_no_classifier.bin", good[:36] + b"\x00" + good[37:], "FORMAT", "truncated")
    for i, name in enumerate(("dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len")):
        h = list(Q8_TINY)
        h[i] = 0
        write("q8file", f"{name}_zero.bin", good[:8] + struct.pack("<7i", *h) + good[36:], "FORMAT", name)
        h[i] = -8
        write("q8file", f"{name}_negative.bin", good[:8] + struct.pack("<7i", *h) + good[36:], "FORMAT", name)
    write("q8file", "odd_head_size.bin", good[:8] + struct.pack("<7i", 8, 12, 2, 4, 1, 16, 8) + good[36:], "FORMAT", "odd")
    def with_scale(v):
        return good[:s0] + struct.pack("<f", v) + good[s0 + 4:]
    write("q8file", "scale_nan.bin", with_scale(float("nan")), "FORMAT", "scale")
    write("q8file", "scale_inf.bin", with_scale(float("inf")), "FORMAT", "scale")
    write("q8file", "scale_negative.bin", with_scale(-0.5), "FORMAT", "scale")
    # Finite, non-negative, but scale * 127 * 127 * gs (gs = 4 here) overflows a float: bound
    # FLT_MAX / (16129 * 4) = 5.27e33. 3e38 made every weight inf; 1e34 keeps the weights finite
    # (1.27e36) but not the int8 kernel's dot * scale. 5e33 is just inside: accepted.
    write("q8file", "scale_3e38.bin", with_scale(3e38), "FORMAT", "too large")
    write("q8file", "scale_1e34.bin", with_scale(1e34), "FORMAT", "too large")
    write("q8file", "scale_5e33_accepted.bin", with_scale(5e33), "OK")
    seed("q8file", "scale_5e33_accepted.bin", with_scale(5e33))
    write("q8file", "value_minus_128.bin", good[:q0 + 5] + b"\x80" + good[q0 + 6:], "FORMAT", "-128")
    write("q8file", "norm_nan.bin", good[:256] + struct.pack("<f", float("nan")) + good[260:], "FORMAT", "nan")
    write("q8file", "empty.bin", b"", "FORMAT", "short")


# ---------------------------------------------------------------------------------------------
# training files (lib/train/checkpoint.h, lib/train/tokens.h): the TWMODEL checkpoint, the TWSTATE
# training state and uint16 token files

# A tiny llama-arranged model: V 4, max_seq 2, 1 layer, C 2, 1 head of D 2, F 2, RMSNorm,
# SwiGLU, no RoPE, final norm, tied head. Fields in checkpoint.h's order.
TW_CFG = [4, 2, 1, 2, 1, 1, 2, 1, 0, 0, 1, 1, 1, 3, 2, 0, 0, 1, 1, 0]
TW_PARAMS = [("tok_emb", (4, 2)), ("layers.0.norm1.w", (2,)), ("layers.0.attn.wq", (2, 2)),
             ("layers.0.attn.wk", (2, 2)), ("layers.0.attn.wv", (2, 2)), ("layers.0.attn.wo", (2, 2)),
             ("layers.0.norm2.w", (2,)), ("layers.0.ffn.gate", (2, 2)), ("layers.0.ffn.up", (2, 2)),
             ("layers.0.ffn.down", (2, 2)), ("final_norm.w", (2,))]
TW_HEAD = 8 + 4 + 80 + 12 + 16 + 4


def twmodel(cfg=None, params=None, magic=b"TWMODEL\0", version=1, n_params=None, floats=None):
    cfg = TW_CFG if cfg is None else cfg
    params = TW_PARAMS if params is None else params
    out = magic + struct.pack("<i", version) + struct.pack("<20i", *cfg)
    out += struct.pack("<3f", 10000.0, 1e-5, 1e-5) + b"custom".ljust(16, b"\0")
    out += struct.pack("<i", len(params) if n_params is None else n_params)
    vals = lcg_floats(sum(max(1, s[0]) * (s[1] if len(s) > 1 else 1) for _, s in params)) if floats is None else floats
    k = 0
    for name, shape in params:
        n = shape[0] * (shape[1] if len(shape) > 1 else 1)
        out += name.encode().ljust(48, b"\0") + struct.pack("<3i", len(shape), shape[0], shape[1] if len(shape) > 1 else 0)
        out += struct.pack(f"<{n}f", *vals[k:k + n])
        k += n
    return out


TW_FLOATS = sum(s[0] * (s[1] if len(s) > 1 else 1) for _, s in TW_PARAMS)


def twstate(model, magic=b"TWSTATE\0", version=1, step=5, B=2, T=2, moments=None, data_pos=None):
    n = TW_FLOATS
    pos = step * B if data_pos is None else data_pos
    head = magic + struct.pack("<iqqQQii", version, step, pos, 1, 1, B, T)
    mv = struct.pack(f"<{2 * n}f", *([0.01] * n + [0.001] * n)) if moments is None else moments
    return head + model + mv


def moments_with(which, i, value):
    """AdamW's m and v of the tiny model with element i of one of them (0: m, 1: v) replaced."""
    mv = [0.01] * TW_FLOATS + [0.001] * TW_FLOATS
    mv[which * TW_FLOATS + i] = value
    return struct.pack(f"<{2 * TW_FLOATS}f", *mv)



def make_training_files():
    good = twmodel()
    write("twmodel", "valid_tiny.bin", good, "OK")
    for n in cut_points(len(good), TW_HEAD):
        write("twmodel", f"truncated_at_{n}.bin", good[:n], "FORMAT", "truncated")
    write("twmodel", "extra_bytes.bin", good + b"\0\0\0\0", "FORMAT", "extra bytes")
    write("twmodel", "bad_magic.bin", b"TWMODEX\0" + good[8:], "FORMAT")
    write("twmodel", "version_2.bin", twmodel(version=2), "FORMAT", "version")
    names = ["vocab", "max_seq", "n_layer", "d_model", "n_head", "n_kv_head", "head_dim", "causal",
             "rope", "qk_norm", "prenorm", "norm", "ffn", "act", "ffn_hidden", "pos"]
    for i, name in enumerate(names):
        for v, tag in ((-1, "negative"), (0x7FFFFFFF, "huge")):
            cfg = list(TW_CFG)
            cfg[i] = v
            write("twmodel", f"{name}_{tag}.bin", twmodel(cfg=cfg), "FORMAT")
    big = list(TW_CFG)
    big[0], big[3] = 1 << 22, 1 << 16   # 2^38 weights claimed by a file of a few hundred bytes
    write("twmodel", "huge_sizes_small_file.bin", twmodel(cfg=big), "FORMAT", "truncated")
    write("twmodel", "heads_not_dividing.bin", twmodel(cfg=TW_CFG[:4] + [2, 3] + TW_CFG[6:]), "FORMAT")
    write("twmodel", "n_params_wrong.bin", twmodel(n_params=12), "FORMAT", "n_params")
    swapped = list(TW_PARAMS)
    swapped[2], swapped[3] = swapped[3], swapped[2]
    write("twmodel", "parameters_out_of_order.bin", twmodel(params=swapped), "FORMAT", "layers.0.attn.wq")
    reshaped = list(TW_PARAMS)
    reshaped[0] = ("tok_emb", (2, 4))
    write("twmodel", "wrong_shape.bin", twmodel(params=reshaped), "FORMAT", "tok_emb")
    # A name from the file is printed with its unprintable bytes as '?': one line, always.
    renamed = [("tok\nemb", (4, 2))] + TW_PARAMS[1:]
    write("twmodel", "newline_in_name.bin", twmodel(params=renamed), "FORMAT", "tok?emb")
    nan = bytearray(good)
    nan[TW_HEAD + 48 + 12: TW_HEAD + 48 + 16] = struct.pack("<f", float("nan"))
    write("twmodel", "nan_weight.bin", bytes(nan), "FORMAT", "nan")
    write("twmodel", "llama2c_file.bin", ckpt(TINY), "FORMAT", "magic")
    write("twmodel", "empty.bin", b"", "FORMAT", "truncated")

    state = twstate(good)
    write("twstate", "valid_tiny.bin", state, "OK")
    for n in cut_points(len(state), 48):
        write("twstate", f"truncated_at_{n}.bin", state[:n], "FORMAT")
    write("twstate", "extra_bytes.bin", state + b"\0" * 8, "FORMAT", "extra")
    write("twstate", "bad_magic.bin", b"TWSTATX\0" + state[8:], "FORMAT", "magic")
    write("twstate", "model_file.bin", good, "FORMAT", "magic")
    write("twstate", "version_2.bin", twstate(good, version=2), "FORMAT", "version")
    write("twstate", "negative_step.bin", twstate(good, step=-3), "FORMAT", "negative")
    write("twstate", "zero_batch.bin", twstate(good, B=0), "FORMAT", "batch")
    write("twstate", "corrupt_model_inside.bin", twstate(twmodel(version=7)), "FORMAT", "version")
    write("twstate", "moments_short.bin", twstate(good)[:-4], "FORMAT", "moments")
    write("twstate", "empty.bin", b"", "FORMAT", "truncated")
    # AdamW's moments: v is a mean of squares (never negative), both must be finite; the element
    # lies in layers.0.attn.wq (tok_emb holds the first 8 floats).
    inf, nan_ = float("inf"), float("nan")
    write("twstate", "negative_second_moment.bin", twstate(good, moments=moments_with(1, 9, -1e-3)),
          "FORMAT", "second moment")
    write("twstate", "inf_second_moment.bin", twstate(good, moments=moments_with(1, 0, inf)), "FORMAT", "second moment")
    write("twstate", "nan_first_moment.bin", twstate(good, moments=moments_with(0, 9, nan_)), "FORMAT", "first moment")
    write("twstate", "inf_first_moment.bin", twstate(good, moments=moments_with(0, TW_FLOATS - 1, -inf)),
          "FORMAT", "first moment")
    write("twstate", "step_past_int32.bin", twstate(good, step=1 << 40), "FORMAT", "out of range")
    write("twstate", "huge_batch.bin", twstate(good, B=1 << 20), "FORMAT", "out of range")
    write("twstate", "data_pos_past_steps.bin", twstate(good, data_pos=1000), "FORMAT", "out of range")
    write("twstate", "seq_past_max_seq.bin", twstate(good, T=3), "FORMAT", "max_seq")
    seed("train_state", "valid_tiny.bin", state)
    seed("train_state", "negative_second_moment.bin", twstate(good, moments=moments_with(1, 9, -1e-3)))
    # The llama2.c loader given a training state names what it is (./generate too).
    write("llama2c", "training_state_file.bin", state, "FORMAT", "training-state")

    toks = struct.pack("<6H", 1, 2, 3, 0, 3, 1)
    write("tokens", "valid_six.bin", toks, "OK")
    write("tokens", "empty.bin", b"", "FORMAT", "empty")
    write("tokens", "odd_length.bin", toks + b"\x01", "FORMAT", "odd")
    write("tokens", "one_byte.bin", b"\x01", "FORMAT", "odd")
    for n in (1, 3, 5, 7, 9, 11):
        write("tokens", f"truncated_at_{n}.bin", toks[:n], "FORMAT", "odd")
    write("tokens", "text_file.bin", b"Once upon a time\n", "FORMAT", "odd")
    seed("tokens", "valid_six.bin", toks)
    seed("tokens", "ids_past_vocab.bin", struct.pack("<4H", 0, 65535, 512, 7))


# Paths that are not regular files cannot live in git (a FIFO, a device) or in the corpus folder
# ---------------------------------------------------------------------------------------------
# LoRA adapters file (lib/formats/lora_file.h), for the base model stories260K (data/models/):
# 5 layers, C 64, H*D 64, G*D 32, F 172. "lora", int32 version 1, int32 r, float32 alpha, int32
# n_targets, n_targets names of 8 bytes, then per layer per target A (r, in) and B (out, r).
LORA_SHAPES = {"wq": (64, 64), "wk": (32, 64), "wv": (32, 64), "wo": (64, 64), "w1": (172, 64),
               "w2": (64, 172), "w3": (172, 64)}   # (out, in)


def lora_file(r=1, alpha=2.0, names=("wq",), n_targets=None, magic=b"lora", version=1,
              layers=5, raw_names=None, floats=None, alpha_bits=None):
    n = len(names) if n_targets is None else n_targets
    head = magic + struct.pack("<ii", version, r)
    head += struct.pack("<I", alpha_bits) if alpha_bits is not None else struct.pack("<f", alpha)
    head += struct.pack("<i", n)
    head += raw_names if raw_names is not None else b"".join(x.encode().ljust(8, b"\0") for x in names)
    if floats is None:
        count = layers * sum(r * (LORA_SHAPES[x][0] + LORA_SHAPES[x][1]) for x in names)
        floats = lcg_floats(count)
    return head + struct.pack(f"<{len(floats)}f", *floats)


def make_lora():
    good = lora_file()
    write("lora", "valid_r1_wq.lora", good, "OK")
    write("lora", "valid_r2_wq_wv_w3.lora", lora_file(r=2, alpha=16.0, names=("wq", "wv", "w3")), "OK")
    seed("lora", "valid_r1_wq.lora", good)
    write("lora", "empty.lora", b"", "FORMAT", "lora")
    write("lora", "bad_magic.lora", lora_file(magic=b"LORA"), "FORMAT", "lora")
    write("lora", "llama2c_model.lora", struct.pack("<7i", 64, 172, 5, 8, 4, 512, 512) + good[28:], "FORMAT", "lora")
    write("lora", "version_2.lora", lora_file(version=2), "FORMAT", "version")
    for r in (0, -1, 65, 2**31 - 1):
        write("lora", f"rank_{r}.lora".replace("-", "minus"), lora_file(r=r, floats=[]), "FORMAT", "rank")
    for name, bits in (("zero", 0), ("negative", 0xBF800000), ("nan", 0x7FC00000), ("inf", 0x7F800000)):
        write("lora", f"alpha_{name}.lora", lora_file(alpha_bits=bits), "FORMAT", "alpha")
    for n in (0, -1, 8, 2**31 - 1):
        write("lora", f"targets_{n}.lora".replace("-", "minus"), lora_file(n_targets=n, floats=[]), "FORMAT", "targets")
    write("lora", "unknown_target.lora", lora_file(raw_names=b"wx".ljust(8, b"\0")), "FORMAT", "target 0")
    write("lora", "name_garbage_after_zero.lora", lora_file(raw_names=b"wq\0x\0\0\0\0"), "FORMAT", "target 0")
    write("lora", "name_unpadded.lora", lora_file(raw_names=b"wqwqwqwq"), "FORMAT", "target 0")
    write("lora", "name_uppercase.lora", lora_file(raw_names=b"WQ".ljust(8, b"\0")), "FORMAT", "target 0")
    write("lora", "target_twice.lora", lora_file(names=("wq", "wq")), "FORMAT", "twice")
    write("lora", "header_too_short_for_names.lora", lora_file(names=("wq", "wv"))[:30], "FORMAT", "too short")
    write("lora", "one_byte_more.lora", good + b"\0", "SHAPE", "exactly")
    write("lora", "rank_2_data_of_rank_1.lora", lora_file(r=2, floats=lcg_floats(640)), "SHAPE", "exactly")
    write("lora", "three_layers.lora", lora_file(layers=3), "SHAPE", "exactly")
    write("lora", "seven_layers.lora", lora_file(layers=7), "SHAPE", "exactly")
    write("lora", "nan_in_B.lora", good[:-4] + struct.pack("<I", 0x7FC00000), "FORMAT", "finite")
    write("lora", "inf_in_A.lora", good[:28] + struct.pack("<I", 0xFF800000) + good[32:], "FORMAT", "finite")
    for cut in cut_points(len(good), 28):
        status, word = ("FORMAT", "lora") if cut < 20 else ("FORMAT", "too short") if cut < 28 else ("SHAPE", "exactly")
        write("lora", f"truncated_at_{cut}.lora", good[:cut], status, word)


# Preference pairs (lib/train/pairs.h, ./train --dpo), read for the tiny llama of
# data/golden/train/llama/init.bin: vocabulary 65, context 32 (PAIRS_VOCAB, PAIRS_CONTEXT).
PAIRS_VOCAB, PAIRS_CONTEXT = 65, 32


def pairs_file(pairs, magic=b"pref", version=1, count=None):
    out = magic + struct.pack("<ii", version, len(pairs) if count is None else count)
    for x, yw, yl in pairs:
        out += struct.pack("<iii", len(x), len(yw), len(yl))
        out += struct.pack(f"<{len(x) + len(yw) + len(yl)}H", *(x + yw + yl))
    return out


def make_pairs():
    good_pairs = [([1, 20, 21], [30, 31, 32, 2], [40, 2]), ([1, 5], [6], [7, 8, 9, 10, 11])]
    good = pairs_file(good_pairs)
    V = PAIRS_VOCAB

    def w(name, data, status, word="-"):
        write("pairs", name, data, status, word, V)
    w("valid_two.pref", good, "OK")
    # fuzz/fuzz_pairs.c's input: uint16 vocabulary, one byte context - 1, then the file.
    seed("pairs", "valid_two", struct.pack("<HB", V, PAIRS_CONTEXT - 1) + good)
    seed("pairs", "truncated", struct.pack("<HB", V, PAIRS_CONTEXT - 1) + good[:30])
    longest = [([1] * 16, [3] * 17, [4] * 17)]   # 16 + 17 - 1 = 32 positions: exactly the context
    w("valid_fills_context.pref", pairs_file(longest), "OK")
    w("empty.pref", b"", "FORMAT", "pref")
    w("bad_magic.pref", pairs_file(good_pairs, magic=b"PREF"), "FORMAT", "pref")
    w("token_file.pref", struct.pack("<8H", 1, 2, 3, 4, 5, 6, 7, 8), "FORMAT", "pref")
    w("version_2.pref", pairs_file(good_pairs, version=2), "FORMAT", "version")
    w("version_0.pref", pairs_file(good_pairs, version=0), "FORMAT", "version")
    for n in (0, -1, 3, 2**31 - 1):
        w(f"count_{n}.pref".replace("-", "minus"), pairs_file(good_pairs, count=n), "FORMAT", "pairs")
    w("zero_pairs_nothing_after.pref", pairs_file([]), "FORMAT", "at least one")
    for k, name in enumerate(("prompt", "chosen", "rejected")):
        for v in (0, -1, -2**31):
            bad = bytearray(good)
            struct.pack_into("<i", bad, 12 + 4 * k, v)
            w(f"{name}_length_{v}.pref".replace("-", "minus"), bytes(bad), "FORMAT", name)
    huge = bytearray(good)
    struct.pack_into("<i", huge, 16, 2**31 - 1)   # chosen length that overruns the file
    w("chosen_length_huge.pref", bytes(huge), "SHAPE", "context")
    overrun = bytearray(good)
    struct.pack_into("<i", overrun, 20, 20)   # rejected 20 tokens: fits the context, not the file
    w("rejected_overruns_file.pref", bytes(overrun), "FORMAT", "truncated")
    w("too_long_for_context.pref", pairs_file([([1] * 16, [3] * 18, [4])]), "SHAPE", "context")
    w("rejected_too_long.pref", pairs_file([([1] * 20, [3], [4] * 14)]), "SHAPE", "rejected")
    w(f"token_{V}.pref", pairs_file([([1], [V], [2])]), "SHAPE", "vocabulary")
    w("token_65535.pref", pairs_file([([1], [2], [65535])]), "SHAPE", "vocabulary")
    w("one_byte_more.pref", good + b"\0", "FORMAT", "after the last")
    w("one_pair_more.pref", good + pairs_file(good_pairs[:1])[12:], "FORMAT", "after the last")
    w("two_files_concatenated.pref", good + good, "FORMAT", "after the last")
    for cut in cut_points(len(good), 12):
        word = "pref" if cut < 12 else "-"
        w(f"truncated_at_{cut}.pref", good[:cut], "FORMAT", word)


def make_mask_seeds():
    """Seeds for fuzz/fuzz_mask.c: a uint16 token count, then the mask file (train/mask.h)."""
    seed("mask", "valid_12", struct.pack("<H", 12) + bytes([0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1]))
    seed("mask", "wrong_length", struct.pack("<H", 12) + bytes([0, 1, 1]))
    seed("mask", "byte_2", struct.pack("<H", 4) + bytes([0, 1, 2, 1]))


def make_grpo_replay_seeds():
    """Seeds for fuzz/fuzz_grpo_replay.c: three uint16 sizes (tokens.npy, prompt_len.npy, len.npy)
    and one byte n (samples a step), then the four .npy files of a --grpo-replay folder
    (train/grpo_replay.h), rewards.npy last. One step of 2 samples of 4 tokens; and the same with a
    prompt as long as its sample."""
    def folder(n_bytes, plen, length, rewards):
        tk = npy_bytes(npy_header("'<i4'", shape="(1, 2, 4)"), struct.pack("<8i", 1, 5, 6, 0, 1, 7, 8, 9))
        pl = npy_bytes(npy_header("'<i4'", shape="(1, 2)"), struct.pack("<2i", *plen))
        ln = npy_bytes(npy_header("'<i4'", shape="(1, 2)"), struct.pack("<2i", *length))
        rw = npy_bytes(npy_header(shape="(1, 2)"), struct.pack("<2f", *rewards))
        return struct.pack("<HHHB", len(tk), len(pl), len(ln), n_bytes) + tk + pl + ln + rw
    seed("grpo_replay", "valid_1x2x4", folder(2, (1, 2), (3, 4), (1.0, 0.0)))
    seed("grpo_replay", "prompt_fills_sample", folder(2, (3, 2), (3, 4), (1.0, 0.0)))


# (a directory would be one more thing to keep empty), so the manifest names them with an "@"
# and tests/test_corrupt.c makes each one at run time: @directory is a fresh temporary folder,
# @fifo a FIFO made with mkfifo inside it, @/dev/null and @/dev/zero the character devices.
# Every reader must refuse each with TW_ERR_IO and one line saying what the path is.
# ---- TWMX: models with experts (lib/train/moe_file.h) ----

# The tiny TWMODEL config above with 2 experts of width F 2, 1 chosen, no shared expert, gates
# renormalised; the expert tensors replace the FFN's.
TWMX_MOE = [2, 1, 0, 1]
TWMX_PARAMS = TW_PARAMS[:7] + [("layers.0.moe.router", (2, 2)), ("layers.0.moe.gate", (4, 2)),
                               ("layers.0.moe.up", (4, 2)), ("layers.0.moe.down", (4, 2)),
                               ("final_norm.w", (2,))]
TWMX_HEAD = 4 + 4 + 80 + 12 + 16 + 16 + 4


def twmx(cfg=None, moe=None, params=None, magic=b"TWMX", version=1, n_params=None, mla=None):
    cfg = TW_CFG if cfg is None else cfg
    moe = TWMX_MOE if moe is None else moe
    params = TWMX_PARAMS if params is None else params
    out = magic + struct.pack("<i", version) + struct.pack("<20i", *cfg)
    out += struct.pack("<3f", 10000.0, 1e-5, 1e-5) + b"custom".ljust(16, b"\0")
    out += struct.pack("<4i", *moe) + (struct.pack("<5i", *mla) if mla is not None else b"")
    out += struct.pack("<i", len(params) if n_params is None else n_params)
    vals = lcg_floats(sum(s[0] * (s[1] if len(s) > 1 else 1) for _, s in params))
    k = 0
    for name, shape in params:
        n = shape[0] * (shape[1] if len(shape) > 1 else 1)
        out += name.encode().ljust(48, b"\0") + struct.pack("<3i", len(shape), shape[0], shape[1] if len(shape) > 1 else 0)
        out += struct.pack(f"<{n}f", *vals[k:k + n])
        k += n
    return out


def make_twmx():
    good = twmx()
    write("twmx", "valid_tiny.bin", good, "OK")
    seed("moe_file", "valid_tiny", good)
    write("twmx", "valid_shared.bin", twmx(moe=[2, 2, 1, 0], params=TWMX_PARAMS[:11] + [
        ("layers.0.moe.shared_gate", (2, 2)), ("layers.0.moe.shared_up", (2, 2)),
        ("layers.0.moe.shared_down", (2, 2)), ("final_norm.w", (2,))]), "OK")
    for n in cut_points(len(good), TWMX_HEAD):
        write("twmx", f"truncated_at_{n}.bin", good[:n], "FORMAT", "truncated")
    write("twmx", "extra_bytes.bin", good + b"\0\0\0\0", "FORMAT", "extra bytes")
    write("twmx", "bad_magic.bin", b"TWMY" + good[4:], "FORMAT", "magic")
    write("twmx", "version_3.bin", twmx(version=3), "FORMAT", "version")
    write("twmx", "twmodel_file.bin", twmodel(), "FORMAT", "magic")
    write("twmx", "empty.bin", b"", "FORMAT", "truncated")
    for i, name in enumerate(("n_experts", "top_k", "n_shared", "norm_topk_prob")):
        for v, tag in ((-1, "negative"), (0x7FFFFFFF, "huge")):
            moe = list(TWMX_MOE)
            moe[i] = v
            write("twmx", f"{name}_{tag}.bin", twmx(moe=moe), "FORMAT", name)
    write("twmx", "no_experts.bin", twmx(moe=[0, 1, 0, 1]), "FORMAT", "n_experts")
    write("twmx", "top_k_above_experts.bin", twmx(moe=[2, 3, 0, 1]), "FORMAT", "top_k")
    write("twmx", "top_k_zero.bin", twmx(moe=[2, 0, 0, 1]), "FORMAT", "top_k")
    write("twmx", "norm_topk_2.bin", twmx(moe=[2, 1, 0, 2]), "FORMAT", "norm_topk_prob")
    classic = list(TW_CFG)
    classic[12] = 0   # a classic FFN: experts are SwiGLU only
    write("twmx", "classic_ffn_experts.bin", twmx(cfg=classic), "FORMAT", "SwiGLU")
    write("twmx", "vocab_negative.bin", twmx(cfg=[-1] + TW_CFG[1:]), "FORMAT", "vocab")
    big = list(TW_CFG)
    big[3], big[14] = 1 << 16, 1 << 16   # 1024 experts of 2^32 weights each in a few hundred bytes
    write("twmx", "huge_experts_small_file.bin", twmx(cfg=big, moe=[1024, 2, 0, 1]), "FORMAT", "truncated")
    write("twmx", "n_params_wrong.bin", twmx(n_params=11), "FORMAT", "n_params")
    swapped = list(TWMX_PARAMS)
    swapped[8], swapped[9] = swapped[9], swapped[8]
    write("twmx", "experts_out_of_order.bin", twmx(params=swapped), "FORMAT", "layers.0.moe.gate")
    reshaped = list(TWMX_PARAMS)
    reshaped[7] = ("layers.0.moe.router", (1, 4))
    write("twmx", "router_wrong_shape.bin", twmx(params=reshaped), "FORMAT", "layers.0.moe.router")
    dense = TW_PARAMS
    write("twmx", "dense_tensors.bin", twmx(params=dense, n_params=len(TWMX_PARAMS)), "FORMAT", "layers.0.moe.router")
    nan = bytearray(good)
    off = TWMX_HEAD + sum(60 + 4 * s[0] * (s[1] if len(s) > 1 else 1) for _, s in TWMX_PARAMS[:7]) + 60
    nan[off:off + 4] = struct.pack("<f", float("nan"))
    write("twmx", "nan_router_weight.bin", bytes(nan), "FORMAT", "nan")
    make_twmx_mla()


# Version 2: latent attention (block.mla_*): q_lora_rank 1, kv_lora_rank 1, d_nope 1, d_rope 2,
# d_v 1 on the tiny config (C 2, H 1), its tensors in place of attn.w*; a dense FFN (moe all 0).
TWMX_MLA = [1, 1, 1, 2, 1]
TWMX_MLA_PARAMS = TW_PARAMS[:2] + [("layers.0.attn.q_a", (1, 2)), ("layers.0.attn.q_a_norm", (1,)),
                                   ("layers.0.attn.q_b", (3, 1)), ("layers.0.attn.kv_a", (3, 2)),
                                   ("layers.0.attn.kv_a_norm", (1,)), ("layers.0.attn.kv_b", (2, 1)),
                                   ("layers.0.attn.o", (2, 1))] + TW_PARAMS[6:]
TWMX_MLA_HEAD = TWMX_HEAD + 20


def twmx_mla(mla=None, moe=None, **kw):
    return twmx(version=2, moe=[0, 0, 0, 0] if moe is None else moe,
                mla=TWMX_MLA if mla is None else mla, params=kw.pop("params", TWMX_MLA_PARAMS), **kw)


def make_twmx_mla():
    good = twmx_mla()
    write("twmx", "valid_mla.bin", good, "OK")
    seed("moe_file", "valid_mla", good)
    with_experts = TWMX_MLA_PARAMS[:10] + TWMX_PARAMS[7:]   # DeepSeek-V3's arrangement
    write("twmx", "valid_mla_experts.bin", twmx_mla(moe=TWMX_MOE, params=with_experts), "OK")
    for n in cut_points(len(good), TWMX_MLA_HEAD):
        write("twmx", f"mla_truncated_at_{n}.bin", good[:n], "FORMAT", "truncated")
    write("twmx", "mla_extra_bytes.bin", good + b"\0\0\0\0", "FORMAT", "extra bytes")
    for i, name in enumerate(("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                              "v_head_dim")):
        for v, tag in ((-1, "negative"), (0, "zero"), (0x7FFFFFFF, "huge")):
            mla = list(TWMX_MLA)
            mla[i] = v
            write("twmx", f"mla_{name}_{tag}.bin", twmx_mla(mla=mla), "FORMAT", name)
    write("twmx", "mla_rope_odd.bin", twmx_mla(mla=[1, 1, 1, 3, 1]), "FORMAT", "even")
    write("twmx", "mla_half_experts.bin", twmx_mla(moe=[0, 1, 0, 0]), "FORMAT", "n_experts")
    qk = list(TW_CFG)
    qk[9] = 1   # a QK-norm: latent attention has its own norms
    write("twmx", "mla_with_qk_norm.bin", twmx_mla(cfg=qk), "FORMAT", "QK-norm")
    write("twmx", "mla_dense_tensors.bin", twmx_mla(params=TW_PARAMS, n_params=len(TWMX_MLA_PARAMS)),
          "FORMAT", "layers.0.attn.q_a")
    write("twmx", "mla_fields_missing.bin", twmx(version=2, moe=[0, 0, 0, 0], params=TWMX_MLA_PARAMS),
          "FORMAT", "-")


SPECIAL = (("@directory", "directory"), ("@fifo", "FIFO"),
           ("@/dev/null", "device"), ("@/dev/zero", "device"))


def make_special():
    for kind in ("npy", "json", "llama2c", "tokenizer", "q8file", "twmodel", "twstate", "tokens", "lora",
                 "hfjson", "gpt2", "twmx", "pairs"):
        for name, word in SPECIAL:
            manifest.append((kind, name, "IO", word, "512" if kind == "tokenizer" else
                             str(PAIRS_VOCAB) if kind == "pairs" else "-"))


KERNEL_TARGETS = ("kernels_dot", "kernels_norm", "kernels_softmax", "kernels_silu", "kernels_attend")


def make_kernel_seeds():
    """Seeds for the differential kernel targets (fuzz/fuzz_kernels_*.c): bytes are read as sizes,
    row shapes and palette picks (tests/simd_range.h), so any bytes are valid; these three start
    from a short row, a row of palette extremes, and a longer pseudo-random one."""
    state = 16
    rnd = bytearray()
    for _ in range(1500):
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        rnd.append(state >> 16 & 0xFF)
    for t in KERNEL_TARGETS:
        seed(t, "short_row", bytes([5, 3, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]))
        seed(t, "extremes", bytes([40, 7, 0] + [0x0b, 0x8b, 0x03, 0x09, 0x8c, 0x01] * 12))
        seed(t, "mixed", bytes(rnd))


def main():
    if not os.path.isdir("lib") or not os.path.isdir("tests"):
        sys.exit("make_corpus.py: run from the top of the checkout (make corpus)")
    shutil.rmtree(OUT, ignore_errors=True)
    for kind in ("npy", "json", "llama2c", "tokenizer", "q8file", "twmodel", "twstate", "tokens", "lora", "twmx", "pairs"):
        os.makedirs(os.path.join(OUT, kind))
    for target in ("npy", "json", "llama2c", "tokenizer", "encode", "q8file", "lora", "mask", "hfjson",
                   "gpt2", "pairs") + KERNEL_TARGETS:
        d = os.path.join(FUZZ, target)
        if os.path.isdir(d):   # keep crash reproducers (crash-*, oom-*, timeout-*), rewrite seeds
            for f in os.listdir(d):
                if not f.startswith(("crash-", "oom-", "timeout-", "leak-", "slow-")):
                    os.remove(os.path.join(d, f))
    make_npy()
    make_json()
    make_moe_json()
    make_llama2c()
    make_tokenizer()
    make_q8file()
    make_training_files()
    make_lora()
    make_mask_seeds()
    make_grpo_replay_seeds()
    make_pairs()
    make_hfjson()
    make_gpt2()
    make_special()
    make_kernel_seeds()
    make_twmx()
    with open(os.path.join(OUT, "MANIFEST.tsv"), "w") as f:
        f.write("# reader\tfile (under data/corrupt/)\texpected status\tword the message contains (- any)\tvocab size (tokenizer)\n")
        for row in manifest:
            f.write("\t".join(row) + "\n")
    files = [r for r in manifest if not r[1].startswith("@")]
    size = sum(os.path.getsize(os.path.join(OUT, r[1])) for r in files)
    print(f"make_corpus: {len(files)} files, {size} bytes in {OUT}/, and {len(manifest) - len(files)} "
          "special paths (MANIFEST.tsv lists them)")


if __name__ == "__main__":
    main()
