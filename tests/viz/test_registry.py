"""The figure registry and ``python -m kmt_ref figures`` (kmt_ref/viz/registry.py)."""
import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402

from kmt_ref.cli import main  # noqa: E402
from kmt_ref.viz import registry  # noqa: E402


def test_figures_registered():
    names = [f for f, _ in registry.FIGURES]
    for name in ("fig1_validation.png", "fig2_finite_gamma_gap.png", "fig3_weights_and_attention.png"):
        assert name in names


@pytest.mark.parametrize("only", ["fig1_validation", "fig2_finite_gamma_gap", "fig3_weights_and_attention"])
def test_figures_command_writes_each_file(tmp_path, only, capsys):
    assert main(["figures", "--outdir", str(tmp_path), "--only", only]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == [only + ".png"]
    assert (tmp_path / written[0]).stat().st_size > 10_000
    text = capsys.readouterr().out
    assert "wrote" in text and f"1 figure in {tmp_path.resolve()}" in text


def test_regenerate_with_no_match_lists_the_figures(tmp_path):
    with pytest.raises(ValueError, match="fig6_learned_weights.png"):
        registry.regenerate(tmp_path / "f", only="nomatch", verbose=False)
    assert not (tmp_path / "f").exists()
