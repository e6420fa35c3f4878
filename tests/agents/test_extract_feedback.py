"""Code extraction from replies, the pre-sandbox lint, and feedback messages."""

from __future__ import annotations

import pytest

from itemsmith.agents.extract import ExtractionError, extract_code, lint
from itemsmith.agents.feedback import build_feedback, failing_line, hint_for
from itemsmith.agents.profile import ColumnInfo, HandlerProfile, SeriesPeek

from .conftest import GOOD


def test_fenced_python_block_with_prose_around() -> None:
    reply = f"Sure! Here it is:\n```python\n{GOOD}```\nThis counts the maximum."
    assert extract_code(reply) == GOOD


def test_last_block_defining_question_wins() -> None:
    reply = f"```python\nx = 1\n```\nfirst try:\n```python\ndef question(n):\n    return 1\n```\nbetter:\n```py\n{GOOD}```"
    assert extract_code(reply) == GOOD


def test_unterminated_fence() -> None:
    assert extract_code(f"```python\n{GOOD}") == GOOD


def test_unfenced_code_with_prose_before_and_after() -> None:
    reply = f"Here is my template.\n\n{GOOD}\nThis template picks a record."
    assert extract_code(reply).strip() == GOOD.strip()


def test_main_guard_is_removed() -> None:
    reply = f"```python\n{GOOD}\nif __name__ == '__main__':\n    print(question(3))\n```"
    code = extract_code(reply)
    assert "__name__" not in code and "def question" in code


def test_imports_the_code_never_uses_are_dropped_and_used_ones_stay() -> None:
    # a local model's reply: scipy imported and never called (the sandbox refused the whole template)
    body = "def question(num_samples):\n    return [np.mean(values) for values in ()]\n"
    unused = ("import numpy as np\nfrom datetime import datetime, timedelta\nfrom scipy.stats import skew\n"
              "from typing import (\n    List,\n    Dict,\n)\n\n")
    assert extract_code(f"```python\n{unused}{body}```") == f"import numpy as np\n\n{body}"
    # used imports stay for the sandbox to judge, whatever they are; so do star imports and `;` lines
    for kept in ("from scipy.stats import skew\n\nX = skew\n", "import os.path\nX = os.path.join\n",
                 "from os import *\n", "import os; X = 1\n", "import subprocess as sp, os\nX = os\n"):
        assert extract_code(f"```python\n{kept}{body}```") == kept + body, kept
    # a name reached only through a string is not a use: such code loses the import, never gains one
    hostile = "import os\n" + body.replace("return", "getattr(globals()['os'], 'system')('id')\n    return")
    assert "import os" not in extract_code(f"```python\n{hostile}```")


@pytest.mark.parametrize("reply", ["", "   ", "I cannot help with that.", "```\n\n```",
                                   "```python\ndef helper(x):\n    return x\n```"])
def test_garbage_replies_raise_feedback(reply: str) -> None:
    with pytest.raises(ExtractionError, match="python"):
        extract_code(reply)


def test_syntax_errors_are_not_extraction_errors() -> None:
    broken = "def question(num_samples):\n    return [\n"
    assert extract_code(f"```python\n{broken}```") == broken
    assert lint(broken) is None  # the sandbox reports it with its line


def test_lint_flags_redefined_injected_names() -> None:
    assert "rng" in (lint("rng = np.random.default_rng(0)\n" + GOOD) or "")
    assert "mc_item" in (lint("def mc_item(q):\n    return q\n" + GOOD) or "")
    assert "exactly one argument" in (lint("def question():\n    return []\n") or "")
    assert "return" in (lint("def question(n):\n    x = 1\n") or "")
    assert lint(GOOD) is None


PROFILE = HandlerProfile(
    name="tiny", description="d", n_records=3, record_id_dtype="str",
    columns=[ColumnInfo(name="record_id", dtype="str"), ColumnInfo(name="label", dtype="str", values=["up"])],
    example_records=[{"record_id": "a", "label": "up"}],
    series=[SeriesPeek(record_id="a", length=72, index_dtype="datetime64[ns]", index_name="time",
                       index_first="2024-01-01", index_last="2024-01-03", step="1h",
                       columns=[ColumnInfo(name="level", dtype="float64", min=0, max=1)], head=[])],
    series_length_range=(72, 72))


def test_feedback_quotes_error_line_and_names_real_columns() -> None:
    source = "def question(num_samples):\n    ids = 1\n    x = frame['height']\n    return []\n"
    error = "KeyError: 'height' (template line 3: x = frame['height'])"
    text = build_feedback(error, source, PROFILE)
    assert text.startswith("Error: KeyError: 'height'")
    assert ">>   3 |     x = frame['height']" in text
    assert "level" in text and "label" in text  # the real column names


def test_hints_for_known_mistakes() -> None:
    assert "rng.integers" in hint_for("AttributeError: rng.randint is not available")
    assert "exactly 3 distractors" in hint_for("ValueError: mc_item needs 1 to 5 distractors, got 6")
    assert "filter" in hint_for("ValueError: list.remove(x): x not in list")
    assert "dropna" in hint_for("series has 3 non-finite value(s) (NaN or inf)")
    assert "skeleton" in hint_for("SomethingNew: nobody has seen this")


