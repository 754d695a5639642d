"""What of a reply is its answer, and what is scratch: reasoning blocks never decide.

A reasoning model writes ``<think>...</think>`` before its answer; others write "Thinking:",
"Reasoning:" or "Draft:" sections, a JSON object with a "reasoning" field, or LaTeX's ``\\boxed{}``.
The judge reads only what is left once the scratch is taken out (:func:`answer_part`), so a draft that
names the wrong option never decides over the final answer, and a reply that is all scratch (an
unclosed ``<think>``, a "Reasoning:" section with no answer after it) has no answer to decide on:

* ``<think>``, ``<thinking>``, ``<reasoning>``, ``<reflection>``, ``<scratchpad>`` blocks, to their closing tag
  or, unclosed, to the end; a closing tag with no opening one closes everything before it;
* a line that opens with a scratch label ("Thinking:", "Reasoning:", "Draft:", "Chain of thought:") opens a
  section that runs to the next line opening with an answer label ("Answer:", "Final answer:", "Final:"), or
  to the end;
* but a block or section after the answer, with nothing after it, is read as text: it may take the answer back
  ("B <think>no, A</think>"), and the judge's rules for what follows an answer apply to it;
* ``\\boxed{X}`` (with ``\\text{}`` inside) is the answer line "Final answer: X";
* a chat template's tokens at the reply's edges (a role header before it, an end-of-turn token after it:
  "<|im_start|>assistant", "<|eot_id|>", "[/INST] ... </s>") are taken out: the format's, not the model's words;
* a reply that is one JSON object with one answer field ("answer", "final_answer", "choice", ...) and otherwise
  only fields of reasoning is that field as an answer line (a field such as "confidence" may qualify it: the
  object is then read as it is).

Everything here walks the text with ``str.find`` (no pattern that can backtrack).
"""

from __future__ import annotations

import json

#: tags of reasoning blocks (folded)
_BLOCK_TAGS = ("think", "thinking", "reasoning", "reflection", "scratchpad", "thought", "thoughts")
#: labels that open a scratch section at the start of a line (folded, before the colon)
_SCRATCH_LABELS = frozenset({"thinking", "thoughts", "thought", "reasoning", "draft", "draft answer", "scratch",
                             "scratchpad", "chain of thought", "thought process", "internal reasoning",
                             "razonamiento", "borrador", "überlegung", "begründung", "entwurf", "raisonnement",
                             "brouillon", "思考", "推理", "草稿", "考え"})
#: labels that open the answer at the start of a line: a scratch section ends there
_ANSWER_LABELS = frozenset({"answer", "final answer", "final", "my answer", "my final answer", "conclusion",
                            "respuesta", "respuesta final", "antwort", "endgültige antwort", "réponse",
                            "réponse finale", "答案", "回答", "最终答案", "答え"})
#: fields of a JSON reply that hold its answer
_ANSWER_FIELDS = ("final_answer", "answer", "choice", "option", "selected", "label", "response", "result")
#: fields of a JSON reply that are scratch; any other field ("confidence", "alternative") may qualify the answer
_SCRATCH_FIELDS = frozenset({"reasoning", "reason", "explanation", "rationale", "thoughts", "thinking", "analysis",
                             "justification", "steps", "chain_of_thought"})
_COLONS = ":："
_BOXED = "\\boxed{"


#: a chat template's role header before the reply, as a serving stack may leave it in the text (folded)
_TEMPLATE_HEADERS = ("<|im_start|>assistant", "<|start_header_id|>assistant<|end_header_id|>", "<|assistant|>",
                     "<start_of_turn>model", "[/inst]", "<|begin_of_text|>", "<bos>")
#: a chat template's end-of-turn or end-of-text token after the reply (folded)
_TEMPLATE_ENDS = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<|endoftext|>", "<|end_of_text|>", "<end_of_turn>",
                  "<eos>", "<｜end▁of▁sentence｜>", "</s>")
#: what a template token opens with: one left inside the reply (another turn's header) is no edge of the reply
_TEMPLATE_OPENERS = ("<|", "<｜", "<start_of_turn>", "<end_of_turn>", "[inst]", "[/inst]", "<s>", "</s>", "<eos>",
                     "<bos>")


def without_template(text: str) -> str:
    """The reply without the chat template's tokens at its edges ("<|im_start|>assistant\\nB<|im_end|>",
    "[/INST] B</s>", "B<|eot_id|>"): they are the format's, not the model's words. Where a template token is left
    inside (another turn follows: "B<|im_end|><|im_start|>user ...") or "<s>" may be HTML's strike-through
    ("<s>B</s> A"), the reply is read as it is."""
    if "<" not in text and "[" not in text:
        return text  # every template token has one of them: most replies are left at once
    body = text.strip()
    while True:
        folded = body.casefold()
        header = next((h for h in _TEMPLATE_HEADERS if folded.startswith(h)), None)
        end = next((e for e in _TEMPLATE_ENDS if folded.endswith(e)), None)
        if header is None and end is None:
            break
        body = body[len(header or ""):len(body) - len(end or "")].strip()
    if body == text.strip() or any(opener in body.casefold() for opener in _TEMPLATE_OPENERS):
        return text
    return body


