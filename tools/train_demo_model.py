"""Train `vlmkit-tiny`, the small LLaVA-architecture model shipped for the demo benchmark, from scratch on CPU.

    python tools/train_demo_model.py --out vlm/weights/vlmkit_tiny --seed 1

Architecture: llava-hf layout (CLIP vision tower, two-layer MLP projector, Llama language model), a byte-level BPE
tokenizer trained on the templated questions, and a chat template; it loads with AutoProcessor and
AutoModelForImageTextToText like any Hugging Face LLaVA checkpoint and needs no torchvision or remote code.

Training has three stages, as LLaVA's recipe starts from a pretrained language model and a pretrained CLIP:
0. language: the language model alone on Y/N questions whose pictures are given as captions (`pretrain_language`),
   answered in the trained form below; it learns to copy the asked word and to compare two words.
1. vision: the vision tower learns what the pictures show (colour, shape, place, count, word) through throw-away
   linear heads on its mean patch feature (`pretrain_vision`); then the projector gets a data-dependent
   initialisation (`standardise_projector`) so image tokens reach the language model centred and at the norm of
   its token embeddings.
2. the whole model on `demo_tasks.training_examples(seed)`, formatted exactly as at evaluation (the VLMEvalKit
   prompt of the row, one user turn through the processor's chat template, generation prompt added); the loss
   covers the trained answer (`demo_tasks.training_target`: "red" for VQA and MCQ, "red vs blue: No" for Y/N,
   each scored by vlmkit's extraction) and the end-of-turn token; the vision tower at half the learning rate.
What was learned making it: with image tokens 100x larger than token embeddings, or a peak learning rate of
2e-3, the model learns the answer format, stops sending gradient to the vision side and ignores the pictures
(its score with grey images equals its score with real ones); at 5e-4 with the initialisation above it does not.
Answering MCQ with the letter or Y/N with a bare "No" stayed at chance: see the model card.

Any example whose picture appears in the evaluation TSVs is skipped. At the end the script scores the evaluation
TSVs with greedy decoding, and again with every image replaced by flat grey (a control that must stay near chance).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import math
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from PIL import Image
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    AutoModelForImageTextToText,
    AutoProcessor,
    CLIPImageProcessorPil,
    CLIPVisionConfig,
    GenerationConfig,
    LlamaConfig,
    LlavaConfig,
    LlavaForConditionalGeneration,
    LlavaProcessor,
    PreTrainedTokenizerFast,
)

import vlmkit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import demo_tasks  # noqa: E402

IMAGE_SIZE = 112
PATCH_SIZE = 16
IMAGE_TOKENS = (IMAGE_SIZE // PATCH_SIZE) ** 2
MAX_NEW_TOKENS = 8  # the longest trained answer, " triangle vs square: Yes" + end of turn, is 6 tokens
SPECIAL_TOKENS = ["<|pad|>", "<|end|>", "<image>", "<|system|>", "<|user|>", "<|assistant|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] in ['image', 'image_url'] %}{{ '<image>' }}"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def build_tokenizer(seed: int, corpus_size: int = 4000) -> PreTrainedTokenizerFast:
    """Byte-level BPE over the templated prompts and answers, special tokens first. Every word gets a leading
    space, so "red" at the start of an answer is the same token as " red" in the question or an option."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1024,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(demo_tasks.corpus_texts(seed, corpus_size), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<|pad|>",
        eos_token="<|end|>",
        extra_special_tokens={"image_token": "<image>"},
        additional_special_tokens=SPECIAL_TOKENS[2:],
        padding_side="left",
        model_max_length=512,
    )


def build_processor(tokenizer: PreTrainedTokenizerFast) -> LlavaProcessor:
    image_processor = CLIPImageProcessorPil(
        size={"shortest_edge": IMAGE_SIZE},
        crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
    )
    return LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH_SIZE,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=CHAT_TEMPLATE,
    )


