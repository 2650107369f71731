"""`fixit build`'s (or `kernelgen build`'s) sft.jsonl as a Hugging Face `datasets.Dataset`
with a tokenizer's chat template applied (docs/client.md "Trainers").

Each row of sft.jsonl is a conversation whose last assistant message is the one trained on
(`step_loss_mask` 1). The dataset has, per row: `prompt` (every earlier message, templated, with
the generation prompt), `completion` (that last message's text — TRL's SFTTrainer takes this
prompt/completion form and puts the loss on the completion only), `text` (the whole
conversation, templated), `id` and `kind`.

    python3 sft_dataset.py DIR/fixit/build/sft.jsonl TOKENIZER_JSON

TOKENIZER_JSON: a tokenizer.json (a model's, or any that a package ships); the example gives it
a ChatML template when it has none."""

import argparse
import json
import sys
from typing import Any, Dict, List, Optional

CHATML = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
          "{{ message['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def load_tokenizer(tokenizer_json: str, chat_template: Optional[str] = None):
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=tokenizer_json)
    if chat_template or not tokenizer.chat_template:
        tokenizer.chat_template = chat_template or CHATML
    return tokenizer


def _rows(path: str) -> List[Dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            messages = row.get("messages")
            if not isinstance(messages, list) or len(messages) < 2:
                raise ValueError(f"{path}:{number}: $.messages: expected at least two messages")
            trained = [m.get("step_loss_mask", 0) for m in messages]
            if trained[-1] != 1 or messages[-1].get("role") != "assistant":
                raise ValueError(f"{path}:{number}: the last message must be the trained "
                                 "assistant message (step_loss_mask 1)")
            rows.append(row)
    return rows


def load_sft(path: str, tokenizer):
    """The Dataset of one sft.jsonl (see the module's text). Its fingerprint (the cache key of
    datasets' transforms) is the SHA-256 of the file and the chat template: datasets' own would
    hash the Arrow table through dill, which fails with datasets 5.2 ("Can't pickle
    MonthDayNano") on the pinned set."""
    import hashlib

    import datasets
    import pyarrow

    columns: Dict[str, List[Any]] = {"id": [], "kind": [], "prompt": [], "completion": [],
                                     "text": []}
    for row in _rows(path):
        messages = [{"role": m["role"], "content": m["content"]} for m in row["messages"]]
        columns["id"].append(row.get("id", ""))
        columns["kind"].append((row.get("metadata") or {}).get("kind", ""))
        columns["prompt"].append(tokenizer.apply_chat_template(
            messages[:-1], tokenize=False, add_generation_prompt=True))
        columns["completion"].append(messages[-1]["content"])
        columns["text"].append(tokenizer.apply_chat_template(messages, tokenize=False))
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        digest.update(file.read())
    digest.update(str(tokenizer.chat_template).encode("utf-8"))
    return datasets.Dataset(pyarrow.table(columns), fingerprint=digest.hexdigest()[:16])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sft_jsonl")
    parser.add_argument("tokenizer_json")
    args = parser.parse_args(argv)
    dataset = load_sft(args.sft_jsonl, load_tokenizer(args.tokenizer_json))
    tokenizer = load_tokenizer(args.tokenizer_json)
    tokens = [len(ids) for ids in tokenizer(list(dataset["text"]))["input_ids"]]
    print(json.dumps({"rows": dataset.num_rows, "columns": dataset.column_names,
                      "tokens": tokens}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
