"""Theme colours as Rich styles, so pure render functions colour values without hard-coded hex.

Everything comes from the active theme's variables (``themes/*.toml``); a user theme that leaves
one out falls back to the dark theme's value, which the app also hands Textual as the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

from rich.color import Color, ColorParseError, blend_rgb
from rich.errors import StyleSyntaxError
from rich.style import Style


@dataclass(frozen=True)
class Palette:
    """Rich styles for one theme: severities, titles, highlight, heatmap and budget legs."""

    name: str
    variables: tuple[tuple[str, str], ...]

    @classmethod
    def from_variables(cls, name: str, variables: dict[str, str]) -> Palette:
        """Build from a theme's merged CSS variables (only ``sgmon-*`` ones are kept)."""
        kept = tuple(sorted((k, v) for k, v in variables.items() if k.startswith("sgmon-")))
        return cls(name, kept)

    def var(self, key: str) -> str:
        """One sgmon variable (without the ``sgmon-`` prefix)."""
        return dict(self.variables).get(f"sgmon-{key}", "")

    def sev(self, severity: str | None) -> Style:
        """Style of a value of this severity."""
        return _sev_style(self, severity or "ok")

    @cached_property
    def title(self) -> Style:
        """Panel titles."""
        return Style(color=self.var("title"), bold=True)

    @cached_property
    def muted(self) -> Style:
        """Labels, units and missing values."""
        return Style(color=self.var("muted"))

    @cached_property
    def highlight(self) -> Style:
        """Background of the series named by the selected finding."""
        return Style(bgcolor=self.var("highlight"), underline=True)

    @cached_property
    def lingering(self) -> Style:
        """A value whose outlier is still open but which is back in line now: italic, a lesser
        mark than any severity colour (the colour itself says what the value is now)."""
        return Style(italic=True)

    @cached_property
    def spark(self) -> Style:
        """Sparkline bars of values that are not outliers."""
        return Style(color=self.var("spark"))

    def leg(self, name: str) -> Style:
        """Colour of one leg of the commit-time budget (local, network, standby, overhead);
        muted for a name the theme has no colour for, never an error mid-draw."""
        colour = self.var(f"leg-{name}")
        return Style(color=colour) if colour else self.muted

    @cached_property
    def truecolor(self) -> bool:
        """Whether every style it gives is an RGB colour without dim (the built-in themes): the
        lines drawn in it are then as Textual's ANSI-to-truecolor line filter would leave them,
        and panels skip that filter (a new list and strip for each line repainted)."""
        try:
            colours = [Color.parse(v) for k, v in self.variables if k != "sgmon-crit-style"]
            crit = self.sev("crit")  # its style parsed as drawn
        except (ColorParseError, StyleSyntaxError):
            return False  # drawn as Rich can, and filtered as before
        colours += [c for c in (crit.color, crit.bgcolor) if c is not None]
        return not crit.dim and all(c.triplet is not None for c in colours)

    def heat(self, level: float) -> Color:
        """Heatmap colour for a share 0..1 (0 is never drawn)."""
        return _heat(self, round(max(0.0, min(1.0, level)), 2))


@cache
def _sev_style(p: Palette, severity: str) -> Style:
    if severity == "crit":
        return Style.parse(f"{p.var('crit-style') or 'bold'} {p.var('crit')}")
    key = {"warn": "warn", "info": "info"}.get(severity, "ok")
    return Style(color=p.var(key))


@cache
def _heat(p: Palette, level: float) -> Color:
    low = Color.parse(p.var("heat-low")).get_truecolor()
    high = Color.parse(p.var("heat-high")).get_truecolor()
    return Color.from_triplet(blend_rgb(low, high, level))
