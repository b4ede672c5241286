"""Synthetic scenes and templated questions behind the vlmkit demo benchmark.

Shared by `make_demo_data.py` (writes the evaluation TSVs) and `train_demo_model.py` (draws the training stream).
Everything is a pure function of a `random.Random`, so a seed fixes every pixel and every word. Scenes are drawn
with pillow on a 224 px canvas and stored as JPEG; the tasks are chosen to be learnable by a tiny model in minutes:
the colour, kind and place of one big shape, the number (1-4) of small shapes, a short printed word, and the same
questions across two images.

Prompts follow VLMEvalKit's texts for MCQ, Y/N and VQA (see `build_prompt`), so the model is trained on exactly
what the dataset classes show it at evaluation.
"""

from __future__ import annotations

import functools
import hashlib
import io
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from PIL import Image, ImageDraw, ImageFont

CANVAS = 224
JPEG_QUALITY = 90
KINDS = ("mcq", "yorn", "vqa")
LETTERS = ("A", "B", "C", "D")

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 160, 60),
    "blue": (40, 80, 220),
    "yellow": (235, 200, 30),
    "purple": (140, 60, 180),
    "orange": (245, 135, 30),
}
SHAPES = ("circle", "square", "triangle", "star")
POSITIONS = ("left", "right", "top", "bottom")
WORDS = ("CAT", "DOG", "SUN", "BOX", "HAT", "PEN")
BACKGROUNDS = ((255, 255, 255), (236, 236, 236), (246, 240, 226), (230, 238, 246))
ORDINALS = ("first", "second")

# Question families (the `category` column) and their share of each split.
CATEGORIES = ("colour", "shape", "position", "count", "word", "multi_image")
CATEGORY_WEIGHTS = (0.2, 0.2, 0.18, 0.17, 0.13, 0.12)
L2_CATEGORY = {
    "colour": "perception",
    "shape": "perception",
    "position": "spatial",
    "count": "spatial",
    "word": "ocr",
    "multi_image": "multi-image",
}
HINTS = {
    "colour": "The image shows one shape on a plain background.",
    "shape": "Look at the outline of the shape.",
    "position": "The image is divided into left, right, top and bottom parts.",
    "count": "All the shapes in the image look alike.",
    "word": "The word is printed in capital letters.",
    "multi_image": "There are two images, each with one shape.",
}
HINT_RATE = 0.35
SHARE_RATE = 0.3
TRAIN_KIND_WEIGHTS = (0.4, 0.3, 0.3)

MCQ_SUFFIX = "Please select the correct answer from the options above. \n"
VQA_SUFFIX = "\nAnswer the question using a single word or phrase."


@dataclass(frozen=True)
class Scene:
    """One picture: `layout` is "object" (one big shape), "count" (1-4 small alike shapes) or "word"."""

    layout: str
    background: tuple[int, int, int]
    shape: str = ""
    colour: str = ""
    rgb: tuple[int, int, int] = (0, 0, 0)
    position: str = ""
    items: tuple[tuple[int, int, int], ...] = ()  # (centre x, centre y, size) per drawn thing
    word: str = ""


@dataclass(frozen=True)
class Example:
    """One benchmark row before encoding: its scenes, the question fields and the expected answer."""

    kind: str
    category: str
    scenes: tuple[Scene, ...]
    question: str
    answer: str
    options: tuple[str, ...] = ()
    hint: str = ""
    grounds: tuple[str, ...] = ()  # what the answer rests on: see `training_target`
    extra: dict = field(default_factory=dict, compare=False)


# ---------------------------------------------------------------------------------------------------- scenes


def _jitter(rng: random.Random, rgb: tuple[int, int, int], amount: int = 14) -> tuple[int, int, int]:
    return tuple(max(0, min(255, c + rng.randint(-amount, amount))) for c in rgb)  # type: ignore[return-value]


