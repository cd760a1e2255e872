#!/usr/bin/env python3
"""Independent numpy reference forward pass for GGUF models of the `llama` architecture.

How to run
----------
    python3 -m venv .venv && .venv/bin/pip install gguf numpy   # (+ tokenizers for --hf-tokenize)
    # check against llama.cpp's golden logits (stories260K, F32):
    .venv/bin/python tools/reference/llama_numpy.py -m /work/shared/models/stories260K.gguf \
        --golden /work/shared/golden/logits/stories260K.story60.json
    # greedy decode from token ids (e.g. from `kazeia tokenize -m M --json TEXT`), dump every row:
    .venv/bin/python tools/reference/llama_numpy.py -m M.gguf --tokens 1,2,3 -n 30 \
        --out ref.logits.bin [--compare ours.logits.bin] [--act-quant]
    # HF-style tokenization (tokenizers package, vocab/merges read from the GGUF):
    .venv/bin/python tools/reference/llama_numpy.py -m M.gguf --hf-tokenize "some text"

It shares no code with the engine: the weights are read with the PyPI `gguf` package and
dequantized to float with its own `gguf.quants.dequantize`; the arithmetic is float64 numpy.
Model: RMSNorm (eps from metadata), llama.cpp's NORM rotary (adjacent pairs (x[2i], x[2i+1]) on
the first rope.dimension_count dims of each head; the GGUF converter stores Q/K rows permuted for
this pairing), GQA causal softmax attention (query head h uses K/V head h // (n_head / n_head_kv)),
SwiGLU FFN, output.weight or the tied token_embd. Greedy decoding recomputes the whole sequence at
every step (no KV cache). `--out` writes every position's logits (prompt + generated tokens, except
the last generated one) as little-endian float32 rows, the layout of `kazeia logits --all`.
`--act-quant` additionally rounds each activation vector that meets a quantized matrix the way
ggml's CPU backend does (Q8_1 blocks of 32 for Q4_1/Q5_1 weights, Q8_0 for Q4_0/Q5_0/Q8_0), to
separate activation-rounding effects from real differences; the default is float activations.
Caveat (SmolLM2-135M Q4_1): some ffn_down inputs carry massive activations (|x| ~ 3000 against a
median ~0.06, e.g. blk.11), so with Q8 activation rounding a 1e-7 relative input perturbation can flip
one quant and move the logits by ~1; compare engines against --act-quant statistically, not to 1e-4.
The float path is well conditioned (1e-6 input noise moves the logits by ~3e-6).
"""
import argparse
import json
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT

QK = 32


def fp16(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float64)


