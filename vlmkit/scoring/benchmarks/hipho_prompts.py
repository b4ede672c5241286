"""HiPhO's judge prompts, character for character as VLMEvalKit sends them (vlmeval/dataset/utils/hipho_prompt_inference.py
and hipho_verifier.py at e8e78f05): the per-criterion grading prompt with its two warnings (fine-grained marking) and
the xverify answer check (coarse-grained answers). No pandas, no judge calls: texts and how they are filled.
"""

from __future__ import annotations

# JUDGE_GRADING_PROMPT_TEMPLATE after VLMEvalKit's str.format (its `{{score}}` becomes `{score}`)
GRADING_HEAD = """You are an expert physics competition grader.
Evaluate the student's solution against the specific grading criterion.

PHYSICS PROBLEM:
"""
GRADING_TAIL = r"""

INSTRUCTIONS:
1. Carefully analyze the student's solution for physics concepts, mathematical derivations, and calculations.
2. Compare the solution against the specific grading criterion provided.
3. Award points strictly according to the criterion, including partial credit when specified.
4. Consider both conceptual understanding and technical accuracy.
5. BE CONSERVATIVE - remember this is one of multiple criteria being evaluated simultaneously.

SCORING FORMAT:
- Read the grading criterion carefully to understand the maximum points and conditions for partial credit
- Evaluate whether the student's solution meets the full criteria, partial criteria, or no criteria
- Output your score using the exact format: \boxed{score}
- The score should be a number (e.g., 0.4, 0.2, 0.1, 0.0)

CRITICAL REQUIREMENTS:
- You MUST output your final score in the format: \boxed{score}
- The score must be a single number only (no text inside the boxed)
- Do not include explanations after the boxed score
- Ensure your score follows the point allocation in the grading criterion
- BE CONSERVATIVE to avoid exceeding the total score limit

Example outputs:
- \boxed{0.4} (for full credit)
- \boxed{0.1} (for partial credit)
- \boxed{0.0} (for no credit)

⚠️ CRITICAL INSTRUCTION:
- Output ONLY: \boxed{score}
- NO explanations, NO analysis, NO reasoning
- Just the number in the exact format \boxed{score}
- Any other text will result in AUTOMATIC REJECTION

RESPOND WITH ONLY THE BOXED SCORE:"""

TOTAL_SCORE_WARNING = """
⚠️  IMPORTANT TOTAL SCORE CONSTRAINT:
- This question has a maximum total score of {max_total_score} points
- ALL marking criteria scores combined MUST NOT exceed {max_total_score} points
- You are evaluating ONE criterion among multiple criteria for this question
- Be conservative in your scoring to ensure the total doesn't exceed the limit
- This is attempt #{current_attempt} of evaluation"""

RETRY_WARNING = """
🔄 RETRY NOTICE:
- Previous attempt(s) resulted in total score exceeding the maximum
- Please be more conservative in your scoring
- Focus on strict adherence to the criterion requirements"""

XVERIFY_HEAD = r"""
You are a diligent and precise assistant tasked with evaluating the correctness of responses. You will
receive a question, an output sentence, and the correct answer. Your task is to determine if the output
sentence accurately answers the question based on the provided correct answer. Respond with either
[Correct] or [Incorrect].
-
Special considerations:
1. **Multiple Answers**: If the output contains multiple answers, evaluate whether later answers
modify or correct earlier ones. In such cases, compare the final answer with the correct answer. If the
final answer is unclear or incorrect, respond with [Incorrect].
2. **Mathematical Problems**: If the formats differ but the answers are mathematically equivalent such as 256/55=4.65,
respond with [Correct].
3. **Phycis Problems**: If the values match such as 3=3 \, \text{GHz} return [Correct].
4. **Explicit Options**: If the question provides explicit candidate answers, the output will be
considered correct if it clearly indicates the correct option's code or the correct option's content.
5. **No Explicit Options**: If the question does not provide explicit options, the output must align
with the correct answer in content and meaning to be considered [Correct].
-
"""
XVERIFY_TAIL = """

⚠️ Final Instruction:
You must respond with exactly one of the following: [Correct] or [Incorrect].
❌ Do NOT include any explanation, reasoning, or additional text.
🚫 Any deviation from this format (even a single word) will be considered INVALID.

Judgement:
"""
XVERIFY_ACCEPTED = ("Correct", "[Correct]")  # the whole stripped reply, as VLMEvalKit compares it


def grading_prompt(question: str, prediction: str, criterion: str, max_total: float, attempt: int) -> str:
    """VLMEvalKit's _evaluate_single_criterion prompt: the total-score warning when the row's points sum above 0
    (`max_total`, written as Python writes the float), attempt numbered from 1, the retry notice from the second."""
    warning = TOTAL_SCORE_WARNING.format(max_total_score=max_total, current_attempt=attempt + 1) if max_total > 0 else ""
    retry = RETRY_WARNING if attempt > 0 else ""
    return (f"{GRADING_HEAD}{question}\n\nSTUDENT'S SOLUTION:\n{prediction}\n\nGRADING CRITERION:\n"
            f"{criterion}{warning}{retry}{GRADING_TAIL}")


def xverify_prompt(problem: str, given_answer: str, ground_truth: str) -> str:
    """VLMEvalKit's grade_answer_xverify prompt for one answer."""
    return (f'{XVERIFY_HEAD}Question: """{problem}"""\nOutput sentence: """{given_answer}"""\n'
            f"Correct answer: {ground_truth}{XVERIFY_TAIL}")


def xverify_correct(reply: str) -> bool:
    """VLMEvalKit's reading of an xverify reply: the stripped reply is `Correct` or `[Correct]`."""
    return reply.strip() in XVERIFY_ACCEPTED