def sample_object_scene(
    rng: random.Random, shape: str | None = None, colour: str | None = None, position: str | None = None
) -> Scene:
    shape = shape or rng.choice(SHAPES)
    colour = colour or rng.choice(list(COLOURS))
    position = position or rng.choice(POSITIONS)
    size = rng.randint(64, 92)
    near, far = rng.randint(size // 2 + 6, 70), rng.randint(94, 130)
    cx, cy = {
        "left": (near, far),
        "right": (CANVAS - near, far),
        "top": (far, near),
        "bottom": (far, CANVAS - near),
    }[position]
    return Scene(
        layout="object",
        background=rng.choice(BACKGROUNDS),
        shape=shape,
        colour=colour,
        rgb=_jitter(rng, COLOURS[colour]),
        position=position,
        items=((cx, cy, size),),
    )


def sample_count_scene(rng: random.Random, count: int | None = None) -> Scene:
    count = count or rng.randint(1, 4)
    size = rng.randint(34, 46)
    items: list[tuple[int, int, int]] = []
    lo, hi = size // 2 + 4, CANVAS - size // 2 - 4
    while len(items) < count:  # rejection sampling; four 46 px shapes always fit, so this ends quickly
        cx, cy = rng.randint(lo, hi), rng.randint(lo, hi)
        if all(math.hypot(cx - x, cy - y) >= size * 1.3 for x, y, _ in items):
            items.append((cx, cy, size))
    colour = rng.choice(list(COLOURS))
    return Scene(
        layout="count",
        background=rng.choice(BACKGROUNDS),
        shape=rng.choice(SHAPES),
        colour=colour,
        rgb=_jitter(rng, COLOURS[colour]),
        items=tuple(items),
    )


def sample_word_scene(rng: random.Random, word: str | None = None) -> Scene:
    word = word or rng.choice(WORDS)
    size = rng.randint(54, 66)
    cx, cy = CANVAS // 2 + rng.randint(-22, 22), CANVAS // 2 + rng.randint(-40, 40)
    return Scene(
        layout="word",
        background=rng.choice(BACKGROUNDS),
        rgb=_jitter(rng, (30, 30, 30), 25),
        items=((cx, cy, size),),
        word=word,
    )


def _shape_polygon(shape: str, cx: int, cy: int, size: int) -> list[tuple[float, float]]:
    r = size / 2
    if shape == "triangle":
        return [(cx, cy - r), (cx + r, cy + r * 0.8), (cx - r, cy + r * 0.8)]
    points = []  # star: 5 outer and 5 inner corners
    for i in range(10):
        radius = r if i % 2 == 0 else r * 0.42
        angle = -math.pi / 2 + i * math.pi / 5
        points.append((cx + radius * math.cos(angle), cy + radius * math.sin(angle)))
    return points


def draw_scene(scene: Scene) -> Image.Image:
    image = Image.new("RGB", (CANVAS, CANVAS), scene.background)
    draw = ImageDraw.Draw(image)
    if scene.layout == "word":
        cx, cy, size = scene.items[0]
        font = ImageFont.load_default(size=size)
        draw.text((cx, cy), scene.word, font=font, fill=scene.rgb, anchor="mm")
        return image
    for cx, cy, size in scene.items:
        r = size / 2
        if scene.shape == "circle":
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=scene.rgb)
        elif scene.shape == "square":
            s = r * 0.88
            draw.rectangle((cx - s, cy - s, cx + s, cy + s), fill=scene.rgb)
        else:
            draw.polygon(_shape_polygon(scene.shape, cx, cy, size), fill=scene.rgb)
    return image


@functools.lru_cache(maxsize=512)
def scene_jpeg(scene: Scene) -> bytes:
    """The scene as JPEG bytes: the exact bytes stored in the TSV (and seen in training). Cached, since the
    training stream encodes each picture once for the overlap check and once more for the batch."""
    buffer = io.BytesIO()
    draw_scene(scene).save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return buffer.getvalue()


def image_key(jpeg: bytes) -> str:
    """Identity of a picture for the train/eval overlap check."""
    return hashlib.sha1(jpeg).hexdigest()


# ---------------------------------------------------------------------------------------------------- questions


def _other(rng: random.Random, pool: Sequence[str], value: str) -> str:
    return rng.choice([x for x in pool if x != value])


def _mcq_options(rng: random.Random, pool: Sequence[str], answer: str) -> tuple[tuple[str, ...], str]:
    distractors = rng.sample([x for x in pool if x != answer], 3)
    slot = rng.randrange(4)
    options = distractors[:slot] + [answer] + distractors[slot:]
    return tuple(options), LETTERS[slot]


def _count_phrase(n: int) -> str:
    return "exactly 1 shape" if n == 1 else f"exactly {n} shapes"


def _scenes_for(rng: random.Random, category: str) -> tuple[Scene, ...]:
    if category in ("colour", "shape", "position"):
        return (sample_object_scene(rng),)
    if category == "count":
        return (sample_count_scene(rng),)
    if category == "word":
        return (sample_word_scene(rng),)
    return (sample_object_scene(rng), sample_object_scene(rng))