class Model:
    def __init__(self, path, act_quant=False):
        r = gguf.GGUFReader(path)
        self.reader = r
        self.kv = {}
        for f in r.fields.values():
            self.kv[f.name] = f
        arch = self.meta("general.architecture")
        if arch != "llama":
            sys.exit(f"architecture {arch!r} not supported (llama only)")
        a = "llama."
        self.n_embd = int(self.meta(a + "embedding_length"))
        self.n_layer = int(self.meta(a + "block_count"))
        self.n_head = int(self.meta(a + "attention.head_count"))
        self.n_head_kv = int(self.meta(a + "attention.head_count_kv", self.n_head))
        self.head_dim = self.n_embd // self.n_head
        self.n_rot = int(self.meta(a + "rope.dimension_count", self.head_dim))
        self.eps = float(self.meta(a + "attention.layer_norm_rms_epsilon"))
        self.rope_base = float(self.meta(a + "rope.freq_base", 10000.0))
        self.act_quant = act_quant
        self.W = {}
        self.qtype = {}
        self.qmin = {}  # per-block minimum m of Q4_1/Q5_1 weights (for the ggml Q8_1 s-term)
        for t in r.tensors:
            ne = [int(x) for x in t.shape]
            d = gguf.quants.dequantize(t.data, t.tensor_type)
            d = np.asarray(d, dtype=np.float64)
            if len(ne) == 1:
                d = d.reshape(ne[0])
            else:
                d = d.reshape(-1, ne[0])
            self.W[t.name] = d
            self.qtype[t.name] = t.tensor_type
            if t.tensor_type in (QT.Q4_1, QT.Q5_1):
                raw = np.asarray(t.data, dtype=np.uint8).reshape(-1)
                bs = 20 if t.tensor_type == QT.Q4_1 else 24
                blocks = raw.reshape(-1, bs)
                m = blocks[:, 2:4].copy().view(np.float16).astype(np.float64).reshape(-1)
                self.qmin[t.name] = m.reshape(d.shape[0], d.shape[1] // QK)
        self.out_name = "output.weight" if "output.weight" in self.W else "token_embd.weight"
        self.n_vocab = self.W["token_embd.weight"].shape[0]

    def meta(self, key, default=None):
        f = self.kv.get(key)
        if f is None:
            if default is None:
                raise KeyError(key)
            return default
        return f.contents()

    # ---- matmul: y = W x for rows of x (shape [T, n_in]) --------------------------------
    def mm(self, name, x):
        W = self.W[name]
        qt = self.qtype[name]
        if not self.act_quant or qt in (QT.F32, QT.F16, QT.BF16):
            return x @ W.T
        T, n = x.shape
        xb = x.reshape(T, n // QK, QK).astype(np.float32)
        amax = np.abs(xb).max(axis=2, keepdims=True)
        # ggml's x86 quantize_row_q8_0/q8_1 (what llama.cpp's CPU reference runs): d = amax/127,
        # q = round-half-even(x * (127/amax)), computed in float32
        d = (amax / np.float32(127)).astype(np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            idv = np.where(amax > 0, np.float32(127) / amax, np.float32(0)).astype(np.float32)
        q = np.clip(np.round((xb * idv).astype(np.float32)), -128, 127)
        dh = fp16(d)
        xq = (q.astype(np.float64) * dh).reshape(T, n)
        y = xq @ W.T
        if qt in (QT.Q4_1, QT.Q5_1):
            # ggml's q4_1 x q8_1 dot uses s = fp16(d * sum(q)) for the min term, not sum(q) * fp16(d)
            sq = q.sum(axis=2).astype(np.float64)  # [T, nb]
            s_ggml = fp16(d[:, :, 0] * sq.astype(np.float32))
            s_used = sq * dh[:, :, 0]
            y += (s_ggml - s_used) @ self.qmin[name].T
        return y

    def rmsnorm(self, x, w):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * w

    def rope(self, x, pos):
        # x: [T, H, hd]; NORM mode: rotate adjacent pairs (2i, 2i+1) by pos * base^(-2i/n_rot)
        nr = self.n_rot
        i = np.arange(nr // 2, dtype=np.float64)
        theta = np.asarray(pos, dtype=np.float64)[:, None] * self.rope_base ** (-2.0 * i / nr)[None, :]
        c = np.cos(theta)[:, None, :]
        s = np.sin(theta)[:, None, :]
        out = x.copy()
        x0 = x[..., 0:nr:2]
        x1 = x[..., 1:nr:2]
        out[..., 0:nr:2] = x0 * c - x1 * s
        out[..., 1:nr:2] = x0 * s + x1 * c
        return out

    def forward(self, tokens, last_only=False):
        tokens = np.asarray(tokens, dtype=np.int64)
        T = len(tokens)
        pos = np.arange(T)
        hd, H, Hk = self.head_dim, self.n_head, self.n_head_kv
        x = self.W["token_embd.weight"][tokens].copy()
        mask = np.triu(np.full((T, T), -np.inf), k=1)
        for l in range(self.n_layer):
            p = f"blk.{l}."
            h = self.rmsnorm(x, self.W[p + "attn_norm.weight"])
            q = self.mm(p + "attn_q.weight", h).reshape(T, H, hd)
            k = self.mm(p + "attn_k.weight", h).reshape(T, Hk, hd)
            v = self.mm(p + "attn_v.weight", h).reshape(T, Hk, hd)
            q = self.rope(q, pos)
            k = self.rope(k, pos)
            g = H // Hk
            att = np.empty((T, H, hd))
            for hh in range(H):
                kh = hh // g
                sc = q[:, hh, :] @ k[:, kh, :].T / np.sqrt(hd) + mask
                sc -= sc.max(axis=1, keepdims=True)
                pr = np.exp(sc)
                pr /= pr.sum(axis=1, keepdims=True)
                att[:, hh, :] = pr @ v[:, kh, :]
            x = x + self.mm(p + "attn_output.weight", att.reshape(T, H * hd))
            h = self.rmsnorm(x, self.W[p + "ffn_norm.weight"])
            gt = self.mm(p + "ffn_gate.weight", h)
            up = self.mm(p + "ffn_up.weight", h)
            a = gt / (1.0 + np.exp(-gt)) * up
            x = x + self.mm(p + "ffn_down.weight", a)
        if last_only:
            x = x[-1:]
        x = self.rmsnorm(x, self.W["output_norm.weight"])
        return self.mm(self.out_name, x)


def top_k(row, k=5):
    idx = np.argsort(-row, kind="stable")[:k]
    return [(int(i), float(row[i])) for i in idx]


def token_texts(model):
    f = model.kv.get("tokenizer.ggml.tokens")
    if f is None:
        return None
    return list(f.contents())


def hf_tokenizer(model):
    """HF `tokenizers` byte-level BPE built from the GGUF's vocab and merges (gpt2 models)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, AddedToken
    toks = token_texts(model)
    mf = model.kv["tokenizer.ggml.merges"]
    merges = [tuple(m.split(" ", 1)) for m in mf.contents()]
    vocab = {t: i for i, t in enumerate(toks)}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    pre = model.meta("tokenizer.ggml.pre", "default")
    pts = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    if pre in ("smollm", "starcoder", "refact", "codeshell"):
        pts.insert(0, pre_tokenizers.Digits(individual_digits=True))
    tk.pre_tokenizer = pre_tokenizers.Sequence(pts)
    tk.decoder = decoders.ByteLevel()
    tt = model.kv.get("tokenizer.ggml.token_type")
    special = []
    if tt is not None:
        types = [int(x) for x in tt.contents()]
        special = [AddedToken(toks[i], special=True, normalized=False)
                   for i, ty in enumerate(types) if ty in (3, 4)]
    tk.add_special_tokens(special)
    return tk


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--tokens", help="comma-separated prompt token ids")
    ap.add_argument("--golden", help="golden JSON (+ .logits.bin) to compare against")
    ap.add_argument("-n", "--n-gen", type=int, default=0, help="greedy tokens to generate")
    ap.add_argument("--stop", default="", help="comma-separated ids that end generation")
    ap.add_argument("--out", help="write all rows' logits (float32 LE)")
    ap.add_argument("--compare", help="other logits file (float32 rows, same layout) to diff against")
    ap.add_argument("--n-prompt", type=int, default=0,
                    help="with --compare and -n 0: how many of --tokens are the prompt (rest: generated)")
    ap.add_argument("--act-quant", action="store_true", help="round activations to Q8_0/Q8_1 like ggml")
    ap.add_argument("--hf-tokenize", help="print HF-style token ids of this text and exit")
    ap.add_argument("--json", help="write a summary JSON here")
    args = ap.parse_args()

    model = Model(args.model, act_quant=args.act_quant)
    texts = token_texts(model)
    if args.hf_tokenize is not None:
        tk = hf_tokenizer(model)
        print(json.dumps(tk.encode(args.hf_tokenize, add_special_tokens=False).ids))
        return

    if args.golden:
        g = json.load(open(args.golden))
        ids = g["token_ids"]
        ref = np.fromfile(args.golden.replace(".json", ".logits.bin"), dtype="<f4").reshape(-1, g["n_vocab"])
        lg = model.forward(ids)
        rows = lg[g["positions"]]
        print(f"golden {args.golden}: {len(ids)} tokens, max-abs diff {np.abs(rows - ref).max():.3e}")
        seq = list(ids)
        gaps = []
        for _ in range(len(g["greedy_continuation"])):
            row = model.forward(seq, last_only=True)[0]
            tk = top_k(row, 2)
            gaps.append(tk[0][1] - tk[1][1])
            seq.append(tk[0][0])
        gen = seq[len(ids):]
        same = gen == g["greedy_continuation"]
        print(f"greedy continuation {'matches' if same else 'DIFFERS'} ({len(gen)} tokens); "
              f"max gap diff {np.abs(np.array(gaps) - np.array(g['greedy_top1_minus_top2'])).max():.2e}")
        return

    ids = [int(t) for t in args.tokens.split(",")]
    stop = {int(s) for s in args.stop.split(",") if s}
    seq = list(ids)
    steps = []
    for _ in range(args.n_gen):
        row = model.forward(seq, last_only=True)[0]
        tk = top_k(row, 5)
        steps.append({"pos": len(seq) - 1, "top5": tk, "gap": tk[0][1] - tk[1][1]})
        seq.append(tk[0][0])
        print(f"step {len(steps)-1:2d} pos {len(seq)-2}: {tk[0][0]:6d} {texts[tk[0][0]]!r:16} gap {tk[0][1]-tk[1][1]:.4f}"
              f"  top5 {[(i, round(v, 3)) for i, v in tk]}", flush=True)
        if tk[0][0] in stop:
            break
    gen = seq[len(ids):]
    if texts:
        print("generated ids:", gen)
        print("generated text:", repr("".join(texts[t] for t in gen).replace("\u0120", " ").replace("\u010a", "\n")))
    if args.out or args.compare:
        feed = seq[:-1] if gen else seq
        lg = model.forward(feed)
        if args.out:
            lg.astype("<f4").tofile(args.out)
        if args.compare:
            other = np.fromfile(args.compare, dtype="<f4").reshape(-1, model.n_vocab)
            n = min(len(other), len(lg))
            diff = np.abs(other[:n] - lg[:n]).max(axis=1)
            P = len(ids) if (gen or not args.n_prompt) else args.n_prompt
            print(f"compare: prompt rows 0..{P-1} max-abs {diff[:P].max():.4f}")
            for r in range(P - 1, n):
                a, b = top_k(lg[r], 5), top_k(other[r].astype(np.float64), 5)
                print(f"  row {r}: max-abs {diff[r]:.4f}  ref top1 {a[0][0]} gap {a[0][1]-a[1][1]:.3f}"
                      f" | other top1 {b[0][0]} gap {b[0][1]-b[1][1]:.3f}"
                      f"{'' if a[0][0] == b[0][0] else '  <-- argmax differs'}")
    if args.json:
        json.dump({"prompt": ids, "generated": gen, "steps": steps}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