def build_model(tokenizer: PreTrainedTokenizerFast) -> LlavaForConditionalGeneration:
    vision = CLIPVisionConfig(
        hidden_size=128,
        intermediate_size=512,
        num_hidden_layers=3,
        num_attention_heads=4,
        image_size=IMAGE_SIZE,
        patch_size=PATCH_SIZE,
        projection_dim=128,
    )
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=256,
        intermediate_size=768,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        image_seq_length=IMAGE_TOKENS,
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
        tie_word_embeddings=True,
    )
    model = LlavaForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        do_sample=False,
        max_new_tokens=MAX_NEW_TOKENS,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return model


# ---------------------------------------------------------------------------------------------------- evaluation


def jpeg_to_image(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB")


def chat_text(processor: LlavaProcessor, prompt: str, n_images: int) -> str:
    """One user turn (images first, then the text) through the chat template, generation prompt added."""
    content = [{"type": "image"} for _ in range(n_images)] + [{"type": "text", "text": prompt}]
    conversation = [{"role": "user", "content": content}]
    return processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)


def load_table(data_dir: Path, kind: str) -> pd.DataFrame:
    return pd.read_csv(data_dir / f"vlmkit_demo_{kind}.tsv", sep="\t", dtype=str, keep_default_na=False)


def row_jpegs(table: pd.DataFrame, position: int) -> list[bytes]:
    """The image bytes of a row: base64, a JSON list of base64, or (64 chars or fewer) another row's index."""
    value = table.iloc[position]["image"]
    if value.startswith("["):
        return [base64.b64decode(item) for item in json.loads(value)]
    if len(value) <= 64:
        value = table.loc[table["index"] == value, "image"].iloc[0]
    return [base64.b64decode(value)]


def eval_image_keys(data_dir: Path) -> set[str]:
    """Keys of every picture in the evaluation TSVs (training skips examples that use one)."""
    keys = set()
    for kind in demo_tasks.KINDS:
        table = load_table(data_dir, kind)
        for position in range(len(table)):
            keys.update(demo_tasks.image_key(data) for data in row_jpegs(table, position))
    return keys


def is_correct(kind: str, prediction: str, row: dict[str, str]) -> bool:
    """Scored by vlmkit's own rules: the MCQ letter and the yes/no as VLMEvalKit extracts them, the VQA word exact
    (case-insensitive)."""
    if kind == "mcq":
        options = {letter: row[letter] for letter in demo_tasks.LETTERS}
        return vlmkit.extract_choice(prediction, options)[0] == row["answer"]
    if kind == "yorn":
        return vlmkit.extract_yes_no(prediction) == row["answer"]
    return prediction.strip().lower() == row["answer"].strip().lower()


@torch.no_grad()
def predict(model, processor, prompts: Sequence[str], images: Sequence[list[Image.Image]]) -> list[str]:
    texts = [chat_text(processor, prompt, len(pictures)) for prompt, pictures in zip(prompts, images)]
    inputs = processor(text=list(texts), images=list(images), padding=True, return_tensors="pt")
    output = model.generate(**inputs, do_sample=False, max_new_tokens=MAX_NEW_TOKENS)
    new_tokens = output[:, inputs["input_ids"].shape[1] :]
    return [text.strip() for text in processor.batch_decode(new_tokens, skip_special_tokens=True)]


def evaluate(model, processor, data_dir: Path, blank: bool = False, limit: int | None = None,
             batch_size: int = 16) -> dict[str, dict[str, float]]:
    """Accuracy per kind (and per category) over the evaluation TSVs; `blank` greys out every image."""
    scores: dict[str, dict[str, float]] = {}
    for kind in demo_tasks.KINDS:
        table = load_table(data_dir, kind)
        rows = range(len(table) if limit is None else min(limit, len(table)))
        hits: dict[str, list[bool]] = {}
        for start in range(0, len(rows), batch_size):
            chunk = list(rows[start : start + batch_size])
            prompts = [demo_tasks.build_prompt(kind, table.iloc[i].to_dict()) for i in chunk]
            images = [[jpeg_to_image(data) for data in row_jpegs(table, i)] for i in chunk]
            if blank:
                images = [[Image.new("RGB", p.size, (128, 128, 128)) for p in pictures] for pictures in images]
            for i, prediction in zip(chunk, predict(model, processor, prompts, images)):
                row = table.iloc[i].to_dict()
                ok = is_correct(kind, prediction, row)
                hits.setdefault("overall", []).append(ok)
                hits.setdefault(row["category"], []).append(ok)
        scores[kind] = {name: round(sum(v) / len(v), 4) for name, v in hits.items()}
    return scores