def answer_part(text: str) -> str:
    """The reply without its scratch: reasoning blocks and sections removed, ``\\boxed{}`` and a JSON answer
    field made answer lines. Empty when everything in the reply is scratch."""
    text = without_template(text)
    json_answer = _json_answer(text)
    if json_answer is not None:
        return f"Answer: {json_answer}"
    text = _without_blocks(text)
    text = _without_sections(text)
    if "\\boxed" in text:
        text = _unboxed(text)
    return text


def _without_blocks(text: str) -> str:
    folded = text.casefold()
    for tag in _BLOCK_TAGS:
        opening, closing = f"<{tag}>", f"</{tag}>"
        last_close = folded.rfind(closing)
        first_open = folded.find(opening)
        if last_close >= 0 and (first_open < 0 or first_open > last_close):
            # "...reasoning</think> answer": the opening tag was left out
            cut = last_close + len(closing)
            text, folded = text[cut:], folded[cut:]
        kept: list[str] = []
        at = 0
        while True:
            start = folded.find(opening, at)
            if start < 0:
                kept.append(text[at:])
                break
            kept.append(text[at:start])
            end = folded.find(closing, start)
            after = len(text) if end < 0 else end + len(closing)
            if not text[after:].strip() and "".join(kept).strip():
                # a block after the answer is read as text: it may take the answer back ("B <think>no, A")
                kept.append(text[start + len(opening):end if end >= 0 else len(text)])
                break
            if end < 0:  # unclosed, before any answer: everything after it is scratch
                break
            at = after
        text = "\n".join(piece for piece in kept if piece.strip())
        folded = text.casefold()
    return text


def _label(line: str) -> str | None:
    """The folded label before a colon that opens ``line`` ("**Final answer:**" -> "final answer"), or None."""
    stripped = line.strip().lstrip("#*_>-• ").casefold()
    colon = min((i for i in (stripped.find(c) for c in _COLONS) if i >= 0), default=-1)
    if colon <= 0 or colon > 32:
        return None
    return " ".join(stripped[:colon].strip("*_ ").split())


def _without_sections(text: str) -> str:
    lines = text.split("\n")
    kept: list[str] = []
    scratch = False
    section: list[str] = []  # the lines of the scratch section being read
    for line in lines:
        label = _label(line)
        if label in _SCRATCH_LABELS:
            scratch = True
            section.append(line)
            continue
        if label in _ANSWER_LABELS:
            scratch, section = False, []
            if label == "final":  # "Final: the basket" is an answer line
                line = line.replace(line[:line.casefold().find("final") + 5], "Final answer", 1)
        if scratch:
            section.append(line)
        else:
            kept.append(line)
    if section and "".join(kept).strip():
        kept += section  # a section after the answer, with no answer after it, is read as text: it may take it back
    return "\n".join(kept)


def _unboxed(text: str) -> str:
    """``\\boxed{X}`` as the line "Final answer: X", ``\\text{X}`` as X, and LaTeX's math delimiters removed."""
    text = _unwrapped(text, "\\text{")
    out: list[str] = []
    at = 0
    while True:
        start = text.find(_BOXED, at)
        if start < 0:
            out.append(text[at:])
            break
        end = text.find("}", start)
        if end < 0:
            out.append(text[at:])
            break
        out.append(text[at:start])
        out.append(f"\nFinal answer: {text[start + len(_BOXED):end]}\n")
        at = end + 1
    text = "".join(out)
    for delimiter in ("$$", "$", "\\[", "\\]", "\\(", "\\)"):
        text = text.replace(delimiter, " ")
    return text


def _unwrapped(text: str, command: str) -> str:
    """``text`` with every ``\\command{X}`` (no braces inside) written as X."""
    out: list[str] = []
    at = 0
    while True:
        start = text.find(command, at)
        end = text.find("}", start) if start >= 0 else -1
        if end < 0:
            out.append(text[at:])
            return "".join(out)
        out += [text[at:start], text[start + len(command):end]]
        at = end + 1


def _json_answer(text: str) -> str | None:
    """The answer field of a reply that is one JSON object (in a code fence or not), or None."""
    fields = _json_fields(text)
    if fields is None:
        return None
    answers = [name for name in _ANSWER_FIELDS if name in fields]
    if len(answers) != 1 or set(fields) - _SCRATCH_FIELDS - {answers[0]}:
        return None  # two answer fields, or a field that may qualify the answer ("confidence": "low")
    value = fields[answers[0]]
    return value.strip() if isinstance(value, str) and value.strip() else None


def json_reasoning(text: str) -> str:
    """The reasoning fields' text of a reply that is one JSON answer object ("" for any other reply): it never
    decides, but where it ends on another option than the answer field the reply says two things."""
    text = without_template(text)
    fields = _json_fields(text)
    if fields is None or _json_answer(text) is None:
        return ""
    return "\n".join(value for name, value in fields.items() if name in _SCRATCH_FIELDS and isinstance(value, str))


def _json_fields(text: str) -> dict[str, object] | None:
    """The fields (names folded) of a reply that is one JSON object, in a code fence or not; None for any other."""
    body = text.strip()
    if body.startswith("```"):
        body = body[3:]
        body = body[4:] if body[:4].casefold() == "json" else body
        body = body.rstrip("`").strip()
    if not (body.startswith("{") and body.endswith("}")):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return {str(key).casefold(): value for key, value in data.items()}
