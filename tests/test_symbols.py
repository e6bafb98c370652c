"""One meaning per symbol: no text defines a symbol of the symbol table with another meaning.

The table is docs/LAYER.md ("Symbols"). Each rule below is a way a reader's text has used one of its
symbols for something else (a cluster's size written m_j, a mean written m, a rounding error δ, a
temperature T), written as a pattern; the sources are those of tests/test_docs.py (README.md, docs/,
the notebook sources' markdown and comments, and the docstrings and comments of kmt_ref/ and tests/).
Every rule keeps the sentence that made it (:data:`RULES`), and a test checks that the rule still
finds it, so no rule can quietly stop matching.
"""
import re

import pytest

from test_docs import ROOT, _chunks, _sources

#: (symbol, pattern of a use with another meaning, what to write instead, a sentence it must find)
RULES = [
    ("m", r"(?<![\w\\])m(?:_\{?j\}?|ⱼ)(?!\w)", "a cluster's size is n_j (m is the binary code length only)",
     "a cluster of $m_j$ members"),
    ("m", r"\((?:c|y)\s*[−-]\s*(?:c|y)\)\s*\+\s*m\b|\(c\s*\+\s*m\)|\b0 \+ m = m|\bc_j = m \+|\bmean \$?m\$?(?!\w)",
     "a mean is μ (μ_j: the members' mean of center j)", "the residual update is (c − c) + m = m exactly"),
    ("m", r"\bm\s*=\s*(?:\\min|min)(?:_|\b)|\bm the smallest", "a smallest distance is d_min",
     "with d_j = ‖x_i − c_j‖², m = min_j d_j"),
    ("m", r"\bm \+ 1 possible", "count keys with k (m is the binary code length only)",
     "the m + 1 possible one-hot keys"),
    ("T", r"\bT_\{?G\b|\btemperature \$?T\b", "the Gumbel-softmax temperature is `tau`, with no symbol (T is the number of layers)",
     "softmax(g / T_G) over the maxima"),
    ("γ", r"(?:γ|\\gamma)_\{?(?!1\b|2\b|flag\b|reset\b|\{1\}|\{2\})[A-Za-z0-9]+|\bgamma_d\b",
     "γ is an inverse temperature of attention only (γ, γ₁, γ₂, γ_flag, γ_reset); Higham's constant needs another name",
     "with |theta| <= gamma_d"),
    ("δ", r"(?:δ|\\delta)_\{?[a-z]|\|(?:δ|delta)\|\s*<=|\(1 \+ (?:δ|delta)\)|Kronecker",
     "δ is the binary codes' shift only: write a rounding error with another letter, a Kronecker delta as [i = j]",
     "the Kronecker delta δ_ij"),
    ("τ", r"\btemperature \$?(?:τ|\\tau)\b|(?:τ|\\tau) is the Gumbel", "τ is the simplex threshold; the Gumbel temperature is `tau`, no symbol",
     "the temperature τ of the relaxed sample"),
    ("λ", r"(?:λ|\\lambda)_\{?(?:max|min|[0-9i])", "λ is the training loss's inverse temperature only: an eigenvalue needs another name",
     "the largest eigenvalue λ_max of Σ"),
    ("β", r"(?:β|\\beta)(?:[₁₂]|_\{?[12]\b)", "β is soft k-means' inverse temperature only: Adam's constants are beta1, beta2 in code",
     "Adam with β₁ = 0.9"),
    ("S", r"\bS\s*=\s*(?:\\sum|Σ)|\bS_s\b", "S is an array of attention scores only: say 'the sum of the s largest scores'",
     "S = Σ of the s largest"),
]

SOURCES = [name for name in _sources() if name != "tests/test_symbols.py"]


def _misuses(text):
    return [(symbol, m.group(), instead) for symbol, pattern, instead, _ in RULES
            for m in re.finditer(pattern, text)]


@pytest.mark.parametrize("name", SOURCES)
def test_no_symbol_has_another_meaning(name):
    found = [f"{name}:{start + text[:m.start()].count(chr(10))}: {m.group()!r} ({instead})"
             for start, text in _chunks(name)
             for symbol, pattern, instead, _ in RULES for m in re.finditer(pattern, text)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("rule", RULES, ids=[f"{r[0]}:{r[3][:30]}" for r in RULES])
def test_each_rule_finds_the_sentence_that_made_it(rule):
    symbol, pattern, _, sentence = rule
    assert re.search(pattern, sentence), sentence


@pytest.mark.parametrize("sentence", [
    "the code length m = ⌈log₂k⌉", "d + m rows", "γ₁ and γ₂, γ_flag", "\\gamma_2 = 0.5", "n_j members, mean μ_j",
    "T layers", "the simplex threshold τ", "β = 5", "S_ji = −γ‖Kz′ − Qz‖²", "λ = 10", "the Gumbel temperature `tau`",
])
def test_the_table_meanings_pass(sentence):
    assert not _misuses(sentence), _misuses(sentence)


def test_symbol_table_names_every_ruled_symbol():
    table = (ROOT / "docs" / "LAYER.md").read_text(encoding="utf-8")
    table = table[table.index("## Symbols"):table.index("## Token layouts")]
    for symbol in {r[0] for r in RULES}:
        assert re.search(rf"^\| [^|]*{re.escape(symbol)}", table, re.M), symbol