def test_failing_line_out_of_range() -> None:
    assert failing_line("error (template line 99: x)", "a = 1\n") is None
    assert failing_line("no line here", "a = 1\n") is None


def test_specific_hints_name_the_templates_own_variables() -> None:
    source = ("def question(num_samples):\n    count = 3\n    item = mc_item(\n        'q',\n"
              "        str(count), [])\n    return [item]\n")
    text = build_feedback("ValueError: mc_item needs 1 to 5 distractors, got 0 (template line 3: item = mc_item()",
                          source)
    assert "`key, wrong = numeric_options(count, spread=..., decimals=1)`" in text
    assert "(-3, 3, 6)" not in text  # symmetric offsets put the key always at the same rank
    assert ">>   3 |     item = mc_item(" in text and "str(count), [])" in text  # the whole statement
    examples = '```python\nMONTHS = ["Jan",\n          "Feb"]\n\n\ndef question(n):\n    pass\n```'
    text = build_feedback("NameError: name 'MONTHS' is not defined (template line 2: x)", source, examples=examples)
    assert 'MONTHS = ["Jan",\n          "Feb"]' in text


def test_hints_for_pandas_and_numpy_index_mistakes() -> None:
    assert "np.argmax" in hint_for("AttributeError: 'numpy.ndarray' object has no attribute 'index'")
    assert "np.argmax" in hint_for("TypeError: list indices must be integers or slices, not Timestamp")
    assert "np.argmax" in hint_for("AttributeError: 'DatetimeIndex' object has no attribute 'iloc'")
    assert "is the index" in hint_for("KeyError: 'time'", PROFILE)  # the series' index name, not a column
    # seen in a real local run: an f-string formatting a whole array, repeated for three rounds
    assert "float(np.mean(values))" in hint_for("TypeError: unsupported format string passed to "
                                                "numpy.ndarray.__format__ (template line 26: rationale=...)")


def test_empty_output_hint_quotes_the_skip_conditions_and_their_inputs() -> None:
    source = ("def question(num_samples):\n    items = []\n    for k in range(9):\n        top = 3\n"
              "        wrong = [d for d in [top] if d == top]\n        if len(wrong) < 3:\n            continue\n"
              "    return items\n")
    text = build_feedback("question(5) returned 0 items; expected 5", source)
    assert "line 6: `if len(wrong) < 3: continue`, where line 5: `wrong = [d for d in [top] if d == top]`" in text
    assert "other values than the correct one" in text


def test_text_answers_get_date_distractors_not_offsets() -> None:
    source = "def question(n):\n    day = dates[3]\n    wrong = [day + d for d in (-3, 3)]\n    return []\n"
    text = build_feedback("TypeError: can only concatenate str (not \"int\") to str (template line 3: x)", source)
    assert "Hint: `day` is text" in text and "date_options(day, low=dates[0]" in text
    assert "convert with float" not in text


def test_hints_say_which_frame_holds_a_column_and_how_series_is_called() -> None:
    assert "column of handler.records()" in hint_for("KeyError: 'label'", PROFILE)
    assert "column of handler.series(rid)" in hint_for("KeyError: 'level'", PROFILE)
    assert "number of decimals" in hint_for("TypeError: 'float' object cannot be interpreted as an integer")
    source = "def question(n):\n    dates = ['2024-01-01']\n    s = series(dates, name='d')\n    return []\n"
    text = build_feedback("ValueError: could not convert string to float: '2024-01-01' (template line 3: s = ...)",
                          source)
    assert "takes the whole series" in text
    examples = "```python\ndef no_split(part):\n    return True\n\n\ndef question(n):\n    pass\n```"
    text = build_feedback("NameError: name 'no_split' is not defined (template line 2: x)", source, examples=examples)
    assert "def no_split(part):\n    return True" in text


def test_a_whole_array_formatted_as_a_number_is_traced_to_the_line_that_made_it() -> None:
    # the quick start's slot: float(answer) on the failing line, then np.mean of an undefined name
    source = ("def question(num_samples):\n    tmax = frame['temp_max'].to_numpy(dtype=float)\n"
              "    tmin = frame['temp_min'].to_numpy(dtype=float)\n    answer = (tmax + tmin) / 2\n"
              "    spread = tmax - tmin\n    key = 0\n"
              "    items.append(mc_item('q', 'a', ['b'],\n"
              "                         rationale=(f'The mean is {answer:.1f} deg C, '\n"
              "                                    f'the spread {spread[key]:.1f}.')))\n    return items\n")
    for error in ("TypeError: unsupported format string passed to numpy.ndarray.__format__ (template line 8: x)",
                  "TypeError: only 0-dimensional arrays can be converted to Python scalars (template line 8: x)"):
        text = build_feedback(error, source)
        assert "line 4: `answer = (tmax + tmin) / 2`" in text, text
        assert "spread = tmax - tmin" not in text  # spread[key] formats one element
    converted = source.replace("{answer:.1f}", "{float(answer):.1f}")
    assert "line 4: `answer = (tmax + tmin) / 2`" in build_feedback(
        "TypeError: only 0-dimensional arrays can be converted to Python scalars (template line 8: x)", converted)