def _ask(rng: random.Random, category: str, kind: str, scenes: tuple[Scene, ...], target: bool) -> Example:
    """The question of `category` and `kind` about `scenes`; for Y/N, `target` is the answer to produce."""
    scene = scenes[0]
    if category == "multi_image":
        return _ask_multi(rng, kind, scenes, target)
    attr, pool = {
        "colour": (scene.colour, list(COLOURS)),
        "shape": (scene.shape, SHAPES),
        "position": (scene.position, POSITIONS),
        "count": (str(len(scene.items)), ("1", "2", "3", "4")),
        "word": (scene.word, WORDS),
    }[category]
    if kind == "yorn":
        value = attr if target else _other(rng, pool, attr)
        question = {
            "colour": rng.choice(("Is the shape {v}?", "Is the shape in the image {v}?")),
            "shape": rng.choice(("Is there a {v} in the image?", "Does the image show a {v}?")),
            "position": rng.choice(("Is the shape in the {v} part of the image?", "Is the shape at the {v}?")),
            "count": "Are there {v} in the image?" if value != "1" else "Is there {v} in the image?",
            "word": rng.choice(("Does the image show the word {v}?", "Is the word {v} written in the image?")),
        }[category]
        shown = _count_phrase(int(value)) if category == "count" else value
        return Example("yorn", category, scenes, question.format(v=shown), "Yes" if target else "No",
                       grounds=(attr, value))
    question = {
        "colour": rng.choice(("What colour is the shape?", "Which colour is the shape in the image?")),
        "shape": rng.choice(("What shape is shown in the image?", "Which shape is drawn in the image?")),
        "position": rng.choice(("Where is the shape in the image?", "In which part of the image is the shape?")),
        "count": rng.choice(("How many shapes are there in the image?", "How many shapes can you see?")),
        "word": rng.choice(("What word is written in the image?", "Which word is shown in the image?")),
    }[category]
    if kind == "vqa":
        return Example("vqa", category, scenes, question, attr, grounds=(attr,))
    options, letter = _mcq_options(rng, pool, attr)
    hint = HINTS[category] if rng.random() < HINT_RATE else ""
    return Example("mcq", category, scenes, question, letter, options=options, hint=hint, grounds=(attr,))


def _ask_multi(rng: random.Random, kind: str, scenes: tuple[Scene, ...], target: bool) -> Example:
    if kind == "yorn":
        attribute = rng.choice(("shape", "colour"))
        first, second = scenes
        wanted = getattr(first, attribute)
        pool = SHAPES if attribute == "shape" else list(COLOURS)
        value = wanted if target else _other(rng, pool, wanted)
        # Redraw the second scene so that its attribute says what `target` asks for.
        second = sample_object_scene(rng, **{attribute: value})
        question = (
            "Do the two images show the same shape?"
            if attribute == "shape"
            else "Are the shapes in the two images the same colour?"
        )
        return Example("yorn", "multi_image", (first, second), question, "Yes" if target else "No",
                       grounds=(wanted, value))
    which = rng.randrange(2)
    attribute = rng.choice(("shape", "colour"))
    scene = scenes[which]
    attr = getattr(scene, attribute)
    question = (
        f"What shape is in the {ORDINALS[which]} image?"
        if attribute == "shape"
        else f"What colour is the shape in the {ORDINALS[which]} image?"
    )
    if kind == "vqa":
        return Example("vqa", "multi_image", scenes, question, attr, grounds=(attr,))
    options, letter = _mcq_options(rng, SHAPES if attribute == "shape" else list(COLOURS), attr)
    hint = HINTS["multi_image"] if rng.random() < HINT_RATE else ""
    return Example("mcq", "multi_image", scenes, question, letter, options=options, hint=hint, grounds=(attr,))


def sample_example(rng: random.Random, kind: str, category: str, target: bool = True) -> Example:
    """A fresh example of `kind` and `category`; `target` is the Y/N answer (ignored for other kinds)."""
    return _ask(rng, category, kind, _scenes_for(rng, category), target)


def _quota(n: int, even: bool) -> list[str]:
    """Categories for n rows in the fixed shares; even counts per category when Y/N must balance."""
    counts = [int(n * w) for w in CATEGORY_WEIGHTS]
    if even:
        counts = [c - c % 2 for c in counts]
    i = 0
    step = 2 if even else 1
    while sum(counts) < n:
        counts[i % len(counts)] += step
        i += 1
    return [c for c, k in zip(CATEGORIES, counts) for _ in range(k)]