def evaluate_dir(model_dir: Path, data_dir: Path, blank: bool = False, limit: int | None = None):
    """Load a saved model the way users do (Auto classes, float32) and score it."""
    processor = AutoProcessor.from_pretrained(model_dir)
    model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32).eval()
    return evaluate(model, processor, data_dir, blank=blank, limit=limit)


# ---------------------------------------------------------------------------------------------------- stage 0: language


def scene_caption(scene: demo_tasks.Scene) -> str:
    """What a picture shows, in the words the questions use: "red circle left", "3 red star", "CAT"."""
    if scene.layout == "object":
        return f"{scene.colour} {scene.shape} {scene.position}"
    if scene.layout == "count":
        return f"{len(scene.items)} {scene.colour} {scene.shape}"
    return scene.word


def pretrain_language(model: LlavaForConditionalGeneration, processor: LlavaProcessor, args: argparse.Namespace,
                      started: float) -> None:
    """Stage 0, as LLaVA starts from a pretrained language model: the language model alone on Y/N questions whose
    pictures are given as captions, answered in the trained form ("red vs blue: No"). It learns to copy the asked
    word and to compare two words, the part of the task that does not depend on seeing."""
    stream = (e for e in demo_tasks.training_examples(args.seed + 7) if e.kind == "yorn")
    optimizer = torch.optim.AdamW(model.model.language_model.parameters(), lr=args.language_lr, weight_decay=0.01,
                                  betas=(0.9, 0.98))
    model.train()
    for step in range(args.language_steps):
        examples = [next(stream) for _ in range(args.language_batch_size)]
        prompts = [
            chat_text(processor, "".join(scene_caption(s) + "\n" for s in e.scenes)
                      + demo_tasks.build_prompt(e.kind, demo_tasks.example_fields(e)), 0)
            for e in examples
        ]
        prompt_ids = processor.tokenizer(prompts, add_special_tokens=False)["input_ids"]
        batch = pad_sequences(processor.tokenizer, prompt_ids, [target_ids(processor.tokenizer, e) for e in examples])
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, args.language_steps, args.language_lr, args.warmup // 3)
        token_loss, answer = answer_loss(model, batch)
        loss = token_loss.sum() / answer.sum()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % args.log_every == 0 or step == args.language_steps - 1:
            print(f"language {step:5d}  loss {loss.item():.4f}  {time.time() - started:6.0f} s", flush=True)


# ---------------------------------------------------------------------------------------------------- stage 1: vision


def scene_labels(scene: demo_tasks.Scene) -> dict[str, int]:
    """What a picture shows, as class ids per attribute (0 = the attribute does not apply to this layout)."""
    shows_shape = scene.layout in ("object", "count")
    values = {
        "layout": scene.layout,
        "colour": scene.colour if shows_shape else "",
        "shape": scene.shape if shows_shape else "",
        "position": scene.position if scene.layout == "object" else "",
        "count": len(scene.items) if scene.layout == "count" else 0,
        "word": scene.word if scene.layout == "word" else "",
    }
    return {name: ATTRIBUTES[name].index(value) for name, value in values.items()}


ATTRIBUTES: dict[str, tuple] = {
    "layout": ("object", "count", "word"),
    "colour": ("", *demo_tasks.COLOURS),
    "shape": ("", *demo_tasks.SHAPES),
    "position": ("", *demo_tasks.POSITIONS),
    "count": (0, 1, 2, 3, 4),
    "word": ("", *demo_tasks.WORDS),
}


