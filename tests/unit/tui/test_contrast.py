"""Every theme's text is readable: at least WCAG's 4.5:1 against each background it is drawn on.

The backgrounds are the ones the code paints, read from it: every ``background: $var`` of the
stylesheet (the screen, the header and strip, the help), the palette's highlight (the selected
finding's row and the series it names) and Textual's footer; the text colours are the theme's
own (severities, muted, title, legs, spark), the foreground, and every ``color: $var`` the
stylesheet gives text.  The selected finding's evidence was grey on slate at 1.72:1.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.color import Color

import sgmon.tui
import themes
from sgmon.tui.app import SgmonApp

WCAG_TEXT = 4.5
TCSS = (Path(sgmon.tui.__file__).parent / "sgmon.tcss").read_text()
NOT_TEXT = ("sgmon-border", "sgmon-highlight", "sgmon-heat-low", "sgmon-heat-high")
"""sgmon variables that colour no text: borders, backgrounds, the heatmap's cells."""


def luminance(colour: Color) -> float:
    """WCAG 2's relative luminance."""

    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.r) + 0.7152 * channel(colour.g) + 0.0722 * channel(colour.b)


def contrast(a: Color, b: Color) -> float:
    """WCAG 2's contrast ratio, 1 to 21."""
    lo, hi = sorted((luminance(a), luminance(b)))
    return (hi + 0.05) / (lo + 0.05)


def backgrounds() -> set[str]:
    """The variables the dashboard paints text on."""
    painted = set(re.findall(r"^\s*background:\s*\$([\w-]+)", TCSS, re.M))
    painted.discard("boost")  # a focused panel's tint, transparent in every theme (checked below)
    palette_highlight = "sgmon-highlight"  # Palette.highlight: the selected finding, its series
    return painted | {palette_highlight, "footer-background"}


def text_colours(variables: dict[str, str]) -> set[str]:
    """The variables text is drawn in."""
    own = {k for k in variables if k.startswith("sgmon-") and k not in NOT_TEXT}
    own.discard("sgmon-crit-style")  # a style, not a colour (reversed: the same pair swapped)
    styled = set(re.findall(r"(?:^|-)color:\s*\$([\w-]+)", TCSS, re.M))
    footer = {"footer-key-foreground", "footer-description-foreground"}
    return own | styled | footer | {"foreground"}


def test_the_stylesheet_paints_the_backgrounds_the_test_knows() -> None:
    """A new background in the stylesheet must be checked too (it is, by being found here)."""
    assert backgrounds() == {
        "background",
        "panel",
        "surface",
        "sgmon-highlight",
        "footer-background",
    }


@pytest.mark.parametrize("name", themes.ORDER)
def test_every_text_colour_is_4_5_to_1_on_every_background(name: str) -> None:
    app = SgmonApp([], measure_self=False)
    app.theme = name
    variables = app.get_css_variables()
    assert Color.parse(variables["boost"]).a == 0  # focused panels are drawn on the background
    assert Color.parse(app.palette.highlight.bgcolor.name) == Color.parse(  # type: ignore[union-attr]
        variables["sgmon-highlight"]
    )
    low = []
    for bg in sorted(backgrounds()):
        for fg in sorted(text_colours(variables)):
            ratio = contrast(Color.parse(variables[fg]), Color.parse(variables[bg]))
            if ratio < WCAG_TEXT:
                low.append(f"{fg} {variables[fg]} on {bg} {variables[bg]}: {ratio:.2f}")
    assert not low, "\n".join(low)


TMUX_GREENS = ("#00FF00", "#00CD00", "#00AA00", "#4E9A06")
"""tmux's default status-style is ``bg=green,fg=black``; the terminal decides which green:
pure, xterm's, the VGA console's, GNOME's Tango."""


@pytest.mark.parametrize("sev", ["warn", "crit", "stale"])
def test_the_tmux_status_items_read_on_the_default_green(sev: str) -> None:
    """Each coloured item of `sgmon status --format tmux` is at least 4.5:1: on its own
    background when it brings one, else on every default green (yellow was 1.3:1 there)."""
    from sgmon.status import TMUX_COLOUR

    style = dict(part.split("=", 1) for part in TMUX_COLOUR[sev][2:-1].split(",") if "=" in part)
    fg = Color.parse(style["fg"])
    grounds = [style["bg"]] if "bg" in style else TMUX_GREENS
    for ground in grounds:
        assert contrast(fg, Color.parse(ground)) >= WCAG_TEXT, (sev, ground)
    if "bg" in style:  # the item stands out from the bar it sits on
        assert all(style["bg"] != green for green in TMUX_GREENS)