def evaluation_examples(kind: str, n: int, seed: int) -> list[Example]:
    """The n rows of one evaluation TSV: fixed category shares, Y/N exactly balanced per category, and some
    MCQ rows asking a second question about the previous row's picture (their TSV `image` is that row's index)."""
    if kind == "yorn" and n % 2:
        raise ValueError("the Y/N split needs an even row count to balance Yes and No")
    rng = random.Random(f"vlmkit-demo/{kind}/{seed}")
    categories = _quota(n, even=kind == "yorn")
    targets = [i % 2 == 0 for i in range(n)]  # Yes/No alternate inside each category's block
    order = list(range(n))
    rng.shuffle(order)
    examples: list[Example] = []
    for i in order:
        category, target = categories[i], targets[i]
        previous = examples[-1] if examples else None
        share = (
            kind == "mcq"
            and previous is not None
            and previous.category in ("colour", "shape", "position")
            and category in ("colour", "shape", "position")
            and category != previous.category
            and not previous.extra.get("shared")
            and rng.random() < SHARE_RATE
        )
        if share:
            example = _ask(rng, category, kind, previous.scenes, target)
            example.extra["shared"] = True
        else:
            example = sample_example(rng, kind, category, target)
        examples.append(example)
    return examples


def training_examples(seed: int, excluded: set[str] | frozenset[str] = frozenset()) -> Iterator[Example]:
    """An endless, seeded stream of training examples, skipping any whose picture is in `excluded`."""
    rng = random.Random(f"vlmkit-demo/train/{seed}")
    while True:
        kind = rng.choices(KINDS, weights=TRAIN_KIND_WEIGHTS)[0]
        category = rng.choices(CATEGORIES, weights=CATEGORY_WEIGHTS)[0]
        example = sample_example(rng, kind, category, rng.random() < 0.5)
        if excluded and any(image_key(scene_jpeg(s)) in excluded for s in example.scenes):
            continue
        yield example


# ---------------------------------------------------------------------------------------------------- rows and prompts


def example_fields(example: Example) -> dict[str, str]:
    """The TSV text columns of an example (everything but `index` and `image`)."""
    if example.kind == "mcq":
        fields = {"question": example.question, "hint": example.hint}
        fields.update(zip(LETTERS, example.options))
        fields.update(
            answer=example.answer,
            category=example.category,
            **{"l2-category": L2_CATEGORY[example.category]},
            split="dev",
        )
        return fields
    return {"question": example.question, "answer": example.answer, "category": example.category}


def _present(value: object) -> bool:
    """A TSV cell that holds something (pandas gives NaN for empty cells)."""
    if value is None:
        return False
    if isinstance(value, float) and math.isnan(value):
        return False
    return str(value) != ""


def build_prompt(kind: str, row: Mapping[str, object]) -> str:
    """The text part VLMEvalKit's dataset classes build for a row (the images go before it)."""
    question = str(row["question"])
    if kind == "vqa":
        return question + VQA_SUFFIX
    if kind == "yorn":
        return question
    prompt = f"Hint: {row['hint']}\n" if _present(row.get("hint")) else ""
    prompt += f"Question: {question}\n"
    options = [(letter, row[letter]) for letter in LETTERS if letter in row and _present(row[letter])]
    if options:
        prompt += "Options:\n" + "".join(f"{letter}. {text}\n" for letter, text in options) + MCQ_SUFFIX
    return prompt


def training_target(example: Example) -> str:
    """The text the demo model is trained to answer with; it scores as `answer` under vlmkit's extraction.

    - VQA: the answer ("red").
    - MCQ: the text of the right option ("red"), which VLMEvalKit's option-text rule maps to its letter.
    - Y/N: what the picture shows, then the word the question asks about (for two pictures: what each shows),
      then the verdict: "red vs blue: No". Putting both words side by side before the verdict turns a
      comparison across the prompt into one between the two previous words, which a tiny model learns in
      minutes; answering "No" directly, it stayed at chance (see the model card).
    """
    if example.kind == "vqa":
        return example.answer
    if example.kind == "mcq":
        return example.grounds[0]
    seen, other = example.grounds
    return f"{seen} vs {other}: {example.answer}"


def corpus_texts(seed: int, n: int) -> list[str]:
    """Prompts and answers of n training examples: the text the tokenizer is trained on."""
    stream = training_examples(seed)
    texts = []
    for _ in range(n):
        example = next(stream)
        texts.append(build_prompt(example.kind, example_fields(example)))
        texts.append(training_target(example))
    return texts