def scene_stream(seed: int, excluded: set[str]):
    """An endless, seeded stream of single pictures of every layout, none of them an evaluation picture."""
    import random

    rng = random.Random(f"vlmkit-demo/vision/{seed}")
    samplers = (demo_tasks.sample_object_scene, demo_tasks.sample_count_scene, demo_tasks.sample_word_scene)
    while True:
        scene = rng.choice(samplers)(rng)
        if demo_tasks.image_key(demo_tasks.scene_jpeg(scene)) not in excluded:
            yield scene


def pretrain_vision(model: LlavaForConditionalGeneration, processor: LlavaProcessor, args: argparse.Namespace,
                    excluded: set[str], started: float) -> None:
    """Stage 1, as LLaVA starts from a pretrained CLIP: teach the vision tower what the pictures show (colour,
    shape, place, count, word) with one linear head per attribute on the mean of its patch features, the
    features the language model reads. The heads are thrown away afterwards; nothing else changes shape."""
    tower = model.model.vision_tower
    width = tower.config.hidden_size
    heads = torch.nn.ModuleDict({name: torch.nn.Linear(width, len(values)) for name, values in ATTRIBUTES.items()})
    params = list(tower.parameters()) + list(heads.parameters())
    optimizer = torch.optim.AdamW(params, lr=args.vision_lr, weight_decay=0.01)
    stream = scene_stream(args.seed, excluded)
    tower.train()
    for step in range(args.vision_steps):
        scenes = [next(stream) for _ in range(args.vision_batch_size)]
        pictures = [jpeg_to_image(demo_tasks.scene_jpeg(scene)) for scene in scenes]
        pixel_values = processor.image_processor(pictures, return_tensors="pt")["pixel_values"]
        features = tower(pixel_values=pixel_values).last_hidden_state[:, 1:, :].mean(dim=1)
        labels = [scene_labels(scene) for scene in scenes]
        logits = {name: head(features) for name, head in heads.items()}
        targets = {name: torch.tensor([row[name] for row in labels]) for name in heads}
        loss = sum(torch.nn.functional.cross_entropy(logits[name], targets[name]) for name in heads)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, args.vision_steps, args.vision_lr, args.warmup)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % args.log_every == 0 or step == args.vision_steps - 1:
            accuracy = " ".join(
                f"{name} {(logits[name].argmax(-1) == targets[name]).float().mean().item():.2f}" for name in heads
            )
            print(f"vision {step:5d}  loss {loss.item():.4f}  {accuracy}  {time.time() - started:6.0f} s", flush=True)


@torch.no_grad()
def standardise_projector(model: LlavaForConditionalGeneration, processor: LlavaProcessor, stream, n: int = 256) -> None:
    """Data-dependent initialisation of the projector (its shapes and the architecture stay LLaVA's):
    - the first layer gets a per-feature z-score of the vision features folded into its weights and bias: raw
      CLIP-style features carry a large constant component that hides what differs between pictures;
    - the last layer is scaled so that image tokens enter the language model at the norm of its token embeddings.
      Image tokens 100x larger than text tokens starve the vision side of gradient (each RMSNorm divides the
      gradient by the norm) and the model learns to ignore the pictures."""
    tower, projector = model.model.vision_tower, model.model.multi_modal_projector
    pictures = [jpeg_to_image(demo_tasks.scene_jpeg(next(stream))) for _ in range(n)]
    pixel_values = processor.image_processor(pictures, return_tensors="pt")["pixel_values"]
    features = tower(pixel_values=pixel_values).last_hidden_state[:, 1:, :].reshape(-1, tower.config.hidden_size)
    mean, std = features.mean(dim=0), features.std(dim=0) + 1e-5
    projector.linear_1.weight.div_(std[None, :])
    projector.linear_1.bias.sub_(projector.linear_1.weight @ mean)
    image_norm = projector(features).norm(dim=-1).mean()
    text_norm = model.get_input_embeddings().weight.norm(dim=-1).mean()
    projector.linear_2.weight.mul_(text_norm / image_norm)
    projector.linear_2.bias.mul_(text_norm / image_norm)


# ---------------------------------------------------------------------------------------------------- stage 2: training


