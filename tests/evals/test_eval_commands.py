import hashlib

import pytest

from evals.eval_inputs import grasp_settings, method_settings
from evals.long_context import sample_corpus_name
from evals.results import safe_name


def test_set_pairs_are_typed_like_the_context_fields() -> None:
    assert grasp_settings(["k_props=20", "lexical_weight=0.5", "planner=off"]) == {
        "k_props": 20,
        "lexical_weight": 0.5,
        "planner": "off",
    }
    # A bool is parsed, not cast: bool("false") is True.
    assert grasp_settings(["bridge_check=false", "bounded_replies=off", "bridge_check=yes"]) == {
        "bridge_check": True,
        "bounded_replies": False,
    }
    assert grasp_settings(["bounded_replies=0"]) == {"bounded_replies": False}


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("nonsense=1", "--set 'nonsense=1': expected KEY=VALUE"),
        ("planner", "--set 'planner': expected KEY=VALUE"),
        ("planner=maybe", "planner must be one of on | off, not 'maybe'"),
        ("bridge_check=maybe", "--set bridge_check=maybe: bridge_check is true or false"),
        ("k_props=many", "--set k_props=many: k_props takes a whole number"),
    ],
)
def test_bad_set_pairs_fail_before_any_question(pair: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        grasp_settings([pair])
    assert str(info.value).startswith(message)


def test_names_are_file_safe_and_stable() -> None:
    assert safe_name("grasp/no planner") == "grasp-no-planner"
    digest = hashlib.sha1(b"hotpot/0001 a").hexdigest()[:8]
    assert sample_corpus_name("hotpot/0001 a") == f"lb-hotpot-0001-a-{digest}"
    assert sample_corpus_name("a b") != sample_corpus_name("a/b")


def test_set_pairs_edit_the_chosen_methods_context() -> None:
    assert method_settings("prism", ["max_rounds=2"]) == {"max_rounds": 2}
    assert method_settings("dense", [], k=3) == {"k": 3}
    with pytest.raises(ValueError, match=r"one of \['candidates_per_query', 'chat_model', "):
        method_settings("prism", ["k_props=20"])  # a GRASP setting is not PRISM's
    with pytest.raises(ValueError, match="prism has no k setting"):
        method_settings("prism", [], k=3)
    with pytest.raises(ValueError, match="k must be at least 1"):
        method_settings("self-ask", ["k=0"])
