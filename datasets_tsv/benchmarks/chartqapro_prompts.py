"""ChartQAPro's prompts, VLMEvalKit's text character for character (vlmeval/dataset/utils/chartqapro.py
`prompt_context` at e8e78f05): one per answer style (Direct, CoT, PoT) and question type. `{question}` stands for
the question (the last one of a conversation), `{conversation}` for the list of the earlier turns, questions and
answers alternating, as Python writes a list of strings."""

from __future__ import annotations

PROMPTS: dict[tuple[str, str], str] = {
    ('Direct', 'Factoid'): (
        '\n'
        '            You are given a factoid question that you need to answer based on the provided image.\n'
        '            Your answer should be a single word, number, or phrase. If the question is unanswerable based on\n'
        '            the information in the provided image, your answer should be unanswerable. Do not generate units.\n'
        '            But if numerical units such as million, m, billion, B, or K are required, use the exact notation\n'
        '            shown in the chart.\n'
        '            If there are multiple answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to generate the final answer only without any additional text!\n'
        '            Question: {question}\n'
        '            '
    ),
    ('Direct', 'Multi Choice'): (
        '\n'
        '            You are given a question along with different possible answers. You need to select the correct answer\n'
        '            from them based on the provided image.\n'
        '            Your answer should be one of the options letters only: a, b, c or d (just the letter itself without any\n'
        '            additional text). If the question is unanswerable based on the information in the provided image, your\n'
        '            answer should be unanswerable.\n'
        '            If there are multiple answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to generate the final answer only without any additional text!\n'
        '            Question: {question}\n'
        '            '
    ),
    ('Direct', 'Conversational'): (
        '\n'
        '            You are given a multi-turn conversation, and your job is to answer the final question based on the\n'
        '            conversation history and the information in the provided image.\n'
        '            Your answer should be a single word, number, or phrase. If the question is unanswerable based on\n'
        '            the information in the provided image, your answer should be unanswerable. Do not generate units.\n'
        '            But if numerical units such as million, m, billion, B, or K are required, use the exact notation\n'
        '            shown in the chart.\n'
        '            If there are multiple answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to generate the final answer only without any additional text!\n'
        '            Conversation: {conversation} Question: {question}\n'
        '            '
    ),
    ('Direct', 'Fact Checking'): (
        '\n'
        '            You are given a fact statement that you need to assess based on the provided image.\n'
        '            Your answer should be either true or false (without any additional text). If the question is\n'
        '            unanswerable based on the information in the provided image, your answer should be unanswerable.\n'
        '            If there are multiple answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to generate the final answer only without any additional text!\n'
        '            Question: {question}\n'
        '            '
    ),
    ('Direct', 'Hypothetical'): (
        '\n'
        '            You are given a hypothetical question that you need to answer based on the provided image.\n'
        '            Your answer should be a single word, number, or phrase. If the question is unanswerable based on\n'
        '            the information in the provided image, your answer should be unanswerable. Do not generate units.\n'
        '            But if numerical units such as million, m, billion, B, or K are required, use the exact notation\n'
        '            shown in the chart.\n'
        '            If there are multiple answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to generate the final answer only without any additional text!\n'
        '            Question: {question}\n'
        '            '
    ),
    ('CoT', 'Factoid'): (
        '\n'
        '            You are given a factoid question that you need to answer based on the provided image.\n'
        '            You need to think step-by-step, but your final answer should be a single word, number, or phrase. If\n'
        '            the question is unanswerable based on the information in the provided image, your answer should be\n'
        '            unanswerable. Do not generate units. But if numerical units such as million, m, billion, B, or K are\n'
        '            required, use the exact notation shown in the chart.\n'
        '            If there are multiple final answers, put them in brackets using this format [’Answer1’, ’Answer2’]. .\n'
        '            Remember to think step-by-step and format the final answer in a separate sentence like "The answer is\n'
        '            X"\n'
        '            Question: {question}\n'
        '            '
    ),
    ('CoT', 'Multi Choice'): (
        '\n'
        '            You are given a question along with different possible answers. You need to select the correct answer\n'
        '            from them based on the provided image.\n'
        '            You need to think step-by-step, but your final answer should be one of the options letters only: a, b, c\n'
        '            or d (just the letter itself without any additional text). If the question is unanswerable based on the\n'
        '            information in the provided image, your answer should be unanswerable.\n'
        '            If there are multiple final answers, put them in brackets using this format [’Answer1’, ’Answer2’]. .\n'
        '            Remember to think step-by-step and format the final answer in a separate sentence like "The answer is\n'
        '            X"\n'
        '            Question: {question}\n'
        '            '
    ),
    ('CoT', 'Conversational'): (
        '\n'
        '            You are given a multi-turn conversation, and your job is to answer the final question based on the\n'
        '            conversation history and the information in the provided image.\n'
        '            You need to think step-by-step, but your final answer should be a single word, number, or phrase. If\n'
        '            the question is unanswerable based on the information in the provided image, your answer should be\n'
        '            unanswerable. Do not generate units. But if numerical units such as million, m, billion, B, or K are\n'
        '            required, use the exact notation shown in the chart.\n'
        '            If there are multiple final answers, put them in brackets using this format [’Answer1’, ’Answer2’]. .\n'
        '            Remember to think step-by-step and format the final answer in a separate sentence like "The answer is\n'
        '            X"\n'
        '            Conversation: {conversation} Question: {question}\n'
        '            '
    ),
    ('CoT', 'Fact Checking'): (
        '\n'
        '            You are given a fact statement that you need to assess based on the information in the provided image.\n'
        '            You need to think step-by-step, but your final answer should be either true or false (without any\n'
        '            additional text). If the question is unanswerable based on the information in the provided image, your\n'
        '            answer should be unanswerable.\n'
        '            If there are multiple final answers, put them in brackets using this format [’Answer1’, ’Answer2’]. .\n'
        '            Remember to think step-by-step and format the final answer in a separate sentence like "The answer is\n'
        '            X"\n'
        '            Question: {question}\n'
        '            '
    ),
    ('CoT', 'Hypothetical'): (
        '\n'
        '            You are given a hypothetical question that you need to answer based on the provided image.\n'
        '            You need to think step-by-step, but your final answer should be a single word, number, or phrase. If\n'
        '            the question is unanswerable based on the information in the provided image, your answer should be\n'
        '            unanswerable. Do not generate units. But if numerical units such as million, m, billion, B, or K are\n'
        '            required, use the exact notation shown in the chart.\n'
        '            If there are multiple final answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to think step-by-step and format the final answer in a separate sentence like "The answer is\n'
        '            X"\n'
        '            Question: {question}\n'
        '            '
    ),
    ('PoT', 'Factoid'): (
        '\n'
        '            You are given a factoid question that you need to answer based on the provided image.\n'
        '            You need to write an executable python code that calculates and prints the final answer, but your final\n'
        '            answer should be a single word, number, or phrase. If the question is unanswerable based on the\n'
        '            information in the provided image, your answer should be unanswerable. Do not generate units. But\n'
        '            if numerical units such as million, m, billion, B, or K are required, use the exact notation shown in the\n'
        '            chart.\n'
        '            If there are multiple final answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to return a python code only without any additional text.\n'
        '            Question: {question}\n'
        '            '
    ),
    ('PoT', 'Multi Choice'): (
        '\n'
        '            You are given a question along with different possible answers. You need to select the correct answer\n'
        '            from them based on the provided image.\n'
        '            You need to write an executable python code that calculates and prints the final answer, but your final\n'
        '            answer should be one of the options letters only: a, b, c or d (just the letter itself without any additional\n'
        '            text). If the question is unanswerable based on the information in the provided image, your answer\n'
        '            should be unanswerable.\n'
        '            If there are multiple final answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to return a python code only without any additional text.\n'
        '            Question: {question}\n'
        '            '
    ),
    ('PoT', 'Conversational'): (
        '\n'
        '            You are given a multi-turn conversation, and your job is to answer the final question based on the\n'
        '            conversation history and the information in the provided image.\n'
        '            You need to write an executable python code that calculates and prints the final answer, but your final\n'
        '            answer should be a single word, number, or phrase. If the question is unanswerable based on the\n'
        '            information in the provided image, your answer should be unanswerable. Do not generate units. But\n'
        '            if numerical units such as million, m, billion, B, or K are required, use the exact notation shown in the\n'
        '            chart.\n'
        '            If there are multiple final answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to return a python code only without any additional text.\n'
        '            Conversation: {conversation} Question: {question}\n'
        '            '
    ),
    ('PoT', 'Fact Checking'): (
        '\n'
        '            You are given a fact statement that you need to assess based on the information in the provided image.\n'
        '            You need to write an executable python code that calculates and prints the final answer, but your final\n'
        '            answer should be either true or false (without any additional text). If the question is unanswerable\n'
        '            based on the information in the provided image, your answer should be unanswerable.\n'
        '            If there are multiple final answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to return a python code only without any additional text.\n'
        '            Question: {question}\n'
        '            '
    ),
    ('PoT', 'Hypothetical'): (
        '\n'
        '            You are given a hypothetical question that you need to answer based on the provided image.\n'
        '            You need to write an executable python code that calculates and prints the final answer, but your final\n'
        '            answer should be a single word, number, or phrase. If the question is unanswerable based on the\n'
        '            information in the provided image, your answer should be unanswerable. Do not generate units. But\n'
        '            if numerical units such as million, m, billion, B, or K are required, use the exact notation shown in the\n'
        '            chart.\n'
        '            If there are multiple final answers, put them in brackets using this format [’Answer1’, ’Answer2’].\n'
        '            Remember to return a python code only without any additional text.\n'
        '            Question: {question}\n'
        '            '
    ),
}  # fmt: skip