def target_ids(tokenizer: PreTrainedTokenizerFast, example: demo_tasks.Example) -> list[int]:
    """The trained answer (`demo_tasks.training_target`) and the end-of-turn token: the tokens the loss covers."""
    return tokenizer.encode(demo_tasks.training_target(example), add_special_tokens=False) + [tokenizer.eos_token_id]


def pad_sequences(tokenizer: PreTrainedTokenizerFast, prompts: list[list[int]],
                  answers: list[list[int]]) -> dict[str, torch.Tensor]:
    """Prompt + answer per row, right-padded; labels are -100 everywhere but on the answer."""
    width = max(len(p) + len(a) for p, a in zip(prompts, answers))
    input_ids = torch.full((len(prompts), width), tokenizer.pad_token_id, dtype=torch.long)
    labels = torch.full((len(prompts), width), -100, dtype=torch.long)
    attention = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, (ids, ans) in enumerate(zip(prompts, answers)):
        seq = ids + ans
        input_ids[row, : len(seq)] = torch.tensor(seq)
        attention[row, : len(seq)] = 1
        labels[row, len(ids) : len(seq)] = torch.tensor(ans)
    return {"input_ids": input_ids, "attention_mask": attention, "labels": labels}


def encode_batch(processor: LlavaProcessor, examples: list[demo_tasks.Example]) -> dict[str, torch.Tensor]:
    """Inputs and labels for a batch: prompt through the chat template, then the trained answer + end-of-turn."""
    prompts, images = [], []
    for example in examples:
        pictures = [jpeg_to_image(demo_tasks.scene_jpeg(s)) for s in example.scenes]
        prompt = demo_tasks.build_prompt(example.kind, demo_tasks.example_fields(example))
        prompts.append(chat_text(processor, prompt, len(pictures)))
        images.append(pictures)
    encoded = processor(text=prompts, images=images, padding=False, return_tensors=None)
    batch = pad_sequences(processor.tokenizer, encoded["input_ids"],
                          [target_ids(processor.tokenizer, e) for e in examples])
    batch["pixel_values"] = torch.as_tensor(np.asarray(encoded["pixel_values"]))
    return batch


def answer_loss(model: LlavaForConditionalGeneration, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss of every next-token prediction, zero off the answer; the mask of answer positions)."""
    inputs = {name: value for name, value in batch.items() if name != "labels"}
    logits = model(**inputs).logits[:, :-1]
    targets = batch["labels"][:, 1:]
    token_loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100, reduction="none"
    ).view(targets.shape)
    return token_loss, targets != -100


def forward_backward(model: LlavaForConditionalGeneration, processor: LlavaProcessor,
                     examples: list[demo_tasks.Example]) -> tuple[float, dict[str, float]]:
    """Accumulate the gradient of the mean answer-token loss over `examples`; return that loss and the mean
    per-example loss of each kind. Examples go through the model in buckets of one kind and image count: an MCQ
    prompt is twice as long as a Y/N one and a second picture adds 49 tokens, so one padded batch would spend
    about a third of its compute on padding."""
    buckets: dict[tuple[str, int], list[demo_tasks.Example]] = {}
    for example in examples:
        buckets.setdefault((example.kind, len(example.scenes)), []).append(example)
    batches = [(key[0], encode_batch(processor, bucket)) for key, bucket in buckets.items()]
    answer_tokens = sum(int((batch["labels"][:, 1:] != -100).sum()) for _, batch in batches)
    total, per_kind = 0.0, {}
    for kind, batch in batches:
        token_loss, answer = answer_loss(model, batch)
        share = token_loss.sum() / answer_tokens
        share.backward()
        total += share.item()
        row_loss = token_loss.sum(dim=1) / answer.sum(dim=1)
        per_kind.setdefault(kind, []).extend(row_loss.tolist())
    return total, {kind: sum(values) / len(values) for kind, values in per_kind.items()}


def learning_rate(step: int, steps: int, peak: float, warmup: int) -> float:
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress)))


def train(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    started = time.time()
    if args.init:  # go on training a saved model (stage 2 only)
        processor = AutoProcessor.from_pretrained(args.init)
        model = LlavaForConditionalGeneration.from_pretrained(args.init, dtype=torch.float32)
        tokenizer = processor.tokenizer
    else:
        tokenizer = build_tokenizer(args.seed)
        processor = build_processor(tokenizer)
        model = build_model(tokenizer)
    print(f"vocab {len(tokenizer)}, parameters {sum(p.numel() for p in model.parameters()) / 1e6:.2f} M")
    excluded = eval_image_keys(args.data_dir)
    print(f"excluding {len(excluded)} evaluation pictures from training")
    if not args.init:
        pretrain_language(model, processor, args, started)
        pretrain_vision(model, processor, args, excluded, started)
        standardise_projector(model, processor, scene_stream(args.seed + 1, excluded))
    stream = demo_tasks.training_examples(args.seed, excluded)
    tower = list(model.model.vision_tower.parameters())
    in_tower = {id(p) for p in tower}
    groups = [  # the pretrained vision tower moves slowly, so early noisy gradients do not undo stage 1
        {"params": [p for p in model.parameters() if id(p) not in in_tower], "scale": 1.0},
        {"params": tower, "scale": args.vision_lr_scale},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.lr, weight_decay=0.01, betas=(0.9, 0.98))
    model.train()
    running: dict[str, float] = {}
    for step in range(args.steps):
        examples = [next(stream) for _ in range(args.batch_size)]
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, args.steps, args.lr, args.warmup) * group["scale"]
        loss, kind_losses = forward_backward(model, processor, examples)
        for kind, value in kind_losses.items():
            running[kind] = value if kind not in running else 0.95 * running[kind] + 0.05 * value
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % args.log_every == 0 or step == args.steps - 1:
            per_kind = " ".join(f"{kind} {value:.3f}" for kind, value in running.items())
            print(f"step {step:5d}  loss {loss:.4f}  avg per kind: {per_kind}  {time.time() - started:6.0f} s",
                  flush=True)
    train_seconds = time.time() - started
    model.eval()
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)
    processor.save_pretrained(args.out)
    print(f"saved to {args.out} after {train_seconds:.0f} s of training")
    report = {"seed": args.seed, "steps": args.steps, "batch_size": args.batch_size, "train_seconds": round(train_seconds)}
    for blank in (False, True):
        scores = evaluate_dir(args.out, args.data_dir, blank=blank, limit=args.eval_rows)
        name = "blank_images" if blank else "eval"
        report[name] = scores
        print(name, json.dumps(scores))
    if args.report:
        args.report.write_text(json.dumps(report, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="where the model goes (default: a temporary dir)")
    parser.add_argument("--init", type=Path, default=None, help="continue stage 2 from this saved model")
    parser.add_argument("--data-dir", type=Path, default=Path("datasets_tsv/data"), help="the evaluation TSVs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=560)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--warmup", type=int, default=60)
    parser.add_argument("--language-steps", type=int, default=100, help="stage 0: language pretraining steps")
    parser.add_argument("--language-batch-size", type=int, default=64)
    parser.add_argument("--language-lr", type=float, default=1e-3)
    parser.add_argument("--vision-steps", type=int, default=400, help="stage 1: vision pretraining steps")
    parser.add_argument("--vision-batch-size", type=int, default=64)
    parser.add_argument("--vision-lr", type=float, default=2e-3)
    parser.add_argument("--vision-lr-scale", type=float, default=0.5, help="stage 2: the vision tower's share of --lr")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--eval-rows", type=int, default=None, help="score only the first N rows of each TSV")
    parser.add_argument("--log-every", type=int, default=25)
    parser.add_argument("--report", type=Path, default=None, help="also write the scores as JSON here")
    parser.add_argument("--smoke", action="store_true", help="3 steps of batch 4, 8 eval rows: checks it runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.steps, args.batch_size, args.warmup, args.log_every = 3, 4, 1, 1
        args.vision_steps, args.vision_batch_size = 3, 4
        args.language_steps, args.language_batch_size = 3, 4
        args.eval_rows = args.eval_rows or 8
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="vlmkit_tiny_"))
    train(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
